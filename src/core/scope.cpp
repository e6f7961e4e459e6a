#include "core/scope.h"

#include <algorithm>
#include <utility>

#include "core/answer_spin.h"
#include "core/call_ledger.h"
#include "core/cpu_relax.h"
#include "core/hot_tls.h"
#include "core/pool_allocator.h"
#include "core/scope_pool.h"
#include "core/status_error.h"
#include "core/task.h"
#include "core/thread_role.h"

namespace tether {

// Participant: the body of one scope thread: runs its callback as a task, then reports
// the outcome. It holds the scope alive until the outcome is in.
class Scope::Participant : public ThreadBody {
 public:
  Participant(std::shared_ptr<Scope> scope, std::string thread_name, bool is_target, tether_fn fn,
              UserArg arg)
      : scope_(std::move(scope)),
        thread_name_(std::move(thread_name)),
        is_target_(is_target),
        fn_(fn),
        arg_(std::move(arg)) {}

  // run: ends normally, or by the forced unwind of a callback that ended this thread
  // (let_next_task_end_thread, task.h): the scope hears of that as a failure on the way out.
  TETHER_CATCHES_FORCED_UNWIND void run() override {
    ServingAs serving(scope_.get());  // until run() returns, normally or by a forced unwind
    ErrorPtr error;
    try {
      let_next_task_end_thread();
      const TaskOrigin origin = scope_->nested_origin();
      Task task(scope_.get(), thread_name_, is_target_, &origin);
      error = run_task(task, [&](tether_task* t) { return fn_(t, arg_.get()); });
    } catch (abi::__forced_unwind&) {
      end(thread_ended_error(thread_name_));
      throw;
    }
    end(std::move(error));
  }

 private:
  void end(ErrorPtr error) noexcept {
    arg_.reset();  // dropped after the callback, before the scope hears the outcome
    scope_->finish(std::move(error));
  }

  std::shared_ptr<Scope> scope_;
  std::string thread_name_;
  bool is_target_;
  tether_fn fn_;
  UserArg arg_;
};

// Room for the errors still to come is reserved where a failure can be reported (creating
// the scope, spawn, report): recording an error when a participant ends (noexcept, no
// caller to tell) then never allocates. Invariant, under mutex_: errors_ has room for
// errors_.size() + live_ + 1 (one error per live participant, one for a cancellation);
// its inline room (2) covers a call's target, so a call reserves nothing.
Scope::Scope(Options&& options)
    : ledger_(options.ledger), owner_stop_(options.owner_stop), options_(std::move(options)) {}

void Scope::reserve_errors_locked(size_t more_participants) {
  errors_.reserve(errors_.size() + live_ + more_participants + 1);
}

std::shared_ptr<Scope> Scope::pending(Options&& options, UserArg arg) {
  // A call's scope, with its control block (16 bytes in libstdc++: a vtable pointer and
  // two counts), is one ScopePool block (see scope_pool.h); a larger one would still be
  // served, from the heap.
  static_assert(sizeof(Scope) + 16 <= ScopePool::kSlotSize, "a call's scope fits a ScopePool block");
  auto scope = std::allocate_shared<Scope>(PoolAllocator<Scope, ScopePool>(), std::move(options));
  scope->state_.store(TETHER_PENDING, std::memory_order_relaxed);
  // A call's nested threads join its owner's group, which the owner's release joins;
  // without one, nobody joins them by hand (a future's release does not wait) and the
  // control thread joins each once it has exited.
  scope->threads_orphaned_ = scope->options_.threads == nullptr;
  scope->pending_arg_ = std::move(arg);
  return scope;
}

bool Scope::start_call(UserArg& arg) {
  std::lock_guard lock(mutex_);
  if (state_.load(std::memory_order_relaxed) != TETHER_PENDING) return false;
  state_.store(TETHER_RUNNING, std::memory_order_release);
  live_ = 1;
  arg = std::move(pending_arg_);
  return true;
}

void Scope::fail_pending(ErrorPtr e) {
  NoticeList::Due notices;
  UserArg dropped;
  {
    std::lock_guard lock(mutex_);
    if (state_.load(std::memory_order_relaxed) != TETHER_PENDING) return;
    dropped = std::move(pending_arg_);
    notices = record_locked(std::move(e));
  }
  notify_waiters();
  dropped.reset();
  NoticeList::run(std::move(notices));
}

Scope::~Scope() = default;  // result_ drops itself; no lock is held by a destructor

void Scope::spawn(std::string thread_name, bool is_target, tether_fn fn, UserArg arg) {
  std::shared_ptr<ThreadGroup> threads;
  {
    std::lock_guard lock(mutex_);
    if (!threads_ && options_.threads != nullptr) {
      threads_ = options_.threads->get();  // the owner's (made now if it was not)
    } else if (!threads_) {
      threads_ = std::make_shared<ThreadGroup>();
      if (threads_orphaned_) threads_->orphan();
    }
    threads = threads_;
    reserve_errors_locked(1);
    ++live_;
  }
  ThreadOptions thread_options{thread_name, options_.stack_size};
  try {
    threads->spawn(thread_options, std::make_unique<Participant>(shared_from_this(), std::move(thread_name),
                                                                  is_target, fn, std::move(arg)));
  } catch (...) {
    // The participant (and with it arg) died inside spawn, before any lock here.
    NoticeList::Due quiet;
    {
      std::lock_guard lock(mutex_);
      quiet = leave_locked();
    }
    notify_waiters();
    NoticeList::run(std::move(quiet));
    throw;
  }
}

bool Scope::finish(ErrorPtr error, std::shared_ptr<void> (*keep)(void*), void* owner) {
  NoticeList::Due notices;
  NoticeList::Due quiet;
  bool now_quiet = false;
  bool waits_end = false;  // a change a waiter's predicate reads (wait, wait_quiet)
  {
    std::lock_guard lock(mutex_);
    const bool was_terminal = terminal_locked();
    if (keep != nullptr && live_ > 1 && !was_terminal && ledger_ != nullptr) {
      keep_owner_locked(keep(owner), error != nullptr);  // nested threads end the call later
    }
    if (error) notices = record_locked(std::move(error));  // recorded before live_ drops
    if (live_ == 1 && !terminal_locked()) {
      const bool cancelled =
          cancel_requested_ || (owner_stop_ != nullptr && owner_stop_->load(std::memory_order_acquire));
      notices = complete_locked(cancelled ? TETHER_CANCELLED : TETHER_SUCCEEDED);
    }
    quiet = leave_locked();
    now_quiet = live_ == 0;
    waits_end = now_quiet || terminal_locked() != was_terminal;
  }
  // After unlocking, so woken waiters do not block on mutex_ at once. Only when the state
  // turned terminal or the last thread left: a thread ending while others still run
  // changes nothing a waiter waits for, and would wake a blocked join for nothing (a
  // target that starts its nested threads and returns, each nested thread that ends).
  if (waits_end) notify_waiters();
  NoticeList::run(std::move(notices));
  NoticeList::run(std::move(quiet));  // after on_done's: the end of all of the call's work
  return now_quiet;
}

NoticeList::Due Scope::leave_locked() {
  --live_;
  if (live_ != 0) return {};
  return quiet_notices_.take();  // no write when empty
}

TaskOrigin Scope::nested_origin() const noexcept {
  TaskOrigin origin;
  origin.owner_stop = options_.owner_stop;
  origin.actor = options_.actor;
  origin.threads = options_.threads;
  return origin;
}

void Scope::report(ErrorPtr e) {
  NoticeList::Due notices;
  {
    std::lock_guard lock(mutex_);
    const int32_t s = state_.load(std::memory_order_relaxed);
    if (s == TETHER_SUCCEEDED || s == TETHER_CANCELLED) {
      throw StatusError(TETHER_E_WRONG_STATE, std::string("cannot report an error: the runner already ") +
                                                  (s == TETHER_SUCCEEDED ? "succeeded" : "was cancelled"));
    }
    reserve_errors_locked(1);  // the reported error's own room
    notices = record_locked(std::move(e));
  }
  notify_waiters();
  NoticeList::run(std::move(notices));
}

NoticeList::Due Scope::record_locked(ErrorPtr e) {
  errors_.push_back(std::move(e));
  if (terminal_locked()) return {};
  if (options_.stop_on_error) stop_requested_.store(true, std::memory_order_release);
  return complete_locked(TETHER_FAILED);
}

NoticeList::Due Scope::complete_locked(int32_t terminal_state) {
  count_locked(terminal_state);  // before the state: a reader that sees it sees the count
  if (terminal_state == TETHER_CANCELLED) {
    ErrorPtr cancelled;
    try {
      cancelled = make_error(TETHER_E_CANCELLED, 0, options_.name + " was cancelled", options_.name);
    } catch (const std::bad_alloc&) {  // no memory for its text: the cancellation is still recorded
      cancelled = out_of_memory_error();
    }
    errors_.push_back(std::move(cancelled));  // room reserved: see the invariant above
  }
  state_.store(terminal_state, std::memory_order_release);
  return notices_.take();  // no write when empty (see Layout); the caller notifies wakeups_ once it has unlocked
}

void Scope::count_locked(int32_t terminal_state) noexcept {
  CallLedger* ledger = std::exchange(ledger_, nullptr);
  if (ledger != nullptr) ledger->count_outcome(terminal_state);
}

void Scope::keep_owner_locked(std::shared_ptr<void> owner, bool target_failed) noexcept {
  try {
    notices_.keep(std::move(owner));
  } catch (const std::bad_alloc&) {  // the owner may end before the nested threads do
    count_locked(target_failed ? TETHER_FAILED : TETHER_SUCCEEDED);
  }
}

void Scope::cancel() {
  NoticeList::Due notices;
  UserArg dropped;
  {
    std::lock_guard lock(mutex_);
    if (terminal_locked()) return;
    cancel_requested_ = true;
    stop_requested_.store(true, std::memory_order_release);
    if (state_.load(std::memory_order_relaxed) == TETHER_PENDING) {
      dropped = std::move(pending_arg_);
      notices = complete_locked(TETHER_CANCELLED);
    }
  }
  notify_waiters();
  dropped.reset();  // the work never runs: its arg goes now, unlocked
  NoticeList::run(std::move(notices));
}

ErrorPtr Scope::first_error() const {
  std::lock_guard lock(mutex_);
  return errors_.empty() ? nullptr : errors_.front();
}

size_t Scope::error_count() const {
  std::lock_guard lock(mutex_);
  return errors_.size();
}

ErrorPtr Scope::error_at(size_t i) const {
  std::lock_guard lock(mutex_);
  return i < errors_.size() ? errors_[i] : nullptr;
}

size_t Scope::live() const {
  std::lock_guard lock(mutex_);
  return live_;
}

// The result slot takes no lock (see result_ in scope.h): only the target writes it,
// while it runs; it is read only once the scope SUCCEEDED, which needs the target to have
// returned (live_ == 0), and the SUCCEEDED store (release, under mutex_, after the
// target's own finish locked and unlocked mutex_) orders every write before the read.
void Scope::set_result(UserArg value) {
  std::swap(result_, value);
  // value now holds the earlier result (if any): it is dropped here.
}

void* Scope::take_result() {
  void* result = nullptr;
  NoResult why{};
  if (try_take_result(&result, &why) != TETHER_OK) explain_no_result(why);
  return result;
}

int32_t Scope::try_take_result(void** out, NoResult* why) noexcept {
  return take_once(state(), result_taken_, result_, out, why);  // acquire: pairs with complete_locked's store
}

void Scope::set_outputs(std::vector<UserArg> outputs) {
  std::vector<void*> values;
  values.reserve(outputs.size());
  for (const UserArg& o : outputs) values.push_back(o.get());
  std::unique_lock lock(mutex_);
  has_outputs_ = true;
  std::swap(outputs_, outputs);
  output_values_ = std::move(values);
  lock.unlock();
  // outputs now holds earlier ones (never, in practice): dropped here, unlocked.
}

void Scope::copy_outputs(void** outs, size_t n) {
  std::lock_guard lock(mutex_);
  if (!has_outputs_) {
    throw StatusError(TETHER_E_WRONG_STATE, "this future is a task's or a call's, not a compiled graph execution's");
  }
  const int32_t state = state_.load(std::memory_order_relaxed);
  if (state != TETHER_SUCCEEDED) {
    throw StatusError(TETHER_E_WRONG_STATE, std::string("the execution has no outputs: it is ") +
                                                (state < TETHER_SUCCEEDED ? "not done" : "not SUCCEEDED"));
  }
  if (n < output_values_.size()) {
    throw StatusError(TETHER_E_INVALID_ARGUMENT, "the execution has " + std::to_string(output_values_.size()) +
                                                     " outputs; outs has room for " + std::to_string(n));
  }
  for (size_t i = 0; i < n; ++i) outs[i] = i < output_values_.size() ? output_values_[i] : nullptr;
  for (UserArg& o : outputs_) (void)o.release();  // the caller owns them now
}

int32_t Scope::wait(Deadline deadline, bool all_threads) {
  // Spin briefly before parking: a call answered within microseconds (an idle actor's
  // thread is itself spinning) then costs no futex wake-up on either side. With a spin
  // partner, only while its consumer runs on another CPU, within the lane's adaptive
  // budget (core/spin_policy.h).
  if (options_.spin_wait && !all_threads && !deadline.never_blocks() && state() < TETHER_SUCCEEDED &&
      !is_inside()) {
    AnswerSpin::spin(options_.spin_partner, &waiter_spins_, settled_, state_, deadline,
                     options_.serving_lanes ? &options_.serving_lanes->presences : nullptr);
  }
  // Already terminal (most often: the spin saw it): no lock. A handle ended meanwhile
  // may be seen either way: the wait and the release raced.
  if (!all_threads && waits_for_nothing()) return TETHER_OK;
  std::unique_lock lock(mutex_);
  auto done = [&] { return terminal_locked() && (!all_threads || live_ == 0); };
  if (handle_ended_.load(std::memory_order_relaxed)) return TETHER_E_INVALID_HANDLE;
  if (done()) return TETHER_OK;
  if (deadline.never_blocks()) return TETHER_E_TIMEOUT;
  if (is_inside()) return TETHER_E_DEADLOCK;
  waiter_cpu_.store(current_cpu(), std::memory_order_relaxed);
  (void)wakeups_.wait_until(lock, deadline, [&] { return done() || handle_ended_.load(std::memory_order_relaxed); });
  if (handle_ended_.load(std::memory_order_relaxed)) return TETHER_E_INVALID_HANDLE;
  return done() ? TETHER_OK : TETHER_E_TIMEOUT;
}

void Scope::on_done(tether_notify_fn fn, UserArg arg) {
  {
    std::lock_guard lock(mutex_);
    if (!terminal_locked()) {
      (void)notices_.add(fn, std::move(arg), /*removable=*/false);
      return;
    }
  }
  fn(arg.get());
}

uint64_t Scope::add_notice(tether_notify_fn fn, UserArg arg) {
  {
    std::lock_guard lock(mutex_);
    if (!terminal_locked()) {
      return notices_.add(fn, std::move(arg), /*removable=*/true);
    }
  }
  fn(arg.get());
  return 0;
}

void Scope::remove_notice(uint64_t id) noexcept {
  if (id == 0) return;
  UserArg dropped;  // empty when it ran (or is running) already
  {
    std::lock_guard lock(mutex_);
    dropped = notices_.remove(id);
  }
  // dropped goes here, unlocked
}

void Scope::on_quiet(tether_notify_fn fn, UserArg arg) {
  {
    std::lock_guard lock(mutex_);
    if (live_ != 0) {
      (void)quiet_notices_.add(fn, std::move(arg), /*removable=*/false);
      return;
    }
  }
  fn(arg.get());
}

void Scope::wait_quiet() {
  std::unique_lock lock(mutex_);
  (void)wakeups_.wait_until(lock, Deadline::after(-1), [&] { return live_ == 0; });
}

void Scope::end_handle() {
  std::lock_guard lock(mutex_);  // the condition of wakeups_ changes under mutex_ (event_count.h)
  handle_ended_.store(true, std::memory_order_release);
  notify_waiters();
}

bool Scope::is_inside() const noexcept {
  const ThreadRole& role = this_thread_role();
  if (role.serves(this)) return true;
  const Task* task = Task::current();
  if (task != nullptr && task->scope() == this) return true;  // a call waiting on itself
  if (state() != TETHER_PENDING) return false;
  if (options_.serving_lanes) {
    const auto& lanes = options_.serving_lanes->lanes;
    if (std::find(lanes.begin(), lanes.end(), role.serving) != lanes.end()) return true;
  }
  return options_.serving_lane != nullptr && role.serves_lane(options_.serving_lane, options_.serving_lane_id);
}

void Scope::join_threads() {
  std::shared_ptr<ThreadGroup> threads;
  {
    std::lock_guard lock(mutex_);
    threads = threads_;
  }
  if (threads) threads->join_all();
}

void Scope::orphan_threads() {
  std::shared_ptr<ThreadGroup> threads;
  {
    std::lock_guard lock(mutex_);
    threads_orphaned_ = true;
    threads = threads_;
  }
  if (threads) threads->orphan();
}

}  // namespace tether
