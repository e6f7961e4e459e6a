#include "core/fork_guard.h"

#include "platform/platform.h"

namespace tether {
namespace fork_detail {

std::atomic<bool> g_forked{false};

namespace {

void on_fork_child() { g_forked.store(true, std::memory_order_relaxed); }

// Registered when the library loads, so a fork before the first call is seen too.
[[maybe_unused]] const bool g_registered = [] { return platform::on_fork_child(&on_fork_child); }();

}  // namespace
}  // namespace fork_detail
}  // namespace tether
