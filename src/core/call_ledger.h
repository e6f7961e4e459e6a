// CallLedger: what an executor or an actor keeps about its calls: how many are queued
// (against an optional capacity), how they ended, and the errors of fire-and-forget
// calls (the first 64 kept, the rest counted), so no failure is silently lost.
//
// Thread safety: every member may be called from any thread. Counters are relaxed
// atomics (statistics); mutex_ guards errors_ and the capacity wait. Producers write only
// admitted_, the threads that run calls only the counters after it, on another cache
// line: a fire-and-forget call does not bounce a line between the two sides. queued is
// admitted_ - left_.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "core/deadline.h"
#include "core/error.h"
#include "tether/tether.h"

namespace tether {

class CallLedger {
 public:
  static constexpr size_t kKeptErrors = 64;

  explicit CallLedger(size_t capacity) noexcept : capacity_(capacity) {}
  CallLedger(const CallLedger&) = delete;
  CallLedger& operator=(const CallLedger&) = delete;

  // admit: takes one queue slot. TETHER_OK, TETHER_E_QUEUE_FULL (deadline never blocks),
  // or TETHER_E_TIMEOUT. A refusal is counted as rejected.
  [[nodiscard]] int32_t admit(Deadline deadline);
  // admit_or_throw: admit, as a caller sees it: from the inside (the thread that would
  // have to make room) a full queue never waits and is TETHER_E_DEADLOCK when the caller
  // would have waited. Throws StatusError naming queue ("actor 'a' mailbox").
  void admit_or_throw(Deadline room, bool inside, const std::string& queue);
  // leave: a queued call started, or will never run; wakes a producer waiting for room.
  void leave() noexcept;
  void reject() noexcept { rejected_.fetch_add(1, std::memory_order_relaxed); }

  void succeeded() noexcept { completed_.fetch_add(1, std::memory_order_relaxed); }
  void failed() noexcept { failed_.fetch_add(1, std::memory_order_relaxed); }
  void cancelled() noexcept { cancelled_.fetch_add(1, std::memory_order_relaxed); }
  // fire_and_forget_failed: counts it and keeps e among the first 64.
  void fire_and_forget_failed(ErrorPtr e);

  [[nodiscard]] ErrorPtr kept_error(size_t i) const;
  [[nodiscard]] size_t capacity() const noexcept { return capacity_; }

  // fill: the stats fields within out->struct_size (os_thread_id is the caller's).
  void fill(tether_executor_stats& out, size_t size, uint64_t os_thread_id) const;

 private:
  [[nodiscard]] uint64_t queued() const noexcept {
    const uint64_t left = left_.load(std::memory_order_seq_cst);  // before admitted_: never negative
    return admitted_.load(std::memory_order_seq_cst) - left;
  }

  const size_t capacity_;  // 0: unbounded
  alignas(64) std::atomic<uint64_t> admitted_{0};  // producers
  std::atomic<uint64_t> rejected_{0};
  std::atomic<uint32_t> room_waiters_{0};  // producers blocked in admit
  alignas(64) std::atomic<uint64_t> left_{0};  // consumers and cancellers
  std::atomic<uint64_t> completed_{0}, failed_{0}, cancelled_{0}, errors_dropped_{0};

  alignas(64) mutable std::mutex mutex_;
  std::condition_variable room_;
  std::vector<ErrorPtr> errors_;  // guarded by mutex_: at most kKeptErrors
};

}  // namespace tether
