// prefetch_for_write: a hint that asks for cache lines before they are written, without
// waiting for them. A hint only: it never faults (any address may be named), and a CPU
// or compiler without it runs it as a no-op. Its own file: a CPU hint, not a pool's.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tether {

// prefetch_for_write: every cache line of the kBytes at p, in a state this thread can
// write (PREFETCHW on x86: the line's other copies are invalidated ahead of the stores).
template <size_t kBytes>
inline void prefetch_for_write(const void* p) noexcept {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  const auto first = reinterpret_cast<uintptr_t>(p) & ~uintptr_t{63};
  const auto last = (reinterpret_cast<uintptr_t>(p) + kBytes - 1) & ~uintptr_t{63};
  for (uintptr_t line = first; line <= last; line += 64) {
    asm volatile("prefetchw %0" ::"m"(*reinterpret_cast<const char*>(line)));
  }
#elif defined(__GNUC__)
  __builtin_prefetch(p, 1);
#else
  (void)p;
#endif
}

// prefetch_for_read: the cache line at p, for reading.
inline void prefetch_for_read(const void* p) noexcept {
#if defined(__GNUC__)
  __builtin_prefetch(p, 0, 3);
#else
  (void)p;
#endif
}

}  // namespace tether
