// NoticeList: the callbacks a future runs once it is terminal (on_done, wait_any's
// notices, an owner kept alive until then), for both kinds of future (Scope,
// CallFuture).
//
// Thread safety: none of its own; the owner guards it with its lock. Notices run unlocked:
// take() them under the lock, then run() them after unlocking.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "core/user_arg.h"
#include "tether/tether.h"

namespace tether {

class NoticeList {
 public:
  struct Notice {
    tether_notify_fn fn;  // null: a keep-alive only
    UserArg arg;
    uint64_t id = 0;                 // non-zero: removable (add)
    std::shared_ptr<void> keep{};    // dropped with the notice, unlocked
  };
  using Due = std::vector<Notice>;

  // add: fn(arg) to run later; with removable, an id remove() takes (never 0). Throws
  // std::bad_alloc (arg dropped).
  uint64_t add(tether_notify_fn fn, UserArg arg, bool removable) {
    const uint64_t id = removable ? last_id_ + 1 : 0;
    notices_.push_back(Notice{fn, std::move(arg), id});
    if (removable) last_id_ = id;
    return id;
  }
  // keep: holds owner until the notices run. Throws std::bad_alloc.
  void keep(std::shared_ptr<void> owner) { notices_.push_back(Notice{nullptr, UserArg(), 0, std::move(owner)}); }
  // remove: the notice id's arg (to drop unlocked); empty when it ran already or id is 0.
  [[nodiscard]] UserArg remove(uint64_t id) noexcept {
    if (id == 0) return UserArg();
    auto it = std::find_if(notices_.begin(), notices_.end(), [&](const Notice& n) { return n.id == id; });
    if (it == notices_.end()) return UserArg();
    UserArg arg = std::move(it->arg);
    notices_.erase(it);
    return arg;
  }
  // take: every notice, to run unlocked. No write when there is none.
  [[nodiscard]] Due take() noexcept {
    Due due;
    if (!notices_.empty()) due.swap(notices_);
    return due;
  }
  [[nodiscard]] bool empty() const noexcept { return notices_.empty(); }

  // run: runs (and empties) due, unlocked. Inline: most futures have none.
  static void run(Due&& due) {
    if (!due.empty()) run_each(due);
  }

 private:
  static void run_each(Due& due) {
    for (Notice& n : due) {
      if (n.fn != nullptr) n.fn(n.arg.get());
      n.arg.reset();
      n.keep.reset();
    }
    due.clear();
  }

  Due notices_;
  uint64_t last_id_ = 0;
};

}  // namespace tether
