// Asymmetric fences: a full barrier split between a hot side that runs on every call and
// a cold side that runs rarely (a stop, a canceller, a thread about to park).
//
// The pattern they serve is Dekker's: one thread stores A then loads B, another stores B
// then loads A, and at least one must see the other's store. Normally both sides need a
// full fence (on x86 a locked instruction that waits for the store buffer to drain, ~25 ns
// when the stores before it miss the cache). Here the hot side executes light_fence(),
// which is only a compiler barrier, and the cold side heavy_fence(), which makes every
// running thread of the process execute a full barrier (platform::process_barrier: Linux
// membarrier PRIVATE_EXPEDITED, as liburcu's memb flavour and folly's asymmetric barriers do;
// Windows FlushProcessWriteBuffers). Either the hot thread's
// store was before that barrier, and is visible to the cold side's later load, or its
// load comes after it, and sees the cold side's earlier store.
//
// Where membarrier is missing (old kernels, some sandboxes), light_fence() is a real full
// fence and heavy_fence() too: slower, still correct.
//
// Rule for users: every light_fence() pairs with a heavy_fence() on the other side of the
// same Dekker pair; say which one where it is used.
#pragma once

#include <atomic>
#include <cstdint>

namespace tether {

namespace fence_detail {
extern bool g_membarrier;  // platform::process_barrier enabled at load (and again after fork)
// full_fence: a real full fence. Inline: a call on light_fence's other branch would make
// every hot path that fences keep its values in saved registers. mfence rather than
// std::atomic_thread_fence: ThreadSanitizer does not model fences (GCC warns that it
// ignores them), and the race detection it does is unaffected.
inline void full_fence() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("mfence" ::: "memory");
#else
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}
// after_fork_in_child: registers the child's address space (fork_guard.cpp).
void after_fork_in_child() noexcept;
}  // namespace fence_detail

// LightFence: what light_fence() is in this process: a compiler barrier (membarrier in
// use) or a full fence. A loop that fences on every turn may read it once and fence with
// light_fence_as<kind>() (a run of fire-and-forget calls: Actor::run_fast). It changes
// only in a fork child's handler (after_fork_in_child), before the child's one thread
// goes on; a run that forked ends in the child when its method returns (task.h).
enum class LightFence : bool { kFull, kCompilerOnly };
[[nodiscard]] inline LightFence light_fence_kind() noexcept {
  return fence_detail::g_membarrier ? LightFence::kCompilerOnly : LightFence::kFull;
}
template <LightFence kKind>
inline void light_fence_as() noexcept {
  if constexpr (kKind == LightFence::kCompilerOnly) {
    std::atomic_signal_fence(std::memory_order_seq_cst);  // the compiler may not reorder
  } else {
    fence_detail::full_fence();
  }
}

// light_fence: the hot side. Orders this thread's earlier stores before its later loads
// against a concurrent heavy_fence().
inline void light_fence() noexcept {
  if (fence_detail::g_membarrier) [[likely]] {
    light_fence_as<LightFence::kCompilerOnly>();
  } else {
    light_fence_as<LightFence::kFull>();
  }
}

// heavy_fence: the cold side; a system call (a few microseconds) when membarrier is used.
void heavy_fence() noexcept;

// heavy_fences_made: how many heavy_fence() calls the process has made (relaxed: for the
// tests that check which paths make none).
[[nodiscard]] uint64_t heavy_fences_made() noexcept;

}  // namespace tether
