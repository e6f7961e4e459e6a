// support.h: the tether.hpp suite's own helpers, on top of tests/support. Every wait here
// has a deadline, and nothing synchronizes by sleeping: gates and counters are condition
// variables, waited on with a timeout that only a broken library would reach.
#pragma once

#include <gtest/gtest.h>
#include <tether/tether.hpp>

#include "support/sync.h"
#include "support/threads.h"
#include "support/waits.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>

namespace hpp_test {

using namespace std::chrono_literals;

// The shared helpers (kLong, Gate, Counter, tid): tests/support.
using namespace tether_test;

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
