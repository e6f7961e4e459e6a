// support.h: helpers of the tether.hpp suite. Every wait here has a deadline, and nothing
// synchronizes by sleeping: gates and counters are condition variables, waited on with a
// timeout that only a broken library would reach.
#pragma once

#include <gtest/gtest.h>
#include <tether/tether.hpp>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>

namespace hpp_test {

using namespace std::chrono_literals;

// kLong: the bound of every wait that must succeed.
inline constexpr std::chrono::seconds kLong{20};

[[nodiscard]] inline uint64_t this_tid() noexcept { return static_cast<uint64_t>(::gettid()); }

// Counter: a count that tests can wait on.
class Counter {
 public:
  // add: notifies under the lock, so a waiter that then destroys the Counter cannot race
  // with the notification (the notifier no longer touches it once the lock is free).
  void add(int n = 1) {
    std::lock_guard lock(mutex_);
    value_ += n;
    cv_.notify_all();
  }
  [[nodiscard]] int get() const {
    std::lock_guard lock(mutex_);
    return value_;
  }
  // wait_for: true once the count is at least n.
  [[nodiscard]] bool wait_for(int n, std::chrono::milliseconds timeout = kLong) const {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, timeout, [&] { return value_ >= n; });
  }

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  int value_ = 0;
};

// Gate: closed until open(); wait_for blocks (bounded) until then.
class Gate {
 public:
  void open() {  // notifies under the lock, as Counter::add
    std::lock_guard lock(mutex_);
    open_ = true;
    cv_.notify_all();
  }
  [[nodiscard]] bool wait_for(std::chrono::milliseconds timeout = kLong) const {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, timeout, [&] { return open_; });
  }
  [[nodiscard]] bool is_open() const {
    std::lock_guard lock(mutex_);
    return open_;
  }

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  bool open_ = false;
};

// Token: a move-only value whose LAST owner adds 1 to `drops` when destroyed. Captured
// by a lambda, it counts how many times the library dropped the boxed closure: exactly
// once is the contract.
class Token {
 public:
  explicit Token(std::shared_ptr<Counter> drops) : drops_(std::move(drops)) {}
  Token(Token&& o) noexcept : drops_(std::move(o.drops_)) {}
  Token& operator=(Token&&) = delete;
  Token(const Token&) = delete;
  Token& operator=(const Token&) = delete;
  ~Token() {
    if (drops_) drops_->add();
  }

 private:
  std::shared_ptr<Counter> drops_;
};

// until: polls pred (yielding, no sleep) until it holds or the deadline passes. For
// cooperative loops inside tasks (Task::stop_requested), which have no other signal.
template <class Pred>
[[nodiscard]] bool until(Pred&& pred, std::chrono::milliseconds timeout = kLong) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

// thrown: the tether::Error that f() throws; a test failure (and an OK error) if none.
template <class F>
[[nodiscard]] tether::Error thrown(F&& f) {
  try {
    f();
  } catch (const tether::Error& e) {
    return e;
  }
  ADD_FAILURE() << "expected a tether::Error";
  return tether::Error(TETHER_OK, "nothing was thrown");
}

}  // namespace hpp_test
