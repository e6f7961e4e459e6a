#include "core/call_future.h"

#include <cstddef>
#include <new>
#include <utility>

#include "core/call_outcome.h"
#include "core/future_graveyard.h"
#include "core/lane.h"
#include "core/scope.h"
#include "core/spin_policy.h"
#include "core/status_error.h"
#include "core/task.h"
#include "core/thread_role.h"

namespace tether {

// Cold: what few calls use, made at need.
struct CallFuture::Cold {
  NoticeList notices;            // on_done, wait_any
  std::shared_ptr<Scope> nested;  // the scope of the method's nested threads (adopt_nested)
};

// NestedEnd: the notice by which the nested threads' scope ends the call. It holds the
// call, and the owner whose ledger counts it, until then.
class CallFuture::NestedEnd {
 public:
  NestedEnd(std::shared_ptr<CallFuture> call, std::shared_ptr<Scope> nested, std::shared_ptr<void> owner)
      : call_(std::move(call)), nested_(std::move(nested)), owner_(std::move(owner)) {}

  static void notify(void* raw) noexcept {
    auto& end = *static_cast<NestedEnd*>(raw);
    CallFuture& call = *end.call_;
    ErrorPtr first = end.nested_->first_error();  // terminal now: read before our lock
    const int32_t terminal = end.nested_->state();
    NoticeList::Due due;
    {
      std::lock_guard lock(call.mutex_);
      if (call.terminal_locked()) return;  // cannot happen: only this notice ends a call with nested threads
      due = call.complete_locked(terminal, std::move(first));
    }
    call.announce(std::move(due), /*ended=*/true);
  }
  static void drop(void* raw) noexcept { delete static_cast<NestedEnd*>(raw); }

 private:
  std::shared_ptr<CallFuture> call_;
  std::shared_ptr<Scope> nested_;
  std::shared_ptr<void> owner_;
};

// The lines of the layout (call_future.h): the Call and the Future's vtable pointer fill
// the 48 bytes of line 0 after the count, and 16 of line 1.
static_assert(sizeof(void*) != 8 || sizeof(CallFuture) == 4 * 64 - 16, "call_future.h: Layout");

CallFuture::CallFuture(const void* owner, CallLedger* ledger, const std::atomic<bool>* owner_stop, Lane& lane,
                       tether_method_fn m, UserArg arg) noexcept
    : Call(owner),
      ledger_(ledger),
      owner_stop_(owner_stop),
      arg_(arg.get()),
      arg_drop_(arg.drop_fn()),
      method_(m),
      lane_(&lane),
      lane_id_(lane.id()),
      partner_(lane.presence()),
      one_thread_(lane.thread_count() <= 1) {  // 0: a manual lane
  (void)arg.release();  // ours: handed to the method by start(), or dropped by a cancel or failure
  // The lines of the layout (call_future.h), as block lines: the count's 16 bytes first.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
  constexpr auto line = [](size_t offset) { return (16 + offset) / 64; };
  static_assert(sizeof(void*) != 8 || (line(offsetof(CallFuture, settled_)) == 2 &&
                                       line(offsetof(CallFuture, settled_result_)) == 2 &&
                                       line(offsetof(CallFuture, settled_quiet_)) == 2 &&
                                       line(offsetof(CallFuture, error_)) == 2 &&
                                       line(offsetof(CallFuture, result_taken_)) == 2),
                "call_future.h: Layout: the waiters' line");
  static_assert(sizeof(void*) != 8 || (line(offsetof(CallFuture, state_)) == 3 &&
                                       line(offsetof(CallFuture, cancel_requested_)) == 3 &&
                                       line(offsetof(CallFuture, cold_)) == 3 &&
                                       line(offsetof(CallFuture, queued_)) == 3),
                "call_future.h: Layout: the answer's line");
#pragma GCC diagnostic pop
}

CallFuture::~CallFuture() {
  if (result_taken_.load(std::memory_order_relaxed)) (void)result_.release();  // its taker owns it
  // else result_ drops a result nobody took
}

void CallFuture::dispose() noexcept {
  std::shared_ptr<CallFuture> lane_share = std::move(queued_);
  // lane_share may be the last reference: this dies here, after its last touch.
}

CallFuture::Cold& CallFuture::cold_locked() {
  if (!cold_) cold_ = std::make_unique<Cold>();
  return *cold_;
}

bool CallFuture::start(UserArg& arg) {
  std::lock_guard lock(mutex_);
  if (state_.load(std::memory_order_relaxed) != TETHER_PENDING) return false;
  state_.store(TETHER_RUNNING, std::memory_order_relaxed);  // no reader acts on RUNNING but the lock holder
  arg = UserArg(arg_, arg_drop_);  // arg_ stays as it was: nothing more to write on the caller's line
  return true;
}

bool CallFuture::finish(ErrorPtr err, Scope* nested, bool by_consumer) {
  if (nested != nullptr) return nested->finish_call(std::move(err));  // NestedEnd ends the call
  NoticeList::Due due;
  {
    std::lock_guard lock(mutex_);
    int32_t terminal = TETHER_FAILED;
    if (!err) {
      const bool stop = cancel_requested_.load(std::memory_order_relaxed) ||
                        (owner_stop_ != nullptr && owner_stop_->load(std::memory_order_acquire));
      terminal = stop ? TETHER_CANCELLED : TETHER_SUCCEEDED;
    }
    due = complete_locked(terminal, std::move(err), by_consumer);
  }
  announce(std::move(due), /*ended=*/true);
  return true;
}

void CallFuture::fail_pending(ErrorPtr e) {
  NoticeList::Due due;
  UserArg dropped;
  {
    std::lock_guard lock(mutex_);
    if (state_.load(std::memory_order_relaxed) != TETHER_PENDING) return;
    dropped = UserArg(arg_, arg_drop_);
    due = complete_locked(TETHER_FAILED, std::move(e));
  }
  dropped.reset();  // the call never runs: its arg goes now, unlocked
  announce(std::move(due), /*ended=*/true);
}

void CallFuture::cancel_queued() noexcept {
  try {
    request_cancel();
  } catch (...) {  // never: a PENDING call's cancel allocates only its error, whose lack it survives
  }
}

void CallFuture::request_cancel() {
  NoticeList::Due due;
  UserArg dropped;
  std::shared_ptr<Scope> nested;
  bool ended = false;
  {
    std::lock_guard lock(mutex_);
    if (terminal_locked()) return;
    cancel_requested_.store(true, std::memory_order_release);
    if (state_.load(std::memory_order_relaxed) == TETHER_PENDING) {
      dropped = UserArg(arg_, arg_drop_);
      due = complete_locked(TETHER_CANCELLED, nullptr);
      ended = true;
    } else if (cold_) {
      nested = cold_->nested;
    }
  }
  dropped.reset();  // the call never runs: its arg goes now, unlocked
  if (nested) nested->cancel();  // its threads stop; its end ends the call CANCELLED
  announce(std::move(due), ended);
}

void CallFuture::adopt_nested(const std::shared_ptr<Scope>& nested) {
  // What may fail first, so that a failure leaves nothing adopted: the notice, the cold
  // part, the notice's registration (the scope is RUNNING, its target the method: it waits).
  auto end = std::make_unique<NestedEnd>(queued_, nested, keep_owner());
  {
    std::lock_guard lock(mutex_);
    (void)cold_locked();
  }
  nested->on_done(&NestedEnd::notify, UserArg(end.release(), &NestedEnd::drop));
  bool cancelled;
  {
    std::lock_guard lock(mutex_);
    cold_->nested = nested;  // request_cancel() reaches the nested threads from now on
    nested_.store(nested.get(), std::memory_order_release);
    cancelled = cancel_requested_.load(std::memory_order_relaxed);
  }
  if (cancelled) nested->cancel();  // a cancel that came before: the nested threads stop too
}

NoticeList::Due CallFuture::complete_locked(int32_t terminal_state, ErrorPtr err, bool by_consumer) noexcept {
  // Counted before the state is stored: a reader that sees the state sees the count.
  if (ledger_ != nullptr) {
    if (by_consumer && terminal_state == TETHER_SUCCEEDED) {
      ledger_->fast_succeeded();
    } else {
      ledger_->count_outcome(terminal_state);
    }
  }
  if (!err && terminal_state == TETHER_CANCELLED) err = cancelled_error(lane_->name());
  if (err) error_ = std::move(err);  // a success writes the waiters' line once, at settle (call_future.h)
  state_.store(terminal_state, std::memory_order_release);
  return cold_ ? cold_->notices.take() : NoticeList::Due();
}

void CallFuture::announce(NoticeList::Due&& due, bool ended) {
  // A waiter woken on this CPU needs it: this thread parks at its next idle look rather
  // than spin (spin_policy.h), and keeps preempting on wake-ups (wake_preemption.h).
  if (wakeups_.notify_all()) woke_waiter_on(waiter_cpu_.load(std::memory_order_relaxed));
  if (ended) {
    // E3 (answer_spin.h), by the one thread that made the call terminal (a cancel that
    // raced the end does not: it passes ended false). The settled copy first, then
    // settled_ publishes it. Only a SUCCEEDED call's result is final here: one that
    // failed may still be running (its nested threads failed it at once), its method
    // free to set a result the destructor will drop; so its copy says not quiet.
    const int32_t terminal = state_.load(std::memory_order_relaxed);
    const bool final_result = terminal == TETHER_SUCCEEDED;
    settled_state_.store(terminal, std::memory_order_relaxed);
    settled_result_.store(final_result ? result_.get() : nullptr, std::memory_order_relaxed);
    settled_quiet_.store(final_result && !cold_ && result_.drop_fn() == nullptr, std::memory_order_relaxed);
    AnswerSpin::settle_always(settled_);
  }
  NoticeList::run(std::move(due));
}

int32_t CallFuture::wait_done(Deadline deadline) {
  // Spin briefly before parking (answer_spin.h): a call is often answered within
  // microseconds, and then costs no futex wake-up on either side.
  if (!deadline.never_blocks() && seen_state() < TETHER_SUCCEEDED && !is_inside()) {
    FutureGraveyard::waited(/*pending=*/true);  // drains it while the answer is on its way
    AnswerSpin::spin(partner_, nullptr, settled_, state_, deadline);
  }
  if (waits_for_nothing()) return TETHER_OK;  // a handle ended meanwhile may be seen either way
  std::unique_lock lock(mutex_);
  auto ended = [&] { return handle_ended_.load(std::memory_order_relaxed); };
  if (ended()) return TETHER_E_INVALID_HANDLE;
  if (terminal_locked()) return TETHER_OK;
  if (deadline.never_blocks()) return TETHER_E_TIMEOUT;
  if (is_inside()) return TETHER_E_DEADLOCK;
  waiter_cpu_.store(current_cpu(), std::memory_order_relaxed);
  (void)wakeups_.wait_until(lock, deadline, [&] { return terminal_locked() || ended(); });
  if (ended()) return TETHER_E_INVALID_HANDLE;
  return terminal_locked() ? TETHER_OK : TETHER_E_TIMEOUT;
}

ErrorPtr CallFuture::first_error() const {
  if (seen_state() < TETHER_SUCCEEDED) return nullptr;  // acquire: error_ is final once terminal
  return error_;
}

int32_t CallFuture::try_take_result(void** out, NoResult* why) noexcept {
  // acquire (settled_, or state_): pairs with announce's store, or complete_locked's.
  const bool settled = settled_.load(std::memory_order_acquire);
  if ((settled ? settled_state_.load(std::memory_order_relaxed) : state()) != TETHER_SUCCEEDED) {
    *why = NoResult::kNotSucceeded;
    return TETHER_E_WRONG_STATE;
  }
  if (result_taken_.exchange(true, std::memory_order_acq_rel)) {  // one taker wins the result
    *why = NoResult::kTaken;
    return TETHER_E_WRONG_STATE;
  }
  // result_ itself stays (see the class comment); final once SUCCEEDED is seen.
  *out = settled ? settled_result_.load(std::memory_order_relaxed) : result_.get();
  return TETHER_OK;
}

bool CallFuture::quiet_to_drop() const noexcept {
  if (settled_.load(std::memory_order_acquire)) {
    return settled_quiet_.load(std::memory_order_relaxed) || result_taken_.load(std::memory_order_acquire);
  }
  // Not announced yet: only a SUCCEEDED call's result is final (see announce); cold_ is
  // (made only before the end, under mutex_; the acquire of state_ sees it).
  if (state() != TETHER_SUCCEEDED || cold_) return false;
  return result_.drop_fn() == nullptr || result_taken_.load(std::memory_order_acquire);
}

void CallFuture::copy_outputs(void**, size_t) {
  throw StatusError(TETHER_E_WRONG_STATE, "this future is a call's, not a compiled graph execution's");
}

void CallFuture::on_done(tether_notify_fn fn, UserArg arg) {
  {
    std::lock_guard lock(mutex_);
    if (!terminal_locked()) {
      (void)cold_locked().notices.add(fn, std::move(arg), /*removable=*/false);
      return;
    }
  }
  fn(arg.get());
}

uint64_t CallFuture::add_notice(tether_notify_fn fn, UserArg arg) {
  {
    std::lock_guard lock(mutex_);
    if (!terminal_locked()) return cold_locked().notices.add(fn, std::move(arg), /*removable=*/true);
  }
  fn(arg.get());
  return 0;
}

void CallFuture::remove_notice(uint64_t id) noexcept {
  UserArg dropped;  // empty when it ran (or is running) already
  {
    std::lock_guard lock(mutex_);
    if (cold_) dropped = cold_->notices.remove(id);
  }
  // dropped goes here, unlocked
}

bool CallFuture::is_inside() const noexcept {
  const Task* task = Task::current();
  if (task != nullptr && task->call() == this) return true;  // a call waiting on itself
  const Scope* nested = nested_.load(std::memory_order_acquire);
  if (nested != nullptr && nested->is_inside()) return true;  // one of its nested threads
  if (state() != TETHER_PENDING) return false;
  return one_thread_ && this_thread_role().serves_lane(lane_, lane_id_);
}

void CallFuture::end_future_handle() {
  if (seen_state() >= TETHER_SUCCEEDED) {  // no wait parks any more: no lock, nobody to wake
    handle_ended_.store(true, std::memory_order_release);
    return;
  }
  {
    std::lock_guard lock(mutex_);  // the condition of wakeups_ changes under mutex_ (event_count.h)
    handle_ended_.store(true, std::memory_order_release);
  }
  wakeups_.notify_all();
}

}  // namespace tether
