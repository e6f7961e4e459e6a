#include "core/handle_table.h"

#include <string>

#include "core/cpu_relax.h"
#include "core/immortal.h"
#include "core/status_error.h"
#include "tether/tether.h"

namespace tether {
namespace {


[[noreturn]] void invalid(Kind kind, const std::string& why) {
  throw StatusError(TETHER_E_INVALID_HANDLE,
                    std::string("invalid handle: ") + kind_name(kind) + " " + why);
}

}  // namespace

const char* kind_name(Kind kind) noexcept {
  switch (kind) {
    case Kind::Runner: return "runner";
    case Kind::Executor: return "executor";
    case Kind::Actor: return "actor";
    case Kind::Future: return "future";
    case Kind::Error: return "error";
    case Kind::Graph: return "graph";
    case Kind::Compiled: return "compiled graph";
  }
  return "object";
}

void HandleTable::SlotLock::lock_contended(std::atomic<bool>& busy) noexcept {
  SpinWait spin;
  do {
    while (busy.load(std::memory_order_relaxed)) spin.once();
  } while (busy.exchange(true, std::memory_order_acquire));
}

void HandleTable::push_free(uint32_t index) noexcept {
  Slot& slot = slot_at(index);
  uint64_t head = free_head_.load(std::memory_order_relaxed);
  uint64_t top;
  do {
    slot.next_free.store(static_cast<uint32_t>(head), std::memory_order_relaxed);
    top = ((head >> 32) + 1) << 32 | (uint64_t{index} + 1);
    // release: a pop that acquires this head reads the next_free just stored.
  } while (!free_head_.compare_exchange_weak(head, top, std::memory_order_release, std::memory_order_relaxed));
}

bool HandleTable::pop_free(uint32_t& index) noexcept {
  uint64_t head = free_head_.load(std::memory_order_acquire);
  for (;;) {
    const auto top = static_cast<uint32_t>(head);
    if (top == 0) return false;
    const uint32_t next = slot_at(top - 1).next_free.load(std::memory_order_relaxed);
    const uint64_t popped = ((head >> 32) + 1) << 32 | next;
    if (free_head_.compare_exchange_weak(head, popped, std::memory_order_acquire, std::memory_order_acquire)) {
      index = top - 1;
      return true;
    }
  }
}

uint64_t HandleTable::insert(Kind kind, std::shared_ptr<void> obj) {
  uint32_t index;
  if (!pop_free(index)) {
    std::lock_guard lock(mutex_);
    index = used_.load(std::memory_order_relaxed);
    if (index >= kMaxSlots) throw StatusError(TETHER_E_NO_MEMORY, "too many live handles");
    if (index % kChunkSlots == 0) {  // the slots made so far are all in use: one more chunk
      chunks_[index / kChunkSlots].store(new Slot[kChunkSlots], std::memory_order_release);
    }
    used_.store(index + 1, std::memory_order_release);
  }
  Slot& slot = slot_at(index);
  SlotLock lock(slot);
  slot.kind = kind;
  slot.epoch = fork_epoch();
  slot.object = std::move(obj);  // the slot was free: nothing is dropped under the lock
  return (uint64_t{static_cast<uint8_t>(kind)} << kKindShift) | (uint64_t{slot.generation} << kIndexBits) | index;
}

void HandleTable::reject_id(Kind kind, uint64_t id) {
  if (id == 0) invalid(kind, "handle is null");
  const auto id_kind = static_cast<Kind>(id >> kKindShift);
  if (id_kind != kind) {
    const auto raw = static_cast<uint8_t>(id_kind);
    if (raw >= static_cast<uint8_t>(Kind::Runner) && raw <= static_cast<uint8_t>(Kind::Compiled)) {
      invalid(kind, std::string("expected, got a ") + kind_name(id_kind) + " handle");
    }
  }
  invalid(kind, "handle is not one the library gave out");
}

void HandleTable::throw_miss(Miss miss, Kind kind) {
  if (miss == Miss::kForked) {
    throw StatusError(TETHER_E_FORKED, std::string(kind_name(kind)) +
                                           " handle belongs to the parent process: it cannot be used in a child "
                                           "after fork() (objects made in the child work)");
  }
  invalid(kind, "was released");
}

std::shared_ptr<void> HandleTable::find(Kind kind, uint64_t id) const {
  const Slot& slot = slot_of(kind, id);
  Miss miss;
  {
    SlotLock lock(slot);
    miss = miss_locked(slot, kind, id);
    if (miss == Miss::kNone) return slot.object;
  }
  throw_miss(miss, kind);  // the message is made with the slot unlocked
}

std::shared_ptr<void> HandleTable::remove(Kind kind, uint64_t id) {
  Slot& slot = slot_of(kind, id);
  std::shared_ptr<void> obj;
  Miss miss;
  {
    SlotLock lock(slot);
    miss = miss_locked(slot, kind, id);
    if (miss == Miss::kNone) {
      obj = std::move(slot.object);
      ++slot.generation;
    }
  }
  if (miss != Miss::kNone) throw_miss(miss, kind);
  push_free(static_cast<uint32_t>(id & kIndexMask));  // never allocates
  return obj;  // the caller decides where the object's last reference dies
}

void HandleTable::after_fork_in_child() noexcept {
  mutex_.after_fork_in_child();
  // Only the forking thread exists now: a slot lock held at fork() belongs to nobody. A
  // free-stack change is one compare-exchange, made or not; a slot popped by a thread that
  // is gone now stays out of use (one slot, never an id given out twice).
  const uint32_t used = used_.load(std::memory_order_relaxed);
  for (uint32_t i = 0; i < used; ++i) {
    chunks_[i / kChunkSlots].load(std::memory_order_relaxed)[i % kChunkSlots].busy.store(false, std::memory_order_relaxed);
  }
}

}  // namespace tether
