// Time slice: the library's own serving threads (an executor's, an actor's, a group's) ask
// the OS scheduler for a time slice half as long as the one it gives them, so that one
// woken for a call runs at once on a CPU it shares with the thread that woke it.
//
// Why: on one CPU a call is a hand-over. The caller queues the call, wakes the parked
// thread that will run it, and waits. If the woken thread preempts the caller right in its
// wake-up system call, it runs the call, finds the caller not yet parked (no wake-up to
// make), and parks, which hands the CPU back: two switches and two futex calls a round
// trip. If it does not, the caller parks first, and the answer needs a wake-up of its own:
// two more system calls on the critical path. Linux's fair scheduler (EEVDF) lets a woken
// thread preempt the running one when its virtual deadline comes first, and since 6.12 a
// thread may ask for its own slice (sched_setattr's sched_runtime for SCHED_OTHER, 0.1-100
// ms): one shorter than the running thread's may preempt it on wake-up (the kernel's
// PREEMPT_SHORT). A thread that runs long still gets its fair share and no more, and is
// preempted no more often: the slice is checked at the scheduler's tick (measured
// 2026-12-05: two CPU-bound threads on one CPU, one with a 0.1 ms slice, did the same work
// and were switched 125 times a second each, as with the default slice).
//
// Why half, not the kernel's shortest: a thread that yields moves its deadline one slice
// on, so with a slice much shorter than the other thread's it is picked again at once and
// a yield hands nothing over (the Go binding's drain and waiter yield to each other on one
// CPU: its round trip there took 12.7-13.4 us with 0.1 ms slices against 3.8-4.3 us
// without); and a thread that has run one slice without stopping (a drain that spins, a
// stream of work) may be preempted by any thread woken on its CPU.
//
// Figures (2026-12-05, AMD EPYC VM of 2 vCPUs, kernel 6.18, whose default slice is 1.4 ms):
// a C program calling an actor on its own thread, both on CPU 0, after 1 ms idle, in one
// process switching the actor thread's slice every 20 calls, 30 rounds each, median ratio to
// the raw futex ping-pong beside it: the default 1.29x (1.48-1.50x in slower runs), 0.1 ms
// 1.15x (1.31-1.39x), 0.7 ms 1.13x, 1 ms 1.16x (1.34-1.36x), 2 ms 1.47-1.53x (longer than the
// default: no gain). bench/compare, alternating runs, target 3 on one CPU: 0.7 ms 1.10x /
// 1.03x / 1.04x against the default's 1.07x / 1.12x / 1.14x; 0.1 ms 1.02x / 1.04x / 0.96x
// against 1.20x / 1.27x / 1.23x in an earlier state of the VM; beside two busy loops
// (0.1 ms), after idle on one CPU 0.90x / 0.84x against 1.09x / 1.15x, 1,024 calls in flight
// on one CPU 223-236 against 256-262 ns. The Go binding still lost at half (go test -bench
// RoundTrip/tether/sameCPU: 4.5-5.3 against 3.8-4.0 us), so it keeps its threads at the OS
// slice (bindings/go/time_slice.go); Python's round trips did not change.
//
// TETHER_TIME_SLICE_NS, read once at the first serving thread's start, changes it for the
// process: 0 leaves the threads at the OS default; a whole number of nanoseconds from
// 100000 to 100000000 is asked instead; anything else keeps the half. Threads that are not
// the library's (a manual executor's runner, a runner's targets) are never touched.
// Elsewhere than Linux, and on kernels before 6.12, nothing is asked.
//
// A thread that is streamed to from its own CPU wants the opposite, no preemption: it
// switches to SCHED_BATCH meanwhile (wake_preemption.h), keeping the slice asked here.
//
// Thread safety: every function may be called from any thread.
#pragma once

#include <cstdint>

namespace tether {

inline constexpr int64_t kMinTimeSliceNs = 100'000;  // the kernel's bounds
inline constexpr int64_t kMaxTimeSliceNs = 100'000'000;
inline constexpr int64_t kHalfTimeSlice = -1;  // time_slice_from: half of what the OS gives

// time_slice_from: what a TETHER_TIME_SLICE_NS value (nullptr: unset) asks for, as the
// comment above says: kHalfTimeSlice, 0 (leave the OS default) or a slice in ns.
[[nodiscard]] int64_t time_slice_from(const char* setting) noexcept;

// serving_time_slice: the slice a serving thread asks for when the OS gives it os_slice_ns
// (0: the OS reports none, and nothing is asked): half of it, at least kMinTimeSliceNs.
[[nodiscard]] int64_t serving_time_slice(int64_t os_slice_ns) noexcept;

// ask_for_serving_time_slice: the calling thread, about to serve a lane, asks for its
// serving slice (best effort: a refusal leaves it as it was).
void ask_for_serving_time_slice() noexcept;

}  // namespace tether
