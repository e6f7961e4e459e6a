// BlockSlab: blocks of one size and alignment for objects made by the thousand (actors:
// bench/compare makes 100,000), carved kChunkBlocks at a time out of one aligned heap
// allocation (after a header of kAlign bytes that links the chunks) and kept for reuse
// once freed. A block then costs its size and a few
// instructions: an actor's 512-byte, 64-byte-aligned block from the heap took ~460
// instructions of glibc's memalign and ~560 bytes (its header, and the alignment's slack).
// Chunks are never given back: their blocks go to later objects, and the ones still
// kept at exit are reachable from the slab, not leaked. Under AddressSanitizer every
// block is a heap allocation of its own (pool_bypass.h).
//
// Once a slab has carved kHugeAfterBytes, its next chunks are huge-page regions
// (platform::map_huge_region, 2 MiB) when the OS gives them: for 100,000 actors the page
// faults of 4 KiB pages were most of a create's time (bench/README.md: 12,500 of them,
// ~500 -> ~300 ns a create). A program with a few actors never maps one. A slab of
// short-lived blocks says kHugePages = false: calls (call_pool.h) outlive their run only
// while a backlog builds, and a huge region mapped for one held 2 MiB for a backlog that
// may never come back (100,000 actors made while their threads lagged behind their
// constructor calls: 518 against 494 bytes of RSS an actor in two runs of five).
//
// Thread safety: allocate and free from any thread, under the slab's mutex (taken once
// per object made or freed: objects made by the thousand, not per call). std::allocate_shared
// takes it through PoolAllocator (pool_allocator.h).
#pragma once

#include <cstddef>
#include <mutex>
#include <new>

#include "core/fork_guard.h"
#include "core/immortal.h"
#include "core/pool_bypass.h"
#include "platform/platform.h"

namespace tether {

template <size_t kBlockSize, size_t kAlign, size_t kChunkBlocks, bool kHugePages = true>
class BlockSlab {
 public:
  static_assert(kBlockSize % kAlign == 0, "every block of a chunk keeps the alignment");
  static constexpr size_t kBlockBytes = kBlockSize;
  using FreeBlock = pool_detail::FreeBlock;

  // allocate: a block for size bytes (a larger request, or one under AddressSanitizer,
  // goes to the heap with the same alignment). Throws std::bad_alloc.
  [[nodiscard]] static void* allocate(size_t size) {
    if (!pooled(size)) return ::operator new(size, std::align_val_t{kAlign});
    State& s = state();
    std::lock_guard lock(s.mutex);
    if (s.free != nullptr) {
      FreeBlock* b = s.free;
      s.free = b->next;
      return b;
    }
    if (s.chunk_end - s.carve < static_cast<std::ptrdiff_t>(kBlockSize)) add_chunk(s);
    void* b = s.carve;
    s.carve += kBlockSize;
    s.carved += kBlockSize;
    return b;
  }

  // huge_chunks: how many chunks were huge-page regions (for tests).
  [[nodiscard]] static size_t huge_chunks() noexcept {
    State& s = state();
    std::lock_guard lock(s.mutex);
    return s.huge_chunks;
  }

  // free: p, which allocate(size) gave, goes back to the slab (or the heap).
  static void free(void* p, size_t size) noexcept {
    if (!pooled(size)) {
      ::operator delete(p, std::align_val_t{kAlign});
      return;
    }
    State& s = state();
    std::lock_guard lock(s.mutex);
    s.free = new (p) FreeBlock{s.free};
  }

  // free_linked: every block of list (blocks allocate(kBlockBytes) gave, linked through
  // their first word) goes back to the slab, under one lock.
  static void free_linked(FreeBlock* list) noexcept {
    if (list == nullptr) return;
    if (!pool_detail::kPooled) {
      while (list != nullptr) {
        FreeBlock* next = list->next;
        ::operator delete(list, std::align_val_t{kAlign});
        list = next;
      }
      return;
    }
    FreeBlock* tail = list;
    while (tail->next != nullptr) tail = tail->next;  // before the lock: the list is the caller's
    State& s = state();
    std::lock_guard lock(s.mutex);
    tail->next = s.free;
    s.free = list;
  }

  // The fork handlers (fork_guard.cpp): the slab's lock.
  static void before_fork() { state().mutex.before_fork(); }
  static void after_fork_in_parent() noexcept { state().mutex.after_fork_in_parent(); }
  static void after_fork_in_child() noexcept { state().mutex.after_fork_in_child(); }

 private:
  struct ChunkHeader {
    ChunkHeader* next;
  };
  static constexpr size_t kChunkBytes = kAlign + kBlockSize * kChunkBlocks;
  static constexpr size_t kHugeAfterBytes = platform::kHugeRegionBytes / 2;
  static_assert(kAlign + kBlockSize <= platform::kHugeRegionBytes && platform::kHugeRegionBytes % kAlign == 0);
  struct State {
    ForkSafeMutex mutex;
    ChunkHeader* chunks = nullptr;       // guarded by mutex: every chunk made, newest first
    FreeBlock* free = nullptr;           // guarded by mutex: blocks freed, for reuse
    unsigned char* carve = nullptr;      // guarded by mutex: the next block of the newest chunk
    unsigned char* chunk_end = nullptr;  // guarded by mutex
    size_t carved = 0;                   // guarded by mutex: bytes of blocks carved so far
    size_t huge_chunks = 0;              // guarded by mutex
  };

  // add_chunk: a new chunk to carve from (s locked). Throws std::bad_alloc.
  static void add_chunk(State& s) {
    unsigned char* chunk = nullptr;
    size_t bytes = kChunkBytes;
    if (kHugePages && s.carved >= kHugeAfterBytes) {
      chunk = static_cast<unsigned char*>(platform::map_huge_region());
      if (chunk != nullptr) {
        bytes = platform::kHugeRegionBytes;
        ++s.huge_chunks;
      }
    }
    if (chunk == nullptr) chunk = static_cast<unsigned char*>(::operator new(kChunkBytes, std::align_val_t{kAlign}));
    // A chunk starts with one aligned header, the link that keeps every chunk reachable
    // from the slab (the free list and the carve point only point into chunks, which a
    // leak checker such as valgrind's counts as "possibly lost"). The rest of a chunk
    // left uncarved (the tail of the last one, too small for a block) is never used.
    s.chunks = new (chunk) ChunkHeader{s.chunks};
    s.carve = chunk + kAlign;
    s.chunk_end = chunk + bytes;
  }
  static_assert(kBlockSize >= sizeof(FreeBlock) && kAlign >= sizeof(ChunkHeader));

  [[nodiscard]] static constexpr bool pooled(size_t size) noexcept {
    return pool_detail::kPooled && size <= kBlockSize;
  }
  // Never destroyed (an object may be freed while the process exits); made without allocating.
  static State& state() noexcept { return immortal<State>(); }
};

// SlabBlocks: a BlockSlab as where a MagazinePool's blocks come from (its Backing,
// magazine_pool.h): the pool's magazines then cache the slab's blocks per thread.
template <class Slab>
struct SlabBlocks {
  [[nodiscard]] static void* allocate(size_t size) { return Slab::allocate(size); }
  static void free(void* p) noexcept { Slab::free(p, Slab::kBlockBytes); }
  static void free_linked(pool_detail::FreeBlock* list) noexcept { Slab::free_linked(list); }
};

}  // namespace tether
