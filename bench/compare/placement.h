// placement.h: where bench/compare puts the two sides of every measurement.
//
// Three placements, as the issue names them:
//   different CPUs  the caller on the first CPU this process may use, the peer's threads
//                   on the second: no side can take the other's time slice;
//   same CPU        both on the first CPU: every hand-over is a context switch, and a
//                   waiter that spins only delays the side it waits for;
//   unpinned        both free on every CPU: the scheduler decides, as in production.
//
// A peer's threads are placed by inheritance: the harness moves the calling thread to the
// worker's CPUs while it builds the peer (every thread made then inherits that mask),
// then moves itself to the caller's. Peers that make threads later (std::async, oneTBB's
// workers) place them with worker_mask().
#pragma once

#include <sched.h>

#include <map>
#include <string>

namespace compare {

enum class Placement { kDifferentCpus, kSameCpu, kUnpinned };
inline constexpr Placement kPlacements[] = {Placement::kDifferentCpus, Placement::kSameCpu, Placement::kUnpinned};

const char* placement_name(Placement p);

// usable_cpus: how many CPUs the process could use when it started.
int usable_cpus();

// place_for_build: the calling thread onto p's worker CPUs (threads made now inherit them).
// place_caller: the calling thread onto p's caller CPUs. Both remember p for worker_mask().
void place_for_build(Placement p);
void place_caller(Placement p);

// worker_mask: the current placement's worker CPUs; pin_self_to_worker moves the calling
// thread there (a thread the peer made after the build, once per placement change:
// placement_generation() tells a thread when its pinning is stale).
cpu_set_t worker_mask();
void pin_self_to_worker();
unsigned placement_generation();
// workers_apart: the current placement puts the worker on another CPU than the caller (a
// thread the caller makes now inherits the caller's CPU and must move).
bool workers_apart();

// Where an unpinned sample ran (the scheduler's choice): ThreadTimes before it, then
// ran_on_one_cpu: whether every other thread of the process that ran meanwhile last ran
// on the caller's CPU (read from /proc/self/task/*/schedstat and stat). A thread's last CPU
// stands for its whole sample: the scheduler moves a busy pair rarely within 15 ms.
struct ThreadTimes {
  std::map<long, long long> on_cpu_ns;  // thread id -> its time on a CPU so far
};
ThreadTimes thread_times();
// ran_on_one_cpu: 1 yes, 0 no, -1 unknown (/proc unreadable, or no other thread ran).
int ran_on_one_cpu(const ThreadTimes& before);

}  // namespace compare
