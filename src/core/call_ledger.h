// CallLedger: what an executor or an actor keeps about its calls: how many are queued
// (against an optional capacity), how they ended, and the errors of fire-and-forget
// calls (the first 64 kept, the rest counted), so no failure is silently lost.
//
// Fast calls (Actor::post_fast) are counted without any read-modify-write: each producer
// thread admits through a Tally of its own (one writer), and the lane's single consumer
// counts their starts and successes in fields only it writes.
//
// Thread safety: every member may be called from any thread, except fast_left() and
// fast_succeeded(): only the consumer of the lane that runs the fast calls. Counters are
// relaxed atomics (statistics); mutex_ guards the kept errors, the capacity wait and the
// tallies. queued is admitted_ + fast admitted - left_ - fast left.
//
// Layout: two cache lines and the slow paths' fields (an actor carries one ledger, so
// 100,000 actors carry 100,000; measured 2026-12-04: five lines made an actor 640 bytes,
// 876 of RSS each with its handle and destructor call). Per call, producers write only the
// producers' line and the threads that run calls only the consumers' line, so a call does
// not bounce a line between the two sides; what either side writes only rarely (sender
// open and close, a released handle: under mutex_) and the capacity, which every admit
// reads, fill the producers' line (with the capacity on the slow paths' line, 100,000
// actors called in turn took a cache miss more a call on the caller's side: callgrind,
// 2026-12-06), with the rejections (counted by producers) and the kept errors' list
// (made once, at the first failure). The mutex, the consumers' copy of whether the queue
// is bounded and the producers' wait follow, on no line of their own: the owner's rarely
// written fields share theirs (144 bytes in all; 160 with the tallies in a vector and the
// rejections after the lines: actor.h's layout says what 16 bytes cost). The ledger does
// not align itself (an alignas would make its owner 64-aligned, and an actor's
// shared_ptr count would then take a line of its own): its owner places it where a line
// starts (actor.h, executor.h). The fast calls' consumer counts share the consumers' line with the general
// ones: on an actor without groups one thread writes both; with groups, a group thread
// and the default thread may share that line.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/deadline.h"
#include "core/error.h"
#include "core/event_count.h"
#include "core/word_mutex.h"
#include "tether/tether.h"

namespace tether {

// CallStats: how an executor's or actor's calls stand (the capi copies it into
// tether_executor_stats, within the caller's struct_size).
struct CallStats {
  uint64_t queued = 0;     // admitted, not yet started
  uint64_t completed = 0;  // ended with success
  uint64_t failed = 0;
  uint64_t cancelled = 0;
  uint64_t rejected = 0;        // refused at admission (QUEUE_FULL, SHUTDOWN, timed out)
  uint64_t errors_dropped = 0;  // fire-and-forget failures past the kept 64
};

class CallLedger {
 public:
  static constexpr size_t kKeptErrors = 64;
  // kLineBytes: the two lines of the layout comment; kBytes: all of it (the constructor's
  // static_asserts hold both).
  static constexpr size_t kLineBytes = 2 * 64;
  static constexpr size_t kBytes = kLineBytes + 16;

  explicit CallLedger(size_t capacity) noexcept;
  CallLedger(const CallLedger&) = delete;
  CallLedger& operator=(const CallLedger&) = delete;

  // admit: takes one queue slot. TETHER_OK, TETHER_E_QUEUE_FULL (deadline never blocks),
  // TETHER_E_TIMEOUT, or TETHER_E_INVALID_HANDLE (the owner's handle ended while this
  // waited for room: end_handle). A refusal is counted as rejected.
  [[nodiscard]] int32_t admit(Deadline deadline);
  // QueueName: how a refusal names the queue ("actor 'a' mailbox"), spelled out only
  // when a call is refused (admitting one builds no string).
  struct QueueName {
    const char* owner_kind;   // "actor"
    const std::string& owner;  // its name
    const char* queue;        // "mailbox"
    [[nodiscard]] std::string str() const { return std::string(owner_kind) + " '" + owner + "' " + queue; }
  };
  // admit_or_throw: admit, as a caller sees it: from the inside (inside(): the caller is
  // the thread that would have to make room) a full queue never waits and is
  // TETHER_E_DEADLOCK when the caller would have waited. Throws StatusError naming the
  // queue. Inline for an unbounded queue (a count, nothing to wait for, inside() not
  // asked): every call with a future passes here.
  template <class Inside>
  void admit_or_throw(Deadline room, Inside&& inside, const QueueName& queue) {
    if (capacity_ == 0) {
      admitted_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    admit_bounded_or_throw(room, inside(), queue);
  }
  // leave: a queued call started, or will never run; wakes a producer waiting for room.
  void leave() noexcept;
  // end_handle: the owner's handle was released: producers waiting for room return
  // TETHER_E_INVALID_HANDLE at once, as every other wait on a released handle does.
  void end_handle() noexcept;
  void reject() noexcept { rejected_.fetch_add(1, std::memory_order_relaxed); }

  void succeeded() noexcept { completed_.fetch_add(1, std::memory_order_relaxed); }
  void failed() noexcept { failed_.fetch_add(1, std::memory_order_relaxed); }
  void cancelled() noexcept { cancelled_.fetch_add(1, std::memory_order_relaxed); }
  // count_outcome: a call with a future ended in terminal_state (SUCCEEDED: completed,
  // FAILED: failed, CANCELLED: cancelled).
  void count_outcome(int32_t terminal_state) noexcept {
    if (terminal_state == TETHER_SUCCEEDED) {
      succeeded();
    } else if (terminal_state == TETHER_FAILED) {
      failed();
    } else {
      cancelled();
    }
  }
  // fire_and_forget_failed: counts it and keeps e among the first 64. With no memory to
  // keep it, it is counted as dropped, unless even the list of kept errors could not be
  // made: then only the failure count shows it.
  void fire_and_forget_failed(ErrorPtr e) noexcept;

  // Tally: one producer thread's fast calls admitted (written by that thread only), and
  // its link in the ledger's list of tallies.
  struct alignas(64) Tally {
    std::atomic<uint64_t> admitted{0};
    Tally* next = nullptr;  // guarded by the ledger's mutex_, while the tally is listed
    void add(int64_t n) noexcept {  // the owner thread: a plain store, no RMW
      admitted.store(admitted.load(std::memory_order_relaxed) + static_cast<uint64_t>(n), std::memory_order_relaxed);
    }
  };
  // add_tally / remove_tally: a producer starts or stops calling fast; what it admitted
  // stays counted. t stays listed (and alive) until it is removed.
  void add_tally(Tally* t) noexcept;
  void remove_tally(Tally* t) noexcept;
  // fast_admitted: every fast call admitted so far.
  [[nodiscard]] uint64_t fast_admitted() const noexcept;
  // The consumer of the fast calls: one started (or will never run), n succeeded (it
  // may count a run of calls that succeeded at the run's end).
  void fast_left() noexcept { bump(fast_left_, 1); }
  void fast_succeeded(uint64_t n = 1) noexcept { bump(fast_completed_, n); }

  // The owner's own counts of calls accepted and settled (an actor's end waits for them
  // to match: actor.h), kept on the lines of the sides that write them, so the owner
  // needs no cache lines of its own: accepted by callers, beside admitted_; settled by
  // execution threads and cancellers, beside left_; fast calls settled by their one
  // consumer, beside fast_left_. The owner chooses their memory orders.
  [[nodiscard]] std::atomic<uint64_t>& owner_accepted() noexcept { return owner_accepted_; }
  [[nodiscard]] std::atomic<uint64_t>& owner_settled() noexcept { return owner_settled_; }
  [[nodiscard]] std::atomic<uint64_t>& owner_fast_settled() noexcept { return owner_fast_settled_; }

  [[nodiscard]] ErrorPtr kept_error(size_t i) const;
  [[nodiscard]] size_t capacity() const noexcept { return capacity_; }

  // stats: the counts now (each read on its own: a snapshot of counters, not of one moment).
  [[nodiscard]] CallStats stats() const noexcept;

 private:
  [[nodiscard]] uint64_t queued() const noexcept {
    const uint64_t left = left_.load(std::memory_order_seq_cst);  // before admitted_: never negative
    return admitted_.load(std::memory_order_seq_cst) - left;
  }
  static void bump(std::atomic<uint64_t>& c, uint64_t n) noexcept {
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_release);
  }
  [[nodiscard]] uint64_t fast_admitted_locked() const noexcept;
  void admit_bounded_or_throw(Deadline room, bool inside, const QueueName& queue);

  // KeptErrors: made at the first fire-and-forget failure (most ledgers never see one).
  struct KeptErrors {
    std::vector<ErrorPtr> errors;  // at most kKeptErrors
    uint64_t dropped = 0;          // failures past them, or with no memory to keep them
  };

  // The producers' line (its start is where the owner put the ledger).
  std::atomic<uint64_t> admitted_{0};
  std::atomic<uint64_t> owner_accepted_{0};
  const size_t capacity_;                  // 0: unbounded. Read by every admit: on this line
  std::atomic<uint32_t> room_waiters_{0};  // producers blocked in admit
  bool handle_ended_ = false;              // guarded by mutex_
  Tally* tallies_ = nullptr;               // guarded by mutex_: producers calling fast now, linked by next
  uint64_t retired_admitted_ = 0;          // guarded by mutex_: admitted through removed tallies
  std::atomic<uint64_t> rejected_{0};
  std::unique_ptr<KeptErrors> kept_;  // guarded by mutex_
  // The consumers' line: the threads that run calls, and cancellers.
  std::atomic<uint64_t> left_{0};
  std::atomic<uint64_t> completed_{0}, failed_{0}, cancelled_{0};
  std::atomic<uint64_t> owner_settled_{0};
  std::atomic<uint64_t> fast_left_{0};           // the fast calls' consumer only
  std::atomic<uint64_t> fast_completed_{0};      // likewise
  std::atomic<uint64_t> owner_fast_settled_{0};  // likewise
  // The slow paths' fields.
  mutable WordMutex mutex_;
  // bounded_: capacity_ != 0, for leave(): the consumers' copy, so that they never read
  // the producers' line. After the mutex: in its word's padding.
  const bool bounded_;
  EventCount room_;  // producers waiting for room (the changes pass through mutex_ first)
};

}  // namespace tether
