// LazyThreadGroup: an owner's ThreadGroup (an actor's, an executor's), made when the
// first thread needs it. Most actors never start a thread of their own (no concurrency
// group, no method that spawns): they keep 64 bytes here instead of a group of ~200.
//
// The owner's end may come before the group exists: orphan() is remembered, and a group
// made after it is orphaned at birth, so no thread is ever left unjoined.
//
// Thread safety: every member may be called from any thread; mutex_ guards both fields.
// Lifetime: the owner's; the group itself is shared (each of its threads holds it).
#pragma once

#include <memory>
#include <mutex>

#include "core/thread_group.h"

namespace tether {

class LazyThreadGroup {
 public:
  // get: the group, made now if it was not. Throws std::bad_alloc.
  [[nodiscard]] std::shared_ptr<ThreadGroup> get();
  // orphan: the control thread joins the group's threads, now and once it is made.
  void orphan();
  // join_all: joins the group's threads; nothing to do if it was never made.
  void join_all();

 private:
  std::mutex mutex_;
  std::shared_ptr<ThreadGroup> group_;  // guarded by mutex_: null until get()
  bool orphaned_ = false;               // guarded by mutex_
};

}  // namespace tether
