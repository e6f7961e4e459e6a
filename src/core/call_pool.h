// CallPool: where Call objects live, so a steady stream of calls allocates nothing.
//
// A slot holds any Call of the library (kSlotSize bytes: the largest, a method or task
// call with a future, is 104; each Call class asserts that it fits). A call is typically
// allocated on the producer and freed on the executing thread: the magazines
// (core/magazine_pool.h) carry the slots back. With malloc's header a slot is a 128-byte
// chunk when the pool is bypassed (AddressSanitizer).
#pragma once

#include "core/magazine_pool.h"

namespace tether {

using CallPool = MagazinePool</*kBlockSize=*/112, /*kMagazine=*/64, /*kMaxBatches=*/64, Cleanup::CallPool>;

}  // namespace tether
