// ThreadRole: what the calling thread serves, in one thread-local record. Every "am I
// inside?" question (would a wait on this object, from this thread, wait for the thread
// itself?) is answered from it and from the task being run (Task::current):
//   - serving: the object whose work this thread runs: a lane (a lane thread for its
//     life; a manual lane's owner while it runs or drains it) or a scope (a runner's
//     thread). Set by ServingAs, for as long as the thread serves it.
//   - manual_lane: the id of the manual lane this thread drives, for good (set at its
//     first run): outside run, this thread is still the only one that can run that
//     lane's work. An id, not a pointer: it outlives the lane, and ids are never reused.
//   - control: the control thread, whose waits would stall every other job.
// Who answers what from it: Lane::is_inside, Scope::is_inside, Actor::is_inside,
// CompiledGraph::inside, Executor::release_handle, ControlThread::is_current.
//
// Thread safety: thread-local; written and read only by its own thread.
#pragma once

#include <cstdint>

namespace tether {

struct ThreadRole {
  const void* serving = nullptr;
  uint64_t manual_lane = 0;
  bool control = false;

  // serves: this thread runs what's work.
  [[nodiscard]] bool serves(const void* what) const noexcept { return what != nullptr && serving == what; }
  // serves_lane: this thread runs lane's calls, or is the one that drives it (manual).
  [[nodiscard]] bool serves_lane(const void* lane, uint64_t lane_id) const noexcept {
    return serves(lane) || (lane_id != 0 && manual_lane == lane_id);
  }
};

// this_thread_role: the calling thread's record.
[[nodiscard]] ThreadRole& this_thread_role() noexcept;

// ServingAs: the calling thread serves `what` while this lives (they nest: a manual
// lane's owner may drain it from inside another lane's call), then what it served before.
class ServingAs {
 public:
  explicit ServingAs(const void* what) noexcept : role_(this_thread_role()), previous_(role_.serving) {
    role_.serving = what;
  }
  ~ServingAs() { role_.serving = previous_; }
  ServingAs(const ServingAs&) = delete;
  ServingAs& operator=(const ServingAs&) = delete;

 private:
  ThreadRole& role_;
  const void* const previous_;
};

}  // namespace tether
