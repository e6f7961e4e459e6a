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

namespace tether {

template <size_t kBlockSize, size_t kAlign, size_t kChunkBlocks>
class BlockSlab {
 public:
  static_assert(kBlockSize % kAlign == 0, "every block of a chunk keeps the alignment");

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
    if (s.carve == s.chunk_end) {
      // A chunk starts with one aligned header, the link that keeps every chunk reachable
      // from the slab (the free list and the carve point only point into chunks, which a
      // leak checker such as valgrind's counts as "possibly lost").
      auto* chunk = static_cast<unsigned char*>(::operator new(kChunkBytes, std::align_val_t{kAlign}));
      s.chunks = new (chunk) ChunkHeader{s.chunks};
      s.carve = chunk + kAlign;
      s.chunk_end = chunk + kChunkBytes;
    }
    void* b = s.carve;
    s.carve += kBlockSize;
    return b;
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

  // The fork handlers (fork_guard.cpp): the slab's lock.
  static void before_fork() { state().mutex.before_fork(); }
  static void after_fork_in_parent() noexcept { state().mutex.after_fork_in_parent(); }
  static void after_fork_in_child() noexcept { state().mutex.after_fork_in_child(); }

 private:
  struct FreeBlock {
    FreeBlock* next;
  };
  struct ChunkHeader {
    ChunkHeader* next;
  };
  static constexpr size_t kChunkBytes = kAlign + kBlockSize * kChunkBlocks;
  struct State {
    ForkSafeMutex mutex;
    ChunkHeader* chunks = nullptr;       // guarded by mutex: every chunk made, newest first
    FreeBlock* free = nullptr;           // guarded by mutex: blocks freed, for reuse
    unsigned char* carve = nullptr;      // guarded by mutex: the next block of the newest chunk
    unsigned char* chunk_end = nullptr;  // guarded by mutex
  };
  static_assert(kBlockSize >= sizeof(FreeBlock) && kAlign >= sizeof(ChunkHeader));

  [[nodiscard]] static constexpr bool pooled(size_t size) noexcept {
    return pool_detail::kPooled && size <= kBlockSize;
  }
  // Never destroyed (an object may be freed while the process exits); made without allocating.
  static State& state() noexcept { return immortal<State>(); }
};

}  // namespace tether
