#include "core/spin_policy.h"

#include <mutex>

#include "core/fork_guard.h"
#include "core/hot_path.h"
#include "core/hot_tls.h"
#include "platform/platform.h"

namespace tether {
namespace {

// The free list of presences. Presences are never deleted (see Lifetime in the header):
// the list and every presence it made stay reachable for the process's life. A leaf lock
// (nothing is locked under it), taken last by the fork handlers (fork_guard.cpp).
ForkSafeMutex g_free_mutex;
LanePresence* g_free = nullptr;  // guarded by g_free_mutex

}  // namespace

TETHER_HOT_PATH int32_t current_cpu() noexcept {
  const int cpu = platform::current_cpu();
  return cpu < 0 ? LanePresence::kUnknown : static_cast<int32_t>(cpu);
}

namespace {
TETHER_HOT_TLS thread_local bool t_woke_here = false;  // this thread's: see woke_waiter_on
}  // namespace

TETHER_HOT_PATH void woke_waiter_on(int32_t cpu) noexcept {
  if (cpu >= 0 && cpu == current_cpu()) t_woke_here = true;
}

TETHER_HOT_PATH bool take_woke_here() noexcept {
  if (!t_woke_here) return false;
  t_woke_here = false;
  return true;
}

LanePresence* LanePresence::acquire() {
  {
    std::lock_guard lock(g_free_mutex);
    if (LanePresence* p = g_free) {
      g_free = p->next_free_;
      p->next_free_ = nullptr;
      p->consumer_cpu_.store(kUnknown, std::memory_order_relaxed);
      p->partner_cpu_.store(kUnknown, std::memory_order_relaxed);
      p->parked_on_.store(kUnknown, std::memory_order_relaxed);
      p->wait_budget_ns_.store(kWaitSpinMaxNs, std::memory_order_relaxed);
      p->wake_budget_ns_.store(kWakeSpinMaxNs, std::memory_order_relaxed);
      return p;
    }
  }
  return new LanePresence;
}

void LanePresence::before_fork() { g_free_mutex.before_fork(); }
void LanePresence::after_fork_in_parent() noexcept { g_free_mutex.after_fork_in_parent(); }
void LanePresence::after_fork_in_child() noexcept { g_free_mutex.after_fork_in_child(); }

void LanePresence::release(LanePresence* p) noexcept {
  std::lock_guard lock(g_free_mutex);
  p->next_free_ = g_free;
  g_free = p;
}

}  // namespace tether
