#include "core/lazy_thread_group.h"

namespace tether {

std::shared_ptr<ThreadGroup> LazyThreadGroup::get() {
  if (std::shared_ptr<ThreadGroup>* made = made_.load(std::memory_order_acquire)) return *made;
  auto fresh = std::make_unique<std::shared_ptr<ThreadGroup>>(std::make_shared<ThreadGroup>());
  std::shared_ptr<ThreadGroup>* installed = nullptr;
  if (made_.compare_exchange_strong(installed, fresh.get(), std::memory_order_seq_cst, std::memory_order_acquire)) {
    installed = fresh.release();
  }  // else installed is the winner's, and fresh goes
  if (orphaned_.load(std::memory_order_seq_cst)) (*installed)->orphan();
  return *installed;
}

void LazyThreadGroup::orphan() {
  orphaned_.store(true, std::memory_order_seq_cst);
  if (std::shared_ptr<ThreadGroup>* made = made_.load(std::memory_order_seq_cst)) (*made)->orphan();
}

void LazyThreadGroup::join_all() {
  if (std::shared_ptr<ThreadGroup>* made = made_.load(std::memory_order_acquire)) (*made)->join_all();
}

}  // namespace tether
