// CallPool: where Call objects live, so a steady stream of calls allocates nothing.
//
// A slot holds any Call of the library (kSlotSize bytes: the largest, a method or task
// call with a future, is 104; each Call class asserts that it fits). Each thread keeps a magazine of free slots;
// a call is typically allocated on the producer and freed on the executing thread, so
// full magazines travel back through a small mutex-protected depot: one lock per
// kMagazine calls, never per call (Bonwick's magazine allocator, in miniature). Under
// AddressSanitizer the pool is bypassed, so use-after-free stays detectable.
//
// Thread safety: allocate/free from any thread. The depot's mutex guards its batches;
// magazines are thread-local. Memory still pooled at exit is reachable, not leaked.
#pragma once

#include <cstddef>

namespace tether {

class CallPool {
 public:
  static constexpr size_t kSlotSize = 112;  // with malloc's header, a 128-byte chunk
  static constexpr size_t kMagazine = 64;

  [[nodiscard]] static void* allocate(size_t size);
  static void free(void* p) noexcept;

  // The fork handlers (fork_guard.cpp): the depot's lock.
  static void before_fork();
  static void after_fork_in_parent() noexcept;
  static void after_fork_in_child() noexcept;
};

}  // namespace tether
