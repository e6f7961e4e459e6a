// ThreadRunner: a Scope whose target runs on a new thread, named by a runner handle.
#pragma once

#include <memory>

#include "core/scope.h"
#include "core/user_arg.h"

namespace tether {

// start_runner: starts target on the scope's first thread, named by the scope's name.
// The scope has its handle already (the target may ask for it at once). Throws
// StatusError; arg is dropped before a failing start returns.
void start_runner(Scope& scope, tether_fn target, UserArg arg);

// release_runner: the runner's handle was taken (scope is what it named): cancels, and
// (when wait is set and the caller is neither inside the scope nor the control thread)
// joins every thread of the scope; otherwise the control thread joins them once they exit.
void release_runner(std::shared_ptr<Scope> scope, bool wait);

}  // namespace tether
