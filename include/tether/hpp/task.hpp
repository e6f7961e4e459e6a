// tether/hpp/task.hpp — tether::Task and tether::State, and the trampolines that hand C++
// callables to the C API. Part of the C++ layer; include <tether/tether.hpp>.
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
#ifndef TETHER_HPP_TASK_HPP
#define TETHER_HPP_TASK_HPP

#include "error.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace tether {

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

// ------------------------------------------------------------------------------------------
// detail: conversions and the trampolines between the C API and C++ callables.
// ------------------------------------------------------------------------------------------

class Task;

namespace detail {

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
// library's task boundary (see the comment at the top of this file).
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

}  // namespace detail

}  // namespace tether

#endif  // TETHER_HPP_TASK_HPP
