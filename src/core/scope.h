// Scope: a set of threads whose first error is caught — the heart of the ThreadRunner,
// and the state behind an executor task's future and a compiled graph execution's: a
// scope whose target runs on a pinned thread instead of a thread of its own. (An actor
// call's future is a CallFuture, call_future.h, which makes a scope only for the nested
// threads its method starts.)
//
// Participants are the units whose end completes the scope: the target and every nested
// thread. A runner's scope starts RUNNING; a call's starts PENDING, holding the call's
// arg, and one transition under mutex_ decides whether the call starts (start_call) or
// never runs (cancel, fail_pending): the winner alone owns the arg. The scope SUCCEEDS when all have returned OK, FAILS at the first error from
// any of them (or from report()), and is CANCELLED when cancel() was called and all
// then ended without an error.
//
// Thread safety: every public member may be called from any thread. mutex_ guards the
// fields marked so; state_ and stop_requested_ are also read without it.
// Memory ordering: state_ and stop_requested_ are written under mutex_ with release
// stores and read with acquire loads. A failure is recorded in errors_ before state_
// becomes FAILED, and (with stop_on_error) stop_requested_ is set before that too, so a
// thread that observes FAILED also observes the stop request and a non-empty error list.
// SUCCEEDED is stored only when live_ reaches 0 with no error recorded, under the mutex
// every error is recorded under: no reader can see SUCCEEDED for a scope that failed.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/deadline.h"
#include "core/error.h"
#include "core/answer_spin.h"
#include "core/error_list.h"
#include "core/event_count.h"
#include "core/future.h"
#include "core/spin_policy.h"
#include "core/task_origin.h"
#include "core/lazy_thread_group.h"
#include "core/notice_list.h"
#include "core/thread_group.h"
#include "core/user_arg.h"
#include "core/word_mutex.h"
#include "tether/tether.h"

namespace tether {

class CallLedger;

// ServingLanes: a compiled graph's lanes, as its executions' futures see them.
struct ServingLanes {
  std::vector<const void*> lanes;        // compared, never followed
  std::vector<LanePresence*> presences;  // those of the lanes that have one (type-stable)
};

class Scope final : public Future, public std::enable_shared_from_this<Scope> {
 public:
  struct Options {
    std::string name = "tether-run";  // names the threads; nested threads may be renamed
    bool stop_on_error = true;
    size_t stack_size = 0;
    // For a call: the lane whose single thread will run it. Waiting on the call from that
    // thread while it is not done is a wait on yourself.
    const void* serving_lane = nullptr;  // compared, never followed
    uint64_t serving_lane_id = 0;        // the same lane's id, for a manual lane's owner
    // For a call: waiters spin briefly before parking (a call on a lane is often answered
    // within microseconds; a runner, which starts a thread, never is).
    bool spin_wait = false;
    // For a call on a one-thread lane: where its consumer runs, so a waiter spins only
    // while that can succeed (core/spin_policy.h). Type-stable: may outlive the lane.
    LanePresence* spin_partner = nullptr;
    // For a call: the owner's thread group (made at its first nested thread), which its
    // nested threads join, so the owner's release joins them too. Null: the scope makes
    // one of its own. Followed only by the scope's first spawn, which the call's target
    // makes while it runs on the owner's thread (the owner is alive then); later spawns,
    // from nested threads too, use the group that spawn took (threads_).
    LazyThreadGroup* threads = nullptr;
    // For a call: a stop flag of its owner (an actor's stop CANCEL) that also asks it to stop.
    const std::atomic<bool>* owner_stop = nullptr;
    // For a call: the handle of the actor it belongs to. Its nested threads belong to the
    // actor too (tether_task_actor; the actor's end waits for them: Actor::is_inside).
    uint64_t actor = 0;
    // For a compiled graph execution: the lanes whose threads run its nodes. Waiting on
    // it from one of them while it is not done is a wait on yourself. Their presences
    // (spin_policy.h) feed spin_partner, the lane that ends it (answer_spin.h).
    std::shared_ptr<const ServingLanes> serving_lanes;
    // For a call: its owner's ledger, which counts the call once, as the scope becomes
    // terminal (SUCCEEDED: completed, FAILED: failed, CANCELLED: cancelled), under mutex_
    // and before state_ is stored: a thread that sees the state sees the count. The owner
    // is alive then: its lane runs or cancels the queued call (both lock mutex_ first),
    // and finish_call_of keeps it past a target that returns while nested threads run.
    CallLedger* ledger = nullptr;
  };

  // pending: a scope for a queued call, PENDING and holding arg until it starts.
  static std::shared_ptr<Scope> pending(Options&& options, UserArg arg);

  explicit Scope(Options&& options);
  ~Scope();  // drops a result nobody took
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

  [[nodiscard]] const Options& options() const noexcept { return options_; }

  // spawn: runs fn(task, arg) on a new thread of the scope as a participant. The first
  // participant spawned with is_target is the runner's target. Throws StatusError; arg
  // is dropped before a failing spawn returns.
  void spawn(std::string thread_name, bool is_target, tether_fn fn, UserArg arg);

  // start_call: PENDING -> RUNNING with the calling thread as the target participant;
  // hands over the call's arg. False (arg untouched) if the call was cancelled or failed.
  [[nodiscard]] bool start_call(UserArg& arg);
  // finish_call: the target participant started by start_call returned. True when the
  // scope is quiet now (no nested thread runs; quiet is final): what on_quiet would wait
  // for has happened, and the caller may act on it without registering a notice.
  bool finish_call(ErrorPtr error) { return finish(std::move(error)); }
  // finish_call_of: finish_call for a call counted by owner's ledger (Options::ledger);
  // while nested threads still run, owner is kept alive until the scope is terminal.
  template <class Owner>
  bool finish_call_of(Owner& owner, ErrorPtr error) {
    return finish(
        std::move(error), [](void* o) -> std::shared_ptr<void> { return static_cast<Owner*>(o)->shared_from_this(); },
        &owner);
  }
  // fail_pending: a PENDING call fails with e without running (actor dead, shutdown);
  // its arg is dropped. No effect once started.
  void fail_pending(ErrorPtr e);

  // report: records e as if raised by a participant. TETHER_E_WRONG_STATE on a scope
  // that SUCCEEDED or was CANCELLED (nothing recorded).
  void report(ErrorPtr e);

  // cancel: a PENDING call never runs (CANCELLED now, its arg dropped); otherwise asks
  // every participant to stop, and the scope ends CANCELLED unless one fails.
  void cancel();
  void request_cancel() override { cancel(); }

  [[nodiscard]] int32_t state() const noexcept override { return state_.load(std::memory_order_acquire); }
  [[nodiscard]] bool stop_requested() const noexcept {
    return stop_requested_.load(std::memory_order_acquire) ||
           (owner_stop_ != nullptr && owner_stop_->load(std::memory_order_acquire));
  }
  [[nodiscard]] ErrorPtr first_error() const override;
  [[nodiscard]] size_t error_count() const;
  [[nodiscard]] ErrorPtr error_at(size_t i) const;  // null past the end
  [[nodiscard]] size_t live() const;

  // set_result: the target's result; replaces (and drops, unlocked) an earlier one.
  void set_result(UserArg value);
  // take_result: TETHER_E_WRONG_STATE unless SUCCEEDED and not yet taken.
  [[nodiscard]] void* take_result();
  // try_take_result: take_result without throwing (Future's).
  [[nodiscard]] int32_t try_take_result(void** out, NoResult* why) noexcept override;
  // waits_for_nothing: a wait (not all_threads) would return TETHER_OK at once: terminal,
  // and the handle not ended. No lock (it may run under a handle's slot lock).
  [[nodiscard]] bool waits_for_nothing() const noexcept override {
    return state() >= TETHER_SUCCEEDED && !handle_ended_.load(std::memory_order_acquire);
  }

  // set_outputs: a compiled graph execution's outputs, each owned with its drop until
  // taken; set by the target before it finishes.
  void set_outputs(std::vector<UserArg> outputs);
  // copy_outputs: copies the outputs into outs[0..n); the first copy hands them to the
  // caller (their drops will not run). TETHER_E_WRONG_STATE unless an execution's future
  // that SUCCEEDED; TETHER_E_INVALID_ARGUMENT when n is smaller than their count.
  void copy_outputs(void** outs, size_t n) override;

  // wait: until terminal (and, with all_threads, until no participant is live).
  // Returns TETHER_OK, TETHER_E_TIMEOUT, TETHER_E_DEADLOCK (the wait would have to wait
  // on the calling thread itself) or TETHER_E_INVALID_HANDLE (the handle ended).
  [[nodiscard]] int32_t wait(Deadline deadline, bool all_threads);
  [[nodiscard]] int32_t wait_done(Deadline deadline) override { return wait(deadline, /*all_threads=*/false); }

  // on_done: fn(arg) once the scope is terminal (at once, here, if it already is).
  void on_done(tether_notify_fn fn, UserArg arg) override;
  // add_notice: on_done that can be taken back: an id for remove_notice (0: it ran now).
  [[nodiscard]] uint64_t add_notice(tether_notify_fn fn, UserArg arg) override;
  // remove_notice: the notice `id` will not run (its arg is dropped here); no effect once
  // it has run. What a waiter that stops waiting uses, so waits leave nothing behind.
  void remove_notice(uint64_t id) noexcept override;
  // on_quiet: fn(arg) once every participant has returned (at once, here, if none is
  // live). Later than on_done when the scope failed while nested threads still ran:
  // an owner that must outlive ALL of a call's work (an actor's end) waits for this.
  void on_quiet(tether_notify_fn fn, UserArg arg);
  // wait_quiet: blocks until every participant has returned (no inside check: for an
  // owner that knows the participants do not wait on it).
  void wait_quiet();

  // The C handle naming this scope (0 until set), for tether_task_runner.
  void set_handle(uint64_t id) noexcept { handle_.store(id, std::memory_order_release); }
  [[nodiscard]] uint64_t handle() const noexcept { return handle_.load(std::memory_order_acquire); }

  // end_handle: the caller's handle is gone; waiters on it return INVALID_HANDLE.
  void end_handle();
  // end_future_handle: end_handle for a future's handle (nobody can join_all through it).
  // Once the scope is terminal no wait on it parks any more (only join_all waits past the
  // end, for nested threads), so it takes no lock then and wakes nobody.
  void end_future_handle() override {
    if (state() >= TETHER_SUCCEEDED) {
      handle_ended_.store(true, std::memory_order_release);
    } else {
      end_handle();
    }
  }

  // is_inside: the calling thread is one of this scope's threads, or the single thread
  // that must run this pending call.
  [[nodiscard]] bool is_inside() const noexcept override;

  // join_threads: blocks until every thread of the scope has exited and been joined.
  void join_threads();
  // orphan_threads: the control thread joins them instead, once they exit.
  void orphan_threads();

 private:
  // keep_owner_locked: holds owner until the scope is terminal. With no memory to hold
  // it, the ledger counts the target's own outcome now and is not touched again.
  void keep_owner_locked(std::shared_ptr<void> owner, bool target_failed) noexcept;
  // count_locked: the ledger (if any) counts a call that ended in terminal_state.
  void count_locked(int32_t terminal_state) noexcept;
  class Participant;

  // finish: a participant returned (error null on success). With keep (the target of a
  // counted call), keep(owner) is held while other participants still run.
  bool finish(ErrorPtr error, std::shared_ptr<void> (*keep)(void*) = nullptr, void* owner = nullptr);
  // nested_origin: what the tasks of this scope's threads know of its owner.
  [[nodiscard]] TaskOrigin nested_origin() const noexcept;
  // leave_locked: one participant fewer; the on_quiet notices due when none is left.
  [[nodiscard]] NoticeList::Due leave_locked();
  // record_locked: appends e; the first error of a live scope fails it. Returns the
  // notices to run (unlocked) if the scope just became terminal.
  [[nodiscard]] NoticeList::Due record_locked(ErrorPtr e);
  [[nodiscard]] NoticeList::Due complete_locked(int32_t terminal_state);
  // notify_waiters: wakes waiters after a change of what they wait for (made under
  // mutex_, called unlocked); once the scope is terminal and a waiter spins for it, sets
  // settled_, which that waiter watches (answer_spin.h).
  void notify_waiters() noexcept {
    if (wakeups_.notify_all()) woke_waiter_on(waiter_cpu_.load(std::memory_order_relaxed));
    if (state() >= TETHER_SUCCEEDED) AnswerSpin::settle(waiter_spins_, settled_);
  }
  // reserve_errors_locked: room for the errors of more_participants more (throws bad_alloc).
  void reserve_errors_locked(size_t more_participants);
  [[nodiscard]] bool terminal_locked() const noexcept { return state_.load(std::memory_order_relaxed) >= TETHER_SUCCEEDED; }

  // Layout: a call's scope is made and destroyed by the caller's thread and run by the
  // lane's, each touching it once or twice a call; every line the running side writes is
  // a line the caller must fetch back. So what a plain call's run touches (start_call,
  // set_result, finish: the state, the lock, the count, the arg, the result, the
  // notices' emptiness, the waiters' word) comes first, in the two cache lines after the
  // shared_ptr's control block, and what a plain call never touches (the options but
  // owner_stop, the errors, threads, outputs) after it; but settled_, which a spinning
  // waiter watches while the running side writes those lines, comes last, lines away.
  // Measured: bench/README.md.
  std::atomic<int32_t> state_{TETHER_RUNNING};  // written under mutex_
  std::atomic<bool> stop_requested_{false};    // written under mutex_
  bool cancel_requested_ = false;  // guarded by mutex_
  // handle_ended_: written under mutex_, or unlocked by end_future_handle once terminal;
  // wait() reads it unlocked too.
  std::atomic<bool> handle_ended_{false};
  std::atomic<bool> result_taken_{false};  // see result_
  size_t live_ = 0;                // guarded by mutex_: participants not yet returned
  CallLedger* ledger_;             // guarded by mutex_: null once counted (or none); options_.ledger at first
  const std::atomic<bool>* const owner_stop_;  // options_.owner_stop, beside what finish() reads
  mutable WordMutex mutex_;
  // waiter_spins_: set by a waiter before it spins (answer_spin.h), read by the thread
  // that ends the scope: only then does that thread write settled_'s line.
  mutable std::atomic<bool> waiter_spins_{false};
  EventCount wakeups_;             // notified on terminal, live_ reaching 0, end_handle (after mutex_)
  UserArg pending_arg_;            // guarded by mutex_: a call's arg until it starts
  // result_: no lock. Written only by the target while it runs (set_result), read only
  // once SUCCEEDED (take_result, whose acquire of state_ orders it after every write);
  // result_taken_ hands it to one taker. The destructor drops a result nobody took.
  UserArg result_;
  NoticeList notices_;        // guarded by mutex_: on_done entries not yet run
  NoticeList quiet_notices_;  // guarded by mutex_: on_quiet entries not yet run

  const Options options_;
  std::atomic<uint64_t> handle_{0};
  // threads_: made at the first spawn (most calls never spawn). Guarded by mutex_ until
  // set; never reset. orphaned_: nobody will join them by hand (set for calls).
  std::shared_ptr<ThreadGroup> threads_;  // guarded by mutex_
  bool threads_orphaned_ = false;         // guarded by mutex_
  ErrorList errors_;               // guarded by mutex_: in order, never rewritten
  // An execution's outputs: owned until the first copy_outputs, then only their values.
  bool has_outputs_ = false;             // guarded by mutex_
  std::vector<UserArg> outputs_;         // guarded by mutex_
  std::vector<void*> output_values_;     // guarded by mutex_
  // settled_: set (release) once the scope is terminal, if a waiter spins for it, by the
  // ending thread after its last write to the lines above (notify_waiters). The spinning
  // waiter watches this word, not state_: a look at state_'s line pulls it back from the
  // running side between each of that side's writes to it (lock, state, count, unlock),
  // and each then fetches it again. Last, so lines away from state_; unwritten when
  // nobody spins (calls answered before they are waited for), so the pool's next use of
  // the block does not fetch the line back from the running side's CPU.
  std::atomic<bool> settled_{false};
  // waiter_cpu_: where the last waiter to park ran (a hint, relaxed): the thread that ends
  // the scope and wakes it there parks rather than spins next (spin_policy.h).
  std::atomic<int32_t> waiter_cpu_{-1};
};

}  // namespace tether
