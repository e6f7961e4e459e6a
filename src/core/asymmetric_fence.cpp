#include "core/asymmetric_fence.h"

#include <cstdlib>

#include "core/hot_path.h"
#include "platform/platform.h"

namespace tether {
namespace fence_detail {
namespace {

bool register_membarrier() noexcept {
  // TETHER_NO_MEMBARRIER=1: the fallback fences, so tests can run them where membarrier works.
  const char* off = std::getenv("TETHER_NO_MEMBARRIER");
  if (off != nullptr && *off != '\0' && *off != '0') return false;
  return platform::enable_process_barrier();
}

}  // namespace

// Decided when the library loads, before any thread of ours exists, and again in a forked
// child (whose one thread is then the only reader): the registration belongs to an
// address space, and the child's is new.
TETHER_HOT_DATA bool g_membarrier = register_membarrier();

void after_fork_in_child() noexcept { g_membarrier = g_membarrier && register_membarrier(); }

}  // namespace fence_detail

namespace {
std::atomic<uint64_t> g_heavy_fences{0};
}  // namespace

uint64_t heavy_fences_made() noexcept { return g_heavy_fences.load(std::memory_order_relaxed); }

void heavy_fence() noexcept {
  g_heavy_fences.fetch_add(1, std::memory_order_relaxed);
  fence_detail::full_fence();
  if (fence_detail::g_membarrier && platform::process_barrier()) return;
  // Without the process barrier the hot side uses full fences itself: this one is enough.
}

}  // namespace tether
