// HandleTable: maps the uint64_t ids of the C API to live objects.
//
// An id packs three fields: kind (bits 56-63, never 0, so no live id is 0), the slot's
// generation (bits 24-55) and the slot index (bits 0-23). A slot's generation advances
// every time its handle is released, so an old id never reaches the slot's next object;
// a forged id fails the kind, index or generation check; none of them is ever
// dereferenced. Lookups hand out a shared_ptr, so an object stays alive for as long as a
// call is using it, even if another thread releases the handle meanwhile.
//
// After fork() (fork_guard.h), a slot filled in an earlier fork epoch is the parent's:
// every use of its id is TETHER_E_FORKED, and its object is never touched again there.
//
// Thread safety: every member may be called from any thread; mutex_ guards slots_ and
// free_. The table is never destroyed (a process may exit with live handles).
#pragma once

#include "core/immortal.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "core/fork_guard.h"

namespace tether {

enum class Kind : uint8_t { Runner = 1, Executor, Actor, Future, Error, Graph, Compiled };

[[nodiscard]] const char* kind_name(Kind kind) noexcept;

class HandleTable {
 public:
  static HandleTable& instance();

  HandleTable(const HandleTable&) = delete;
  HandleTable& operator=(const HandleTable&) = delete;

  // insert: a new id for obj. Throws StatusError(TETHER_E_NO_MEMORY) when the table is full.
  [[nodiscard]] uint64_t insert(Kind kind, std::shared_ptr<void> obj);

  // get: the object behind id, or throws StatusError(TETHER_E_INVALID_HANDLE) saying why.
  template <class T>
  [[nodiscard]] std::shared_ptr<T> get(Kind kind, uint64_t id) const {
    return std::static_pointer_cast<T>(find(kind, id));
  }

  // take: ends the handle and returns its object; throws like get.
  template <class T>
  [[nodiscard]] std::shared_ptr<T> take(Kind kind, uint64_t id) {
    return std::static_pointer_cast<T>(remove(kind, id));
  }

  // The fork handlers (fork_guard.cpp).
  void before_fork() { mutex_.before_fork(); }
  void after_fork_in_parent() noexcept { mutex_.after_fork_in_parent(); }
  void after_fork_in_child() noexcept { mutex_.after_fork_in_child(); }

 private:
  template <class T>
  friend T& immortal() noexcept;
  HandleTable() = default;

  struct Slot {
    uint32_t generation = 1;
    uint32_t epoch = 0;           // the fork epoch it was filled in
    Kind kind{};                  // kind of the live object; meaningless while free
    std::shared_ptr<void> object;  // null while the slot is free
  };

  [[nodiscard]] std::shared_ptr<void> find(Kind kind, uint64_t id) const;
  [[nodiscard]] std::shared_ptr<void> remove(Kind kind, uint64_t id);
  // locate: the live slot for id, or throws. Caller holds mutex_.
  [[nodiscard]] size_t locate(Kind kind, uint64_t id) const;

  mutable ForkSafeMutex mutex_;
  std::vector<Slot> slots_;   // guarded by mutex_
  std::vector<uint32_t> free_;  // guarded by mutex_: indexes of free slots
};

}  // namespace tether
