// CallFuturePool: where actor calls with a future live (an Actor::FutureCall: the call and
// its future, call_future.h), with their shared_ptr count: one 256-byte, 64-byte-aligned
// block each, cached per thread in magazines (magazine_pool.h) and carved from a slab
// (block_slab.h). A stream of calls, 1,024 in flight or one at a time, allocates nothing;
// 100,000 in flight take 256 bytes each (a ScopePool block is 480 and a malloc header),
// from huge pages once there are that many.
#pragma once

#include "core/block_slab.h"
#include "core/magazine_pool.h"

namespace tether {

using CallFutureSlab = BlockSlab</*kBlockSize=*/4 * 64, /*kAlign=*/64, /*kChunkBlocks=*/64>;
using CallFuturePool = MagazinePool</*kBlockSize=*/CallFutureSlab::kBlockBytes, /*kMagazine=*/64, /*kMaxBatches=*/32,
                                    Cleanup::CallFuturePool, SlabBlocks<CallFutureSlab>>;

}  // namespace tether
