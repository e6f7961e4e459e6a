// CallFuture: an actor call with a future, in ONE block: the Call its lane queues and
// runs, and the Future its caller's handle names. What a plain call needs (a state word,
// the arg, the result, the first error, a waiters' word) is all it holds; the rest (the
// notices of on_done and wait_any, a scope for nested threads) is made only when used.
// A Scope per call cost two blocks, ~470 bytes made and torn down, and one more cache
// line for each side to fetch back (bench/README.md has the figures).
//
// Lifetime: made by std::allocate_shared (CallFuturePool: the block holds its count too), with
// two owners: the caller's shared_ptr (the handle), and the lane's, queued_, taken at
// creation and let go by dispose() once the lane is done with the call (run or cancelled).
// A settled call whose end runs no user code (quiet_to_drop) may outlive its handle in
// the releasing thread's FutureGraveyard until that thread next waits (future_graveyard.h).
//
// The kind of call (which method, on what state) is the subclass's: it implements run()
// and cancel() (the lane's) with start(), finish(), fail_pending() and cancel_queued().
//
// States (state_), each change under mutex_, terminal ones stored with release after the
// error, the count and every write of the result:
//   PENDING -> RUNNING          start(): the lane's thread takes the arg
//   PENDING -> CANCELLED        request_cancel() or cancel_queued(): the arg is dropped
//   PENDING -> FAILED           fail_pending(e) (the actor is dead)
//   RUNNING -> SUCCEEDED | FAILED | CANCELLED
//                               finish(): the method returned (CANCELLED when request_cancel() or
//                               the owner's stop asked it to stop and it did not fail); or,
//                               once it started nested threads, their scope's end
//                               (adopt_nested)
// request_cancel() on a RUNNING call sets cancel_requested_ (stop_requested) and cancels the
// nested scope, if any.
//
// Waiting (wait_done): the waiter's spin (answer_spin.h, its table: the running side
// sets settled_ after every terminal store), then under mutex_ a check
// of the handle's end and of the state, then a park on wakeups_ (event_count.h, W1-W4):
// every change a waiter waits for (a terminal state, the handle's end) is made under
// mutex_ and notified after it, so no wake-up is lost.
//
// Thread safety: every public member from any thread. mutex_ guards the marked fields.
// result_ has no lock: written only by the running method (set_result), read only once
// SUCCEEDED (try_take_result: the acquire of state_ orders it after every write), and
// never written after: a take marks it taken (result_taken_) and the destructor lets go
// of a taken result without dropping it, so quiet_to_drop may read it from any thread.
// A call that ended otherwise (FAILED at once by a nested thread) may still be running
// its method, which may still set a result: nothing but the destructor reads result_
// then (the settled copy and quiet_to_drop look at it only after SUCCEEDED).
// error_ is written under mutex_ before the terminal store and never after: read without
// the lock once terminal.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "core/answer_spin.h"
#include "core/call_ledger.h"
#include "core/event_count.h"
#include "core/future.h"
#include "core/inbox.h"
#include "core/notice_list.h"
#include "core/word_mutex.h"

namespace tether {

class Lane;
class LanePresence;
class Scope;

class CallFuture : public Call, public Future {
 public:
  // start_queued: makes the lane's reference (queued_) from self, the one the caller got
  // from allocate_shared. Call once, before the call is pushed.
  static void start_queued(const std::shared_ptr<CallFuture>& self) noexcept { self->queued_ = self; }

  // Future.
  [[nodiscard]] int32_t state() const noexcept final { return state_.load(std::memory_order_acquire); }
  [[nodiscard]] bool waits_for_nothing() const noexcept final {
    return seen_state() >= TETHER_SUCCEEDED && !handle_ended_.load(std::memory_order_acquire);
  }
  [[nodiscard]] int32_t wait_done(Deadline deadline) final;
  [[nodiscard]] ErrorPtr first_error() const final;
  [[nodiscard]] int32_t try_take_result(void** out, NoResult* why) noexcept final;
  void copy_outputs(void** outs, size_t n) final;
  void request_cancel() final;
  void on_done(tether_notify_fn fn, UserArg arg) final;
  [[nodiscard]] uint64_t add_notice(tether_notify_fn fn, UserArg arg) final;
  void remove_notice(uint64_t id) noexcept final;
  [[nodiscard]] bool is_inside() const noexcept final;
  void end_future_handle() final;
  [[nodiscard]] bool quiet_to_drop() const noexcept final;

  // The running method's side (through its Task).
  [[nodiscard]] bool stop_requested() const noexcept { return cancel_requested_.load(std::memory_order_acquire); }
  // set_result: replaces (and drops) an earlier result.
  void set_result(UserArg value) noexcept { std::swap(result_, value); }
  // adopt_nested: the method started its first nested thread, in nested (RUNNING, the
  // method its target): the call now ends when nested does, as nested ends. Throws
  // std::bad_alloc (nothing adopted).
  void adopt_nested(const std::shared_ptr<Scope>& nested);

 protected:
  // owner: the actor; ledger its ledger, owner_stop its stop CANCEL flag; m the method
  // that runs with arg on lane.
  CallFuture(const void* owner, CallLedger* ledger, const std::atomic<bool>* owner_stop, Lane& lane,
             tether_method_fn m, UserArg arg) noexcept;
  ~CallFuture() override;

  // start: PENDING -> RUNNING; the arg into arg. False when it was cancelled or failed.
  [[nodiscard]] bool start(UserArg& arg);
  // finish: the method returned with err (null: OK). With nested threads (adopt_nested),
  // their scope hears it and ends the call; else the call ends now. True when no nested
  // thread runs (as Scope::finish_call). by_consumer: the calling thread is the one
  // consumer of the lane's fast calls, and counts a success in its own field
  // (CallLedger::fast_succeeded) rather than with a read-modify-write.
  bool finish(ErrorPtr err, Scope* nested, bool by_consumer = false);
  // fail_pending: PENDING -> FAILED with e (the arg dropped). No effect once started.
  void fail_pending(ErrorPtr e);
  // cancel_queued: the lane cancels the call before it ran (request_cancel, from the
  // subclass's cancel()).
  void cancel_queued() noexcept;
  // release_queued: the lane is done with the call (dispose): maybe the last reference,
  // so the caller's last touch of this.
  void release_queued() noexcept { dispose(); }
  [[nodiscard]] Lane& lane() const noexcept { return *lane_; }
  [[nodiscard]] tether_method_fn method() const noexcept { return method_; }
  // The subclass's: what holds the owner (whose ledger counts the call) alive until
  // nested threads end the call.
  [[nodiscard]] virtual std::shared_ptr<void> keep_owner() const = 0;

 private:
  struct Cold;
  class NestedEnd;
  // dispose: the lane is done with the call: its reference goes (maybe the last).
  void dispose() noexcept final;
  // complete_locked: the terminal change: counts the call (a success in the consumer's
  // own field when by_consumer: finish), stores err (a cancellation's own when null and
  // CANCELLED), then the state. Returns the notices to run unlocked.
  [[nodiscard]] NoticeList::Due complete_locked(int32_t terminal_state, ErrorPtr err, bool by_consumer = false) noexcept;
  // announce: after a change, unlocked: wakes waiters, then runs due; ended: this thread
  // made the call terminal (it alone writes the settled copy and settled_).
  void announce(NoticeList::Due&& due, bool ended);
  [[nodiscard]] bool terminal_locked() const noexcept { return state_.load(std::memory_order_relaxed) >= TETHER_SUCCEEDED; }
  // seen_state: state(), from the waiters' line once settled_ is set (the settled copy).
  [[nodiscard]] int32_t seen_state() const noexcept {
    return settled_.load(std::memory_order_acquire) ? settled_state_.load(std::memory_order_relaxed) : state();
  }
  Cold& cold_locked();  // throws std::bad_alloc

  // Layout, line by line (a 64-byte-aligned CallFuturePool block: the shared_ptr's
  // count, then this). Every line the running side writes is one the caller fetches back,
  // and the other way round, so each side writes as few as it can:
  //   0: the count and the Call's head (vtable, link, marks, owner): the caller's, read by
  //      the lane; the count is the one line both sides write (each lets go once).
  //   1: the Call's claim count, then what the caller sets once and the running side reads.
  //   2: the waiters' line: what the caller reads and writes as it waits, takes and lets
  //      go. The running side never reads it, and writes it once per call, after its
  //      terminal store: the settled copy of the answer and settled_ (answer_spin.h,
  //      "always"), and the error of a call that did not succeed just before.
  //   3: the answer and the state: what the running side reads and writes as it runs and
  //      ends the call (its lock, the stop request, the cold part), read by the caller
  //      once it is settled.
  // Checked by the static_assert in call_future.cpp (64-bit).
  // Line 1.
  CallLedger* const ledger_;  // counts the call once, as it becomes terminal
  const std::atomic<bool>* const owner_stop_;
  // The call's arg: handed over once, under mutex_, by the one change out of PENDING
  // (start: to the method; a cancel or failure: dropped). Never written after creation.
  void* const arg_;
  const tether_drop_fn arg_drop_;
  const tether_method_fn method_;
  Lane* const lane_;  // the lane it is queued on (alive while the call is unsettled)
  // Line 2.
  const uint64_t lane_id_;          // the lane's id, for a manual lane's owner
  LanePresence* const partner_;     // where the lane's consumer runs (spin policy); null: spin a fixed time
  // nested_: cold_->nested, for is_inside without the lock (set once, release; the
  // scope lives as long as this).
  std::atomic<const Scope*> nested_{nullptr};
  ErrorPtr error_;  // written (under mutex_) only for a call that did not succeed
  // The settled copy: the answer as the waiters' line holds it, written once by the
  // running side before settled_'s release store, read only after an acquire load of
  // settled_ that saw it set: the caller's way from the answer to its next call (wait,
  // take, release) then reads no line of the call but this one. Relaxed atomics (plain
  // moves on x86): settled_ orders them, and a compiler that loads one speculatively
  // beside settled_ (a select for `settled ? copy : state()`) reads no torn value.
  std::atomic<void*> settled_result_{nullptr};         // result_.get()
  std::atomic<int32_t> settled_state_{TETHER_PENDING};  // the terminal state
  std::atomic<bool> settled_{false};       // answer_spin.h ("always"): set after every terminal store
  std::atomic<bool> handle_ended_{false};  // written under mutex_, or unlocked once terminal
  std::atomic<bool> result_taken_{false};  // one taker wins the result
  const bool one_thread_;                  // the lane has one thread: a wait from it waits on itself
  std::atomic<bool> settled_quiet_{false};  // quiet_to_drop's answer but for a take (SUCCEEDED only)
  [[maybe_unused]] char line2_end_[7] = {};  // the rest of line 2
  // Line 3.
  std::atomic<int32_t> state_{TETHER_PENDING};  // written under mutex_
  mutable WordMutex mutex_;
  UserArg result_;
  std::unique_ptr<Cold> cold_;                 // guarded by mutex_: made at need
  std::atomic<bool> cancel_requested_{false};  // written under mutex_
  std::atomic<int32_t> waiter_cpu_{-1};         // where the last waiter parked (a hint: announce)
  EventCount wakeups_;  // notified after a terminal change or the handle's end (after mutex_)
  std::shared_ptr<CallFuture> queued_;  // the lane's reference, until dispose()
};

}  // namespace tether
