#include "core/thread_runner.h"

#include "core/control_thread.h"
#include "core/handle_table.h"

namespace tether {

uint64_t start_runner(Scope::Options options, tether_fn target, UserArg arg) {
  auto scope = std::make_shared<Scope>(options);
  HandleTable& table = HandleTable::instance();
  const uint64_t id = table.insert(Kind::Runner, scope);
  scope->set_handle(id);
  try {
    scope->spawn(options.name, /*is_target=*/true, target, std::move(arg));
  } catch (...) {
    (void)table.take<Scope>(Kind::Runner, id);
    throw;
  }
  return id;
}

void release_runner(uint64_t id, bool wait) {
  std::shared_ptr<Scope> scope = HandleTable::instance().take<Scope>(Kind::Runner, id);
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
