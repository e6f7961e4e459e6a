// TaskOrigin: what a task knows of the object its callback works for (an actor, a
// compiled graph's node), beyond its scope. A Task points at one (it is read rarely and
// a call's hot path should not copy it): the object keeps its origin for as long as its
// callbacks run (an actor, an executor), or the caller keeps it on its stack around the
// Task (a runner's thread, a graph step).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace tether {

class LazyThreadGroup;

struct TaskOrigin {
  const std::atomic<bool>* owner_stop = nullptr;  // an actor's stop CANCEL flag
  uint64_t actor = 0;                             // the actor's handle, for tether_task_actor
  LazyThreadGroup* threads = nullptr;  // the owner's group, for nested threads
  // A compiled graph's node (set for nodes alone): its teardown flag asks it to stop, and
  // it may not spawn (a step must end when its callback returns, or the graph's order
  // could not hold).
  const std::atomic<bool>* graph_stop = nullptr;

  [[nodiscard]] bool graph_node() const noexcept { return graph_stop != nullptr; }
};

// kNoOrigin: a task that works for no object beyond its scope.
inline constexpr TaskOrigin kNoOrigin{};

}  // namespace tether
