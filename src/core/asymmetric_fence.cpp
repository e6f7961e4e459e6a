#include "core/asymmetric_fence.h"

#include "platform/platform.h"

namespace tether {
namespace fence_detail {

// Decided once, when the library loads and before any thread of ours exists.
const bool g_membarrier = platform::enable_process_barrier();

void full_fence() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  // mfence rather than std::atomic_thread_fence: ThreadSanitizer does not model fences
  // (GCC warns that it ignores them), and the race detection it does is unaffected.
  asm volatile("mfence" ::: "memory");
#else
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

}  // namespace fence_detail

void heavy_fence() noexcept {
  fence_detail::full_fence();
  if (fence_detail::g_membarrier && platform::process_barrier()) return;
  // Without the process barrier the hot side uses full fences itself: this one is enough.
}

}  // namespace tether
