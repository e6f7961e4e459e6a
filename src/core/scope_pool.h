// ScopePool: where the scopes of executor tasks with a future live (Scope::pending), so a
// stream of them, 1,024 in flight or one at a time, does not go through malloc's slow
// paths for every scope (glibc's per-thread cache holds 7 chunks of a size). A
// block holds the scope with its shared_ptr control block; Scope::pending asserts that it
// fits. The scope is made by the caller and freed by whoever drops it last (the caller's
// release, most often): the magazines carry blocks back either way.
#pragma once

#include <cstddef>

#include "core/magazine_pool.h"

namespace tether {

using ScopePool = MagazinePool</*kBlockSize=*/480, /*kMagazine=*/32, /*kMaxBatches=*/32, Cleanup::ScopePool>;

}  // namespace tether
