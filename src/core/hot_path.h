// TETHER_HOT_PATH: a function on the path of a call made after an idle spell: the
// caller's post, wake-up and wait, the actor's wake, run, answer and look before it
// idles again. The compiler places these together (GCC: .text.hot, ahead of the rest of
// .text), so the code such a round trip touches spans fewer cache lines and pages. On
// these VMs the caches are cold after 1 ms idle: each line costs a miss, ~30 ns (a driver
// touching 25 lines more per round trip after 1 ms idle: +0.8 us; bench/README.md,
// target 3).
#pragma once

#if defined(__GNUC__)
#define TETHER_HOT_PATH [[gnu::hot]]
#else
#define TETHER_HOT_PATH
#endif
