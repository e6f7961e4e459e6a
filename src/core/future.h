// Future: what a tether_future handle names. Two kinds implement it:
//   - CallFuture (call_future.h): an actor call's, in one block with the queued call: a
//     state word, the result, the first error, and a scope made only when the method
//     starts nested threads.
//   - Scope (scope.h): an executor task's or a compiled graph execution's (a scope whose
//     target runs on a pinned thread).
// The C boundary (capi/future_api.cpp) reads a future through this interface alone.
//
// Thread safety: every member may be called from any thread. The no-lock members
// (state, waits_for_nothing, try_take_result) may run under a handle's slot lock
// (HandleTable::visit): they neither allocate, wait, call out nor throw.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/deadline.h"
#include "core/error.h"
#include "core/status_error.h"
#include "core/user_arg.h"
#include "tether/tether.h"

namespace tether {

class Future {
 public:
  [[nodiscard]] virtual int32_t state() const noexcept = 0;  // TETHER_PENDING .. TETHER_CANCELLED (acquire)
  // waits_for_nothing: a wait would return TETHER_OK at once: terminal, handle not ended.
  [[nodiscard]] virtual bool waits_for_nothing() const noexcept = 0;
  // wait_done: until terminal. TETHER_OK, TETHER_E_TIMEOUT, TETHER_E_DEADLOCK (the wait
  // would wait on the calling thread itself) or TETHER_E_INVALID_HANDLE (the handle ended).
  [[nodiscard]] virtual int32_t wait_done(Deadline deadline) = 0;
  [[nodiscard]] virtual ErrorPtr first_error() const = 0;
  // try_take_result: TETHER_OK and the result in *out, once, after SUCCEEDED; else
  // TETHER_E_WRONG_STATE and why (explain_no_result).
  enum class NoResult { kNotSucceeded, kTaken };
  [[nodiscard]] virtual int32_t try_take_result(void** out, NoResult* why) noexcept = 0;
  [[noreturn]] static void explain_no_result(NoResult why) {
    throw StatusError(TETHER_E_WRONG_STATE, why == NoResult::kTaken ? "the result was already taken"
                                                                    : "no result to take: the work has not succeeded");
  }
  // copy_outputs: a compiled graph execution's outputs (Scope::copy_outputs); others are
  // TETHER_E_WRONG_STATE.
  virtual void copy_outputs(void** outs, size_t n) = 0;
  // request_cancel: PENDING work never runs (CANCELLED now, its arg dropped); RUNNING
  // work is asked to stop and ends CANCELLED unless it fails. (Not cancel(): a queued
  // call's own cancel() is the lane's, which CallFuture also has.)
  virtual void request_cancel() = 0;
  // on_done: fn(arg) once terminal (here, now, if it is already).
  virtual void on_done(tether_notify_fn fn, UserArg arg) = 0;
  // add_notice: on_done that remove_notice can take back; 0 when it ran now.
  [[nodiscard]] virtual uint64_t add_notice(tether_notify_fn fn, UserArg arg) = 0;
  virtual void remove_notice(uint64_t id) noexcept = 0;
  // is_inside: a wait from this thread would wait on itself.
  [[nodiscard]] virtual bool is_inside() const noexcept = 0;
  // end_future_handle: the handle is gone; waiters on it return INVALID_HANDLE.
  virtual void end_future_handle() = 0;
  // quiet_to_drop: dropping the last reference to this future would run no user code
  // (no result left to drop, no notice, no nested scope) and nothing of it can change
  // any more: FutureGraveyard may put the drop off. False by default.
  [[nodiscard]] virtual bool quiet_to_drop() const noexcept { return false; }

 protected:
  Future() = default;
  ~Future() = default;  // owned through the concrete kind's shared_ptr control block

  // take_once: try_take_result for a result slot whose writes all happen before a
  // SUCCEEDED state (read with acquire); taken hands it to one taker.
  [[nodiscard]] static int32_t take_once(int32_t state, std::atomic<bool>& taken, UserArg& result, void** out,
                                         NoResult* why) noexcept {
    if (state != TETHER_SUCCEEDED) {
      *why = NoResult::kNotSucceeded;
      return TETHER_E_WRONG_STATE;
    }
    if (taken.exchange(true, std::memory_order_relaxed)) {  // one taker wins the slot
      *why = NoResult::kTaken;
      return TETHER_E_WRONG_STATE;
    }
    *out = result.release();
    return TETHER_OK;
  }
  Future(const Future&) = delete;
  Future& operator=(const Future&) = delete;
};

}  // namespace tether
