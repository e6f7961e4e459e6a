// tether/hpp/runner.hpp — tether::Runner, a scope of threads whose errors are caught, and
// RunnerOptions. Part of the C++ layer; include <tether/tether.hpp>.
#ifndef TETHER_HPP_RUNNER_HPP
#define TETHER_HPP_RUNNER_HPP

#include "detail/unique_handle.hpp"
#include "error.hpp"
#include "task.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

namespace tether {

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
  Runner(Runner&&) noexcept = default;             // h_ moves: the source is left empty
  Runner& operator=(Runner&&) noexcept = default;  // releases what this owned first
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

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
                                      &detail::drop_as<detail::Box<D>>, r.h_.out()));
    r.result_type_ = &typeid(T);
    return r;
  }
  template <class F>
  [[nodiscard]] static Runner start(F&& target) {
    return start(RunnerOptions{}, std::forward<F>(target));
  }

  [[nodiscard]] bool valid() const noexcept { return h_.valid(); }
  explicit operator bool() const noexcept { return valid(); }

  // poll: Running, Succeeded, Failed or Cancelled, without blocking.
  [[nodiscard]] State poll() const {
    need();
    int32_t s = 0;
    detail::check(tether_runner_poll(h_.get(), &s));
    return static_cast<State>(s);
  }

  // join: waits until the scope is terminal (at its first error, not necessarily when
  // every thread has ended). Throws Error (TETHER_E_DEADLOCK from the scope's own threads).
  void join() const {
    need();
    detail::check(tether_runner_join(h_.get(), -1));
  }
  // join_for: true once terminal, false if `timeout` passed first.
  template <class Rep, class Period>
  [[nodiscard]] bool join_for(std::chrono::duration<Rep, Period> timeout) const {
    need();
    return timed(tether_runner_join(h_.get(), detail::timeout_ns(timeout)));
  }
  // join_all / join_all_for: as join, and in addition until every thread has ended.
  void join_all() const {
    need();
    detail::check(tether_runner_join_all(h_.get(), -1));
  }
  template <class Rep, class Period>
  [[nodiscard]] bool join_all_for(std::chrono::duration<Rep, Period> timeout) const {
    need();
    return timed(tether_runner_join_all(h_.get(), detail::timeout_ns(timeout)));
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
    detail::check(tether_runner_take_result(h_.get(), &p));
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
    detail::check(tether_runner_error(h_.get(), &e));
    if (e.id == 0) return std::nullopt;
    return Error::adopt(e);
  }
  [[nodiscard]] size_t error_count() const {
    need();
    return tether_runner_error_count(h_.get());
  }
  [[nodiscard]] std::vector<Error> errors() const {
    need();
    return detail::kept_errors([this](size_t i, tether_error* e) { return tether_runner_error_at(h_.get(), i, e); });
  }

  // live_threads: threads of the scope (the target included) that have not yet returned.
  [[nodiscard]] size_t live_threads() const {
    need();
    size_t n = 0;
    detail::check(tether_runner_live_threads(h_.get(), &n));
    return n;
  }

  // cancel: asks every thread of the scope to stop (Task::stop_requested).
  void cancel() const {
    need();
    detail::check(tether_runner_cancel(h_.get()));
  }

  // report_error: records an error raised on a thread the scope did not create. Throws
  // TETHER_E_WRONG_STATE on a SUCCEEDED or CANCELLED scope.
  void report_error(int32_t code, int64_t user_code, std::string_view message) const {
    need();
    detail::check(tether_runner_report_error(h_.get(), code, user_code, std::string(message).c_str()));
  }

  // on_done: runs fn() once when the scope becomes terminal (see Future::on_done).
  template <class F>
  void on_done(F&& fn) const {
    need();
    using D = std::decay_t<F>;
    static_assert(std::is_invocable_v<D&&>, "tether::Runner::on_done: fn is called with no arguments");
    detail::check(tether_runner_on_done(h_.get(), &detail::notify_trampoline<D>, detail::box(std::forward<F>(fn)),
                                        &detail::drop_as<detail::Box<D>>));
  }

  // release: cancels, waits until every thread has ended, frees (as the destructor).
  void release() {
    need();
    detail::check(tether_runner_release(h_.take()));
  }
  // release_nowait: cancels and ends the handle at once; the library joins the threads.
  void release_nowait() {
    need();
    detail::check(tether_runner_release_nowait(h_.take()));
  }

  [[nodiscard]] tether_runner c_handle() const noexcept { return h_.get(); }

 private:
  void need() const { detail::require(h_.get().id, "tether::Runner"); }
  static bool timed(tether_status rc) {
    if (rc == TETHER_E_TIMEOUT) return false;
    detail::check(rc);
    return true;
  }

  detail::UniqueHandle<tether_runner, &tether_runner_release> h_;
  // result_type_: what the target returns. A moved-from Runner keeps it, unread: the only
  // reader, take_result, throws on an empty handle first.
  const std::type_info* result_type_ = nullptr;
};

}  // namespace tether

#endif  // TETHER_HPP_RUNNER_HPP
