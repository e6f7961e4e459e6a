// TaskOrigin: what a task knows of the object its callback works for (an actor, a
// compiled graph's node), beyond its scope.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace tether {

class ThreadGroup;

struct TaskOrigin {
  const std::atomic<bool>* owner_stop = nullptr;  // an actor's stop CANCEL flag
  uint64_t actor = 0;                             // the actor's handle, for tether_task_actor
  const std::shared_ptr<ThreadGroup>* threads = nullptr;  // the owner's group, for nested threads
  // A compiled graph's node: its teardown flag asks it to stop, and it may not spawn
  // (a step must end when its callback returns, or the graph's order could not hold).
  const std::atomic<bool>* graph_stop = nullptr;
  bool graph_node = false;
};

}  // namespace tether
