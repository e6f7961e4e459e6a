#include "core/call_outcome.h"

#include <new>

namespace tether {
namespace {

// LateOutcome: waits for a fire-and-forget call's nested threads, then settles it.
struct LateOutcome {
  std::shared_ptr<Scope> scope;
  CallLedger* ledger;
  std::shared_ptr<void> keep;  // keeps *ledger alive

  static void notify(void* raw) {
    auto* self = static_cast<LateOutcome*>(raw);
    if (self->scope->state() == TETHER_FAILED) {
      self->ledger->fire_and_forget_failed(self->scope->first_error());
    } else {
      self->ledger->succeeded();
    }
  }
  static void drop(void* raw) { delete static_cast<LateOutcome*>(raw); }
};

}  // namespace

ErrorPtr cancelled_error(const std::string& lane_name) noexcept {
  try {
    return make_error(TETHER_E_CANCELLED, 0, lane_name + " was cancelled", lane_name);
  } catch (const std::bad_alloc&) {  // no memory for its text: the cancellation is still recorded
    return out_of_memory_error();
  }
}

void settle_after_nested(Task& task, ErrorPtr err, CallLedger& ledger, std::shared_ptr<void> keep) {
  const std::shared_ptr<Scope>& nested = task.lazy_scope();
  try {
    auto* late = new LateOutcome{nested, &ledger, std::move(keep)};
    nested->on_done(&LateOutcome::notify, UserArg(late, &LateOutcome::drop));
  } catch (...) {  // no memory to wait for the nested threads: settle what is known now
    if (err) ledger.fire_and_forget_failed(err);
  }
  nested->finish_call(std::move(err));
}

}  // namespace tether
