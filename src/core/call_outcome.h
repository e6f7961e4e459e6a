// Settling a call's outcome with its owner's ledger, shared by executor tasks and actor
// calls, so that both count and keep failures the same way.
#pragma once

#include <memory>

#include "core/call_ledger.h"
#include "core/error.h"
#include "core/scope.h"
#include "core/task.h"

namespace tether {

// settle_fire_and_forget: a fire-and-forget call's callback returned with err (null: OK).
// If the call spawned nested threads (task.lazy_scope()), the outcome is settled when
// they are done too; keep holds ledger's owner alive until then.
void settle_fire_and_forget(Task& task, ErrorPtr err, CallLedger& ledger, std::shared_ptr<void> keep);

// settle_with_future: a call with a future returned with err; the future completes when
// its nested threads are done. Counts the call's own outcome.
void settle_with_future(Scope& future, ErrorPtr err, CallLedger& ledger);

}  // namespace tether
