#include "core/ring_block_depot.h"

#include <mutex>

#include "core/fork_guard.h"
#include "core/immortal.h"

namespace tether {
namespace {

struct Depot {
  ForkSafeMutex mutex;
  CallRing::Block* blocks = nullptr;  // guarded by mutex: linked through Block::next
  size_t count = 0;                   // guarded by mutex
};

// Never destroyed (a ring may end while the process exits); made without allocating. The
// blocks it keeps at exit are reachable from it, not leaked.
Depot& depot() noexcept { return immortal<Depot>(); }

}  // namespace

CallRing::Block* RingBlockDepot::take() noexcept {
  Depot& d = depot();
  std::lock_guard lock(d.mutex);
  CallRing::Block* b = d.blocks;
  if (b != nullptr) {
    d.blocks = b->next.load(std::memory_order_relaxed);
    --d.count;
  }
  return b;
}

bool RingBlockDepot::give(CallRing::Block* b) noexcept {
  Depot& d = depot();
  std::lock_guard lock(d.mutex);
  if (d.count >= kMaxBlocks) return false;
  b->next.store(d.blocks, std::memory_order_relaxed);
  d.blocks = b;
  ++d.count;
  return true;
}

void RingBlockDepot::before_fork() { depot().mutex.before_fork(); }
void RingBlockDepot::after_fork_in_parent() noexcept { depot().mutex.after_fork_in_parent(); }
void RingBlockDepot::after_fork_in_child() noexcept { depot().mutex.after_fork_in_child(); }

size_t RingBlockDepot::blocks_kept() noexcept {
  Depot& d = depot();
  std::lock_guard lock(d.mutex);
  return d.count;
}

}  // namespace tether
