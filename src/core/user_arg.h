// UserArg: a user's `arg` with its `arg_drop`, owned. The drop runs exactly once, when the
// owner lets go (destruction or reset), unless the value was taken out with release().
// Keeping ownership in one move-only type is what makes "exactly once on every path"
// hold: a rejected call, a cancelled task and a finished task all just destroy it.
//
// Thread safety: none; an owner moves it between threads. Never destroy one under a
// library lock: the drop is user code.
#pragma once

#include <utility>

#include "tether/tether.h"

namespace tether {

class UserArg {
 public:
  UserArg() = default;
  UserArg(void* arg, tether_drop_fn drop) noexcept : arg_(arg), drop_(drop) {}
  UserArg(UserArg&& other) noexcept
      : arg_(std::exchange(other.arg_, nullptr)), drop_(std::exchange(other.drop_, nullptr)) {}
  UserArg& operator=(UserArg&& other) noexcept {
    if (this != &other) {
      reset();
      arg_ = std::exchange(other.arg_, nullptr);
      drop_ = std::exchange(other.drop_, nullptr);
    }
    return *this;
  }
  UserArg(const UserArg&) = delete;
  UserArg& operator=(const UserArg&) = delete;
  ~UserArg() { reset(); }

  [[nodiscard]] void* get() const noexcept { return arg_; }
  [[nodiscard]] tether_drop_fn drop_fn() const noexcept { return drop_; }

  // reset: drops the value now (once) and leaves this empty.
  void reset() noexcept {
    tether_drop_fn drop = std::exchange(drop_, nullptr);
    void* arg = std::exchange(arg_, nullptr);
    if (drop != nullptr) drop(arg);
  }

  // release: hands the value to the caller, who owns it from then on; nothing is dropped.
  [[nodiscard]] void* release() noexcept {
    drop_ = nullptr;
    return std::exchange(arg_, nullptr);
  }

 private:
  void* arg_ = nullptr;
  tether_drop_fn drop_ = nullptr;
};

}  // namespace tether
