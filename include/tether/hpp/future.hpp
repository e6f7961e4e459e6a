// tether/hpp/future.hpp — tether::Future<R>, wait_any and wait_any_for. Part of the C++
// layer; include <tether/tether.hpp>.
#ifndef TETHER_HPP_FUTURE_HPP
#define TETHER_HPP_FUTURE_HPP

#include "detail/unique_handle.hpp"
#include "error.hpp"
#include "task.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

namespace tether {

// ------------------------------------------------------------------------------------------
// Future<R>
// ------------------------------------------------------------------------------------------

namespace detail {
template <class R>
struct FutureAccess;
}  // namespace detail

// Future<R>: one submitted task or actor call whose callable returns R (void allowed).
// Made by Executor::submit and Actor::call. Move-only; the destructor releases the handle
// without waiting (the work still runs, its result is dropped).
template <class R>
class Future {
 public:
  using value_type = R;

  Future() noexcept = default;
  Future(Future&&) noexcept = default;             // h_ moves: the source is left empty
  Future& operator=(Future&&) noexcept = default;  // releases what this owned first
  Future(const Future&) = delete;
  Future& operator=(const Future&) = delete;

  // valid: whether this owns a handle.
  [[nodiscard]] bool valid() const noexcept { return h_.valid(); }
  explicit operator bool() const noexcept { return valid(); }

  // poll: the state now, without blocking.
  [[nodiscard]] State poll() const {
    detail::require(h_.get().id, "tether::Future");
    int32_t s = 0;
    detail::check(tether_future_poll(h_.get(), &s));
    return static_cast<State>(s);
  }

  // wait: until the future is terminal, whatever the outcome. Throws Error
  // (TETHER_E_DEADLOCK: the work can only run on this thread; TETHER_E_INVALID_HANDLE).
  void wait() const {
    detail::require(h_.get().id, "tether::Future");
    detail::check(tether_future_wait(h_.get(), -1));
  }

  // wait_for: true once terminal, false if `timeout` passed first.
  template <class Rep, class Period>
  [[nodiscard]] bool wait_for(std::chrono::duration<Rep, Period> timeout) const {
    detail::require(h_.get().id, "tether::Future");
    const tether_status rc = tether_future_wait(h_.get(), detail::timeout_ns(timeout));
    if (rc == TETHER_E_TIMEOUT) return false;
    detail::check(rc);
    return true;
  }

  // error: the work's first error (a cancelled one's has TETHER_E_CANCELLED), if any yet.
  [[nodiscard]] std::optional<Error> error() const {
    detail::require(h_.get().id, "tether::Future");
    tether_error e{0};
    detail::check(tether_future_error(h_.get(), &e));
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
      detail::check(tether_future_take_result(h_.get(), &p));
      std::unique_ptr<R> value(static_cast<R*>(p));
      if (!value) throw Error(TETHER_E_INTERNAL, "tether::Future::get: the result is missing");
      return std::move(*value);
    }
  }

  // cancel: pending work never runs (its callable is destroyed before this returns);
  // running work sees Task::stop_requested; a terminal future is unchanged.
  void cancel() const {
    detail::require(h_.get().id, "tether::Future");
    detail::check(tether_future_cancel(h_.get()));
  }

  // on_done: runs fn() once when the future becomes terminal — on the thread that
  // completes it, or now on this thread if it already is. fn must not wait and must not
  // throw (std::terminate); it still runs if the future is released first.
  template <class F>
  void on_done(F&& fn) const {
    detail::require(h_.get().id, "tether::Future");
    using D = std::decay_t<F>;
    static_assert(std::is_invocable_v<D&&>, "tether::Future::on_done: fn is called with no arguments");
    detail::check(tether_future_on_done(h_.get(), &detail::notify_trampoline<D>, detail::box(std::forward<F>(fn)),
                                        &detail::drop_as<detail::Box<D>>));
  }

  // release: ends the handle now (the work still runs; its result is dropped). Throws on an
  // empty future.
  void release() {
    detail::require(h_.get().id, "tether::Future");
    detail::check(tether_future_release(h_.take()));
  }

  // c_handle: the raw handle, still owned by this Future (for interop with the C API).
  [[nodiscard]] tether_future c_handle() const noexcept { return h_.get(); }

 private:
  friend struct detail::FutureAccess<R>;
  explicit Future(tether_future h) noexcept : h_(h) {}

  [[noreturn]] void throw_outcome(State s) const {
    if (std::optional<Error> e = error()) throw *e;
    throw Error(s == State::Cancelled ? TETHER_E_CANCELLED : TETHER_E_INTERNAL, "the work did not succeed");
  }

  detail::UniqueHandle<tether_future, &tether_future_release> h_;
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

}  // namespace tether

#endif  // TETHER_HPP_FUTURE_HPP
