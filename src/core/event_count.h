// EventCount: a condition variable for waiters that check their condition under a mutex,
// parked on a futex word (platform::park_while) instead of a std::condition_variable.
// Why: glibc's condition variable re-locks its mutex as contended after every wait, so the
// woken thread's next unlock makes a FUTEX_WAKE of nobody; here the woken thread takes the
// mutex as anyone would, and a notify with no waiter costs an atomic add and a load.
//
// Thread safety: every member may be called from any thread.
//
// Wait protocol (epoch_ counts notifies; waiters_ counts threads between W2 and W4):
//
//   waiter (holds the condition's mutex)     notifier
//   W1 check the condition: true -> done     N1 change the condition under the mutex
//   W2 key = prepare(): waiters_ += 1,       N2 (mutex held or not) epoch_ += 1 (seq_cst)
//      then key = epoch_ (seq_cst)           N3 waiters_ == 0 (seq_cst) -> done, no syscall
//   W3 unlock; park_while(epoch_ == key)     N4 wake_all_parked(epoch_)
//   W4 waiters_ -= 1; lock; back to W1
//
// Why no notify is lost: N1 is either before W1 (the mutex orders them: W1 sees it) or
// after W2's unlock in W3. In the second case N2 follows W2 in epoch_'s order, so W3's
// compare (atomic with a wake of the word, in the kernel) either sees key != epoch_ and
// returns, or sleeps before N2; then N3, ordered after W2's waiters_ += 1 by the mutex,
// sees a waiter and N4 wakes it.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

#include "core/deadline.h"
#include "platform/platform.h"

namespace tether {

class EventCount {
 public:
  // wait: W2..W4 for one wake-up of the caller's condition check; `lock` is held before
  // and after. Returns early on a notify, the deadline, or spuriously: re-check.
  template <class Mutex>
  void wait(std::unique_lock<Mutex>& lock, const Deadline& deadline) noexcept {
    waiters_.fetch_add(1, std::memory_order_seq_cst);  // W2
    const uint32_t key = epoch_.load(std::memory_order_seq_cst);
    lock.unlock();  // W3
    platform::park_while(epoch_, key, deadline.steady_ns());
    waiters_.fetch_sub(1, std::memory_order_relaxed);  // W4
    lock.lock();
  }

  // wait_until(lock, deadline, condition): W1..W4 until condition() (checked with lock
  // held) or the deadline; returns condition().
  template <class Mutex, class Condition>
  bool wait_until(std::unique_lock<Mutex>& lock, const Deadline& deadline, Condition condition) noexcept {
    while (!condition()) {
      if (!deadline.forever() && Deadline::now() >= deadline.at()) return condition();
      wait(lock, deadline);
    }
    return true;
  }

  // notify_all: N2..N4, after the condition changed (N1). True if it woke waiters (N4).
  bool notify_all() noexcept {
    epoch_.fetch_add(1, std::memory_order_seq_cst);                           // N2
    if (waiters_.load(std::memory_order_seq_cst) == 0) return false;          // N3
    platform::wake_all_parked(epoch_);                                        // N4
    return true;
  }

 private:
  std::atomic<uint32_t> epoch_{0};    // wraps; a waiter compares it with its own key only
  std::atomic<uint32_t> waiters_{0};  // threads between W2 and W4
};

}  // namespace tether
