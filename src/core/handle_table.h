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
// Storage: slots live in chunks of kChunkSlots that are made as the table grows and never
// move or go away, so a lookup needs no table-wide lock: it locks its slot alone.
//
// Thread safety: every member may be called from any thread. Each slot's fields are
// guarded by the slot's own lock (busy: held for a few instructions, never across an
// allocation or a callback; a waiter spins, then yields). Free slots form a lock-free
// stack (free_head_, linked through Slot::next_free: see push_free/pop_free). mutex_
// guards the growth (chunks_, used_); used_ and chunks_[i] are published with release
// stores after what they reveal is made. The table is never destroyed (a process may exit
// with live handles).
#pragma once

#include "core/immortal.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include "core/fork_guard.h"

namespace tether {

enum class Kind : uint8_t { Runner = 1, Executor, Actor, Future, Error, Graph, Compiled };

[[nodiscard]] const char* kind_name(Kind kind) noexcept;

class HandleTable {
 public:
  // instance: inline, every lookup starts here; never destroyed (see the class comment).
  static HandleTable& instance() noexcept { return immortal<HandleTable>(); }

  HandleTable(const HandleTable&) = delete;
  HandleTable& operator=(const HandleTable&) = delete;

  // insert: a new id for obj. Throws StatusError(TETHER_E_NO_MEMORY) when the table is full.
  [[nodiscard]] uint64_t insert(Kind kind, std::shared_ptr<void> obj);

  // get: the object behind id, or throws StatusError(TETHER_E_INVALID_HANDLE) saying why.
  template <class T>
  [[nodiscard]] std::shared_ptr<T> get(Kind kind, uint64_t id) const {
    return std::static_pointer_cast<T>(find(kind, id));
  }

  // visit: f(object, owner) with the slot locked, without taking a reference of its own
  // (owner is the slot's: copy it to keep the object past f). For what fits the slot
  // lock's rule (a few instructions: no allocation, no wait, no callback, nothing
  // thrown): what a future's poll, a settled wait and a result's take need, which would
  // otherwise add and drop a reference each. Returns f's result; throws like get.
  template <class T, class F>
  decltype(auto) visit(Kind kind, uint64_t id, F&& f) const {
    const Slot& slot = slot_of(kind, id);
    Miss miss;
    {
      SlotLock lock(slot);
      miss = miss_locked(slot, kind, id);
      if (miss == Miss::kNone) return f(*static_cast<T*>(slot.object.get()), slot.object);
    }
    throw_miss(miss, kind);  // the message is made with the slot unlocked
  }

  // take: ends the handle and returns its object; throws like get.
  template <class T>
  [[nodiscard]] std::shared_ptr<T> take(Kind kind, uint64_t id) {
    return std::static_pointer_cast<T>(remove(kind, id));
  }

  // The fork handlers (fork_guard.cpp).
  void before_fork() { mutex_.before_fork(); }
  void after_fork_in_parent() noexcept { mutex_.after_fork_in_parent(); }
  // after_fork_in_child: also frees every slot lock a thread of the parent held at fork.
  void after_fork_in_child() noexcept;

 private:
  template <class T>
  friend T& immortal() noexcept;
  HandleTable() = default;

  static constexpr int kIndexBits = 24;
  static constexpr int kGenerationBits = 32;
  static constexpr int kKindShift = kIndexBits + kGenerationBits;
  static constexpr uint64_t kIndexMask = (uint64_t{1} << kIndexBits) - 1;
  static constexpr size_t kChunkSlots = 4096;
  static constexpr size_t kMaxSlots = size_t{1} << kIndexBits;
  static constexpr size_t kMaxChunks = kMaxSlots / kChunkSlots;

  struct Slot {
    mutable std::atomic<bool> busy{false};  // the slot's lock (SlotLock)
    Kind kind{};                    // guarded by busy: the live object's; meaningless while free
    std::atomic<uint32_t> next_free{0};     // while free: the next free slot's index + 1 (0: none)
    uint32_t generation = 1;        // guarded by busy
    uint32_t epoch = 0;             // guarded by busy: the fork epoch it was filled in
    std::shared_ptr<void> object;   // guarded by busy: null while the slot is free
  };
  static_assert(sizeof(Slot) == 32, "two slots a cache line: keep the fields packed");
  // SlotLock: a slot's lock, test-and-test-and-set: held for a few instructions, so a
  // waiter spins (and yields after a while: the holder may have been preempted).
  class SlotLock {
   public:
    explicit SlotLock(const Slot& slot) noexcept : busy_(slot.busy) {
      if (busy_.exchange(true, std::memory_order_acquire)) [[unlikely]] lock_contended(busy_);
    }
    ~SlotLock() { busy_.store(false, std::memory_order_release); }
    SlotLock(const SlotLock&) = delete;
    SlotLock& operator=(const SlotLock&) = delete;

   private:
    // lock_contended: out of line, so a lookup's fast path keeps its registers (a call
    // with a future makes four lookups).
    [[gnu::noinline]] static void lock_contended(std::atomic<bool>& busy) noexcept;

    std::atomic<bool>& busy_;
  };
  enum class Miss { kNone, kReleased, kForked };

  [[nodiscard]] std::shared_ptr<void> find(Kind kind, uint64_t id) const;
  [[nodiscard]] std::shared_ptr<void> remove(Kind kind, uint64_t id);
  // slot_of: the slot id names; throws INVALID_HANDLE for an id the table never gave out
  // (null, another kind, an index past the slots made). Inline: every lookup starts here;
  // the reasons are worked out out of line (reject_id).
  [[nodiscard]] Slot& slot_of(Kind kind, uint64_t id) const {
    const size_t index = id & kIndexMask;
    if (id >> kKindShift != static_cast<uint8_t>(kind) || index >= used_.load(std::memory_order_acquire)) [[unlikely]] {
      reject_id(kind, id);
    }
    return slot_at(static_cast<uint32_t>(index));
  }
  [[noreturn, gnu::cold, gnu::noinline]] static void reject_id(Kind kind, uint64_t id);
  // miss_locked: why slot (locked) does not hold id's object, or kNone when it does.
  // Inline: every lookup asks, and a hit is four compares.
  [[nodiscard]] static Miss miss_locked(const Slot& slot, Kind kind, uint64_t id) noexcept {
    const auto generation = static_cast<uint32_t>(id >> kIndexBits);  // the kind bits fall off
    if (slot.generation != generation || !slot.object || slot.kind != kind) [[unlikely]] return Miss::kReleased;
    if (slot.epoch != fork_epoch()) [[unlikely]] return Miss::kForked;
    return Miss::kNone;
  }
  [[noreturn]] static void throw_miss(Miss miss, Kind kind);
  [[nodiscard]] Slot& slot_at(uint32_t index) const noexcept {
    return chunks_[index / kChunkSlots].load(std::memory_order_acquire)[index % kChunkSlots];
  }
  // The free stack: a Treiber stack of slot indexes. Its head packs the top's index + 1
  // (low 32 bits, 0: empty) with a count of the changes made to it (high 32 bits), so a
  // pop that read a head since popped and pushed back (ABA) fails its compare-exchange.
  // A pop may read next_free of a slot another thread has just taken: an atomic read
  // whose value is then discarded, as the head has changed. Never allocates.
  void push_free(uint32_t index) noexcept;
  [[nodiscard]] bool pop_free(uint32_t& index) noexcept;

  mutable ForkSafeMutex mutex_;
  std::atomic<Slot*> chunks_[kMaxChunks] = {};  // guarded by mutex_ (writes); chunk i: slots i*kChunkSlots..
  std::atomic<uint32_t> used_{0};               // guarded by mutex_ (writes): slots handed out so far
  std::atomic<uint64_t> free_head_{0};          // the free stack's head (push_free / pop_free)
};

}  // namespace tether
