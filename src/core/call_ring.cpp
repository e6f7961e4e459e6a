#include "core/call_ring.h"

#include <new>

namespace tether {
namespace {

// Blocks kept on a ring's free list; more go back to the heap (16 x 16 KiB per ring).
constexpr uint32_t kMaxFreeBlocks = 16;

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
    : source_(source), write_block_(new Block), published_(published), read_block_(write_block_) {
  position_.store(&read_block_->entries[0], std::memory_order_relaxed);
}

CallRing::~CallRing() {
  auto free_chain = [](Block* b) {
    while (b != nullptr) {
      Block* next = b->next.load(std::memory_order_relaxed);
      delete b;
      b = next;
    }
  };
  delete left_;
  free_chain(read_block_);  // through write_block_, whose next is null
  delete next_block_;
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
    b = new Block;  // may throw: reserve() runs before the call is accepted
  }
  b->next.store(nullptr, std::memory_order_relaxed);
  return b;
}

void CallRing::reserve(size_t n) {
  if (write_pos_ + n > kBlockEntries && next_block_ == nullptr) next_block_ = take_block();
}

RingEntry& CallRing::next_slot() noexcept {
  if (write_pos_ == kBlockEntries) {  // reserve() made next_block_ ready
    Block* b = next_block_;
    next_block_ = nullptr;
    b->base = count_;
    write_block_->next.store(b, std::memory_order_release);
    write_block_ = b;
    write_pos_ = 0;
  }
  ++count_;
  return write_block_->entries[write_pos_++];
}

void CallRing::append_marks(const SourceMarks& marks) noexcept {
  // Element by element, and no copy: the marks were just stored one by one, and a wider
  // load of them would wait for those stores (a store-forwarding stall on every call).
  bool changed = false;
  for (size_t s = 0; s < kLaneSources; ++s) {
    if (s != source_ && marks[s] != last_marks_[s]) {
      last_marks_[s] = marks[s];
      changed = true;
    }
  }
  if (!changed) return;
  const SourceMarks& m = last_marks_;  // a source never waits on itself: its own mark stays 0
  RingEntry& e = next_slot();
  e.word0.store(pack(m[0], m[1]), std::memory_order_relaxed);
  e.word1 = pack(m[2], m[3]);
  e.word2 = m[4];
  e.word3 = RingEntry::kMarks;
}

void CallRing::append_fast(const FastCall& call, FastTarget* target) noexcept {
  RingEntry& e = next_slot();
  e.word0.store(reinterpret_cast<uintptr_t>(call.method), std::memory_order_relaxed);
  e.word1 = reinterpret_cast<uintptr_t>(call.arg);
  e.word2 = reinterpret_cast<uintptr_t>(call.drop);
  e.word3 = reinterpret_cast<uintptr_t>(target) | RingEntry::kFast;
}

void CallRing::append_call(Call* c) noexcept {
  RingEntry& e = next_slot();
  e.word0.store(reinterpret_cast<uintptr_t>(c), std::memory_order_relaxed);
  e.word3 = RingEntry::kCall;
}

RingEntry* CallRing::peek() noexcept {
  if (!unread()) return nullptr;
  if (read_pos_ == kBlockEntries) {  // published entries lie beyond: the link is there
    left_ = read_block_;
    read_block_ = read_block_->next.load(std::memory_order_acquire);
    read_pos_ = 0;
  }
  return &read_block_->entries[read_pos_];
}

CallRing::Block* CallRing::step() noexcept {
  ++read_pos_;
  ++consumed_;
  position_.store(&read_block_->entries[read_pos_], std::memory_order_release);
  Block* left = left_;
  left_ = nullptr;
  return left;
}

void CallRing::recycle(Block* b) noexcept {
  if (free_count_.load(std::memory_order_relaxed) >= kMaxFreeBlocks) {
    delete b;
    return;
  }
  Block* head = free_.load(std::memory_order_relaxed);
  do {
    b->next.store(head, std::memory_order_relaxed);
  } while (!free_.compare_exchange_weak(head, b, std::memory_order_release, std::memory_order_relaxed));
  free_count_.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace tether
