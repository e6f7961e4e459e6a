// test_support.h: the runner suite's own helpers (tests/runner/), on top of tests/support.
//
// Everything here is written against the public header only. The helpers keep the tests
// honest about three rules:
//   - every wait has a bound (Gate::wait_for, Counter::wait_for, wait_until, kLong);
//   - what must happen exactly once is counted (Counter, Closure's drop counter);
//   - every handle is released (Runner and Error own theirs).
#pragma once

#include <tether/tether.h>

#include "support/sync.h"
#include "support/threads.h"
#include "support/waits.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace tt {

// The shared helpers (bounds, scale, Gate, Counter, thread names): tests/support.
using namespace tether_test;

// Closure: a std::function carried through a tether_fn/arg pair. Its drop deletes it and
// counts on `drops` (may be null), so a test can assert the arg was dropped exactly once.
using TaskFn = std::function<tether_status(tether_task *)>;
struct Closure {
  TaskFn fn;
  Counter *drops = nullptr;
};
tether_status closure_trampoline(tether_task *t, void *arg);
void closure_drop(void *arg);
inline Closure *make_closure(TaskFn fn, Counter *drops) { return new Closure{std::move(fn), drops}; }

// start_runner: tether_runner_start with a closure target.
tether_status start_runner(const tether_runner_options *opts, TaskFn fn, Counter *drops,
                           tether_runner *out);
// spawn: tether_task_spawn with a closure.
tether_status spawn(tether_task *t, const char *name, TaskFn fn, Counter *drops);

// runner_options: defaults with a name and stop_on_error.
tether_runner_options runner_options(const char *name, int stop_on_error = 1);

// Runner: owns a runner handle. Its destructor opens the registered gates first, so that a
// test that fails half-way never leaves a library thread blocked on a local, then releases.
class Runner {
 public:
  Runner() = default;
  Runner(const Runner &) = delete;
  Runner &operator=(const Runner &) = delete;
  ~Runner();

  tether_runner *out() { return &h_; }
  [[nodiscard]] tether_runner get() const { return h_; }
  [[nodiscard]] uint64_t id() const { return h_.id; }
  // open_on_exit: gates to open before the destructor releases the runner.
  void open_on_exit(std::initializer_list<Gate *> gates) {
    for (Gate *g : gates) gates_.push_back(g);  // not insert(end, list): a GCC 12 -O3 false warning
  }
  // release: releases now and forgets the handle; returns the status.
  tether_status release();
  // forget: the handle was ended some other way (released from the inside).
  void forget() { h_ = {}; }

  [[nodiscard]] int32_t state() const;  // poll, or -1 when the call fails
  [[nodiscard]] size_t live() const;    // live_threads, or SIZE_MAX when the call fails

 private:
  tether_runner h_{};
  std::vector<Gate *> gates_;
};

// Error: owns a tether_error handle.
class Error {
 public:
  Error() = default;
  explicit Error(tether_error e) : h_(e) {}
  Error(const Error &) = delete;
  Error &operator=(const Error &) = delete;
  Error(Error &&o) noexcept : h_(std::exchange(o.h_, tether_error{})) {}
  ~Error() { reset(); }
  void reset();

  tether_error *out() {
    reset();
    return &h_;
  }
  [[nodiscard]] tether_error get() const { return h_; }
  [[nodiscard]] bool null() const { return h_.id == 0; }
  [[nodiscard]] int32_t code() const { return tether_error_code(h_); }
  [[nodiscard]] int64_t user_code() const { return tether_error_user_code(h_); }
  [[nodiscard]] std::string message() const;
  [[nodiscard]] std::string thread_name() const;
  [[nodiscard]] std::string type_name() const;

 private:
  tether_error h_{};
};

// Accessors through a caller buffer, read in full.
std::string error_message(tether_error e);
std::string error_thread_name(tether_error e);
std::string error_type_name(tether_error e);
std::string last_error_message();

// first_error / error_at: owned handles (null when the call fails or there is none).
Error first_error(tether_runner r);
Error error_at(tether_runner r, size_t i);

// state_name: "RUNNING", ... for messages.
const char *state_name(int32_t s);

}  // namespace tt
