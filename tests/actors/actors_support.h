// actors_support.h: the executor, future and actor suite's own helpers (tests/actors/),
// on top of tests/support.
//
// Written against the public header only. The helpers keep the tests honest about:
//   - every wait has a bound (Gate::wait_for, Counter::wait_for, wait_until, kLong);
//   - what must happen exactly once is counted (Counter; closures count their drops);
//   - every handle is released (Executor, Actor, Future and Err own theirs).
//
// Declaration order matters in a test: gates, counters and the state an actor points at
// are declared BEFORE the owners (Actor, Executor, Future), so the owners — which open
// their registered gates, then release — are destroyed first, while what the library's
// threads still touch is alive.
#pragma once

#include <tether/tether.h>

#include "support/sync.h"
#include "support/threads.h"
#include "support/waits.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <initializer_list>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace at {

// The shared helpers (bounds, scale, Gate, Counter, tid, thread names): tests/support.
using namespace tether_test;

// Closures: a std::function carried through an arg/arg_drop pair. The drop deletes it and
// counts on `drops` (may be null), so a test can assert the arg was dropped exactly once.
template <class Sig>
struct Closure {
  std::function<Sig> fn;
  Counter *drops;
};
template <class Sig>
void closure_drop(void *arg) {
  auto *c = static_cast<Closure<Sig> *>(arg);
  Counter *drops = c->drops;
  delete c;
  if (drops != nullptr) drops->add();
}

using TaskSig = tether_status(tether_task *);
using MethodSig = tether_status(tether_task *, void *state);
using CtorSig = tether_status(tether_task *, void **state_out);
using TaskFn = std::function<TaskSig>;
using MethodFn = std::function<MethodSig>;
using CtorFn = std::function<CtorSig>;

inline tether_status task_trampoline(tether_task *t, void *arg) {
  return static_cast<Closure<TaskSig> *>(arg)->fn(t);
}
inline tether_status method_trampoline(tether_task *t, void *state, void *arg) {
  return static_cast<Closure<MethodSig> *>(arg)->fn(t, state);
}
inline tether_status ctor_trampoline(tether_task *t, void *arg, void **state_out) {
  return static_cast<Closure<CtorSig> *>(arg)->fn(t, state_out);
}

// submit / submit_timeout: an executor task from a closure.
inline tether_status submit(tether_executor e, TaskFn fn, Counter *drops, tether_future *out) {
  return tether_executor_submit(e, task_trampoline, new Closure<TaskSig>{std::move(fn), drops},
                                closure_drop<TaskSig>, out);
}
inline tether_status submit_timeout(tether_executor e, TaskFn fn, Counter *drops, tether_future *out,
                                    int64_t timeout_ns) {
  return tether_executor_submit_timeout(e, task_trampoline, new Closure<TaskSig>{std::move(fn), drops},
                                        closure_drop<TaskSig>, out, timeout_ns);
}

// call / call_timeout: an actor method call from a closure (group NULL = default).
inline tether_status call(tether_actor a, const char *group, MethodFn fn, Counter *drops, tether_future *out) {
  return tether_actor_call(a, group, method_trampoline, new Closure<MethodSig>{std::move(fn), drops},
                           closure_drop<MethodSig>, out);
}
inline tether_status call_timeout(tether_actor a, const char *group, MethodFn fn, Counter *drops,
                                  tether_future *out, int64_t timeout_ns) {
  return tether_actor_call_timeout(a, group, method_trampoline, new Closure<MethodSig>{std::move(fn), drops},
                                   closure_drop<MethodSig>, out, timeout_ns);
}

// spawn: a nested thread from a closure (callback only).
inline tether_status spawn(tether_task *t, const char *name, TaskFn fn, Counter *drops) {
  return tether_task_spawn(t, name, task_trampoline, new Closure<TaskSig>{std::move(fn), drops},
                           closure_drop<TaskSig>);
}

// ActorState: the state a test's actor points at (owned by the test, declared before the
// Actor owner). Its destructor hook records the thread and counts the runs.
struct ActorState {
  Counter dtors;
  std::atomic<uint64_t> dtor_tid{0};
  std::function<void()> on_dtor;  // set before create; runs on the default thread
  void *user = nullptr;           // whatever else the test needs
};
inline void state_dtor(void *state) {
  auto *s = static_cast<ActorState *>(state);
  s->dtor_tid.store(tid());
  if (s->on_dtor) s->on_dtor();
  s->dtors.add();
}

// create_actor: tether_actor_create with a closure constructor and state_dtor.
inline tether_status create_actor(const tether_actor_options *o, CtorFn ctor, Counter *drops, tether_actor *out) {
  return tether_actor_create(o, ctor_trampoline, state_dtor, new Closure<CtorSig>{std::move(ctor), drops},
                             closure_drop<CtorSig>, out);
}

// ctor_with_state: a constructor that records its thread and hands out `state`.
inline CtorFn ctor_with_state(ActorState *state, std::atomic<uint64_t> *ctor_tid = nullptr) {
  return [state, ctor_tid](tether_task *, void **out) {
    if (ctor_tid != nullptr) ctor_tid->store(tid());
    *out = state;
    return static_cast<tether_status>(TETHER_OK);
  };
}

// actor_options: defaults with a name, groups and a mailbox capacity.
inline tether_actor_options actor_options(const char *name, const tether_group_spec *groups = nullptr,
                                          size_t group_count = 0, size_t mailbox_capacity = 0) {
  tether_actor_options o;
  tether_actor_options_init(&o);
  o.name = name;
  o.groups = groups;
  o.group_count = group_count;
  o.mailbox_capacity = mailbox_capacity;
  return o;
}

inline std::string read_string(const std::function<size_t(char *, size_t)> &f) {
  const size_t n = f(nullptr, 0);
  std::string s(n + 1, '\0');
  const size_t m = f(s.data(), s.size());
  s.resize(std::min(n, m));
  return s;
}

// Err: owns a tether_error handle.
class Err {
 public:
  Err() = default;
  Err(const Err &) = delete;
  Err &operator=(const Err &) = delete;
  Err(Err &&o) noexcept : h_(std::exchange(o.h_, tether_error{})) {}
  ~Err() { reset(); }
  void reset() {
    if (h_.id != 0) (void)tether_error_release(h_);
    h_ = {};
  }
  tether_error *out() {
    reset();
    return &h_;
  }
  [[nodiscard]] tether_error get() const { return h_; }
  [[nodiscard]] bool null() const { return h_.id == 0; }
  [[nodiscard]] int32_t code() const { return tether_error_code(h_); }
  [[nodiscard]] int64_t user_code() const { return tether_error_user_code(h_); }
  [[nodiscard]] std::string message() const {
    return read_string([&](char *b, size_t c) { return tether_error_message(h_, b, c); });
  }
  [[nodiscard]] std::string thread_name() const {
    return read_string([&](char *b, size_t c) { return tether_error_thread_name(h_, b, c); });
  }
  // cause: the error that caused this one (null when none or on failure).
  [[nodiscard]] Err cause() const {
    Err c;
    if (tether_error_cause(h_, c.out()) != TETHER_OK) c.reset();
    return c;
  }

 private:
  tether_error h_{};
};

inline std::string last_error() {
  return read_string([](char *b, size_t c) { return tether_last_error_message(b, c); });
}

// Future: owns a tether_future handle.
class Future {
 public:
  Future() = default;
  Future(const Future &) = delete;
  Future &operator=(const Future &) = delete;
  Future(Future &&o) noexcept : h_(std::exchange(o.h_, tether_future{})) {}
  ~Future() {
    if (h_.id != 0) (void)tether_future_release(h_);
  }
  tether_future *out() { return &h_; }
  [[nodiscard]] tether_future get() const { return h_; }
  [[nodiscard]] bool null() const { return h_.id == 0; }
  // release: now; returns the status and forgets the handle.
  tether_status release() { return tether_future_release(std::exchange(h_, tether_future{})); }
  [[nodiscard]] tether_status wait(int64_t timeout_ns = kLongNs) const { return tether_future_wait(h_, timeout_ns); }
  // state: poll, or -1 when the call fails.
  [[nodiscard]] int32_t state() const {
    int32_t s = -1;
    if (tether_future_poll(h_, &s) != TETHER_OK) return -1;
    return s;
  }
  // outcome: waits (bounded), then polls: the terminal state, or -1.
  [[nodiscard]] int32_t outcome(int64_t timeout_ns = kLongNs) const {
    if (wait(timeout_ns) != TETHER_OK) return -1;
    return state();
  }
  [[nodiscard]] Err error() const {
    Err e;
    if (tether_future_error(h_, e.out()) != TETHER_OK) e.reset();
    return e;
  }

 private:
  tether_future h_{};
};

// Executor: owns an executor handle; opens its registered gates before releasing.
class Executor {
 public:
  Executor() = default;
  Executor(const Executor &) = delete;
  Executor &operator=(const Executor &) = delete;
  ~Executor() {
    for (Gate *g : gates_) g->set();
    if (h_.id != 0) (void)tether_executor_release(h_);
  }
  tether_executor *out() { return &h_; }
  [[nodiscard]] tether_executor get() const { return h_; }
  // push_back, not insert(end, list): GCC 12 at -O3 warns falsely (-Wstringop-overflow) on the latter.
  void open_on_exit(std::initializer_list<Gate *> gates) {
    for (Gate *g : gates) gates_.push_back(g);
  }
  tether_status release() { return tether_executor_release(std::exchange(h_, tether_executor{})); }

 private:
  tether_executor h_{};
  std::vector<Gate *> gates_;
};

// Actor: owns an actor handle; opens its registered gates before releasing.
class Actor {
 public:
  Actor() = default;
  Actor(const Actor &) = delete;
  Actor &operator=(const Actor &) = delete;
  Actor(Actor &&o) noexcept : h_(std::exchange(o.h_, tether_actor{})), gates_(std::move(o.gates_)) {}
  ~Actor() {
    for (Gate *g : gates_) g->set();
    if (h_.id != 0) (void)tether_actor_release(h_);
  }
  tether_actor *out() { return &h_; }
  [[nodiscard]] tether_actor get() const { return h_; }
  // push_back, not insert(end, list): GCC 12 at -O3 warns falsely (-Wstringop-overflow) on the latter.
  void open_on_exit(std::initializer_list<Gate *> gates) {
    for (Gate *g : gates) gates_.push_back(g);
  }
  tether_status release() { return tether_actor_release(std::exchange(h_, tether_actor{})); }
  void forget() { h_ = {}; }
  // state: tether_actor_state, or -1 when the call fails.
  [[nodiscard]] int32_t state() const {
    int32_t s = -1;
    if (tether_actor_state(h_, &s, nullptr) != TETHER_OK) return -1;
    return s;
  }

 private:
  tether_actor h_{};
  std::vector<Gate *> gates_;
};

// executor_stats / actor_stats: filled with the full struct size (zeroed on failure).
inline tether_executor_stats executor_stats(tether_executor e) {
  tether_executor_stats s{};
  s.struct_size = sizeof s;
  if (tether_executor_get_stats(e, &s) != TETHER_OK) s = tether_executor_stats{};
  return s;
}
inline tether_actor_stats actor_stats(tether_actor a) {
  tether_actor_stats s{};
  s.struct_size = sizeof s;
  if (tether_actor_get_stats(a, &s) != TETHER_OK) s = tether_actor_stats{};
  return s;
}

// block: a call with a future that holds the actor's default thread until go opens, made
// and running (entered) before it returns, so the calls made next queue behind it.
inline void block(tether_actor a, Gate &go, Future &blocker) {
  auto entered = std::make_shared<Gate>();  // the method's too: it may still be in set() when the wait ends
  ASSERT_EQ(TETHER_OK, call(a, nullptr, [entered, &go](tether_task *, void *) -> tether_status {
              entered->set();
              return go.wait_for(kLong) ? TETHER_OK : 1;
            }, nullptr, blocker.out()));
  ASSERT_TRUE(entered->wait_for(kLong));
}

inline const char *state_name(int32_t s) {
  switch (s) {
    case TETHER_PENDING: return "PENDING";
    case TETHER_RUNNING: return "RUNNING";
    case TETHER_SUCCEEDED: return "SUCCEEDED";
    case TETHER_FAILED: return "FAILED";
    case TETHER_CANCELLED: return "CANCELLED";
    default: return "(invalid)";
  }
}

}  // namespace at
