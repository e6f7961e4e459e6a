// The actor's waited calls (waited_call.h): a call whose caller waits for its end with
// no deadline, made in the caller's ring as a fast call (actor_fast_path.cpp) and ended
// in place, with the outcome a call with a future would have had: the same state, error
// and counts (a success counted by the default thread alone, as the fast calls' are).
//
// Every way a fast call can go has its waited form, each ending the call exactly once
// (the ring's claim gives a queued call to the consumer or to one canceller):
//   run (run_fast)               run_waited: the method's outcome; CANCELLED when a stop
//                                CANCEL came while it ran and it did not fail; with nested
//                                threads, their scope's outcome once it is terminal
//                                (WaitedEnd), as CallFuture::adopt_nested
//   queued before the constructor failed (run_fast_not_alive)
//                                end_waited_unrun(the actor's death): FAILED, or
//                                CANCELLED with no memory for that error
//   cancelled by a stop before it ran (cancel_fast, run_fast_not_alive)
//                                end_waited_unrun(null): CANCELLED
// Each drops the arg on the thread that ends the call, before the end (E3: the caller
// may return at once, and its arg is gone with the call).
#include "core/actor.h"
#include "core/call_outcome.h"
#include "core/hot_path.h"
#include "core/thread_role.h"

namespace tether {

TETHER_HOT_PATH
bool Actor::try_call_waited(Sender& sender, tether_method_fn m, UserArg& arg, int32_t* terminal) noexcept {
  // The default thread waiting for a call it would run itself: the general path's
  // is_inside answers DEADLOCK (its condition, for a pinned lane's one thread).
  if (this_thread_role().serves_lane(default_lane_, default_lane_->id())) return false;
  WaitedCall* w = WaitedCall::of_this_thread();
  if (w == nullptr) return false;
  w->arm(arg.get(), arg.drop_fn(), default_lane_->presence());
  // A consumer that may be parked takes the call with a full fence (fences_fully): then
  // straight to post_fast_rare, the path post_fast would reach after a turn through its
  // hot path's checks (code that is cold when the actor has been idle).
  const bool posted = default_lane_->fences_fully(RingEntry::kWaited)
                          ? post_fast_rare(sender, m, w, &WaitedCall::marker)
                          : post_fast(sender, m, w, &WaitedCall::marker, RingEntry::kWaited);
  if (!posted) return false;
  (void)arg.release();  // the call's now: take_arg hands it to the method, or drops it
  *terminal = w->wait();
  return true;
}

// WaitedEnd: the notice by which the nested threads' scope ends a waited call whose
// method started them. It holds the actor (whose ledger counts the call) until then.
class Actor::WaitedEnd {
 public:
  WaitedEnd(WaitedCall& call, std::shared_ptr<Scope> nested, std::shared_ptr<Actor> actor) noexcept
      : call_(call), nested_(std::move(nested)), actor_(std::move(actor)) {}

  static void notify(void* raw) noexcept {
    auto& end = *static_cast<WaitedEnd*>(raw);
    end.actor_->end_nested(end.call_, *end.nested_);
  }
  static void drop(void* raw) noexcept { delete static_cast<WaitedEnd*>(raw); }

 private:
  WaitedCall& call_;
  std::shared_ptr<Scope> nested_;
  std::shared_ptr<Actor> actor_;
};

void Actor::end_nested(WaitedCall& w, const Scope& nested) noexcept {
  // Terminal now: the scope's outcome is the call's (CallFuture's NestedEnd does the same).
  const int32_t terminal = nested.state();
  ErrorPtr first = terminal == TETHER_SUCCEEDED ? nullptr : nested.first_error();
  if (!first && terminal != TETHER_SUCCEEDED) first = cancelled_error(default_lane_->name());
  end_waited(w, terminal, std::move(first));
}

TETHER_HOT_PATH void Actor::run_waited(Lane& lane, tether_method_fn method, void* waited) noexcept {
  WaitedCall& w = *static_cast<WaitedCall*>(waited);
  Task task(nullptr, lane.name(), /*is_target=*/true, &origin_);
  task.set_result_slot(&w.result_slot());
  ErrorPtr err;
  {
    UserArg arg = w.take_arg();
    {
      CurrentTask current(task);
      (void)run_current_task(task, [&](tether_task* t) { return method(t, state_ptr_, arg.get()); }, err);
    }
    // arg goes here: after the method, as a call with a future's (no task is current)
  }
  if (const std::shared_ptr<Scope>& nested = task.lazy_scope()) [[unlikely]] {
    end_waited_after_nested(w, nested, std::move(err));
    return;
  }
  if (err) [[unlikely]] {
    end_waited(w, TETHER_FAILED, std::move(err));
  } else if (cancel_.load(std::memory_order_acquire)) [[unlikely]] {
    // a stop CANCEL came while it ran: as CallFuture::finish
    end_waited(w, TETHER_CANCELLED, cancelled_error(lane.name()));
  } else {
    ledger_.fast_succeeded();  // the default thread's own count, before the end (as end_waited's)
    w.end(TETHER_SUCCEEDED, nullptr);
  }
  settle_fast();
}

void Actor::end_waited_after_nested(WaitedCall& w, const std::shared_ptr<Scope>& nested, ErrorPtr err) noexcept {
  // Nested threads run on: the call ends when their scope is terminal, the actor settles
  // when they have all returned (settle_when_done).
  bool told = true;
  try {
    auto end = std::make_unique<WaitedEnd>(w, nested, shared_from_this());
    nested->on_done(&WaitedEnd::notify, UserArg(end.release(), &WaitedEnd::drop));
  } catch (...) {  // no memory to be told: wait here until the scope is quiet
    told = false;
  }
  nested->finish_call(std::move(err));
  if (!told) {
    nested->wait_quiet();
    end_nested(w, *nested);
  }
  settle_when_done(nested.get());
}

TETHER_HOT_PATH void Actor::end_waited(WaitedCall& w, int32_t terminal, ErrorPtr err) noexcept {
  // Counted before the end: a caller that sees the end sees the count (stats), as
  // CallFuture::complete_locked. Any thread: the shared counters.
  ledger_.count_outcome(terminal);
  w.end(terminal, std::move(err));
}

void Actor::end_waited_unrun(WaitedCall& w, ErrorPtr err) noexcept {
  { UserArg dropped = w.take_arg(); }  // never runs: its arg goes now
  if (err) {
    end_waited(w, TETHER_FAILED, std::move(err));
  } else {
    end_waited(w, TETHER_CANCELLED, cancelled_error(default_lane_->name()));
  }
}

}  // namespace tether
