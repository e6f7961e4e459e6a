// LazyThreadGroup: an owner's ThreadGroup (an actor's, an executor's), made when the
// first thread needs it. Most actors never start a thread of their own (no concurrency
// group, no method that spawns): they keep 16 bytes here instead of a group of ~200.
//
// The owner's end may come before the group exists: orphan() is remembered, and a group
// made after it is orphaned too, so no thread is ever left unjoined.
//
// Thread safety: every member may be called from any thread. made_ goes from null to the
// group's holder once (compare-exchange; a loser drops its own) and the holder is never
// written again, so readers copy it freely. get() installs made_ and then reads
// orphaned_; orphan() sets orphaned_ and then reads made_ (all seq_cst): of two that race,
// at least one sees the other's write, so a group made during or after orphan() is
// orphaned (twice is harmless: ThreadGroup::orphan only marks and schedules).
// Lifetime: the owner's; the group itself is shared (each of its threads holds it).
#pragma once

#include <atomic>
#include <memory>

#include "core/thread_group.h"

namespace tether {

class LazyThreadGroup {
 public:
  LazyThreadGroup() = default;
  ~LazyThreadGroup() { delete made_.load(std::memory_order_acquire); }
  LazyThreadGroup(const LazyThreadGroup&) = delete;
  LazyThreadGroup& operator=(const LazyThreadGroup&) = delete;

  // get: the group, made now if it was not. Throws std::bad_alloc.
  [[nodiscard]] std::shared_ptr<ThreadGroup> get();
  // orphan: the control thread joins the group's threads, now and once it is made.
  void orphan();
  // join_all: joins the group's threads; nothing to do if it was never made.
  void join_all();

 private:
  std::atomic<std::shared_ptr<ThreadGroup>*> made_{nullptr};
  std::atomic<bool> orphaned_{false};
};

}  // namespace tether
