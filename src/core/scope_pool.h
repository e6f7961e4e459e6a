// ScopePool: where the scopes of calls with a future live (Scope::pending), so a stream of
// calls with futures, 1,024 in flight or one at a time, does not go through malloc's slow
// paths for every scope (glibc's per-thread cache holds 7 chunks of a size). A
// block holds the scope with its shared_ptr control block; Scope::pending asserts that it
// fits. The scope is made by the caller and freed by whoever drops it last (the caller's
// release, most often): the magazines carry blocks back either way.
#pragma once

#include <cstddef>

#include "core/magazine_pool.h"

namespace tether {

using ScopePool = MagazinePool</*kBlockSize=*/480, /*kMagazine=*/32, /*kMaxBatches=*/32, Cleanup::ScopePool>;

// PooledAllocator: a std allocator over Pool, for std::allocate_shared.
template <class T, class Pool>
struct PooledAllocator {
  using value_type = T;
  PooledAllocator() noexcept = default;
  template <class U>
  PooledAllocator(const PooledAllocator<U, Pool>&) noexcept {}  // NOLINT: rebinding
  [[nodiscard]] T* allocate(size_t n) { return static_cast<T*>(Pool::allocate(n * sizeof(T))); }
  void deallocate(T* p, size_t) noexcept { Pool::free(p); }
  template <class U>
  struct rebind {
    using other = PooledAllocator<U, Pool>;
  };
  template <class U>
  bool operator==(const PooledAllocator<U, Pool>&) const noexcept { return true; }
};

}  // namespace tether
