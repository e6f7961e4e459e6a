#include "core/handle_table.h"

#include <string>

#include "core/immortal.h"
#include "core/status_error.h"
#include "tether/tether.h"

namespace tether {
namespace {

constexpr int kIndexBits = 24;
constexpr int kGenerationBits = 32;
constexpr uint64_t kIndexMask = (uint64_t{1} << kIndexBits) - 1;
constexpr uint64_t kGenerationMask = (uint64_t{1} << kGenerationBits) - 1;
constexpr size_t kMaxSlots = size_t{1} << kIndexBits;

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

uint64_t HandleTable::insert(Kind kind, std::shared_ptr<void> obj) {
  std::lock_guard lock(mutex_);
  uint32_t index;
  if (!free_.empty()) {
    index = free_.back();
    free_.pop_back();
  } else {
    if (slots_.size() >= kMaxSlots) {
      throw StatusError(TETHER_E_NO_MEMORY, "too many live handles");
    }
    index = static_cast<uint32_t>(slots_.size());
    // Room in free_ for every slot, so remove() (a release) never needs memory.
    if (free_.capacity() < slots_.size() + 1) free_.reserve(2 * slots_.size() + 16);  // amortized
    slots_.emplace_back();
  }
  Slot& slot = slots_[index];
  slot.kind = kind;
  slot.epoch = fork_epoch();
  slot.object = std::move(obj);
  return pack(kind, slot.generation, index);
}

size_t HandleTable::locate(Kind kind, uint64_t id) const {
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
  const auto generation = static_cast<uint32_t>((id >> kIndexBits) & kGenerationMask);
  if (index >= slots_.size()) invalid(kind, "handle is not one the library gave out");
  const Slot& slot = slots_[index];
  if (slot.generation != generation || !slot.object || slot.kind != kind) {
    invalid(kind, "was released");
  }
  if (slot.epoch != fork_epoch()) {
    throw StatusError(TETHER_E_FORKED, std::string(kind_name(kind)) +
                                           " handle belongs to the parent process: it cannot be used in a child "
                                           "after fork() (objects made in the child work)");
  }
  return index;
}

std::shared_ptr<void> HandleTable::find(Kind kind, uint64_t id) const {
  std::lock_guard lock(mutex_);
  return slots_[locate(kind, id)].object;
}

std::shared_ptr<void> HandleTable::remove(Kind kind, uint64_t id) {
  std::shared_ptr<void> obj;
  {
    std::lock_guard lock(mutex_);
    const size_t index = locate(kind, id);
    Slot& slot = slots_[index];
    obj = std::move(slot.object);
    slot.object.reset();
    ++slot.generation;
    free_.push_back(static_cast<uint32_t>(index));  // never allocates: reserved by insert
  }
  return obj;  // the caller decides where the object's last reference dies
}

}  // namespace tether
