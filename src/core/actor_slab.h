// ActorSlab: the blocks actors live in (block_slab.h): 384 bytes, 64-byte aligned, each
// the shared_ptr's count (kActorCountBytes) and the actor right after it (actor.h's
// layout: the two share the block's first line), carved 64 at a time (24 KiB and a
// 64-byte header).
#pragma once

#include <cstddef>

#include "core/block_slab.h"

namespace tether {

using ActorSlab = BlockSlab</*kBlockSize=*/6 * 64, /*kAlign=*/64, /*kChunkBlocks=*/64>;

// kActorCountBytes: what std::allocate_shared puts before the actor in its block
// (libstdc++'s count: a vtable pointer and two ints), the actor being aligned to no more.
inline constexpr size_t kActorCountBytes = 16;

}  // namespace tether
