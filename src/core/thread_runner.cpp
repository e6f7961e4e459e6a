#include "core/thread_runner.h"

#include "core/control_thread.h"

namespace tether {

void start_runner(Scope& scope, tether_fn target, UserArg arg) {
  scope.spawn(scope.options().name, /*is_target=*/true, target, std::move(arg));
}

void release_runner(std::shared_ptr<Scope> scope, bool wait) {
  scope->cancel();      // first, so whoever the end of the handle wakes already sees the stop
  scope->end_handle();
  if (wait && !scope->is_inside() && !ControlThread::is_current()) {
    scope->join_threads();
  } else {
    scope->orphan_threads();
  }
  // The last reference may die here (the result's drop runs unlocked, on this thread) or
  // on the scope's last thread or the control thread, whichever lets go last.
}

}  // namespace tether
