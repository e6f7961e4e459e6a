// fork_guard: after fork(), the child may only exec. A pthread_atfork child handler sets
// one flag that every handle call checks (an atomic load, not a pid check per call).
#pragma once

#include <atomic>

namespace tether {

namespace fork_detail {
// Memory ordering: relaxed. The flag is written by the single thread of a fresh child
// before that thread makes any further call, so its own later loads see it.
extern std::atomic<bool> g_forked;
}  // namespace fork_detail

// in_forked_child: inline, it runs twice on every call of the C API.
[[nodiscard]] inline bool in_forked_child() noexcept {
  return fork_detail::g_forked.load(std::memory_order_relaxed);
}

}  // namespace tether
