// ErrorList: a scope's errors in the order they were recorded, never rewritten. The first
// kInline live inside the list, so a call (one participant: its error, or a cancellation)
// needs no allocation for them; more go to a vector.
//
// Room is reserved ahead (reserve, which may throw) so push_back never allocates: a
// participant that ends has nobody to tell about a failure to record its error.
//
// Thread safety: none; the owning scope guards it with its mutex.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <utility>
#include <vector>

#include "core/error.h"

namespace tether {

class ErrorList {
 public:
  static constexpr size_t kInline = 2;

  [[nodiscard]] size_t size() const noexcept { return size_; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] const ErrorPtr& operator[](size_t i) const noexcept {
    return i < kInline ? inline_[i] : more_[i - kInline];
  }
  [[nodiscard]] const ErrorPtr& front() const noexcept { return inline_[0]; }

  // reserve: room for `total` errors in all, growing geometrically. Throws std::bad_alloc.
  void reserve(size_t total) {
    if (total > kInline + more_.capacity()) more_.reserve(std::max(total - kInline, 2 * more_.capacity()));
  }
  // push_back: appends e into room reserve() made (the inline room needs none).
  void push_back(ErrorPtr e) noexcept {
    if (size_ < kInline) {
      inline_[size_] = std::move(e);
    } else {
      more_.push_back(std::move(e));  // within the reserved capacity: no allocation, no throw
    }
    ++size_;
  }

 private:
  std::array<ErrorPtr, kInline> inline_{};
  std::vector<ErrorPtr> more_;
  size_t size_ = 0;
};

}  // namespace tether
