// tether/hpp/actor.hpp — tether::Actor<S>, a state on one pinned thread, with
// ActorOptions, GroupSpec, ActorState and StopMode. Part of the C++ layer; include
// <tether/tether.hpp>.
#ifndef TETHER_HPP_ACTOR_HPP
#define TETHER_HPP_ACTOR_HPP

#include "detail/unique_handle.hpp"
#include "error.hpp"
#include "executor.hpp"
#include "future.hpp"
#include "task.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace tether {

// ------------------------------------------------------------------------------------------
// Actor<S>
// ------------------------------------------------------------------------------------------

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
  Actor(Actor&&) noexcept = default;             // h_ moves: the source is left empty
  Actor& operator=(Actor&&) noexcept = default;  // releases what this owned first
  Actor(const Actor&) = delete;
  Actor& operator=(const Actor&) = delete;

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
                                      &detail::drop_as<detail::Box<D>>, a.h_.out()));
    return a;
  }
  template <class F>
  [[nodiscard]] static Actor create(F&& ctor) {
    return create(ActorOptions{}, std::forward<F>(ctor));
  }

  [[nodiscard]] bool valid() const noexcept { return h_.valid(); }
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

  // call_wait: the blocking round trip, call(fn).get() with no future: queues fn on the
  // default thread, waits for it and returns its result, or throws the call's Error (its
  // failure; TETHER_E_DEADLOCK from the actor's own thread, the call then never runs;
  // what call throws). call_wait_for: gives up after `timeout` (TETHER_E_TIMEOUT; the call
  // is cancelled: it never runs, or, running, is asked to stop). call_in_wait: on `group`.
  template <class F>
  detail::call_result_t<std::decay_t<F>, S> call_wait(F&& fn) const {
    return call_wait_impl(nullptr, std::forward<F>(fn), -1);
  }
  template <class F, class Rep, class Period>
  detail::call_result_t<std::decay_t<F>, S> call_wait_for(std::chrono::duration<Rep, Period> timeout, F&& fn) const {
    return call_wait_impl(nullptr, std::forward<F>(fn), detail::timeout_ns(timeout));
  }
  template <class F>
  detail::call_result_t<std::decay_t<F>, S> call_in_wait(std::string_view group, F&& fn) const {
    const std::string g(group);
    return call_wait_impl(g.c_str(), std::forward<F>(fn), -1);
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
    detail::check(tether_actor_state(h_.get(), &s, nullptr));
    return static_cast<ActorState>(s);
  }
  // dead_cause: a DEAD actor's constructor error; nullopt otherwise.
  [[nodiscard]] std::optional<Error> dead_cause() const {
    need();
    int32_t s = 0;
    tether_error e{0};
    detail::check(tether_actor_state(h_.get(), &s, &e));
    if (e.id == 0) return std::nullopt;
    return Error::adopt(e);
  }

  // stats: the actor's calls (all groups); os_thread_id is the default thread's.
  [[nodiscard]] ActorStats stats() const {
    need();
    tether_actor_stats s = detail::empty_stats();
    detail::check(tether_actor_get_stats(h_.get(), &s));
    return detail::to_stats(s);
  }
  // errors: the kept errors of fire-and-forget calls (the first 64), in order.
  [[nodiscard]] std::vector<Error> errors() const {
    need();
    return detail::kept_errors([this](size_t i, tether_error* e) { return tether_actor_error(h_.get(), i, e); });
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
    detail::check(tether_actor_release(h_.take()));
  }
  // release_nowait: ends the handle at once; the drain goes on in the library.
  void release_nowait() {
    need();
    detail::check(tether_actor_release_nowait(h_.take()));
  }

  [[nodiscard]] tether_actor c_handle() const noexcept { return h_.get(); }

 private:
  void need() const { detail::require(h_.get().id, "tether::Actor"); }

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
    detail::check(ns ? tether_actor_call_timeout(h_.get(), group, m, arg, drop, &f, *ns)
                     : tether_actor_call(h_.get(), group, m, arg, drop, &f));
    return detail::FutureAccess<R>::make(f);
  }

  template <class F>
  detail::call_result_t<std::decay_t<F>, S> call_wait_impl(const char* group, F&& fn, int64_t ns) const {
    need();
    using D = std::decay_t<F>;
    using R = detail::call_result_t<D, S>;
    void* p = nullptr;
    tether_error e{0};
    const tether_status rc =
        tether_actor_call_wait(h_.get(), group, &method<true, D>, detail::box(std::forward<F>(fn)),
                               &detail::drop_as<detail::Box<D>>, ns, std::is_void_v<R> ? nullptr : &p, &e);
    if (rc != TETHER_OK) {
      if (e.id != 0) throw Error::adopt(e);  // the call ran and failed: its error, causes and all
      throw Error::from_status(rc);
    }
    if constexpr (!std::is_void_v<R>) {
      std::unique_ptr<R> value(static_cast<R*>(p));
      if (!value) throw Error(TETHER_E_INTERNAL, "tether::Actor::call_wait: the result is missing");
      return std::move(*value);
    }
  }

  template <class F>
  void post_impl(const char* group, F&& fn) const {
    need();
    using D = std::decay_t<F>;
    (void)sizeof(detail::call_result_t<D, S>*);  // check the signature
    detail::check(tether_actor_call(h_.get(), group, &method<false, D>, detail::box(std::forward<F>(fn)),
                                    &detail::drop_as<detail::Box<D>>, nullptr));
  }

  bool stop_ns(StopMode mode, int64_t ns) const {
    need();
    const tether_status rc = tether_actor_stop(h_.get(), static_cast<int32_t>(mode), ns);
    if (rc == TETHER_E_TIMEOUT) return false;
    detail::check(rc);
    return true;
  }

  detail::UniqueHandle<tether_actor, &tether_actor_release> h_;
};

}  // namespace tether

#endif  // TETHER_HPP_ACTOR_HPP
