// sweep_support: the fault-sweep driver and the allocation-free bookkeeping its scenarios
// share. A scenario's act() runs with one fault armed (the Nth counted allocation fails,
// or the Nth thread creation does) and records what each call returned; its callbacks
// only touch the atomics here, so they allocate nothing of their own. After act() the
// driver disarms, waits (bounded) until every library thread is joined, and runs check().
#pragma once

#include <tether/tether.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace sweep {

// Args: tokens handed to the library as args, each with its drop count.
inline constexpr size_t kMaxArgs = 512;
void reset_args();
[[nodiscard]] void* new_arg();     // a fresh token, not yet dropped
void drop_arg(void* token);        // a tether_drop_fn: counts one drop of token
[[nodiscard]] int drops_of(void* token);
// every_arg_dropped_once: "" when every token handed out so far was dropped exactly once,
// else which ones were not (bounded wait for drops still on their way).
[[nodiscard]] std::string every_arg_dropped_once();

// Codes: every status a scenario or its callbacks saw, as a bit set.
void reset_seen();
void saw(tether_status rc);
[[nodiscard]] bool was_seen(tether_status rc);

// ok_or_fault: rc is OK or the fault the sweep injects (NO_MEMORY / THREAD_CREATE).
[[nodiscard]] bool ok_or_fault(tether_status rc);
// fault_error: an error code (or a TASK_FAILED error's user code) that says the fault.
[[nodiscard]] bool fault_error(int32_t code, int64_t user_code);

struct Scenario {
  virtual ~Scenario() = default;
  virtual const char* name() const = 0;
  virtual void act() = 0;    // armed: API calls only, results recorded in members
  virtual void check() = 0;  // disarmed: gtest assertions on what act() recorded
};

struct SweepCount {
  uint64_t counting_run = 0;  // allocations of the run without a fault
  uint64_t points = 0;        // runs with the fault delivered
  uint64_t fault_visible = 0; // of those, how many reported it through a status or error
};

// sweep_allocations: runs s once counting, then with allocation n failing for n = 1, 2,
// ... until a run needs fewer than n allocations.
SweepCount sweep_allocations(Scenario& s);
// sweep_threads: runs s with thread creation k failing for k = 0, 1, ... until a probe
// after the run shows the armed failure was not consumed. A consumed failure the run did
// not report (no THREAD_CREATE anywhere) fails the test: a lost failure.
SweepCount sweep_threads(Scenario& s);

// run_point: one armed run (mode "alloc": allocation n fails; "thread": thread creation
// n fails), checked; whether the fault was delivered. The cold sweep's child runs this.
bool run_point(Scenario& s, const std::string& mode, uint64_t n);

// sweep_cold: each point in a fresh process (this executable re-run with the child test
// selected), so first-use paths — the control thread's start, thread-locals' first touch,
// singletons — meet the fault too. Points go on while the child reports the fault
// delivered; a child that crashes, hangs or fails its checks fails the sweep.
SweepCount sweep_cold(const char* scenario, const std::string& mode);

// Bounds.
inline constexpr int64_t kWaitNs = INT64_C(20) * 1000 * 1000 * 1000;

}  // namespace sweep
