#include "core/fork_guard.h"

#include <pthread.h>

#include <atomic>

namespace tether {
namespace {

// Memory ordering: relaxed. The flag is written by the single thread of a fresh child
// before that thread makes any further call, so its own later loads see it.
std::atomic<bool> g_forked{false};

void on_fork_child() { g_forked.store(true, std::memory_order_relaxed); }

// Registered when the library loads, so a fork before the first call is seen too.
const bool g_registered = [] { return pthread_atfork(nullptr, nullptr, &on_fork_child) == 0; }();

}  // namespace

bool in_forked_child() noexcept {
  (void)g_registered;
  return g_forked.load(std::memory_order_relaxed);
}

}  // namespace tether
