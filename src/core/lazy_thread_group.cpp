#include "core/lazy_thread_group.h"

namespace tether {

std::shared_ptr<ThreadGroup> LazyThreadGroup::get() {
  uintptr_t word = word_.load(std::memory_order_acquire);
  if (Holder* made = holder(word)) return *made;
  auto fresh = std::make_unique<Holder>(std::make_shared<ThreadGroup>());
  while (holder(word) == nullptr) {  // 0 or kOrphanedBeforeMade: install
    if (word_.compare_exchange_weak(word, reinterpret_cast<uintptr_t>(fresh.get()), std::memory_order_acq_rel,
                                    std::memory_order_acquire)) {
      Holder* made = fresh.release();
      if (word == kOrphanedBeforeMade) (*made)->orphan();  // orphan() came first and found none
      return *made;
    }
  }
  return *holder(word);  // another's: fresh goes
}

void LazyThreadGroup::orphan() {
  uintptr_t word = word_.load(std::memory_order_acquire);
  for (;;) {
    if (Holder* made = holder(word)) {
      (*made)->orphan();
      return;
    }
    if (word == kOrphanedBeforeMade) return;
    if (word_.compare_exchange_weak(word, kOrphanedBeforeMade, std::memory_order_acq_rel,
                                    std::memory_order_acquire)) {
      return;  // the group made later orphans itself
    }
  }
}

void LazyThreadGroup::join_all() {
  if (Holder* made = holder(word_.load(std::memory_order_acquire))) (*made)->join_all();
}

}  // namespace tether
