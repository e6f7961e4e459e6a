// tether/hpp/detail/unique_handle.hpp — detail::UniqueHandle, the ownership of one C handle
// that every owner of the C++ layer (Runner, Executor, Future, Actor, Compiled, Graph)
// holds instead of writing its own moves and release. Part of the C++ layer; include
// <tether/tether.hpp>.
#ifndef TETHER_HPP_DETAIL_UNIQUE_HANDLE_HPP
#define TETHER_HPP_DETAIL_UNIQUE_HANDLE_HPP

#include <type_traits>
#include <utility>

namespace tether::detail {

// UniqueHandle<H, Release>: owns one C handle H (a `struct { uint64_t id; }`, id 0 being
// no handle) and ends it with Release(h) exactly once: in reset(), in the destructor, or
// when a move assignment replaces it, unless take() handed it out first (to the owner's
// explicit release, which reports the status; reset() ignores it, as a destructor must).
// Move-only; moves are noexcept and leave the source empty; self-move does nothing.
//
// Thread safety: a plain value. get() and valid() may run concurrently with each other;
// everything else (moves, reset, take, out, destruction) needs the only access.
template <class H, auto Release>
class UniqueHandle {
  static_assert(std::is_invocable_v<decltype(Release), H>, "tether::detail::UniqueHandle: Release(H) must be callable");

 public:
  UniqueHandle() noexcept = default;
  explicit UniqueHandle(H h) noexcept : h_(h) {}
  UniqueHandle(UniqueHandle&& o) noexcept : h_(o.take()) {}
  UniqueHandle& operator=(UniqueHandle&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = o.take();
    }
    return *this;
  }
  UniqueHandle(const UniqueHandle&) = delete;
  UniqueHandle& operator=(const UniqueHandle&) = delete;
  ~UniqueHandle() { reset(); }

  // valid: whether a handle is owned.
  [[nodiscard]] bool valid() const noexcept { return h_.id != 0; }
  // get: the handle, still owned (an id of 0 when empty).
  [[nodiscard]] H get() const noexcept { return h_; }
  // out: where a C create function writes the new handle. Only on an empty UniqueHandle.
  [[nodiscard]] H* out() noexcept { return &h_; }
  // take: hands the handle over to the caller, who releases it; this is empty afterwards.
  [[nodiscard]] H take() noexcept { return std::exchange(h_, H{}); }
  // reset: releases the handle, if any (the status is dropped); this is empty afterwards.
  void reset() noexcept {
    if (h_.id != 0) (void)Release(take());
  }

 private:
  H h_{};
};

}  // namespace tether::detail

#endif  // TETHER_HPP_DETAIL_UNIQUE_HANDLE_HPP
