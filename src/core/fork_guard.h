// fork_guard: after fork(), the child may only exec. A pthread_atfork child handler sets
// one flag that every handle call checks (an atomic load, not a pid check per call).
#pragma once

namespace tether {

[[nodiscard]] bool in_forked_child() noexcept;

}  // namespace tether
