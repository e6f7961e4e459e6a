// tether.hpp — the C++ layer of tether: RAII owners, lambdas, exceptions.
//
// Header-only, C++20, written against the public C API (tether.h) and nothing else. A C++
// user never touches a raw handle:
//
//   auto exec   = tether::Executor::create({.name = "io"});
//   auto answer = exec.submit([] { return 6 * 7; });          // tether::Future<int>
//   int v       = answer.get();                              // 42, or throws tether::Error
//
//   struct Counter { int n = 0; };
//   auto actor = tether::Actor<Counter>::create({.name = "counter"},
//                                               [](tether::Task&) { return Counter{}; });
//   actor.post([](Counter& c) { ++c.n; });
//   int n = actor.call([](Counter& c) { return c.n; }).get();   // 1
//
// What it maps, and how:
//
//  - Owners. Runner, Executor, Actor<S>, Future<R>, Graph<In>, Compiled<In, Out...> and
//    Execution<Out...> each own one handle. They are
//    move-only; a moved-from (or default-constructed, or released) owner is EMPTY: its
//    destructor does nothing and every other member function throws tether::Error with
//    TETHER_E_INVALID_HANDLE. Destructors release: Runner, Executor and Actor with the
//    waiting release (a Runner is cancelled first, as tether_runner_release does; an Actor
//    is drained, then destroyed on its pinned thread), Future and Execution without waiting
//    (the work still runs; its result is dropped), Compiled by tearing its loops down
//    (never waiting for user code), Graph at once. release_nowait() ends a waiting owner at once and
//    leaves the waiting to the library's control thread. Move assignment releases what the
//    target owned first (with the same waiting release as its destructor).
//
//  - Failures. Every C call that fails throws tether::Error, built from the status and this
//    thread's tether_last_error_message (read right after the call, on the same thread).
//    The outcome of user code is an Error too, built from the tether_error object (code,
//    user code, message, thread name, exception type name, cause). Only std::bad_alloc,
//    from the header's own allocations, is thrown as itself. Non-failures are not thrown:
//    a wait that times out returns false, a get() that succeeds returns the value.
//
//  - Lambdas. User code is any callable, moved into a heap box handed to the C API as
//    `arg` with a typed `arg_drop` (delete). The C contract runs arg_drop exactly once —
//    after the callback, or instead of it (cancelled, rejected, actor dead) — so the header
//    never frees a box itself, not even when the call fails. The callable is invoked at
//    most once, as an rvalue, so move-only callables (capturing a unique_ptr) are fine.
//    Callbacks may take a `tether::Task&` (or not): `[](tether::Task& t) { ... }` or
//    `[] { ... }`; actor methods take the state first: `[](S& s, tether::Task& t)`.
//
//  - Results. A value returned by a callback is boxed (new R(value), constructed in place
//    from the returned prvalue) and handed to tether_task_set_result with a typed drop;
//    get() / take_result moves it out once. A failure or cancellation drops it.
//
//  - Exceptions out of user code. A callback may throw. The exception leaves the header's
//    trampoline and is caught by the library at its task boundary (the run_task wrapper
//    around every callback invocation), which records TETHER_E_EXCEPTION with what() and
//    the demangled type name ("std::runtime_error"), or TETHER_E_UNKNOWN_EXCEPTION for a
//    type that is not a std::exception. Catching in the trampoline instead would lose the
//    type, which the C API has no way to record.
//    Why this is sound: the library's own C++ code calls the callback directly through the
//    function pointer, inside its catch. Between the throw and that catch there are only
//    C++ frames (the user's lambda, this header's trampoline, the library's invoke
//    lambda), all built with unwind tables, and on the Itanium C++ ABI (GCC, Clang) a call
//    through a function pointer is never assumed not to throw, whatever the pointer's
//    language linkage. No C frame and no exported tether_* function lies in between (the
//    library's threads, tether_executor_run and a manual executor's release all reach the
//    callback through that same catch). As for any exception crossing a shared-library
//    boundary, the program and libtether must share one C++ runtime (the usual shared
//    libstdc++ or libc++). A port to MSVC would have to build the library with /EHs, not
//    /EHsc, which assumes that extern "C" functions never throw.
//    Functions that cannot report an error are noexcept, and an exception out of them ends
//    the program (std::terminate), as one out of a destructor would: on_done
//    notifications, the state's destructor (run on the pinned thread), and the destructors
//    of boxed callables and results.
//
//  - Timeouts are std::chrono durations. A zero or negative duration never blocks (the
//    C++ convention of wait_for, not the C API's "negative waits forever"); a huge one
//    saturates. The overloads without a duration wait forever.
//
// Thread safety: every member function that does not end or move the handle (release,
// release_nowait, take_result, get, move assignment, destruction) may be called from any
// thread concurrently, as the C functions they call. Task is valid only inside its
// callback, on that callback's thread.
#ifndef TETHER_TETHER_HPP
#define TETHER_TETHER_HPP

#include "tether.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#if !defined(__cpp_exceptions) && !defined(__EXCEPTIONS)
#error "tether.hpp reports failures with exceptions: build with exceptions enabled"
#endif

namespace tether {

// ------------------------------------------------------------------------------------------
// Enumerations mirroring the C header's.
// ------------------------------------------------------------------------------------------

// State: of a runner, a future or an actor call. Succeeded, Failed and Cancelled are
// terminal.
enum class State : int32_t {
  Pending = TETHER_PENDING,
  Running = TETHER_RUNNING,
  Succeeded = TETHER_SUCCEEDED,
  Failed = TETHER_FAILED,
  Cancelled = TETHER_CANCELLED,
};

// is_terminal: Succeeded, Failed or Cancelled.
[[nodiscard]] constexpr bool is_terminal(State s) noexcept {
  return s == State::Succeeded || s == State::Failed || s == State::Cancelled;
}

// ActorState: Alive (also while the constructor is still queued or running), Dead (the
// constructor failed) or Stopped.
enum class ActorState : int32_t {
  Alive = TETHER_ACTOR_ALIVE,
  Dead = TETHER_ACTOR_DEAD,
  Stopped = TETHER_ACTOR_STOPPED,
};

// StopMode: Drain lets queued calls run before the destructor; Cancel cancels them.
enum class StopMode : int32_t {
  Drain = TETHER_STOP_DRAIN,
  Cancel = TETHER_STOP_CANCEL,
};

// ------------------------------------------------------------------------------------------
// Error
// ------------------------------------------------------------------------------------------

// Error: why a call or a piece of user code failed. Thrown by every member function whose
// C call fails, and by get() / join_result() for a FAILED or CANCELLED outcome.
//
// code() is a TETHER_E_* status; status_name() its name ("TETHER_E_EXCEPTION"). For an
// outcome of user code, thread_name() is the thread it was raised on, type_name() the
// demangled C++ exception type (TETHER_E_EXCEPTION / _UNKNOWN_EXCEPTION), user_code() the
// application's code (Task::fail), and cause() what caused it (an ACTOR_DEAD error's cause
// is the constructor's error). For a failing call, message() is the library's detail text
// and the other fields are empty.
//
// Copying never throws (the fields are shared, immutable), as std::exception requires.
class Error : public std::exception {
 public:
  // Error: a failure of `code` with `message` (empty: the code's description).
  Error(int32_t code, std::string message) : data_(make(code, 0, std::move(message), {}, {}, nullptr)) {}

  // from_status: the failure of the call that just returned `code` on this thread, with
  // this thread's last-error text as its message.
  [[nodiscard]] static Error from_status(int32_t code) {
    return Error(code, read_string([](char* buf, size_t cap) { return tether_last_error_message(buf, cap); }));
  }

  // from_handle: reads the error object `e` (and its causes); does not release `e`.
  [[nodiscard]] static Error from_handle(tether_error e) {
    auto text = [e](size_t (*fn)(tether_error, char*, size_t)) {
      return read_string([&](char* buf, size_t cap) { return fn(e, buf, cap); });
    };
    std::shared_ptr<const Error> cause;
    tether_error c{0};
    if (tether_error_cause(e, &c) == TETHER_OK && c.id != 0) cause = std::make_shared<const Error>(adopt(c));
    return Error(make(tether_error_code(e), tether_error_user_code(e), text(&tether_error_message),
                      text(&tether_error_thread_name), text(&tether_error_type_name), std::move(cause)));
  }

  // adopt: reads the error object `e` and releases it (whatever happens).
  [[nodiscard]] static Error adopt(tether_error e) {
    struct Release {
      tether_error e;
      ~Release() { (void)tether_error_release(e); }
    } release{e};
    return from_handle(e);
  }

  [[nodiscard]] int32_t code() const noexcept { return data_->code; }
  [[nodiscard]] const char* status_name() const noexcept { return tether_status_name(data_->code); }
  [[nodiscard]] const char* description() const noexcept { return tether_status_describe(data_->code); }
  [[nodiscard]] int64_t user_code() const noexcept { return data_->user_code; }
  [[nodiscard]] const std::string& message() const noexcept { return data_->message; }
  [[nodiscard]] const std::string& thread_name() const noexcept { return data_->thread_name; }
  [[nodiscard]] const std::string& type_name() const noexcept { return data_->type_name; }
  // cause: the error that caused this one, or nullptr. Valid as long as this Error (or a
  // copy of it) lives.
  [[nodiscard]] const Error* cause() const noexcept { return data_->cause.get(); }

  // what: "STATUS_NAME: message (type T, thread 'name', user code N); caused by: ...".
  [[nodiscard]] const char* what() const noexcept override { return data_->what.c_str(); }

 private:
  struct Data {
    int32_t code = 0;
    int64_t user_code = 0;
    std::string message, thread_name, type_name, what;
    std::shared_ptr<const Error> cause;
  };

  explicit Error(std::shared_ptr<const Data> d) noexcept : data_(std::move(d)) {}

  static std::shared_ptr<const Data> make(int32_t code, int64_t user_code, std::string message,
                                          std::string thread_name, std::string type_name,
                                          std::shared_ptr<const Error> cause) {
    auto d = std::make_shared<Data>();
    d->code = code;
    d->user_code = user_code;
    d->message = message.empty() ? std::string(tether_status_describe(code)) : std::move(message);
    d->thread_name = std::move(thread_name);
    d->type_name = std::move(type_name);
    d->what = std::string(tether_status_name(code)) + ": " + d->message;
    std::string details;
    auto add = [&details](const std::string& s) { details += (details.empty() ? " (" : ", ") + s; };
    if (!d->type_name.empty()) add("type " + d->type_name);
    if (!d->thread_name.empty()) add("thread '" + d->thread_name + "'");
    if (d->user_code != 0) add("user code " + std::to_string(d->user_code));
    if (!details.empty()) d->what += details + ")";
    if (cause) d->what += std::string("; caused by: ") + cause->what();
    d->cause = std::move(cause);
    return d;
  }

  // read_string: a string handed out by a `size_t f(char *buf, size_t cap)` accessor.
  template <class Read>
  static std::string read_string(Read&& read) {
    std::string s(read(nullptr, 0), '\0');
    if (!s.empty()) {
      const size_t n = read(s.data(), s.size() + 1);  // writes size() bytes and the NUL
      if (n < s.size()) s.resize(n);
    }
    return s;
  }

  std::shared_ptr<const Data> data_;
};

// ------------------------------------------------------------------------------------------
// detail: conversions, checks and the trampolines between the C API and C++ callables.
// ------------------------------------------------------------------------------------------

class Task;
template <class R>
class Future;

namespace detail {

// check: throws the call's Error unless rc is TETHER_OK.
inline void check(tether_status rc) {
  if (rc != TETHER_OK) throw Error::from_status(rc);
}

// require: throws TETHER_E_INVALID_HANDLE for an empty owner, before any C call.
inline void require(uint64_t id, const char* what) {
  if (id == 0) throw Error(TETHER_E_INVALID_HANDLE, std::string(what) + " is empty (moved from or released)");
}

// timeout_ns: a duration as the C API's timeout: <= 0 never blocks, huge ones saturate.
template <class Rep, class Period>
[[nodiscard]] int64_t timeout_ns(std::chrono::duration<Rep, Period> d) noexcept {
  using Ns = std::chrono::duration<long double, std::nano>;
  const long double ns = std::chrono::duration_cast<Ns>(d).count();
  if (!(ns > 0)) return 0;  // also NaN
  if (ns >= static_cast<long double>(std::numeric_limits<int64_t>::max())) return std::numeric_limits<int64_t>::max();
  const auto whole = static_cast<int64_t>(ns);
  return static_cast<long double>(whole) < ns ? whole + 1 : whole;  // round up: never wait less
}

// c_name: NULL for an empty name (the library's default), else the string's characters.
[[nodiscard]] inline const char* c_name(const std::string& s) noexcept { return s.empty() ? nullptr : s.c_str(); }

// Box: a callable (or a result) on the heap, owned by the library until its drop runs.
template <class F>
struct Box {
  F fn;
};
template <class T>
void drop_as(void* p) noexcept {
  delete static_cast<T*>(p);
}

template <class F>
[[nodiscard]] Box<std::decay_t<F>>* box(F&& fn) {
  return new Box<std::decay_t<F>>{std::forward<F>(fn)};
}

// CallResult: what calling F with (args..., Task&) — or, if F does not take a Task, with
// (args...) — returns.
template <class F, class... A>
struct CallResult {
  static constexpr bool takes_task = std::is_invocable_v<F, A&..., Task&>;
  static_assert(takes_task || std::is_invocable_v<F, A&...>,
                "tether: the callable must accept (Args..., tether::Task&) or (Args...)");
  using type = typename std::conditional_t<takes_task, std::invoke_result<F, A&..., Task&>,
                                           std::invoke_result<F, A&...>>::type;
  static_assert(std::is_void_v<type> || (std::is_object_v<type> && !std::is_array_v<type>),
                "tether: a callback returns void or an object type (not a reference or an array)");
};
template <class F, class... A>
using call_result_t = typename CallResult<F, A...>::type;

// call: invokes f as an rvalue (it runs at most once), with the task if it takes one. The
// result is returned as a prvalue, so `new R(call(...))` constructs R in place.
template <class F, class... A>
decltype(auto) call(F&& f, Task& task, A&... args) {
  if constexpr (CallResult<F, A...>::takes_task) {
    return std::invoke(std::forward<F>(f), args..., task);
  } else {
    return std::invoke(std::forward<F>(f), args...);
  }
}

struct TaskAccess;
template <class R>
struct FutureAccess;

}  // namespace detail

// ------------------------------------------------------------------------------------------
// Task: the context of one callback while it runs.
// ------------------------------------------------------------------------------------------

// Task: handed by reference to a callback that takes one. Valid only during the callback,
// on its thread; neither copyable nor movable (take it by reference, never keep it).
class Task {
 public:
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;

  // stop_requested: true once cancellation, a stop CANCEL or (with stop_on_error) a
  // sibling's failure asked this task to stop. Cooperative: nothing is killed.
  [[nodiscard]] bool stop_requested() const noexcept { return tether_task_stop_requested(t_) != 0; }

  // thread_name: the full name of the thread this task runs on ("counter/io").
  [[nodiscard]] std::string_view thread_name() const noexcept { return tether_task_thread_name(t_); }

  // fail: records a failure (TETHER_E_TASK_FAILED, with `user_code` and `message`). The task
  // fails even if the callback then returns normally; what it returns is dropped. A
  // second record replaces the first. Throws Error when called off the callback's thread.
  void fail(int64_t user_code, std::string_view message) {
    const tether_status rc = tether_task_fail(t_, user_code, std::string(message).c_str());
    if (rc != TETHER_E_TASK_FAILED) throw Error::from_status(rc);
    failed_ = true;
  }

  // fail_with: like fail with an explicit failure code of the C API (TETHER_E_PANIC, ...).
  void fail_with(int32_t code, int64_t user_code, std::string_view message) {
    const tether_status rc = tether_task_fail_with(t_, code, user_code, std::string(message).c_str());
    if (code == TETHER_OK || rc != code) throw Error::from_status(rc);
    failed_ = true;
  }

  // failed: whether this callback recorded a failure through fail / fail_with.
  [[nodiscard]] bool failed() const noexcept { return failed_; }

  // spawn: starts fn on a NESTED thread of this task's scope, named `name` (empty: the
  // runner's or actor's name). fn takes a Task& (the nested thread's) or nothing, and
  // returns void; it may throw (the scope fails with its exception). The scope — runner,
  // future or actor call — completes only once fn has returned, and fails at its first
  // error. Throws Error (TETHER_E_THREAD_CREATE, ...); fn is destroyed then.
  template <class F>
  void spawn(std::string_view name, F&& fn) {
    using D = std::decay_t<F>;
    static_assert(std::is_void_v<detail::call_result_t<D>>, "tether::Task::spawn: a nested thread returns void");
    const std::string n(name);
    detail::check(tether_task_spawn(t_, detail::c_name(n), &nested<D>, detail::box(std::forward<F>(fn)),
                                    &detail::drop_as<detail::Box<D>>));
  }
  template <class F>
  void spawn(F&& fn) {
    spawn(std::string_view(), std::forward<F>(fn));
  }

 private:
  friend struct detail::TaskAccess;
  explicit Task(tether_task* t) noexcept : t_(t) {}

  template <class D>
  static tether_status nested(tether_task* t, void* arg) {
    Task task(t);
    detail::call(std::move(static_cast<detail::Box<D>*>(arg)->fn), task);
    return TETHER_OK;
  }

  tether_task* t_;
  bool failed_ = false;
};

namespace detail {

struct TaskAccess {
  [[nodiscard]] static Task make(tether_task* t) noexcept { return Task(t); }
};

// run_callable: the trampoline body shared by runner targets, executor tasks and actor
// methods: calls the boxed callable and hands what it returns to the task's result slot
// (when keep is true; a fire-and-forget call drops it at once). Exceptions propagate to the
// library's task boundary (see the header comment).
template <bool keep, class D, class... A>
tether_status run_callable(tether_task* t, void* arg, A&... args) {
  Task task = TaskAccess::make(t);
  D&& fn = std::move(static_cast<Box<D>*>(arg)->fn);
  using R = call_result_t<D, A...>;
  if constexpr (std::is_void_v<R> || !keep) {
    (void)call(std::forward<D>(fn), task, args...);
    return TETHER_OK;
  } else {
    R* value = new R(call(std::forward<D>(fn), task, args...));
    // set_result drops the value itself when it fails (only on a misuse of the API).
    return tether_task_set_result(t, value, &drop_as<R>);
  }
}

template <bool keep, class D>
tether_status task_trampoline(tether_task* t, void* arg) {
  return run_callable<keep, D>(t, arg);
}

template <class D>
void notify_trampoline(void* arg) noexcept {
  std::move(static_cast<Box<D>*>(arg)->fn)();
}

// Stats conversions.
[[nodiscard]] inline tether_executor_stats empty_stats() noexcept {
  tether_executor_stats s{};
  s.struct_size = sizeof s;
  return s;
}

// kept_errors: errors 0.. of an accessor `tether_status f(size_t i, tether_error *out)`
// until the index passes the end.
template <class At>
[[nodiscard]] std::vector<Error> kept_errors(At&& at) {
  std::vector<Error> out;
  for (size_t i = 0;; ++i) {
    tether_error e{0};
    const tether_status rc = at(i, &e);
    if (rc == TETHER_E_INVALID_ARGUMENT) break;  // past the end
    check(rc);
    out.push_back(Error::adopt(e));
  }
  return out;
}

}  // namespace detail

// ExecutorStats (also ActorStats): an executor's or an actor's counters.
struct ExecutorStats {
  uint64_t queued = 0;                                  // now: queued and not yet started
  uint64_t completed = 0, failed = 0, cancelled = 0;    // totals
  uint64_t rejected = 0;                                // totals: QUEUE_FULL or SHUTDOWN refusals
  uint64_t errors_dropped = 0;                          // fire-and-forget errors past the 64 kept
  uint64_t os_thread_id = 0;                            // gettid() of the (default) thread
};
using ActorStats = ExecutorStats;

namespace detail {
[[nodiscard]] inline ExecutorStats to_stats(const tether_executor_stats& s) noexcept {
  ExecutorStats out;
  out.queued = s.queued;
  out.completed = s.completed;
  out.failed = s.failed;
  out.cancelled = s.cancelled;
  out.rejected = s.rejected;
  out.errors_dropped = s.errors_dropped;
  out.os_thread_id = s.os_thread_id;
  return out;
}
}  // namespace detail

// ------------------------------------------------------------------------------------------
// Future<R>
// ------------------------------------------------------------------------------------------

// Future<R>: one submitted task or actor call whose callable returns R (void allowed).
// Made by Executor::submit and Actor::call. Move-only; the destructor releases the handle
// without waiting (the work still runs, its result is dropped).
template <class R>
class Future {
 public:
  using value_type = R;

  Future() noexcept = default;
  Future(Future&& o) noexcept : h_(std::exchange(o.h_, tether_future{0})) {}
  Future& operator=(Future&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, tether_future{0});
    }
    return *this;
  }
  Future(const Future&) = delete;
  Future& operator=(const Future&) = delete;
  ~Future() { reset(); }

  // valid: whether this owns a handle.
  [[nodiscard]] bool valid() const noexcept { return h_.id != 0; }
  explicit operator bool() const noexcept { return valid(); }

  // poll: the state now, without blocking.
  [[nodiscard]] State poll() const {
    detail::require(h_.id, "tether::Future");
    int32_t s = 0;
    detail::check(tether_future_poll(h_, &s));
    return static_cast<State>(s);
  }

  // wait: until the future is terminal, whatever the outcome. Throws Error
  // (TETHER_E_DEADLOCK: the work can only run on this thread; TETHER_E_INVALID_HANDLE).
  void wait() const {
    detail::require(h_.id, "tether::Future");
    detail::check(tether_future_wait(h_, -1));
  }

  // wait_for: true once terminal, false if `timeout` passed first.
  template <class Rep, class Period>
  [[nodiscard]] bool wait_for(std::chrono::duration<Rep, Period> timeout) const {
    detail::require(h_.id, "tether::Future");
    const tether_status rc = tether_future_wait(h_, detail::timeout_ns(timeout));
    if (rc == TETHER_E_TIMEOUT) return false;
    detail::check(rc);
    return true;
  }

  // error: the work's first error (a cancelled one's has TETHER_E_CANCELLED), if any yet.
  [[nodiscard]] std::optional<Error> error() const {
    detail::require(h_.id, "tether::Future");
    tether_error e{0};
    detail::check(tether_future_error(h_, &e));
    if (e.id == 0) return std::nullopt;
    return Error::adopt(e);
  }

  // get: waits, then returns the result (moved out: once), or throws the outcome's Error
  // for a FAILED or CANCELLED future. A second get() throws TETHER_E_WRONG_STATE (for
  // Future<void>, it checks the outcome again).
  R get() {
    wait();
    const State s = poll();
    if (s != State::Succeeded) throw_outcome(s);
    if constexpr (!std::is_void_v<R>) {
      void* p = nullptr;
      detail::check(tether_future_take_result(h_, &p));
      std::unique_ptr<R> value(static_cast<R*>(p));
      if (!value) throw Error(TETHER_E_INTERNAL, "tether::Future::get: the result is missing");
      return std::move(*value);
    }
  }

  // cancel: pending work never runs (its callable is destroyed before this returns);
  // running work sees Task::stop_requested; a terminal future is unchanged.
  void cancel() const {
    detail::require(h_.id, "tether::Future");
    detail::check(tether_future_cancel(h_));
  }

  // on_done: runs fn() once when the future becomes terminal — on the thread that
  // completes it, or now on this thread if it already is. fn must not wait and must not
  // throw (std::terminate); it still runs if the future is released first.
  template <class F>
  void on_done(F&& fn) const {
    detail::require(h_.id, "tether::Future");
    using D = std::decay_t<F>;
    static_assert(std::is_invocable_v<D&&>, "tether::Future::on_done: fn is called with no arguments");
    detail::check(tether_future_on_done(h_, &detail::notify_trampoline<D>, detail::box(std::forward<F>(fn)),
                                        &detail::drop_as<detail::Box<D>>));
  }

  // release: ends the handle now (the work still runs; its result is dropped). Throws on an
  // empty future.
  void release() {
    detail::require(h_.id, "tether::Future");
    detail::check(tether_future_release(std::exchange(h_, tether_future{0})));
  }

  // c_handle: the raw handle, still owned by this Future (for interop with the C API).
  [[nodiscard]] tether_future c_handle() const noexcept { return h_; }

 private:
  friend struct detail::FutureAccess<R>;
  explicit Future(tether_future h) noexcept : h_(h) {}

  [[noreturn]] void throw_outcome(State s) const {
    if (std::optional<Error> e = error()) throw *e;
    throw Error(s == State::Cancelled ? TETHER_E_CANCELLED : TETHER_E_INTERNAL, "the work did not succeed");
  }

  void reset() noexcept {
    if (h_.id != 0) (void)tether_future_release(std::exchange(h_, tether_future{0}));
  }

  tether_future h_{0};
};

namespace detail {
template <class R>
struct FutureAccess {
  [[nodiscard]] static Future<R> make(tether_future h) noexcept { return Future<R>(h); }
};

// wait_any_impl: the lowest index of a terminal future, nullopt on timeout.
template <class Range>
[[nodiscard]] std::optional<size_t> wait_any_impl(const Range& futures, int64_t ns) {
  std::vector<tether_future> hs;
  for (const auto& f : futures) {
    require(f.c_handle().id, "tether::Future");
    hs.push_back(f.c_handle());
  }
  if (hs.empty()) throw Error(TETHER_E_INVALID_ARGUMENT, "tether::wait_any: no futures");
  size_t index = 0;
  const tether_status rc = tether_future_wait_any(hs.data(), hs.size(), ns, &index);
  if (rc == TETHER_E_TIMEOUT) return std::nullopt;
  check(rc);
  return index;
}
}  // namespace detail

// wait_any: waits until one of `futures` (a range of Future<R>) is terminal and returns the
// lowest index of a terminal one. Throws Error (an empty range: TETHER_E_INVALID_ARGUMENT).
template <class Range>
[[nodiscard]] size_t wait_any(const Range& futures) {
  return *detail::wait_any_impl(futures, -1);
}

// wait_any_for: as wait_any, nullopt if `timeout` passed first.
template <class Range, class Rep, class Period>
[[nodiscard]] std::optional<size_t> wait_any_for(const Range& futures, std::chrono::duration<Rep, Period> timeout) {
  return detail::wait_any_impl(futures, detail::timeout_ns(timeout));
}

// ------------------------------------------------------------------------------------------
// Runner
// ------------------------------------------------------------------------------------------

// RunnerOptions: an empty name takes the library's default ("tether-run").
struct RunnerOptions {
  std::string name{};         // thread name (the OS sees at most 15 bytes)
  bool stop_on_error = true;  // the first error asks every thread of the scope to stop
  size_t stack_size = 0;      // 0: the platform's default
};

// Runner: a scope of threads whose errors are caught (the C API's ThreadRunner). The
// target runs on a new thread; Task::spawn inside it starts nested threads of the same
// scope. The scope fails at its first error, from any thread. Move-only; the destructor
// cancels the scope and waits until every thread has ended.
class Runner {
 public:
  Runner() noexcept = default;
  Runner(Runner&& o) noexcept
      : h_(std::exchange(o.h_, tether_runner{0})), result_type_(std::exchange(o.result_type_, nullptr)) {}
  Runner& operator=(Runner&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, tether_runner{0});
      result_type_ = std::exchange(o.result_type_, nullptr);
    }
    return *this;
  }
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;
  ~Runner() { reset(); }

  // start: runs target on a new thread. target takes a Task& (or nothing) and returns T
  // (void allowed): a returned value is the scope's result (take_result<T>, join_result<T>).
  // Throws Error (TETHER_E_INVALID_ARGUMENT, TETHER_E_THREAD_CREATE, ...).
  template <class F>
  [[nodiscard]] static Runner start(const RunnerOptions& options, F&& target) {
    using D = std::decay_t<F>;
    using T = detail::call_result_t<D>;
    tether_runner_options o;
    tether_runner_options_init(&o);
    o.name = detail::c_name(options.name);
    o.stop_on_error = options.stop_on_error ? 1 : 0;
    o.stack_size = options.stack_size;
    Runner r;
    detail::check(tether_runner_start(&o, &detail::task_trampoline<true, D>, detail::box(std::forward<F>(target)),
                                      &detail::drop_as<detail::Box<D>>, &r.h_));
    r.result_type_ = &typeid(T);
    return r;
  }
  template <class F>
  [[nodiscard]] static Runner start(F&& target) {
    return start(RunnerOptions{}, std::forward<F>(target));
  }

  [[nodiscard]] bool valid() const noexcept { return h_.id != 0; }
  explicit operator bool() const noexcept { return valid(); }

  // poll: Running, Succeeded, Failed or Cancelled, without blocking.
  [[nodiscard]] State poll() const {
    need();
    int32_t s = 0;
    detail::check(tether_runner_poll(h_, &s));
    return static_cast<State>(s);
  }

  // join: waits until the scope is terminal (at its first error, not necessarily when
  // every thread has ended). Throws Error (TETHER_E_DEADLOCK from the scope's own threads).
  void join() const {
    need();
    detail::check(tether_runner_join(h_, -1));
  }
  // join_for: true once terminal, false if `timeout` passed first.
  template <class Rep, class Period>
  [[nodiscard]] bool join_for(std::chrono::duration<Rep, Period> timeout) const {
    need();
    return timed(tether_runner_join(h_, detail::timeout_ns(timeout)));
  }
  // join_all / join_all_for: as join, and in addition until every thread has ended.
  void join_all() const {
    need();
    detail::check(tether_runner_join_all(h_, -1));
  }
  template <class Rep, class Period>
  [[nodiscard]] bool join_all_for(std::chrono::duration<Rep, Period> timeout) const {
    need();
    return timed(tether_runner_join_all(h_, detail::timeout_ns(timeout)));
  }

  // take_result: moves the target's returned value out (once), on a SUCCEEDED scope. T must
  // be the type the target returns (TETHER_E_INVALID_ARGUMENT otherwise; the result stays).
  // Throws Error TETHER_E_WRONG_STATE when not SUCCEEDED or already taken.
  template <class T = void>
  [[nodiscard]] T take_result() {
    need();
    if (result_type_ == nullptr || *result_type_ != typeid(T)) {
      throw Error(TETHER_E_INVALID_ARGUMENT, std::string("tether::Runner::take_result<") + typeid(T).name() +
                                                 ">: the target returns " +
                                                 (result_type_ ? result_type_->name() : "an unknown type"));
    }
    void* p = nullptr;
    detail::check(tether_runner_take_result(h_, &p));
    if constexpr (!std::is_void_v<T>) {
      std::unique_ptr<T> value(static_cast<T*>(p));
      if (!value) throw Error(TETHER_E_INTERNAL, "tether::Runner::take_result: the result is missing");
      return std::move(*value);
    }
  }

  // join_result: join(), then the result on success, or throws the scope's first Error.
  template <class T = void>
  [[nodiscard]] T join_result() {
    join();
    if (poll() != State::Succeeded) {
      if (std::optional<Error> e = error()) throw *e;
      throw Error(TETHER_E_INTERNAL, "tether::Runner: the scope did not succeed and has no error");
    }
    return take_result<T>();
  }

  // error: the first error, if any yet. errors: every error recorded so far, in order
  // (complete once live_threads() is 0, e.g. after join_all).
  [[nodiscard]] std::optional<Error> error() const {
    need();
    tether_error e{0};
    detail::check(tether_runner_error(h_, &e));
    if (e.id == 0) return std::nullopt;
    return Error::adopt(e);
  }
  [[nodiscard]] size_t error_count() const {
    need();
    return tether_runner_error_count(h_);
  }
  [[nodiscard]] std::vector<Error> errors() const {
    need();
    return detail::kept_errors([this](size_t i, tether_error* e) { return tether_runner_error_at(h_, i, e); });
  }

  // live_threads: threads of the scope (the target included) that have not yet returned.
  [[nodiscard]] size_t live_threads() const {
    need();
    size_t n = 0;
    detail::check(tether_runner_live_threads(h_, &n));
    return n;
  }

  // cancel: asks every thread of the scope to stop (Task::stop_requested).
  void cancel() const {
    need();
    detail::check(tether_runner_cancel(h_));
  }

  // report_error: records an error raised on a thread the scope did not create. Throws
  // TETHER_E_WRONG_STATE on a SUCCEEDED or CANCELLED scope.
  void report_error(int32_t code, int64_t user_code, std::string_view message) const {
    need();
    detail::check(tether_runner_report_error(h_, code, user_code, std::string(message).c_str()));
  }

  // on_done: runs fn() once when the scope becomes terminal (see Future::on_done).
  template <class F>
  void on_done(F&& fn) const {
    need();
    using D = std::decay_t<F>;
    static_assert(std::is_invocable_v<D&&>, "tether::Runner::on_done: fn is called with no arguments");
    detail::check(tether_runner_on_done(h_, &detail::notify_trampoline<D>, detail::box(std::forward<F>(fn)),
                                        &detail::drop_as<detail::Box<D>>));
  }

  // release: cancels, waits until every thread has ended, frees (as the destructor).
  void release() {
    need();
    detail::check(tether_runner_release(std::exchange(h_, tether_runner{0})));
  }
  // release_nowait: cancels and ends the handle at once; the library joins the threads.
  void release_nowait() {
    need();
    detail::check(tether_runner_release_nowait(std::exchange(h_, tether_runner{0})));
  }

  [[nodiscard]] tether_runner c_handle() const noexcept { return h_; }

 private:
  void need() const { detail::require(h_.id, "tether::Runner"); }
  static bool timed(tether_status rc) {
    if (rc == TETHER_E_TIMEOUT) return false;
    detail::check(rc);
    return true;
  }
  void reset() noexcept {
    if (h_.id != 0) (void)tether_runner_release(std::exchange(h_, tether_runner{0}));
    result_type_ = nullptr;
  }

  tether_runner h_{0};
  const std::type_info* result_type_ = nullptr;  // what the target returns
};

// ------------------------------------------------------------------------------------------
// Executor
// ------------------------------------------------------------------------------------------

// ExecutorOptions: an empty name takes the library's default ("tether-exec"); idle_spin
// unset takes the library's default.
struct ExecutorOptions {
  std::string name{};                               // OS-visible thread name
  int cpu = -1;                                     // -1: no affinity; else pin to this CPU
  size_t queue_capacity = 0;                        // 0: unbounded
  size_t stack_size = 0;                            // 0: the platform's default
  std::optional<std::chrono::nanoseconds> idle_spin{};  // spin before parking when idle
  bool manual = false;                              // driven by run() / run_for()
};

// Executor: ONE OS thread for its whole life; everything submitted runs there, in order,
// and thread-local state persists between tasks. Move-only; the destructor runs what is
// queued, then joins the thread (or, with actors still on it, returns at once and the
// thread ends after the last of them).
class Executor {
 public:
  Executor() noexcept = default;
  Executor(Executor&& o) noexcept : h_(std::exchange(o.h_, tether_executor{0})) {}
  Executor& operator=(Executor&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, tether_executor{0});
    }
    return *this;
  }
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;
  ~Executor() { reset(); }

  // create: a new executor (and its thread, unless manual). Throws Error.
  [[nodiscard]] static Executor create(const ExecutorOptions& options = {}) {
    tether_executor_options o;
    tether_executor_options_init(&o);
    o.name = detail::c_name(options.name);
    o.cpu = options.cpu;
    o.queue_capacity = options.queue_capacity;
    o.stack_size = options.stack_size;
    if (options.idle_spin) o.idle_spin_ns = options.idle_spin->count();
    o.manual = options.manual ? 1 : 0;
    Executor e;
    detail::check(tether_executor_create(&o, &e.h_));
    return e;
  }

  [[nodiscard]] bool valid() const noexcept { return h_.id != 0; }
  explicit operator bool() const noexcept { return valid(); }

  // submit: queues fn (taking a Task& or nothing, returning R) and returns its Future<R>.
  // Never blocks. Throws Error (TETHER_E_QUEUE_FULL, TETHER_E_SHUTDOWN, ...).
  template <class F>
  [[nodiscard]] Future<detail::call_result_t<std::decay_t<F>>> submit(F&& fn) const {
    return submit_impl(std::forward<F>(fn), std::nullopt);
  }
  // submit_for: as submit, but on a full bounded queue waits up to `timeout` for room
  // (throws TETHER_E_TIMEOUT after it).
  template <class F, class Rep, class Period>
  [[nodiscard]] Future<detail::call_result_t<std::decay_t<F>>> submit_for(std::chrono::duration<Rep, Period> timeout,
                                                                          F&& fn) const {
    return submit_impl(std::forward<F>(fn), detail::timeout_ns(timeout));
  }

  // post: fire and forget. What fn returns is dropped; its failure is counted in stats()
  // and kept in errors(). Throws Error as submit.
  template <class F>
  void post(F&& fn) const {
    need();
    using D = std::decay_t<F>;
    (void)sizeof(detail::call_result_t<D>*);  // check the signature
    detail::check(tether_executor_submit(h_, &detail::task_trampoline<false, D>, detail::box(std::forward<F>(fn)),
                                         &detail::drop_as<detail::Box<D>>, nullptr));
  }

  // stats: the executor's counters now.
  [[nodiscard]] ExecutorStats stats() const {
    need();
    tether_executor_stats s = detail::empty_stats();
    detail::check(tether_executor_get_stats(h_, &s));
    return detail::to_stats(s);
  }
  // errors: the kept errors of fire-and-forget tasks (the first 64), in order.
  [[nodiscard]] std::vector<Error> errors() const {
    need();
    return detail::kept_errors([this](size_t i, tether_error* e) { return tether_executor_error(h_, i, e); });
  }

  // run_for (manual executors only): runs tasks on this thread until `timeout` passes
  // (true) or the executor is released (false). The first caller's thread becomes the
  // executor's thread for good. Throws TETHER_E_WRONG_STATE (not manual, another thread).
  template <class Rep, class Period>
  bool run_for(std::chrono::duration<Rep, Period> timeout) const {
    return run_ns(detail::timeout_ns(timeout));
  }
  // run: runs tasks until the executor is released; then returns.
  void run() const { (void)run_ns(-1); }

  // release: runs what is queued, then joins the thread (as the destructor).
  void release() {
    need();
    detail::check(tether_executor_release(std::exchange(h_, tether_executor{0})));
  }
  // release_nowait: ends the handle at once; the library joins the thread.
  void release_nowait() {
    need();
    detail::check(tether_executor_release_nowait(std::exchange(h_, tether_executor{0})));
  }

  [[nodiscard]] tether_executor c_handle() const noexcept { return h_; }

 private:
  void need() const { detail::require(h_.id, "tether::Executor"); }

  template <class F>
  Future<detail::call_result_t<std::decay_t<F>>> submit_impl(F&& fn, std::optional<int64_t> ns) const {
    need();
    using D = std::decay_t<F>;
    using R = detail::call_result_t<D>;
    tether_future f{0};
    auto* arg = detail::box(std::forward<F>(fn));
    constexpr tether_fn tramp = &detail::task_trampoline<true, D>;
    constexpr tether_drop_fn drop = &detail::drop_as<detail::Box<D>>;
    detail::check(ns ? tether_executor_submit_timeout(h_, tramp, arg, drop, &f, *ns)
                     : tether_executor_submit(h_, tramp, arg, drop, &f));
    return detail::FutureAccess<R>::make(f);
  }

  bool run_ns(int64_t ns) const {
    need();
    const tether_status rc = tether_executor_run(h_, ns < 0 ? -1 : ns);
    if (rc == TETHER_E_SHUTDOWN) return false;
    detail::check(rc);
    return true;
  }

  void reset() noexcept {
    if (h_.id != 0) (void)tether_executor_release(std::exchange(h_, tether_executor{0}));
  }

  tether_executor h_{0};
};

// ------------------------------------------------------------------------------------------
// Actor<S>
// ------------------------------------------------------------------------------------------

// GroupSpec: a named concurrency group and its number of threads (at least 1).
struct GroupSpec {
  std::string name{};
  uint32_t threads = 1;
};

// ActorOptions: an empty name takes the library's default ("tether-actor"). `executor`
// null gives the actor a dedicated thread; else it shares that executor (which must not be
// empty; the library keeps its thread alive while the actor lives).
struct ActorOptions {
  std::string name{};
  const Executor* executor = nullptr;
  std::vector<GroupSpec> groups{}; // extra concurrency groups, each on threads of its own
  size_t mailbox_capacity = 0;    // 0: unbounded
};

// Actor<S>: a state S that lives on one pinned thread. S is built ON that thread by the
// constructor callable, every default-group method runs there in order, and the state is
// destroyed (delete) there when the actor stops: thread-local state set in the
// constructor is visible to every method. Methods of a named group run on that group's
// threads and receive the SAME state: sharing it across threads is the caller's
// responsibility (as in the C API). Move-only; the destructor drains the actor (queued
// calls run, then the state's destructor) and waits for it.
template <class S>
class Actor {
  static_assert(std::is_object_v<S> && !std::is_array_v<S> && std::is_same_v<S, std::remove_cv_t<S>>,
                "tether::Actor<S>: S is a non-const, non-array object type");

 public:
  using state_type = S;

  Actor() noexcept = default;
  Actor(Actor&& o) noexcept : h_(std::exchange(o.h_, tether_actor{0})) {}
  Actor& operator=(Actor&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, tether_actor{0});
    }
    return *this;
  }
  Actor(const Actor&) = delete;
  Actor& operator=(const Actor&) = delete;
  ~Actor() { reset(); }

  // create: queues ctor on the actor's default thread and returns at once; calls queue
  // behind it. ctor takes a Task& (or nothing) and returns either an S (a prvalue, so S is
  // constructed in place and need be neither copyable nor movable) or a std::unique_ptr<S>
  // (non-null). A constructor that throws, or records Task::fail (what it returned is then
  // destroyed at once, on the pinned thread), makes the actor DEAD: queued calls fail with
  // TETHER_E_ACTOR_DEAD whose cause() is the constructor's error. Throws Error
  // (TETHER_E_INVALID_ARGUMENT, TETHER_E_THREAD_CREATE, ...).
  template <class F>
  [[nodiscard]] static Actor create(const ActorOptions& options, F&& ctor) {
    using D = std::decay_t<F>;
    using C = detail::call_result_t<D>;
    static_assert(std::is_same_v<C, S> || std::is_convertible_v<C, std::unique_ptr<S>>,
                  "tether::Actor<S>::create: the constructor returns S or std::unique_ptr<S>");
    if (options.executor != nullptr) detail::require(options.executor->c_handle().id, "ActorOptions::executor");
    std::vector<tether_group_spec> groups;
    groups.reserve(options.groups.size());
    for (const GroupSpec& g : options.groups) groups.push_back(tether_group_spec{g.name.c_str(), g.threads});
    tether_actor_options o;
    tether_actor_options_init(&o);
    o.name = detail::c_name(options.name);
    if (options.executor != nullptr) o.executor = options.executor->c_handle();
    o.groups = groups.empty() ? nullptr : groups.data();
    o.group_count = groups.size();
    o.mailbox_capacity = options.mailbox_capacity;
    Actor a;
    detail::check(tether_actor_create(&o, &construct<D>, &destroy, detail::box(std::forward<F>(ctor)),
                                      &detail::drop_as<detail::Box<D>>, &a.h_));
    return a;
  }
  template <class F>
  [[nodiscard]] static Actor create(F&& ctor) {
    return create(ActorOptions{}, std::forward<F>(ctor));
  }

  [[nodiscard]] bool valid() const noexcept { return h_.id != 0; }
  explicit operator bool() const noexcept { return valid(); }

  // call: queues fn(S&, Task&) — or fn(S&) — on the default thread, after the calls before
  // it, and returns its Future<R>. A failing method fails only its future. Never blocks.
  // Throws Error (TETHER_E_ACTOR_DEAD, TETHER_E_SHUTDOWN, TETHER_E_QUEUE_FULL, ...).
  template <class F>
  [[nodiscard]] Future<detail::call_result_t<std::decay_t<F>, S>> call(F&& fn) const {
    return call_impl(nullptr, std::forward<F>(fn), std::nullopt);
  }
  // call_in: as call, on the threads of concurrency group `group` (TETHER_E_NOT_FOUND for
  // an unknown one).
  template <class F>
  [[nodiscard]] Future<detail::call_result_t<std::decay_t<F>, S>> call_in(std::string_view group, F&& fn) const {
    const std::string g(group);
    return call_impl(g.c_str(), std::forward<F>(fn), std::nullopt);
  }
  // call_for / call_in_for: as call / call_in, but on a full mailbox wait up to `timeout`
  // for room (throws TETHER_E_TIMEOUT after it).
  template <class F, class Rep, class Period>
  [[nodiscard]] Future<detail::call_result_t<std::decay_t<F>, S>> call_for(std::chrono::duration<Rep, Period> timeout,
                                                                           F&& fn) const {
    return call_impl(nullptr, std::forward<F>(fn), detail::timeout_ns(timeout));
  }
  template <class F, class Rep, class Period>
  [[nodiscard]] Future<detail::call_result_t<std::decay_t<F>, S>> call_in_for(
      std::string_view group, std::chrono::duration<Rep, Period> timeout, F&& fn) const {
    const std::string g(group);
    return call_impl(g.c_str(), std::forward<F>(fn), detail::timeout_ns(timeout));
  }

  // post / post_in: fire and forget; a failure is counted in stats() and kept in errors().
  template <class F>
  void post(F&& fn) const {
    post_impl(nullptr, std::forward<F>(fn));
  }
  template <class F>
  void post_in(std::string_view group, F&& fn) const {
    const std::string g(group);
    post_impl(g.c_str(), std::forward<F>(fn));
  }

  // state: Alive, Dead or Stopped. Never waits.
  [[nodiscard]] ActorState state() const {
    need();
    int32_t s = 0;
    detail::check(tether_actor_state(h_, &s, nullptr));
    return static_cast<ActorState>(s);
  }
  // dead_cause: a DEAD actor's constructor error; nullopt otherwise.
  [[nodiscard]] std::optional<Error> dead_cause() const {
    need();
    int32_t s = 0;
    tether_error e{0};
    detail::check(tether_actor_state(h_, &s, &e));
    if (e.id == 0) return std::nullopt;
    return Error::adopt(e);
  }

  // stats: the actor's calls (all groups); os_thread_id is the default thread's.
  [[nodiscard]] ActorStats stats() const {
    need();
    tether_actor_stats s = detail::empty_stats();
    detail::check(tether_actor_get_stats(h_, &s));
    return detail::to_stats(s);
  }
  // errors: the kept errors of fire-and-forget calls (the first 64), in order.
  [[nodiscard]] std::vector<Error> errors() const {
    need();
    return detail::kept_errors([this](size_t i, tether_error* e) { return tether_actor_error(h_, i, e); });
  }

  // stop: from now on new calls throw TETHER_E_SHUTDOWN. Cancel cancels queued calls and
  // asks running methods to stop; Drain lets queued calls run. Then the state is destroyed
  // on the default thread. stop(mode) waits for that; stop(mode, timeout) returns true once
  // it happened, false if `timeout` passed first (the stop goes on). Throws Error
  // (TETHER_E_DEADLOCK from the actor's own threads, after starting the stop).
  void stop(StopMode mode = StopMode::Drain) const { (void)stop_ns(mode, -1); }
  template <class Rep, class Period>
  [[nodiscard]] bool stop(StopMode mode, std::chrono::duration<Rep, Period> timeout) const {
    return stop_ns(mode, detail::timeout_ns(timeout));
  }

  // release: stop(Drain) waited to the end, then the handle ends (as the destructor).
  void release() {
    need();
    detail::check(tether_actor_release(std::exchange(h_, tether_actor{0})));
  }
  // release_nowait: ends the handle at once; the drain goes on in the library.
  void release_nowait() {
    need();
    detail::check(tether_actor_release_nowait(std::exchange(h_, tether_actor{0})));
  }

  [[nodiscard]] tether_actor c_handle() const noexcept { return h_; }

 private:
  void need() const { detail::require(h_.id, "tether::Actor"); }

  // construct: the C constructor; runs on the default thread.
  template <class D>
  static tether_status construct(tether_task* t, void* arg, void** state_out) {
    Task task = detail::TaskAccess::make(t);
    D&& fn = std::move(static_cast<detail::Box<D>*>(arg)->fn);
    std::unique_ptr<S> state;
    if constexpr (std::is_same_v<detail::call_result_t<D>, S>) {
      state.reset(new S(detail::call(std::forward<D>(fn), task)));
    } else {
      state = detail::call(std::forward<D>(fn), task);
      if (!state) return tether_task_fail(t, 0, "tether::Actor: the constructor returned a null std::unique_ptr");
    }
    // A failed constructor's state is never given a destructor by the library: destroy
    // it here, on the pinned thread, instead of leaking it.
    if (task.failed()) return TETHER_E_TASK_FAILED;
    *state_out = state.release();
    return TETHER_OK;
  }

  static void destroy(void* state) noexcept { delete static_cast<S*>(state); }

  template <bool keep, class D>
  static tether_status method(tether_task* t, void* state, void* arg) {
    return detail::run_callable<keep, D, S>(t, arg, *static_cast<S*>(state));
  }

  template <class F>
  Future<detail::call_result_t<std::decay_t<F>, S>> call_impl(const char* group, F&& fn,
                                                              std::optional<int64_t> ns) const {
    need();
    using D = std::decay_t<F>;
    using R = detail::call_result_t<D, S>;
    tether_future f{0};
    auto* arg = detail::box(std::forward<F>(fn));
    constexpr tether_method_fn m = &method<true, D>;
    constexpr tether_drop_fn drop = &detail::drop_as<detail::Box<D>>;
    detail::check(ns ? tether_actor_call_timeout(h_, group, m, arg, drop, &f, *ns)
                     : tether_actor_call(h_, group, m, arg, drop, &f));
    return detail::FutureAccess<R>::make(f);
  }

  template <class F>
  void post_impl(const char* group, F&& fn) const {
    need();
    using D = std::decay_t<F>;
    (void)sizeof(detail::call_result_t<D, S>*);  // check the signature
    detail::check(tether_actor_call(h_, group, &method<false, D>, detail::box(std::forward<F>(fn)),
                                    &detail::drop_as<detail::Box<D>>, nullptr));
  }

  bool stop_ns(StopMode mode, int64_t ns) const {
    need();
    const tether_status rc = tether_actor_stop(h_, static_cast<int32_t>(mode), ns);
    if (rc == TETHER_E_TIMEOUT) return false;
    detail::check(rc);
    return true;
  }

  void reset() noexcept {
    if (h_.id != 0) (void)tether_actor_release(std::exchange(h_, tether_actor{0}));
  }

  tether_actor h_{0};
};

// ------------------------------------------------------------------------------------------
// Compiled graphs: Graph<In>, Node<T>, Compiled<In, Out...>, Execution<Out...>
// ------------------------------------------------------------------------------------------
//
//   tether::Graph<long> g;
//   auto fwd = g.add(worker0, [](Worker& w, const long& x) { return w.forward(x); }, g.input());
//   auto bwd = g.add(worker1, [](Worker& w, const long& y) { return w.backward(y); }, fwd);
//   auto compiled = g.compile({.channel_capacity = 8}, bwd);   // Compiled<long, long>
//   auto [out] = compiled.execute(3).get();                     // std::tuple<long>
//
// Values are typed: a node's function takes its actor's state, then a const reference to
// each input's value (in the order given), then optionally a tether::Task&, and returns an
// object type. Each value lives in its own heap box that the execution owns (the C API's
// value_drop deletes it): consumers borrow it during their call, outputs are moved out by
// get(). Node functions are kept for the compiled graph's life and called once per
// execution, as lvalues (so they may keep state of their own, touched only on their thread).

namespace detail {

// ValueBase / Value<T>: a graph value in a heap box of its own type, deleted through the base.
struct ValueBase {
  virtual ~ValueBase() = default;
};
template <class T>
struct Value final : ValueBase {
  template <class Make>
  explicit Value(std::in_place_t, Make&& make) : v(std::forward<Make>(make)()) {}
  T v;
};
inline void drop_value(void* p) noexcept { delete static_cast<ValueBase*>(p); }

struct GraphAccess;

}  // namespace detail

// Node<T>: a node of a Graph whose value is a T (or the graph's input).
template <class T>
class Node {
 public:
  using value_type = T;
  [[nodiscard]] uint32_t index() const noexcept { return index_; }

 private:
  friend struct detail::GraphAccess;
  explicit Node(uint32_t index) noexcept : index_(index) {}
  uint32_t index_;
};

// CompileOptions: executions in flight at most (1 to 1048576).
struct CompileOptions {
  size_t channel_capacity = 8;
};

template <class In, class... Out>
class Compiled;

// Execution<Out...>: one execution of a compiled graph. Move-only; its destructor releases
// the handle (the execution goes on; outputs never taken are destroyed with it).
template <class... Out>
class Execution {
 public:
  Execution() noexcept = default;

  [[nodiscard]] bool valid() const noexcept { return future_.valid(); }
  // poll: Pending until the execution has ended, then Succeeded, Failed or Cancelled.
  [[nodiscard]] State poll() const { return future_.poll(); }
  void wait() const { future_.wait(); }
  template <class Rep, class Period>
  [[nodiscard]] bool wait_for(std::chrono::duration<Rep, Period> timeout) const {
    return future_.wait_for(timeout);
  }
  // error: the first failing node's error (TETHER_E_CANCELLED for a cancelled execution).
  [[nodiscard]] std::optional<Error> error() const { return future_.error(); }
  // cancel: the nodes not yet started never run.
  void cancel() const { future_.cancel(); }

  // get: waits, then moves the outputs out (once; a second get throws
  // TETHER_E_WRONG_STATE), or throws the execution's Error.
  std::tuple<Out...> get() {
    future_.wait();
    if (future_.poll() != State::Succeeded) {
      if (std::optional<Error> e = future_.error()) throw *e;
      throw Error(TETHER_E_INTERNAL, "the execution did not succeed");
    }
    if (taken_) throw Error(TETHER_E_WRONG_STATE, "tether::Execution::get: the outputs were already taken");
    void* outs[sizeof...(Out)] = {};
    detail::check(tether_future_outputs(future_.c_handle(), outs, sizeof...(Out)));
    taken_ = true;
    std::unique_ptr<detail::ValueBase> owned[sizeof...(Out)];
    for (size_t i = 0; i < sizeof...(Out); ++i) owned[i].reset(static_cast<detail::ValueBase*>(outs[i]));
    return [&]<size_t... I>(std::index_sequence<I...>) {
      return std::tuple<Out...>(std::move(static_cast<detail::Value<Out>*>(owned[I].get())->v)...);
    }(std::index_sequence_for<Out...>{});
  }

  // c_handle: the future's raw handle, still owned by this Execution.
  [[nodiscard]] tether_future c_handle() const noexcept { return future_.c_handle(); }

 private:
  template <class In, class... O>
  friend class Compiled;
  explicit Execution(Future<void> f) noexcept : future_(std::move(f)) {}
  Future<void> future_;
  bool taken_ = false;
};

// Compiled<In, Out...>: a graph's loops installed on its actors' threads. Move-only; the
// destructor tears them down (release) without waiting for user code.
template <class In, class... Out>
class Compiled {
 public:
  Compiled() noexcept = default;
  Compiled(Compiled&& o) noexcept : h_(std::exchange(o.h_, tether_compiled{0})) {}
  Compiled& operator=(Compiled&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, tether_compiled{0});
    }
    return *this;
  }
  Compiled(const Compiled&) = delete;
  Compiled& operator=(const Compiled&) = delete;
  ~Compiled() { reset(); }

  [[nodiscard]] bool valid() const noexcept { return h_.id != 0; }

  // execute: starts one execution. Throws Error (TETHER_E_QUEUE_FULL with channel_capacity
  // executions in flight, TETHER_E_SHUTDOWN when an actor stopped, ...).
  [[nodiscard]] Execution<Out...> execute(In input) const { return execute_ns(std::move(input), 0); }
  // execute_for: as execute, but waits up to `timeout` for room (TETHER_E_TIMEOUT after it).
  template <class Rep, class Period>
  [[nodiscard]] Execution<Out...> execute_for(std::chrono::duration<Rep, Period> timeout, In input) const {
    return execute_ns(std::move(input), detail::timeout_ns(timeout));
  }

  // release: tears the loops down now: executions not yet ended are cancelled; a running
  // node finishes on its own.
  void release() {
    detail::require(h_.id, "tether::Compiled");
    detail::check(tether_compiled_release(std::exchange(h_, tether_compiled{0})));
  }

  [[nodiscard]] tether_compiled c_handle() const noexcept { return h_; }

 private:
  friend struct detail::GraphAccess;
  explicit Compiled(tether_compiled h) noexcept : h_(h) {}

  Execution<Out...> execute_ns(In input, int64_t ns) const {
    detail::require(h_.id, "tether::Compiled");
    auto* value = new detail::Value<In>(std::in_place, [&]() -> In { return std::move(input); });
    tether_future f{0};
    detail::check(ns == 0 ? tether_compiled_execute(h_, value, &detail::drop_value, &f)
                          : tether_compiled_execute_timeout(h_, value, &detail::drop_value, &f, ns));
    return Execution<Out...>(detail::FutureAccess<void>::make(f));
  }

  void reset() noexcept {
    if (h_.id != 0) (void)tether_compiled_release(std::exchange(h_, tether_compiled{0}));
  }

  tether_compiled h_{0};
};

namespace detail {

struct GraphAccess {
  template <class T>
  [[nodiscard]] static Node<T> node(uint32_t index) noexcept {
    return Node<T>(index);
  }
  template <class In, class... Out>
  [[nodiscard]] static Compiled<In, Out...> compiled(tether_compiled h) noexcept {
    return Compiled<In, Out...>(h);
  }
};

// node_trampoline: the C node function of a node whose callable D takes (S&, const Ts&...).
template <class S, class D, class... Ts>
tether_status node_trampoline(tether_task* t, void* state, void* arg, void* const* inputs, size_t n,
                              void** output) {
  if (n != sizeof...(Ts)) return tether_task_fail(t, 0, "tether::Graph: a node got an unexpected number of inputs");
  Task task = TaskAccess::make(t);
  D& fn = static_cast<Box<D>*>(arg)->fn;
  S& s = *static_cast<S*>(state);
  using R = call_result_t<D&, S, const Ts...>;
  *output = [&]<size_t... I>(std::index_sequence<I...>) {
    return new Value<R>(std::in_place, [&]() -> R {
      return call(fn, task, s, static_cast<const Value<Ts>*>(inputs[I])->v...);
    });
  }(std::index_sequence_for<Ts...>{});
  return TETHER_OK;
}

}  // namespace detail

// Graph<In>: a pipeline of actor methods fed with an In. Move-only; the destructor
// releases the description (compiled graphs made from it live on).
template <class In>
class Graph {
 public:
  Graph() {
    detail::check(tether_graph_create(&h_));
  }
  Graph(Graph&& o) noexcept : h_(std::exchange(o.h_, tether_graph{0})) {}
  Graph& operator=(Graph&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, tether_graph{0});
    }
    return *this;
  }
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph() { reset(); }

  // input: the execution's input, as a node to feed others with.
  [[nodiscard]] Node<In> input() const noexcept { return detail::GraphAccess::node<In>(TETHER_GRAPH_INPUT); }

  // add: a node running fn(S&, const T&..., [Task&]) on the actor's default thread (the
  // constructor's), fed by `inputs` in this order. Throws Error.
  template <class S, class F, class... Ts>
  [[nodiscard]] auto add(const Actor<S>& actor, F&& fn, Node<Ts>... inputs) {
    return add_impl<S>(actor, nullptr, std::forward<F>(fn), inputs...);
  }
  // add_in: as add, on the actor's concurrency group `group`, which must have one thread.
  template <class S, class F, class... Ts>
  [[nodiscard]] auto add_in(const Actor<S>& actor, std::string_view group, F&& fn, Node<Ts>... inputs) {
    const std::string g(group);
    return add_impl<S>(actor, g.c_str(), std::forward<F>(fn), inputs...);
  }

  // compile: installs the graph's loop on its actors' threads, with `outputs` as the
  // execution's outputs. Throws Error (TETHER_E_THREAD_BUSY, TETHER_E_INVALID_ARGUMENT for
  // a cycle or an unreachable node, ...; error() says the same).
  template <class... Out>
  [[nodiscard]] Compiled<In, Out...> compile(const CompileOptions& options, Node<Out>... outputs) const {
    static_assert(sizeof...(Out) > 0, "tether::Graph::compile: name at least one output");
    need();
    const uint32_t nodes[] = {outputs.index()...};
    detail::check(tether_graph_set_outputs(h_, nodes, sizeof...(Out)));
    tether_compile_options o;
    tether_compile_options_init(&o);
    o.channel_capacity = options.channel_capacity;
    o.value_drop = &detail::drop_value;
    tether_compiled c{0};
    detail::check(tether_graph_compile(h_, &o, &c));
    return detail::GraphAccess::compiled<In, Out...>(c);
  }

  // error: why the last compile failed; nullopt if it succeeded or none ran.
  [[nodiscard]] std::optional<Error> error() const {
    need();
    tether_error e{0};
    detail::check(tether_graph_error(h_, &e));
    if (e.id == 0) return std::nullopt;
    return Error::adopt(e);
  }

  [[nodiscard]] tether_graph c_handle() const noexcept { return h_; }

 private:
  void need() const { detail::require(h_.id, "tether::Graph"); }

  template <class S, class F, class... Ts>
  auto add_impl(const Actor<S>& actor, const char* group, F&& fn, Node<Ts>... inputs) {
    need();
    detail::require(actor.c_handle().id, "tether::Actor");
    using D = std::decay_t<F>;
    using R = detail::call_result_t<D&, S, const Ts...>;
    static_assert(!std::is_void_v<R>, "tether::Graph: a node returns a value");
    uint32_t index = 0;
    detail::check(tether_graph_add_node(h_, actor.c_handle(), group, &detail::node_trampoline<S, D, Ts...>,
                                        detail::box(std::forward<F>(fn)), &detail::drop_as<detail::Box<D>>,
                                        &index));
    (detail::check(tether_graph_add_edge(h_, inputs.index(), index)), ...);  // in order
    return detail::GraphAccess::node<R>(index);
  }

  void reset() noexcept {
    if (h_.id != 0) (void)tether_graph_release(std::exchange(h_, tether_graph{0}));
  }

  tether_graph h_{0};
};

}  // namespace tether

#endif  // TETHER_TETHER_HPP
