// WaitedCall: an actor call whose caller waits for its end with no deadline (the C API's
// tether_actor_call_wait with a negative timeout). Such a caller cannot leave before the
// end, so the call needs no future: no pooled block, no handle, no reference count, no
// lock. It travels in the caller's ring as a fast call (Actor::try_call_waited): its
// arg is this WaitedCall, its drop marker() (never called), so the ring, its ordering
// marks and its cancellers treat it as any fast call; the lane's thread, or a canceller
// that claimed it, ends it in place (Actor's waited-call handling, actor_waited_call.cpp).
//
// Why: a call_wait round trip made through a CallFuture cost each side ~870 instructions
// and 12-13 atomic read-modify-writes, and the caller fetched back three lines the
// running side wrote last (bench/README.md has the figures of both).
//
// One per thread (of_this_thread): a thread that waits makes no other call until the
// end, and nothing runs on it meanwhile. Thread-local, so the wake-up of the end (E4)
// names memory that stays the thread's while it lives (a stack slot would be gone once
// a spuriously woken waiter returned); kept in a ThreadLocalSlot, as the library keeps
// every thread-local with a destructor (thread_exit.h).
//
// The wait protocol (word_):
//   waiter                                      ending side
//   W1 arm: word_ = kWaiting                    E1 the outcome: result (by the method),
//   W2 spin (AnswerSpin::spin_for_word, its        error_, state_
//      policy) until word_ is kDone            E3 old = exchange(word_, kDone) (acq_rel):
//   W3 word_ kWaiting -> kParked (CAS); a          the last write to the call
//      failed CAS saw kDone: done               E4 old == kParked: wake word_'s waiters
//   W4 park while word_ == kParked; on waking      (its address only)
//      back to W3 (kDone: done)
// A waiter parks only with word_ kParked, which only E3 changes, after which E4 wakes it:
// no wake-up is lost. The waiter leaves only once it has read kDone (acquire), so it sees
// E1 whole, and the ending side writes nothing of the call after E3: the waiter's next
// call may arm it at once. (No separate "settled" flag for the spin, as a CallFuture has:
// a flag written before E3 would let the waiter leave, and re-arm, before E3 lands.)
//
// Thread safety: the caller's thread arms it, waits and reads the outcome; between the
// post and E3 the lane's thread (or one canceller: the ring's claim picks one) reads
// the arg and writes the outcome. The post (its ring's release store) and E3 order the
// hand-overs.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/error.h"
#include "core/user_arg.h"
#include "tether/tether.h"

namespace tether {

class LanePresence;

class WaitedCall {
 public:
  // of_this_thread: the calling thread's; null when there is no memory to arm its
  // cleanup (the caller takes the general path), or the thread is ending.
  [[nodiscard]] static WaitedCall* of_this_thread() noexcept;
  // marker: the drop of a waited call's ring entry, which names it (is_waited). Never called.
  static void marker(void* call) noexcept;
  [[nodiscard]] static bool is_waited(tether_drop_fn drop) noexcept { return drop == &marker; }

  // ---- the caller ----
  // arm: W1 for a call of arg (still the caller's: see take_arg) on the lane whose
  // consumer partner says where it runs.
  void arm(void* arg, tether_drop_fn arg_drop, LanePresence* partner) noexcept;
  // wait: W2-W4; the call's terminal state.
  [[nodiscard]] int32_t wait() noexcept;
  // take_result / take_error: the outcome, once wait() returned (each taken once).
  [[nodiscard]] UserArg take_result() noexcept { return std::move(result_); }
  [[nodiscard]] ErrorPtr take_error() noexcept { return std::move(error_); }

  // ---- the ending side (between the post and E3) ----
  // take_arg: the call's arg, once (the method's, or dropped when it never runs).
  [[nodiscard]] UserArg take_arg() noexcept { return UserArg(arg_, arg_drop_); }
  // result_slot: where the running method's tether_task_set_result puts the result.
  [[nodiscard]] UserArg& result_slot() noexcept { return result_; }
  // end: E1, E3, E4 with terminal (SUCCEEDED, FAILED or CANCELLED) and its error (null
  // only for SUCCEEDED). The caller may return as soon as it sees E3: nothing of this
  // call may be touched after.
  void end(int32_t terminal, ErrorPtr err) noexcept;

 private:
  enum Word : uint32_t { kWaiting, kParked, kDone };

  // The caller's, read by the ending side.
  void* arg_ = nullptr;
  tether_drop_fn arg_drop_ = nullptr;
  LanePresence* partner_ = nullptr;
  // The outcome, written by the ending side (E1), read by the caller after E3.
  UserArg result_;
  ErrorPtr error_;
  int32_t state_ = TETHER_PENDING;
  std::atomic<uint32_t> word_{kWaiting};
};

}  // namespace tether
