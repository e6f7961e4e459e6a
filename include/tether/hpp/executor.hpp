// tether/hpp/executor.hpp — tether::Executor (one OS thread for its whole life),
// ExecutorOptions and ExecutorStats. Part of the C++ layer; include <tether/tether.hpp>.
#ifndef TETHER_HPP_EXECUTOR_HPP
#define TETHER_HPP_EXECUTOR_HPP

#include "detail/unique_handle.hpp"
#include "error.hpp"
#include "future.hpp"
#include "task.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tether {

// ------------------------------------------------------------------------------------------
// Executor
// ------------------------------------------------------------------------------------------

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

// Stats conversions.
[[nodiscard]] inline tether_executor_stats empty_stats() noexcept {
  tether_executor_stats s{};
  s.struct_size = sizeof s;
  return s;
}

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
  Executor(Executor&&) noexcept = default;             // h_ moves: the source is left empty
  Executor& operator=(Executor&&) noexcept = default;  // releases what this owned first
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

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
    detail::check(tether_executor_create(&o, e.h_.out()));
    return e;
  }

  [[nodiscard]] bool valid() const noexcept { return h_.valid(); }
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
    detail::check(tether_executor_submit(h_.get(), &detail::task_trampoline<false, D>, detail::box(std::forward<F>(fn)),
                                         &detail::drop_as<detail::Box<D>>, nullptr));
  }

  // stats: the executor's counters now.
  [[nodiscard]] ExecutorStats stats() const {
    need();
    tether_executor_stats s = detail::empty_stats();
    detail::check(tether_executor_get_stats(h_.get(), &s));
    return detail::to_stats(s);
  }
  // errors: the kept errors of fire-and-forget tasks (the first 64), in order.
  [[nodiscard]] std::vector<Error> errors() const {
    need();
    return detail::kept_errors([this](size_t i, tether_error* e) { return tether_executor_error(h_.get(), i, e); });
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
    detail::check(tether_executor_release(h_.take()));
  }
  // release_nowait: ends the handle at once; the library joins the thread.
  void release_nowait() {
    need();
    detail::check(tether_executor_release_nowait(h_.take()));
  }

  [[nodiscard]] tether_executor c_handle() const noexcept { return h_.get(); }

 private:
  void need() const { detail::require(h_.get().id, "tether::Executor"); }

  template <class F>
  Future<detail::call_result_t<std::decay_t<F>>> submit_impl(F&& fn, std::optional<int64_t> ns) const {
    need();
    using D = std::decay_t<F>;
    using R = detail::call_result_t<D>;
    tether_future f{0};
    auto* arg = detail::box(std::forward<F>(fn));
    constexpr tether_fn tramp = &detail::task_trampoline<true, D>;
    constexpr tether_drop_fn drop = &detail::drop_as<detail::Box<D>>;
    detail::check(ns ? tether_executor_submit_timeout(h_.get(), tramp, arg, drop, &f, *ns)
                     : tether_executor_submit(h_.get(), tramp, arg, drop, &f));
    return detail::FutureAccess<R>::make(f);
  }

  bool run_ns(int64_t ns) const {
    need();
    const tether_status rc = tether_executor_run(h_.get(), ns < 0 ? -1 : ns);
    if (rc == TETHER_E_SHUTDOWN) return false;
    detail::check(rc);
    return true;
  }

  detail::UniqueHandle<tether_executor, &tether_executor_release> h_;
};

}  // namespace tether

#endif  // TETHER_HPP_EXECUTOR_HPP
