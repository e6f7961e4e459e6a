#include "core/call_ledger.h"

#include <cstddef>

#include "core/status_error.h"
#include "tether/tether.h"

namespace tether {

CallLedger::CallLedger(size_t capacity) noexcept : capacity_(capacity), bounded_(capacity != 0) {
  // The lines of the layout comment (call_ledger.h). offsetof on a class that is not
  // standard-layout is conditionally supported: g++ and clang give the plain offset.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
  // (On 64-bit targets: a 32-bit one's lines are shorter than 64 bytes, which costs only speed.)
  static_assert(offsetof(CallLedger, admitted_) == 0, "the producers' line starts the ledger");
  static_assert(sizeof(void*) != 8 || offsetof(CallLedger, left_) == 64, "the consumers' line is the second");
  static_assert(sizeof(void*) != 8 || offsetof(CallLedger, mutex_) == kLineBytes, "the slow fields follow");
#pragma GCC diagnostic pop
  static_assert(sizeof(CallLedger) <= kBytes, "the ledger's size (call_ledger.h)");
}

int32_t CallLedger::admit(Deadline deadline) {
  if (capacity_ == 0) {
    admitted_.fetch_add(1, std::memory_order_relaxed);
    return TETHER_OK;
  }
  for (;;) {
    // Bounded: take the slot, then check; give it back if that overfilled the queue. Two
    // producers racing for the last slot may both give back (and one retries or waits),
    // never both keep it.
    admitted_.fetch_add(1, std::memory_order_seq_cst);
    if (queued() <= capacity_) return TETHER_OK;
    admitted_.fetch_sub(1, std::memory_order_seq_cst);
    if (deadline.never_blocks()) {
      reject();
      return TETHER_E_QUEUE_FULL;
    }
    std::unique_lock lock(mutex_);
    room_waiters_.fetch_add(1, std::memory_order_seq_cst);
    const bool room = room_.wait_until(lock, deadline, [&] { return queued() < capacity_ || handle_ended_; });
    room_waiters_.fetch_sub(1, std::memory_order_relaxed);
    if (handle_ended_) {
      reject();
      return TETHER_E_INVALID_HANDLE;
    }
    if (!room) {
      reject();
      return TETHER_E_TIMEOUT;
    }
  }
}

void CallLedger::admit_bounded_or_throw(Deadline room, bool inside, const QueueName& queue) {
  int32_t admitted = admit(inside ? Deadline::after(0) : room);
  if (admitted == TETHER_E_QUEUE_FULL && inside && !room.never_blocks()) admitted = TETHER_E_DEADLOCK;
  switch (admitted) {
    case TETHER_OK: return;
    case TETHER_E_QUEUE_FULL:
      throw StatusError(admitted, queue.str() + " is full (" + std::to_string(capacity_) + " calls)");
    case TETHER_E_DEADLOCK:
      throw StatusError(admitted,
                        "waiting for room in " + queue.str() + " from the thread that empties it would wait on itself");
    case TETHER_E_INVALID_HANDLE:
      throw StatusError(admitted, "invalid handle: released by another thread while waiting for room in " + queue.str());
    default:
      throw StatusError(admitted, "no room in " + queue.str() + " within the timeout");
  }
}

void CallLedger::leave() noexcept {
  left_.fetch_add(1, std::memory_order_seq_cst);
  if (bounded_ && room_waiters_.load(std::memory_order_seq_cst) != 0) {
    { std::lock_guard lock(mutex_); }  // a waiter between its check and its wait sees the change
    room_.notify_all();
  }
}

void CallLedger::end_handle() noexcept {
  {
    std::lock_guard lock(mutex_);
    handle_ended_ = true;
  }
  room_.notify_all();
}

void CallLedger::fire_and_forget_failed(ErrorPtr e) noexcept {
  {
    std::lock_guard lock(mutex_);
    try {
      if (!kept_) kept_ = std::make_unique<KeptErrors>();
      if (kept_->errors.size() < kKeptErrors) {
        kept_->errors.push_back(std::move(e));
      } else {
        ++kept_->dropped;
      }
    } catch (const std::bad_alloc&) {  // counted as failed below; as dropped where there is a list
      if (kept_) ++kept_->dropped;
    }
  }
  failed();  // after the error is kept: a reader that sees the count finds the error
}

void CallLedger::add_tally(Tally* t) noexcept {
  std::lock_guard lock(mutex_);
  t->next = tallies_;
  tallies_ = t;
}

void CallLedger::remove_tally(Tally* t) noexcept {
  std::lock_guard lock(mutex_);
  for (Tally** link = &tallies_; *link != nullptr; link = &(*link)->next) {
    if (*link == t) {
      retired_admitted_ += t->admitted.load(std::memory_order_relaxed);
      *link = t->next;
      t->next = nullptr;
      return;
    }
  }
}

uint64_t CallLedger::fast_admitted_locked() const noexcept {
  uint64_t n = retired_admitted_;
  for (const Tally* t = tallies_; t != nullptr; t = t->next) n += t->admitted.load(std::memory_order_acquire);
  return n;
}

uint64_t CallLedger::fast_admitted() const noexcept {
  std::lock_guard lock(mutex_);
  return fast_admitted_locked();
}

ErrorPtr CallLedger::kept_error(size_t i) const {
  std::lock_guard lock(mutex_);
  return kept_ && i < kept_->errors.size() ? kept_->errors[i] : nullptr;
}

CallStats CallLedger::stats() const noexcept {
  CallStats s;
  const uint64_t fast_left = fast_left_.load(std::memory_order_acquire);  // before the admissions
  uint64_t fast_admitted = 0;
  {
    std::lock_guard lock(mutex_);
    fast_admitted = fast_admitted_locked();
    s.errors_dropped = kept_ ? kept_->dropped : 0;
  }
  s.queued = queued() + fast_admitted - fast_left;
  s.completed = completed_.load(std::memory_order_relaxed) + fast_completed_.load(std::memory_order_relaxed);
  s.failed = failed_.load(std::memory_order_relaxed);
  s.cancelled = cancelled_.load(std::memory_order_relaxed);
  s.rejected = rejected_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace tether
