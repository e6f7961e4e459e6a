// CallPool: where Call objects live, so a steady stream of calls allocates nothing.
//
// A slot holds any Call of the library (kSlotSize bytes: the largest, a method or task
// call with a future, is 104; each Call class asserts that it fits). A call is typically
// allocated on the producer and freed on the executing thread: the magazines
// (core/magazine_pool.h) carry the slots back. The slots are carved from a slab
// (block_slab.h), never the heap: every actor's constructor call is one, made by the
// creating thread and freed by the actor's, so 100,000 actors made 100,000 heap chunks
// that the executors freed into the creator's arena, past the depot; the creator's next
// large allocation then merged them all (glibc's malloc_consolidate: ~74 instructions and
// 2.8 cache misses a call averaged over the next 100,000 calls with a future, in callgrind).
// As for the other slabs, the chunks are kept: the most calls a process ever had queued
// at once stay reserved for its later calls (112 bytes each), reused, never given back;
// on ordinary pages only (kHugePages false: block_slab.h says why).
// Under AddressSanitizer every slot is a heap allocation of its own (pool_bypass.h).
#pragma once

#include "core/block_slab.h"
#include "core/magazine_pool.h"

namespace tether {

using CallSlab = BlockSlab</*kBlockSize=*/112, /*kAlign=*/16, /*kChunkBlocks=*/128, /*kHugePages=*/false>;
using CallPool = MagazinePool</*kBlockSize=*/CallSlab::kBlockBytes, /*kMagazine=*/64, /*kMaxBatches=*/64,
                              Cleanup::CallPool, SlabBlocks<CallSlab>>;

}  // namespace tether
