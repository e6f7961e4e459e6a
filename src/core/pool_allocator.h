// PoolAllocator: a standard allocator on one of the library's pools (Pool::allocate(size),
// Pool::free(p, size): MagazinePool, BlockSlab), for std::allocate_shared: the object and
// its reference count in one block of the pool.
#pragma once

#include <cstddef>

namespace tether {

template <class T, class Pool>
struct PoolAllocator {
  using value_type = T;
  PoolAllocator() noexcept = default;
  template <class U>
  PoolAllocator(const PoolAllocator<U, Pool>&) noexcept {}  // NOLINT: rebinding
  [[nodiscard]] T* allocate(size_t n) { return static_cast<T*>(Pool::allocate(n * sizeof(T))); }
  void deallocate(T* p, size_t n) noexcept { Pool::free(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const PoolAllocator<U, Pool>&) const noexcept { return true; }
};

}  // namespace tether
