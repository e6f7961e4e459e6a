#include "core/call_ledger.h"

#include <cstddef>
#include <cstring>

namespace tether {

int32_t CallLedger::admit(Deadline deadline) {
  if (capacity_ == 0) {
    queued_.fetch_add(1, std::memory_order_relaxed);
    return TETHER_OK;
  }
  uint64_t n = queued_.load(std::memory_order_relaxed);
  for (;;) {
    while (n < capacity_) {
      if (queued_.compare_exchange_weak(n, n + 1, std::memory_order_relaxed)) return TETHER_OK;
    }
    if (deadline.never_blocks()) {
      reject();
      return TETHER_E_QUEUE_FULL;
    }
    std::unique_lock lock(mutex_);
    room_waiters_.fetch_add(1, std::memory_order_seq_cst);
    const bool room = deadline.wait(room_, lock, [&] { return queued_.load(std::memory_order_seq_cst) < capacity_; });
    room_waiters_.fetch_sub(1, std::memory_order_relaxed);
    if (!room) {
      reject();
      return TETHER_E_TIMEOUT;
    }
    n = queued_.load(std::memory_order_relaxed);
  }
}

void CallLedger::leave() noexcept {
  queued_.fetch_sub(1, std::memory_order_seq_cst);
  if (capacity_ != 0 && room_waiters_.load(std::memory_order_seq_cst) != 0) {
    { std::lock_guard lock(mutex_); }  // a waiter between its check and its wait sees the change
    room_.notify_all();
  }
}

void CallLedger::fire_and_forget_failed(ErrorPtr e) {
  failed();
  std::lock_guard lock(mutex_);
  if (errors_.size() < kKeptErrors) {
    errors_.push_back(std::move(e));
  } else {
    errors_dropped_.fetch_add(1, std::memory_order_relaxed);
  }
}

ErrorPtr CallLedger::kept_error(size_t i) const {
  std::lock_guard lock(mutex_);
  return i < errors_.size() ? errors_[i] : nullptr;
}

void CallLedger::fill(tether_executor_stats& out, size_t size, uint64_t os_thread_id) const {
  tether_executor_stats full{};
  full.struct_size = static_cast<uint32_t>(size);
  full.queued = queued_.load(std::memory_order_relaxed);
  full.completed = completed_.load(std::memory_order_relaxed);
  full.failed = failed_.load(std::memory_order_relaxed);
  full.cancelled = cancelled_.load(std::memory_order_relaxed);
  full.rejected = rejected_.load(std::memory_order_relaxed);
  full.errors_dropped = errors_dropped_.load(std::memory_order_relaxed);
  full.os_thread_id = os_thread_id;
  std::memcpy(static_cast<void*>(&out), &full, size);  // only the fields the caller knows
}

}  // namespace tether
