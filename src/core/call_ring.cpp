#include "core/call_ring.h"

#include <new>

#include "core/ring_block_depot.h"

namespace tether {
namespace {

// Blocks kept on a ring's free list; more go to the depot (core/ring_block_depot.h), or
// back to the heap when it is full (16 x 16 KiB per ring).
constexpr uint32_t kMaxFreeBlocks = 16;

// fresh_block: one from the depot, else from the heap (throws std::bad_alloc).
CallRing::Block* fresh_block() {
  if (CallRing::Block* b = RingBlockDepot::take()) return b;
  return new CallRing::Block;
}

// drop_block: to the depot, else back to the heap.
void drop_block(CallRing::Block* b) noexcept {
  if (b != nullptr && !RingBlockDepot::give(b)) delete b;
}

uintptr_t pack(uint32_t low, uint32_t high) noexcept { return uintptr_t{low} | (uintptr_t{high} << 32); }

}  // namespace

SourceMarks RingEntry::marks() const noexcept {
  const uintptr_t w0 = word0.load(std::memory_order_relaxed);
  SourceMarks m{};
  static_assert(kLaneSources == 5, "marks are packed for five sources");
  m[0] = static_cast<uint32_t>(w0);
  m[1] = static_cast<uint32_t>(w0 >> 32);
  m[2] = static_cast<uint32_t>(word1);
  m[3] = static_cast<uint32_t>(word1 >> 32);
  m[4] = static_cast<uint32_t>(word2);
  return m;
}

CallRing::CallRing(size_t source, std::atomic<uint64_t>& published)
    : source_(source),
      write_block_(fresh_block()),
      write_at_(write_block_->entries),
      published_(published),
      read_block_(write_block_) {
  write_block_->base = 0;  // a block from the depot was another ring's
  write_block_->next.store(nullptr, std::memory_order_relaxed);
  position_.store(&read_block_->entries[0], std::memory_order_relaxed);
}

CallRing::~CallRing() {
  auto free_chain = [](Block* b) {
    while (b != nullptr) {
      Block* next = b->next.load(std::memory_order_relaxed);
      drop_block(b);
      b = next;
    }
  };
  drop_block(left_);
  free_chain(read_block_);  // through write_block_, whose next is null
  drop_block(next_block_);
  free_chain(spare_);
  free_chain(free_.load(std::memory_order_acquire));
}

CallRing::Block* CallRing::take_block() {
  if (spare_ == nullptr) {
    spare_ = free_.exchange(nullptr, std::memory_order_acquire);
    uint32_t n = 0;
    for (Block* b = spare_; b != nullptr; b = b->next.load(std::memory_order_relaxed)) ++n;
    if (n != 0) free_count_.fetch_sub(n, std::memory_order_relaxed);
  }
  Block* b = spare_;
  if (b != nullptr) {
    spare_ = b->next.load(std::memory_order_relaxed);
  } else {
    b = fresh_block();  // may throw: reserve() runs before the call is accepted
  }
  b->next.store(nullptr, std::memory_order_relaxed);
  return b;
}

bool CallRing::reserve_block() noexcept {
  try {
    next_block_ = take_block();
    return true;
  } catch (const std::bad_alloc&) {
    return false;
  }
}

void CallRing::enter_next_block() noexcept {
  Block* b = next_block_;  // reserve() made it ready
  next_block_ = nullptr;
  b->base = count_;
  write_block_->next.store(b, std::memory_order_release);
  write_block_ = b;
  write_at_ = b->entries;
  if (light_end_ != 0) light_end_ = write_block_end();
}

void CallRing::write_marks() noexcept {
  const SourceMarks& m = last_marks_;
  RingEntry& e = next_slot();
  e.word0.store(pack(m[0], m[1]), std::memory_order_relaxed);
  e.word1 = pack(m[2], m[3]);
  e.word2 = m[4];
  e.word3 = RingEntry::kMarks;
}

void CallRing::enter_read_block() noexcept {
  left_ = read_block_;
  read_block_ = read_block_->next.load(std::memory_order_acquire);
  read_pos_ = 0;
}

void CallRing::recycle(Block* b) noexcept {
  if (free_count_.load(std::memory_order_relaxed) >= kMaxFreeBlocks) {
    drop_block(b);
    return;
  }
  Block* head = free_.load(std::memory_order_relaxed);
  do {
    b->next.store(head, std::memory_order_relaxed);
  } while (!free_.compare_exchange_weak(head, b, std::memory_order_release, std::memory_order_relaxed));
  free_count_.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace tether
