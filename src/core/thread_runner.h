// ThreadRunner: a Scope whose target runs on a new thread, named by a runner handle.
#pragma once

#include <cstdint>

#include "core/scope.h"
#include "core/user_arg.h"

namespace tether {

// start_runner: creates the scope, gives it a handle, then starts target on its first
// thread (the handle exists before the target can ask for it). Returns the handle id.
// Throws StatusError; arg is dropped before a failing start returns.
[[nodiscard]] uint64_t start_runner(Scope::Options options, tether_fn target, UserArg arg);

// release_runner: ends the handle, cancels, and (when wait is set and the caller is
// neither inside the scope nor the control thread) joins every thread of the scope;
// otherwise the control thread joins them once they exit.
void release_runner(uint64_t id, bool wait);

}  // namespace tether
