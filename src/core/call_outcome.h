// Settling a call's outcome with its owner's ledger, shared by executor tasks and actor
// calls, so that both count and keep failures the same way.
#pragma once

#include <memory>
#include <string>

#include "core/call_ledger.h"
#include "core/error.h"
#include "core/scope.h"
#include "core/task.h"

namespace tether {

// cancelled_error: the error of a call on lane_name that was cancelled (TETHER_E_CANCELLED,
// "<lane> was cancelled"), or out_of_memory_error() when there is no memory for its text.
[[nodiscard]] ErrorPtr cancelled_error(const std::string& lane_name) noexcept;

// settle_after_nested: a fire-and-forget call that spawned nested threads is settled
// once they are done too; keep holds the ledger's owner alive until then.
void settle_after_nested(Task& task, ErrorPtr err, CallLedger& ledger, std::shared_ptr<void> keep);

// settle_fire_and_forget: a fire-and-forget call's callback returned with err (null: OK).
// owner (the ledger's owner) is kept alive only if nested threads are still running: the
// common case touches no reference count shared with the callers.
template <class Owner>
void settle_fire_and_forget(Task& task, ErrorPtr err, CallLedger& ledger, Owner& owner) {
  if (task.lazy_scope()) {
    settle_after_nested(task, std::move(err), ledger, owner.shared_from_this());
  } else if (err) {
    ledger.fire_and_forget_failed(std::move(err));
  } else {
    ledger.succeeded();
  }
}

// A call with a future is counted as its future ends, in the state it reports: an
// executor task by its scope (Scope::Options::ledger, Scope::finish_call_of), an actor
// call by its CallFuture (call_future.h).

}  // namespace tether
