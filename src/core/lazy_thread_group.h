// LazyThreadGroup: an owner's ThreadGroup (an actor's, an executor's), made when the
// first thread needs it. Most actors never start a thread of their own (no concurrency
// group, no method that spawns): they keep 16 bytes here instead of a group of ~200.
//
// The owner's end may come before the group exists: orphan() is remembered, and a group
// made after it is orphaned too, so no thread is ever left unjoined.
//
// Thread safety: every member may be called from any thread. One word holds both the
// group's holder (null until made) and whether the owner orphaned it (kOrphaned, its low
// bit: a holder is 8-aligned), so each change is one read-modify-write and no two can
// miss each other:
//
//   word (holder, orphaned)  | get()                               | orphan()
//   (null, no)               | CAS to (made, no): made             | -> (null, yes)
//   (null, yes)              | CAS to (made, yes): made, orphaned  | stays
//   (made, no)               | returns made                        | -> (made, yes): orphans made
//   (made, yes)              | returns made                        | stays (orphaned once already)
//
// The holder is never written again once installed (a CAS loser drops its own), so
// readers copy it freely; a group made after orphan() sees the bit in the word it
// installs into, one made before is the one orphan() finds. (Twice is harmless anyway:
// ThreadGroup::orphan only marks and schedules.) One word: an actor carries one
// (measured 2026-12-07: a word and a flag took 16 bytes of the actor).
// Lifetime: the owner's; the group itself is shared (each of its threads holds it).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "core/thread_group.h"

namespace tether {

class LazyThreadGroup {
 public:
  LazyThreadGroup() = default;
  ~LazyThreadGroup() { delete holder(word_.load(std::memory_order_acquire)); }
  LazyThreadGroup(const LazyThreadGroup&) = delete;
  LazyThreadGroup& operator=(const LazyThreadGroup&) = delete;

  // get: the group, made now if it was not. Throws std::bad_alloc.
  [[nodiscard]] std::shared_ptr<ThreadGroup> get();
  // orphan: the control thread joins the group's threads, now and once it is made.
  void orphan();
  // join_all: joins the group's threads; nothing to do if it was never made.
  void join_all();

 private:
  using Holder = std::shared_ptr<ThreadGroup>;
  static constexpr uintptr_t kOrphaned = 1;
  [[nodiscard]] static Holder* holder(uintptr_t word) noexcept { return reinterpret_cast<Holder*>(word & ~kOrphaned); }

  std::atomic<uintptr_t> word_{0};  // the state table above
};

}  // namespace tether
