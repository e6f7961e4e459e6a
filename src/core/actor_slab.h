// ActorSlab: the blocks actors live in (block_slab.h): 512 bytes, 64-byte aligned, each
// the shared_ptr's count (padded to the actor's alignment: one line) and the actor's
// seven lines (actor.h), carved 64 at a time (32 KiB and a 64-byte header).
#pragma once

#include "core/block_slab.h"

namespace tether {

using ActorSlab = BlockSlab</*kBlockSize=*/8 * 64, /*kAlign=*/64, /*kChunkBlocks=*/64>;

}  // namespace tether
