// TETHER_HOT_PATH: a function on the path of a call made after an idle spell: the
// caller's post, wake-up and wait, the actor's wake, run, answer and look before it
// idles again. The compiler places these together (GCC: .text.hot, ahead of the rest of
// .text), so the code such a round trip touches spans fewer cache lines and pages. On
// these VMs the caches and TLBs are cold after 1 ms idle: 24 lines more a round trip
// cost +0.6-1.0 us on 2 pages, +1.4-1.9 us on 24 (bench/README.md, target 3).
#pragma once

#if defined(__GNUC__)
#define TETHER_HOT_PATH [[gnu::hot]]
#else
#define TETHER_HOT_PATH
#endif

// TETHER_HOT_DATA: a global that path reads (a flag, the fork epoch, a per-CPU hint):
// together in .data.tether_hot, which the linker puts in .data, right after the GOT
// whose entries the path's calls read anyway, instead of wherever .bss happens to put
// it (the handle table's 32 KiB took three of them to pages of their own: measured with
// valgrind's lackey, 2026-12-07).
#if defined(__GNUC__) && defined(__ELF__)
#define TETHER_HOT_DATA __attribute__((section(".data.tether_hot")))
#else
#define TETHER_HOT_DATA
#endif
