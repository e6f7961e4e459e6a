// Time slice: the library's own serving threads (an executor's, an actor's, a group's) ask
// the OS scheduler for short time slices, so that one woken for a call runs at once on a
// CPU it shares with the thread that woke it.
//
// Why: on one CPU a call is a hand-over. The caller queues the call, wakes the parked
// thread that will run it, and waits. If the woken thread preempts the caller right in its
// wake-up system call, it runs the call, finds the caller not yet parked (no wake-up to
// make), and parks, which hands the CPU back: two switches and two futex calls a round
// trip. If it does not, the caller parks first, and the answer needs a wake-up of its own:
// two more system calls, on the critical path. Linux's fair scheduler (EEVDF, 6.6 and
// later) lets a woken thread preempt the running one when its virtual deadline comes
// first, and since 6.12 a thread may ask for a shorter slice (sched_setattr's sched_runtime
// for SCHED_OTHER, 0.1-100 ms; the default here is 1.4 ms), which brings its deadline
// forward and lets it preempt on wake-up (the kernel's PREEMPT_SHORT). A thread that runs
// long still gets its fair share and no more, and is preempted no more often: the slice is
// checked at the scheduler's tick (measured 2026-12-05: two CPU-bound threads on one CPU,
// one with a 0.1 ms slice, did the same work and were switched 125 times a second each,
// as with the default slice).
//
// Figures that chose kServingTimeSliceNs (2026-12-05, AMD EPYC VM of 2 vCPUs, kernel 6.18,
// a C program calling an actor on its own thread with both on CPU 0 after 1 ms idle, beside
// the raw futex ping-pong, medians of 300 calls; ratio to the ping-pong): the default slice
// 1.18-1.44x, 0.1 ms 1.07-1.37x, lower in all six alternating pairs; in one process
// switching the actor thread's slice every 20 calls (30 rounds each, two runs): default
// 1.48-1.50x, 2 ms 1.47-1.53x, 1 ms 1.34-1.36x, 0.1 ms 1.31-1.39x. bench/compare, one run
// each: target 3 on one CPU 1.11x -> 0.91x the futex floor, a compiled graph A -> B on one
// CPU 11.7 -> 9.3 us, the same two calls chained 13.3 -> 10.2 us; the rows across CPUs
// within their noise. 0.1 ms, the kernel's shortest, preempts the most readily.
//
// TETHER_TIME_SLICE_NS, read once at the first serving thread's start, changes it for the
// process: 0 leaves the threads at the OS default; a whole number of nanoseconds from
// 100000 to 100000000 is asked instead; anything else keeps kServingTimeSliceNs. Threads
// that are not the library's (a manual executor's runner, a runner's targets) are never
// touched. Elsewhere than Linux, and on kernels before 6.12, the request does nothing.
//
// Thread safety: both functions may be called from any thread.
#pragma once

#include <cstdint>

namespace tether {

inline constexpr int64_t kServingTimeSliceNs = 100'000;
inline constexpr int64_t kMinTimeSliceNs = 100'000;      // the kernel's bounds
inline constexpr int64_t kMaxTimeSliceNs = 100'000'000;

// time_slice_from: the slice a TETHER_TIME_SLICE_NS value asks for (nullptr: unset), as the
// comment above says; 0: leave the OS default.
[[nodiscard]] int64_t time_slice_from(const char* setting) noexcept;

// ask_for_serving_time_slice: the calling thread, about to serve a lane, asks for the
// process's serving slice (best effort: a refusal leaves it as it was).
void ask_for_serving_time_slice() noexcept;

}  // namespace tether
