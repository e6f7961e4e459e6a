// test_support.h: helpers shared by the C++ test suite of tether.
//
// Everything here is written against the public header only. The helpers keep the tests
// honest about three rules:
//   - every wait has a bound (Event::wait_for, Counter::wait_for, wait_until, kLong);
//   - what must happen exactly once is counted (Counter, Closure's drop counter);
//   - every handle is released (Runner and Error own theirs).
#pragma once

#include <tether/tether.h>

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

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// kLong: the bound of every wait that is expected to succeed. Long enough for valgrind on a
// loaded two-core machine, short enough that a hang fails well inside the ctest timeout.
inline constexpr std::chrono::seconds kLong{20};
inline constexpr int64_t kLongNs = INT64_C(20) * 1000 * 1000 * 1000;
// kPrompt: how soon something the contract calls "prompt" must happen.
inline constexpr std::chrono::seconds kPrompt{5};

constexpr int64_t ns_from_ms(int64_t ms) { return ms * 1000 * 1000; }

// test_scale: TETHER_TEST_SCALE from the environment when set, else the build's default
// (4 under ASan, 10 under TSan, 20 under valgrind, 1 otherwise).
int test_scale();
// scaled(n): a stress size divided by the scale, never below 1.
size_t scaled(size_t n);
// instrumented: the build runs under a sanitizer or valgrind (timings are meaningless).
bool instrumented();

// Event: a one-shot flag a thread can wait on with a bound.
class Event {
 public:
  void set();
  [[nodiscard]] bool is_set() const;
  // wait_for: true once set, false when `d` passed first.
  [[nodiscard]] bool wait_for(std::chrono::nanoseconds d) const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool set_ = false;  // guarded by mu_
};

// Counter: counts events and lets a test wait, with a bound, for a count to be reached.
class Counter {
 public:
  void add(int n = 1);
  [[nodiscard]] int get() const;
  // wait_for: true once get() >= n, false when `d` passed first.
  [[nodiscard]] bool wait_for(int n, std::chrono::nanoseconds d) const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  int n_ = 0;  // guarded by mu_
};

// count_drop: an arg_drop that counts: pass a Counter* as arg.
void count_drop(void *counter);

// relax: what a spin loop does between two polls. A yield, except under valgrind, whose
// scheduler runs one thread at a time behind an unfair lock: there a spinning thread would
// starve the threads it waits for, so it sleeps a little instead.
void relax();

// kUnderValgrind: the build runs its tests under valgrind memcheck.
#if defined(TETHER_TEST_VALGRIND) && TETHER_TEST_VALGRIND
inline constexpr bool kUnderValgrind = true;
#else
inline constexpr bool kUnderValgrind = false;
#endif

// wait_until: polls an observable condition with a bound (for facts the API only exposes by
// polling, such as live_threads reaching 0). Returns pred()'s last value.
template <class Pred>
bool wait_until(Pred pred, std::chrono::nanoseconds d) {
  const auto deadline = Clock::now() + d;
  while (!pred()) {
    if (Clock::now() >= deadline) return pred();
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

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
  void open_on_exit(std::initializer_list<Event *> gates) {
    for (Event *g : gates) gates_.push_back(g);  // not insert(end, list): a GCC 12 -O3 false warning
  }
  // release: releases now and forgets the handle; returns the status.
  tether_status release();
  // forget: the handle was ended some other way (released from the inside).
  void forget() { h_ = {}; }

  [[nodiscard]] int32_t state() const;  // poll, or -1 when the call fails
  [[nodiscard]] size_t live() const;    // live_threads, or SIZE_MAX when the call fails

 private:
  tether_runner h_{};
  std::vector<Event *> gates_;
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

// os_thread_name: the calling thread's OS name.
std::string os_thread_name();

// threads_named: how many threads of this process have the OS name `name` now
// (/proc/self/task/*/comm).
size_t threads_named(const std::string &name);
// wait_threads_gone: process-wide quiescence after a release_nowait or a release from the
// inside: waits (bounded) until no thread named `name` is left. A library thread posts its
// own join to the control thread before it ends, so once it is gone from the process the
// join is queued (and runs at the latest when the library stops at exit).
bool wait_threads_gone(const std::string &name, std::chrono::nanoseconds d);

// state_name: "RUNNING", ... for messages.
const char *state_name(int32_t s);

}  // namespace tt
