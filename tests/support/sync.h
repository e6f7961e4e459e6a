// sync.h: the two synchronization objects of the tests, both waited on with a bound.
//
// Both notify under their lock, so a waiter that destroys the object as soon as it wakes
// cannot race with the notification.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "support/waits.h"

namespace tether_test {

// Gate: a one-shot flag a thread can wait on with a bound.
class Gate {
 public:
  void set();
  [[nodiscard]] bool is_set() const;
  // wait_for: true once set, false when `d` passed first.
  [[nodiscard]] bool wait_for(std::chrono::nanoseconds d = kLong) const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool set_ = false;  // guarded by mu_
};

// Counter: counts events; a thread can wait, with a bound, for a count to be reached.
// Also a bounded barrier: add(1) then wait_for(n, d).
class Counter {
 public:
  void add(int n = 1);
  [[nodiscard]] int get() const;
  // wait_for: true once get() >= n, false when `d` passed first.
  [[nodiscard]] bool wait_for(int n, std::chrono::nanoseconds d = kLong) const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  int n_ = 0;  // guarded by mu_
};

// count_drop: an arg_drop that counts: pass a Counter* as arg.
void count_drop(void *counter);

}  // namespace tether_test
