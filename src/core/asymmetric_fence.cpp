#include "core/asymmetric_fence.h"

#include <unistd.h>

#include <cstdlib>

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#endif

namespace tether {
namespace fence_detail {
namespace {

bool register_membarrier() noexcept {
  // TETHER_NO_MEMBARRIER=1: the fallback fences, so tests can run them where membarrier works.
  const char* off = std::getenv("TETHER_NO_MEMBARRIER");
  if (off != nullptr && *off != '\0' && *off != '0') return false;
#if defined(__linux__) && defined(__NR_membarrier)
  const long cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  if (cmds < 0 || (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return false;
  return syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
#else
  return false;
#endif
}

}  // namespace

// Decided when the library loads, before any thread of ours exists, and again in a forked
// child (whose one thread is then the only reader): the registration belongs to an
// address space, and the child's is new.
bool g_membarrier = register_membarrier();

void after_fork_in_child() noexcept { g_membarrier = g_membarrier && register_membarrier(); }

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
#if defined(__linux__) && defined(__NR_membarrier)
  if (fence_detail::g_membarrier && syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) {
    return;
  }
#endif
  // Without membarrier the hot side uses full fences itself: this one is enough.
}

}  // namespace tether
