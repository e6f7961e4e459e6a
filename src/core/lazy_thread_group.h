// LazyThreadGroup: an owner's ThreadGroup (an actor's, an executor's), made when the
// first thread needs it. Most actors never start a thread of their own (no concurrency
// group, no method that spawns): they keep 16 bytes here instead of a group of ~200.
//
// The owner's end may come before the group exists: orphan() is remembered, and a group
// made after it is orphaned too, so no thread is ever left unjoined.
//
// Thread safety: every member may be called from any thread. One word says where things
// stand: 0 (no group, not orphaned), kOrphanedBeforeMade (no group, the owner orphaned
// it), or the group's holder (made; whether it is orphaned is the group's to know), so
// each change is one compare-exchange and no two can miss each other:
//
//   word                 | get()                                 | orphan()
//   0                    | CAS to holder: made                   | CAS to kOrphanedBeforeMade
//   kOrphanedBeforeMade  | CAS to holder: made, then orphaned    | stays
//   holder               | returns the group                     | orphans the group
//
// The holder is never written again once installed (a CAS loser drops its own), so
// readers copy it freely; a group made after orphan() replaces kOrphanedBeforeMade and
// orphans itself, one made before is the one orphan() finds. (Twice is harmless:
// ThreadGroup::orphan only marks and schedules.) The holder is stored as it is, never
// tagged: a leak checker must see the pointer of an executor still orphaned at exit.
// One word: an actor carries one (measured 2026-12-07: a word and a flag took 16 bytes
// of the actor).
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
  ~LazyThreadGroup() { delete holder(word_.load(std::memory_order_acquire)); }  // null: none
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
  static constexpr uintptr_t kOrphanedBeforeMade = 1;  // never a holder's address
  // holder: the word's holder, null while there is none.
  [[nodiscard]] static Holder* holder(uintptr_t word) noexcept {
    return word > kOrphanedBeforeMade ? reinterpret_cast<Holder*>(word) : nullptr;
  }

  std::atomic<uintptr_t> word_{0};  // the state table above
};

}  // namespace tether
