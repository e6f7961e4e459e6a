#include "core/handle_table.h"

#include <string>

#include "core/cpu_relax.h"
#include "core/immortal.h"
#include "core/status_error.h"
#include "tether/tether.h"

namespace tether {
namespace {

constexpr int kIndexBits = 24;
constexpr int kGenerationBits = 32;
constexpr uint64_t kIndexMask = (uint64_t{1} << kIndexBits) - 1;
constexpr uint64_t kGenerationMask = (uint64_t{1} << kGenerationBits) - 1;

uint64_t pack(Kind kind, uint32_t generation, uint32_t index) {
  return (uint64_t{static_cast<uint8_t>(kind)} << (kIndexBits + kGenerationBits)) |
         (uint64_t{generation} << kIndexBits) | index;
}

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

HandleTable& HandleTable::instance() {
  return immortal<HandleTable>();  // never destroyed: see the class comment
}

// SlotLock: a slot's lock, test-and-test-and-set: held for a few instructions, so a
// waiter spins (and yields after a while: the holder may have been preempted).
class HandleTable::SlotLock {
 public:
  explicit SlotLock(const Slot& slot) noexcept : busy_(slot.busy) {
    SpinWait spin;
    while (busy_.exchange(true, std::memory_order_acquire)) {
      while (busy_.load(std::memory_order_relaxed)) spin.once();
    }
  }
  ~SlotLock() { busy_.store(false, std::memory_order_release); }
  SlotLock(const SlotLock&) = delete;
  SlotLock& operator=(const SlotLock&) = delete;

 private:
  std::atomic<bool>& busy_;
};

uint64_t HandleTable::insert(Kind kind, std::shared_ptr<void> obj) {
  uint32_t index;
  {
    std::lock_guard lock(mutex_);
    if (!free_.empty()) {
      index = free_.back();
      free_.pop_back();
    } else {
      index = used_.load(std::memory_order_relaxed);
      if (index >= kMaxSlots) throw StatusError(TETHER_E_NO_MEMORY, "too many live handles");
      if (index % kChunkSlots == 0) {  // the slots made so far are all in use: one more chunk
        auto chunk = std::make_unique<Slot[]>(kChunkSlots);
        // Room in free_ for every slot, so remove() (a release) never needs memory.
        free_.reserve(index + kChunkSlots);
        chunks_[index / kChunkSlots].store(chunk.release(), std::memory_order_release);
      }
      used_.store(index + 1, std::memory_order_release);
    }
  }
  Slot& slot = chunks_[index / kChunkSlots].load(std::memory_order_acquire)[index % kChunkSlots];
  SlotLock lock(slot);
  slot.kind = kind;
  slot.epoch = fork_epoch();
  slot.object = std::move(obj);  // the slot was free: nothing is dropped under the lock
  return pack(kind, slot.generation, index);
}

HandleTable::Slot& HandleTable::slot_of(Kind kind, uint64_t id) const {
  if (id == 0) invalid(kind, "handle is null");
  const auto id_kind = static_cast<Kind>(id >> (kIndexBits + kGenerationBits));
  if (id_kind != kind) {
    const auto raw = static_cast<uint8_t>(id_kind);
    if (raw >= static_cast<uint8_t>(Kind::Runner) && raw <= static_cast<uint8_t>(Kind::Compiled)) {
      invalid(kind, std::string("expected, got a ") + kind_name(id_kind) + " handle");
    }
    invalid(kind, "handle is not one the library gave out");
  }
  const size_t index = id & kIndexMask;
  if (index >= used_.load(std::memory_order_acquire)) invalid(kind, "handle is not one the library gave out");
  return chunks_[index / kChunkSlots].load(std::memory_order_acquire)[index % kChunkSlots];
}

HandleTable::Miss HandleTable::miss_locked(const Slot& slot, Kind kind, uint64_t id) noexcept {
  const auto generation = static_cast<uint32_t>((id >> kIndexBits) & kGenerationMask);
  if (slot.generation != generation || !slot.object || slot.kind != kind) return Miss::kReleased;
  if (slot.epoch != fork_epoch()) return Miss::kForked;
  return Miss::kNone;
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
  {
    std::lock_guard lock(mutex_);
    free_.push_back(static_cast<uint32_t>(id & kIndexMask));  // never allocates: reserved by insert
  }
  return obj;  // the caller decides where the object's last reference dies
}

void HandleTable::after_fork_in_child() noexcept {
  mutex_.after_fork_in_child();
  // Only the forking thread exists now: a slot lock held at fork() belongs to nobody.
  const uint32_t used = used_.load(std::memory_order_relaxed);
  for (uint32_t i = 0; i < used; ++i) {
    chunks_[i / kChunkSlots].load(std::memory_order_relaxed)[i % kChunkSlots].busy.store(false, std::memory_order_relaxed);
  }
}

}  // namespace tether
