// MagazinePool: fixed-size blocks that a steady stream of objects made on one thread and
// freed on another reuses without touching the heap (Bonwick's magazine allocator, in
// miniature). Each thread keeps a magazine of free blocks; a full magazine travels to a
// small mutex-protected depot and an empty one is refilled from it: one lock per
// kMagazine blocks, never per block. Under AddressSanitizer the pool is bypassed, so
// use-after-free stays detectable.
//
// The pools of the library: CallPool (core/call_pool.h), CallFuturePool (core/call_future_pool.h)
// and ScopePool (core/scope_pool.h),
// each an instantiation with its own size, depot, magazine and thread-exit cleanup.
//
// Thread safety: allocate/free from any thread. The depot's mutex guards its batches;
// magazines are thread-local. Blocks still pooled at exit are reachable, not leaked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>

#include "core/fork_guard.h"
#include "core/hot_tls.h"
#include "core/immortal.h"
#include "core/pool_bypass.h"
#include "core/prefetch.h"
#include "core/thread_exit.h"

namespace tether {

namespace magazine_detail {
using pool_detail::FreeBlock;
using pool_detail::kPooled;
}  // namespace magazine_detail

// HeapBlocks: where a pool's blocks come from and go back to by default: each block its
// own heap allocation. A Backing also frees a whole list at once (free_linked: blocks
// linked through their first word, as a magazine's are).
struct HeapBlocks {
  [[nodiscard]] static void* allocate(size_t size) { return ::operator new(size); }
  static void free(void* p) noexcept { ::operator delete(p); }
  static void free_linked(pool_detail::FreeBlock* list) noexcept {
    while (list != nullptr) {
      pool_detail::FreeBlock* next = list->next;
      ::operator delete(list);
      list = next;
    }
  }
};

// kBlockSize: the size every block has (a request for more goes to the heap, and its block
// may come back to the pool: it is large enough for any later request). kMaxBatches: full
// magazines the depot keeps; beyond them, they go back to Backing, where the pool's
// blocks come from (HeapBlocks; a slab's SlabBlocks, whose users make no larger request).
template <size_t kBlockSize, size_t kMagazine, size_t kMaxBatches, Cleanup kWhich, class Backing = HeapBlocks>
class MagazinePool {
 public:
  static constexpr size_t kSlotSize = kBlockSize;

  [[nodiscard]] static void* allocate(size_t size) {
    if (!magazine_detail::kPooled || size > kBlockSize) return ::operator new(size);
    Magazine* mp = t_magazine.get(&destroy_magazine);
    if (mp == nullptr) return Backing::allocate(kBlockSize);
    Magazine& m = *mp;
    if (m.blocks == nullptr) {
      m.blocks = depot().take();
      m.count = m.blocks != nullptr ? kMagazine : 0;
      if (m.blocks == nullptr) return Backing::allocate(kBlockSize);
    }
    magazine_detail::FreeBlock* b = m.blocks;
    m.blocks = b->next;
    --m.count;
    // The next allocation writes the next block in full (a call's constructor), and its
    // lines were often last written on another CPU (the thread that ran the call it held).
    // Asked for now, their transfers overlap with this object's construction instead of
    // stalling the next one at its first locked instruction. 1,024 calls in flight across
    // CPUs (bench/README.md, 2026-12-06, five alternating runs): 0.53-0.62x -> 0.45-0.50x
    // moodycamel + a promise per call; on one CPU and in the round trips, within their spread.
    if (m.blocks != nullptr) prefetch_for_write<kBlockSize>(m.blocks);
    return b;
  }

  // free(p, size): the same, for PoolAllocator (pool_allocator.h): every block is one size.
  static void free(void* p, size_t /*size*/) noexcept { free(p); }

  static void free(void* p) noexcept {
    if (p == nullptr) return;
    if (!magazine_detail::kPooled) {
      ::operator delete(p);
      return;
    }
    Magazine* mp = t_magazine.get(&destroy_magazine);
    if (mp == nullptr) {
      Backing::free(p);
      return;
    }
    Magazine& m = *mp;
    if (m.count == kMagazine) {  // full: hand the whole magazine to the depot
      if (!depot().give(m.blocks)) Backing::free_linked(m.blocks);
      m.blocks = nullptr;
      m.count = 0;
    }
    auto* b = static_cast<magazine_detail::FreeBlock*>(p);
    b->next = m.blocks;
    m.blocks = b;
    ++m.count;
  }

  // The fork handlers (fork_guard.cpp): the depot's lock.
  static void before_fork() { depot().mutex.before_fork(); }
  static void after_fork_in_parent() noexcept { depot().mutex.after_fork_in_parent(); }
  static void after_fork_in_child() noexcept { depot().mutex.after_fork_in_child(); }

 private:
  static_assert(kBlockSize >= sizeof(magazine_detail::FreeBlock) && kMagazine > 0 && kMaxBatches > 0);

  // A batch: kMagazine free blocks linked through their first word.
  struct Depot {
    ForkSafeMutex mutex;
    magazine_detail::FreeBlock* batches[kMaxBatches] = {};  // guarded by mutex: fixed, so give() never allocates
    size_t count = 0;                                      // guarded by mutex

    magazine_detail::FreeBlock* take() {
      std::lock_guard lock(mutex);
      return count == 0 ? nullptr : batches[--count];
    }
    bool give(magazine_detail::FreeBlock* batch) noexcept {
      std::lock_guard lock(mutex);
      if (count >= kMaxBatches) return false;
      batches[count++] = batch;
      return true;
    }
  };
  // Never destroyed (threads may free blocks during exit); made without allocating, so a
  // free() that first touches it cannot fail.
  static Depot& depot() noexcept { return immortal<Depot>(); }

  struct Magazine {
    magazine_detail::FreeBlock* blocks = nullptr;  // free blocks of this thread
    size_t count = 0;
    ~Magazine() {  // the thread ends: its blocks go to the depot, or back to Backing
      if (blocks != nullptr && !depot().give(blocks)) Backing::free_linked(blocks);
    }
  };
  // Made on first use; null once the thread's cleanup destroyed it, or when the cleanup
  // could not be armed (no memory): then this thread uses the heap.
  TETHER_HOT_TLS static constinit inline thread_local ThreadLocalSlot<Magazine, kWhich> t_magazine;
  static void destroy_magazine() noexcept { t_magazine.destroy(); }
};

}  // namespace tether
