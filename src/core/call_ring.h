// CallRing: the queue of ONE producer thread into a lane with one consumer, leased by that
// thread for as long as it keeps calling (see Inbox::lease_ring). A lane has a few of them
// beside its shared mailbox, so producers that call often never write a cache line
// another producer writes, and a call costs no atomic read-modify-write at all.
//
// Entries are 32 bytes in blocks of 16 KiB, each aligned to its size so the block of any
// entry is found by masking the entry's address. Blocks are linked; the consumer hands
// the ones it has left to the producer through a small free list, so a steady stream of
// calls reuses warm memory and allocates nothing.
//
// Order between a lane's sources: see source_marks.h. A ring stores marks as an entry of
// their own, written only when they differ from the last ones written: a lone producer
// (the other sources idle) writes none, and the consumer, which runs a ring in order,
// has reached a ring's last marks before any entry behind them.
//
// Thread safety: the producer side is used only by the lease holder; lease changes hands
// through owner_ (acquire/release), which carries the producer state with it. The consumer
// side is used only by the lane's single consumer (or, under the lane's consumer token, by
// a canceller, see inbox.h). The consumer publishes the entry it will read
// next in position_; entries from there to the published count are still queued.
// Memory ordering: entries and block links are written before the release store of the
// count that publishes them, which the consumer reads with acquire.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/prefetch.h"
#include "core/source_marks.h"
#include "tether/tether.h"

namespace tether {

class FastTarget;

// FastCall: a fire-and-forget actor method call carried inline in a ring entry.
struct FastCall {
  tether_method_fn method;
  void* arg;
  tether_drop_fn drop;
};

// RingEntry: a fast call or marks. word0 is atomic because a canceller claims a queued
// call by storing 0 there (release) while the consumer may be reading it.
struct RingEntry {
  enum Kind : uintptr_t { kFast = 0, kMarks = 1 };
  static constexpr uintptr_t kKindMask = 1;  // a FastTarget is at least 8-aligned (its vtable pointer)
  // kWaited: or'ed into word3 of a fast call whose caller waits for it (waited_call.h);
  // kFuture: of a call with a future (the actor's FutureCall). So a run of calls
  // (FastRun: the entries whose word3 is the first's) is all answered calls (waited or
  // with a future) or none, and the run's loop need not tell them from fire-and-forget
  // calls call by call. kWaited is also a hint for the wake-up (wake_preemption.h):
  // that call's caller blocks at once; a call with a future's may stream more first.
  static constexpr uintptr_t kWaited = 2;
  static constexpr uintptr_t kFuture = 4;
  static constexpr uintptr_t kTargetMask = ~(kKindMask | kWaited | kFuture);

  std::atomic<uintptr_t> word0;  // kFast: the method; kMarks: marks 0-1
  uintptr_t word1;               // kFast: arg; kMarks: marks 2-3
  uintptr_t word2;               // kFast: drop; kMarks: mark 4
  uintptr_t word3;               // the kind, or'ed into the FastTarget for kFast

  [[nodiscard]] Kind kind() const noexcept { return static_cast<Kind>(word3 & kKindMask); }
  [[nodiscard]] SourceMarks marks() const noexcept;
  // kFast: the call's target, and the call (word0 as the consumer loaded it).
  [[nodiscard]] FastTarget* fast_target() const noexcept {
    return reinterpret_cast<FastTarget*>(word3 & kTargetMask);
  }
  [[nodiscard]] FastCall fast_call(uintptr_t word0_seen) const noexcept {
    return FastCall{reinterpret_cast<tether_method_fn>(word0_seen), reinterpret_cast<void*>(word1),
                    reinterpret_cast<tether_drop_fn>(word2)};
  }
};
static_assert(sizeof(RingEntry) == 32);

class CallRing {
 public:
  static constexpr size_t kBlockBytes = 16384;
  static constexpr size_t kBlockEntries = (kBlockBytes - 16) / sizeof(RingEntry);
  struct alignas(kBlockBytes) Block {
    RingEntry entries[kBlockEntries];
    uint64_t base = 0;                   // index of entries[0]; set before any is published
    std::atomic<Block*> next{nullptr};   // the chain, then the free list
  };
  static_assert(sizeof(Block) == kBlockBytes);

  // published: the lane's counter for this source (the lane keeps the counters apart, one
  // cache line each, so producers read the others' without touching the rings).
  CallRing(size_t source, std::atomic<uint64_t>& published);
  ~CallRing();  // frees every block; nothing may be queued any more
  CallRing(const CallRing&) = delete;
  CallRing& operator=(const CallRing&) = delete;

  // try_lease / end_lease: the producer side changes hands.
  [[nodiscard]] bool try_lease() noexcept {
    uint32_t none = 0;
    return owner_.compare_exchange_strong(none, 1, std::memory_order_acq_rel);
  }
  void end_lease() noexcept { owner_.store(0, std::memory_order_release); }
  // fences_lightly: whether the holder publishes with a light fence now, and so is
  // counted in its inbox's light leases (inbox.h); read and written by the holder only.
  [[nodiscard]] bool fences_lightly() const noexcept { return light_end_ != 0; }
  void set_fences_lightly(bool light) noexcept { light_end_ = light ? write_block_end() : 0; }
  // source: this ring's index among its lane's sources.
  [[nodiscard]] size_t source() const noexcept { return source_; }

  // ---- producer side (the lease holder); inline, it runs on every call ----
  // try_reserve: room for n more entries without allocating; false without memory.
  [[nodiscard]] bool try_reserve(size_t n) noexcept {
    return write_at_ + n <= &write_block_->entries[kBlockEntries] || next_block_ != nullptr || reserve_block();
  }
  // append_marks: writes a marks entry if read(s), the count of source s now, differs
  // from what the last marks entry said, for the mailbox or any other of the lane's
  // first `rings` rings (the rings made so far: see Inbox::push_fast). Needs a reserved
  // entry.
  template <class Read>
  void append_marks(Read read, size_t rings) noexcept {
    bool changed = false;
    for_each_other_source(rings, [&](size_t s) {
      const uint32_t m = read(s);
      if (m != last_marks_[s]) {
        last_marks_[s] = m;
        changed = true;
      }
      return true;
    });
    if (changed) write_marks();
  }
  // marks_current: append_marks(read, rings) would write no marks entry now.
  template <class Read>
  [[nodiscard]] bool marks_current(Read read, size_t rings) const noexcept {
    return for_each_other_source(rings, [&](size_t s) { return read(s) == last_marks_[s]; });
  }
  // has_light_room: one more entry fits in the block being written (no block to link), and
  // the holder fences lightly: one compare for both (the fire-and-forget caller's hot path
  // asks on every call).
  [[nodiscard]] bool has_light_room() const noexcept { return reinterpret_cast<uintptr_t>(write_at_) < light_end_; }
  // flags: 0, or RingEntry::kWaited.
  void append_fast(const FastCall& call, FastTarget* target, uintptr_t flags) noexcept {
    write_entry(next_slot(), call, target, flags);
  }
  // prefetch_for_push: asks for the lines a push writes (its entry, the published count)
  // at once, ahead of the loads the push makes before it writes them.
  void prefetch_for_push() const noexcept {
    prefetch_for_write<sizeof(RingEntry)>(write_at_);
    prefetch_for_write<sizeof(uint64_t)>(&published_);
  }
  // publish: makes everything appended visible to the consumer.
  void publish() noexcept { published_.store(count_, std::memory_order_release); }

  // append_fast_with_room: append_fast once has_light_room() held; returns the count to
  // publish (publish_count).
  [[nodiscard]] uint64_t append_fast_with_room(const FastCall& call, FastTarget* target, uintptr_t flags) noexcept {
    const uint64_t count = count_ + 1;
    count_ = count;
    write_entry(*write_at_++, call, target, flags);
    return count;
  }
  // publish_count: publish() for the count append_fast_with_room returned, from a register.
  void publish_count(uint64_t count) noexcept { published_.store(count, std::memory_order_release); }

  // ---- consumer side (the lane's consumer; a canceller under the token) ----
  // peek: the next queued entry, or null when the consumer has read all published.
  [[nodiscard]] RingEntry* peek() noexcept {
    if (!unread()) return nullptr;
    if (read_pos_ == kBlockEntries) enter_read_block();
    return &read_block_->entries[read_pos_];
  }
  // consumed: how many entries the consumer has stepped past.
  [[nodiscard]] uint64_t consumed() const noexcept { return consumed_; }
  // Span: entries [begin, end) of one block, published and not yet stepped past.
  struct Span {
    RingEntry* begin = nullptr;
    RingEntry* end = nullptr;
  };
  // readable: the entries right behind the consumer's position that are published, up
  // to limit and to the end of its block (peek crosses blocks); empty when there are none.
  // The published count is read afresh only when all seen were stepped past.
  [[nodiscard]] Span readable(uint64_t limit) noexcept {
    if (read_pos_ == kBlockEntries || !unread()) return {};
    uint64_t n = seen_ - consumed_;
    if (n > limit) n = limit;
    if (n > kBlockEntries - read_pos_) n = kBlockEntries - read_pos_;
    RingEntry* begin = &read_block_->entries[read_pos_];
    return {begin, begin + n};
  }
  // step_to: the consumer steps past an entry of readable()'s span by its address alone:
  // the Dekker store of step(), made as it goes; advance() catches the count up later.
  void step_to(RingEntry* next) noexcept { position_.store(next, std::memory_order_release); }
  // advance: the consumer stepped past n more entries of the span with step_to.
  void advance(uint64_t n) noexcept {
    read_pos_ += n;
    consumed_ += n;
  }
  // step: moves the consumer past the entry peek() returned and stores the new position
  // (the Dekker store that pairs with a canceller, see inbox.h). Returns the block left
  // behind, if any: the caller recycles it once no canceller can be walking it.
  [[nodiscard]] Block* step() noexcept {
    ++read_pos_;
    ++consumed_;
    position_.store(&read_block_->entries[read_pos_], std::memory_order_release);
    Block* left = left_;
    left_ = nullptr;
    return left;
  }
  // unread_count: how many published entries the consumer has not stepped past, read
  // afresh (consumer side).
  [[nodiscard]] uint64_t unread_count() noexcept {
    seen_ = published_.load(std::memory_order_acquire);
    return seen_ - consumed_;
  }
  // unread: published entries the consumer has not stepped past (consumer side).
  [[nodiscard]] bool unread() noexcept {
    return consumed_ != seen_ || (seen_ = published_.load(std::memory_order_acquire)) != consumed_;
  }
  // recycle: a block the consumer has left goes back to the producer (or the heap).
  void recycle(Block* b) noexcept;
  // for_each_queued: f(entry) for every entry from the consumer's position up to the
  // published count (a canceller, under the token, after the heavy fence).
  template <class F>
  void for_each_queued(F&& f) noexcept;

 private:
  // write_block_end: the end of the block being written, as has_light_room compares it.
  [[nodiscard]] uintptr_t write_block_end() const noexcept {
    return reinterpret_cast<uintptr_t>(&write_block_->entries[kBlockEntries]);
  }
  // next_slot: the entry to write (producer).
  [[nodiscard]] RingEntry& next_slot() noexcept {
    if (write_at_ == &write_block_->entries[kBlockEntries]) enter_next_block();
    ++count_;
    return *write_at_++;
  }
  static void write_entry(RingEntry& e, const FastCall& call, FastTarget* target, uintptr_t flags) noexcept {
    e.word0.store(reinterpret_cast<uintptr_t>(call.method), std::memory_order_relaxed);
    e.word1 = reinterpret_cast<uintptr_t>(call.arg);
    e.word2 = reinterpret_cast<uintptr_t>(call.drop);
    e.word3 = reinterpret_cast<uintptr_t>(target) | RingEntry::kFast | flags;
  }
  // for_each_other_source: f(s) for the mailbox and the first `rings` rings but this one,
  // while f returns true; whether it always did. Element by element: no array is built
  // and read back whole (a store-forwarding stall on every call). A source never waits
  // on itself: its own mark stays 0.
  template <class F>
  bool for_each_other_source(size_t rings, F&& f) const noexcept {
    if (!f(kMailboxSource)) return false;
    if (rings <= 1) return true;  // the one ring made is this one: the common case, cut short
    for (size_t s = 0; s < rings; ++s) {
      if (s != source_ && !f(s)) return false;
    }
    return true;
  }
  void enter_next_block() noexcept;     // producer: links the reserved block
  void enter_read_block() noexcept;     // consumer: follows the link (published beyond)
  void write_marks() noexcept;          // producer: last_marks_ as an entry
  [[nodiscard]] Block* take_block();    // producer: free list or heap; throws std::bad_alloc
  [[nodiscard]] bool reserve_block() noexcept;  // producer: next_block_ = take_block()

  const size_t source_;
  // Producer side (lease holder), on lines of its own.
  alignas(64) std::atomic<uint32_t> owner_{0};
  Block* write_block_;
  RingEntry* write_at_;            // next entry to write, in write_block_ (its end: full)
  Block* next_block_ = nullptr;    // reserved: linked when write_block_ is full
  Block* spare_ = nullptr;         // blocks taken from the free list, linked by next
  uint64_t count_ = 0;             // entries appended
  uintptr_t light_end_ = 0;        // write_block_end() while the holder fences lightly, else 0
  SourceMarks last_marks_{};       // marks of the last marks entry written
  std::atomic<uint64_t>& published_;

  // Consumer side.
  alignas(64) std::atomic<RingEntry*> position_;  // the next entry to read (see step)
  Block* read_block_;
  size_t read_pos_ = 0;
  Block* left_ = nullptr;          // the block peek() moved out of, until step() hands it back
  uint64_t consumed_ = 0;
  uint64_t seen_ = 0;              // published count last read

  // Free list: pushed by the consumer, emptied at once by the producer (no ABA).
  alignas(64) std::atomic<Block*> free_{nullptr};
  std::atomic<uint32_t> free_count_{0};
};

template <class F>
void CallRing::for_each_queued(F&& f) noexcept {
  RingEntry* pos = position_.load(std::memory_order_acquire);
  auto* block = reinterpret_cast<Block*>(reinterpret_cast<uintptr_t>(pos) & ~(uintptr_t{kBlockBytes} - 1));
  size_t at = static_cast<size_t>(pos - block->entries);
  uint64_t index = block->base + at;
  const uint64_t end = published_.load(std::memory_order_acquire);
  for (; index < end; ++index, ++at) {
    if (at == kBlockEntries) {
      block = block->next.load(std::memory_order_acquire);
      at = 0;
    }
    f(block->entries[at]);
  }
}

}  // namespace tether
