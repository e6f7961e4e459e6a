#include "core/lazy_thread_group.h"

namespace tether {

std::shared_ptr<ThreadGroup> LazyThreadGroup::get() {
  uintptr_t word = word_.load(std::memory_order_acquire);
  if (Holder* made = holder(word)) return *made;
  auto fresh = std::make_unique<Holder>(std::make_shared<ThreadGroup>());
  static_assert(alignof(Holder) > kOrphaned, "a holder's low bit is free");
  while (holder(word) == nullptr) {  // (null, either): install, keeping the bit
    const uintptr_t installed = reinterpret_cast<uintptr_t>(fresh.get()) | (word & kOrphaned);
    if (word_.compare_exchange_weak(word, installed, std::memory_order_acq_rel, std::memory_order_acquire)) {
      Holder* made = fresh.release();
      if ((word & kOrphaned) != 0) (*made)->orphan();  // orphan() came first and found none
      return *made;
    }
  }
  return *holder(word);  // another's (made, either): fresh goes
}

void LazyThreadGroup::orphan() {
  const uintptr_t before = word_.fetch_or(kOrphaned, std::memory_order_acq_rel);
  if ((before & kOrphaned) == 0 && holder(before) != nullptr) (*holder(before))->orphan();
}

void LazyThreadGroup::join_all() {
  if (Holder* made = holder(word_.load(std::memory_order_acquire))) (*made)->join_all();
}

}  // namespace tether
