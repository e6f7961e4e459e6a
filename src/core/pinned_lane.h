// PinnedLane: a lane with ONE consumer: an executor's thread, a group of one thread, or a
// manual executor's owner (the thread in run_manual). Only this kind has the producers'
// rings (lease_ring, push_fast: fire-and-forget calls without an atomic read-modify-write)
// and publishes where its consumer runs (presence).
//
// Wait protocol (both sides spin, then park; a wake-up costs a syscall only when the
// other side really parked). sleepers_ is a flag: 0 awake, 1 the consumer announced that
// it may sleep.
//
//   consumer (next)                          producer (push, push_fast, wake_parked)
//   C1 nothing to pop: spin (policy below)   P1 publish the call (mailbox: seq_cst
//   C2 announce: sleepers_ = 1                  exchange; ring: release store of its
//   C3 full fence (heavy_fence if rings)        count, then light_fence)
//   C4 lock mutex_                           P2 load sleepers_; 0: done, no syscall
//   C5 work or closed?  -> no wait, go to C8 P3 seq_cst fence, then exchange(sleepers_,
//   C6 sleepers_ == 0?  -> no wait, go to C8    0); it was 0: done
//   C7 cv_.wait (unlocks atomically)         P4 lock and unlock mutex_, notify_one
//   C8 sleepers_ = 0; back to C1, which pops first
//
// Why no wake-up is lost: suppose the consumer waits in C7 while call X is published. Its
// C2 store and X's P1 form a Dekker pair with C3 and P1's fence, so either C5 saw X (no
// wait), or X's producer read the announcement in P2 and reaches P3. If its P3 cleared the
// announcement after C6 read it, its P4 lock comes after C7 unlocked, so the notify
// reaches the waiter. If P3 came before C6's read, C6 saw 0 and did not wait. If P3 came
// before C2 in sleepers_'s order (a producer delayed since it saw an EARLIER
// announcement), P3's fence orders P1 before C2's fence, so C5 saw X. If P3 found 0, the
// producer that cleared it, or the consumer in C8, is in one of these same cases.
// C6 is what an earlier version lacked: a delayed producer cleared a fresh announcement
// and gave its notify before the consumer locked, and the consumer then waited with
// sleepers_ == 0, so no later producer woke it (the executor stall under Go bursts).
//
// How long C1 spins (core/spin_policy.h): not at all when the lane's last waiter runs on
// this CPU (spinning would only delay the thread that will push), else within an adaptive
// budget (idle_budget_ns_, between kIdleSpinMinNs and idle_spin_ns: doubled when work
// arrives during a spin, halved when the spin times out; every kProbeEvery-th spin is a
// full one). The consumer publishes its CPU in presence_ at C1 and after C8, and kParked
// before C2: hints for waiters, outside the protocol (a stale one costs time, never a
// wake-up).
//
// Thread safety: as Lane's, plus lease_ring/push_fast by a ring's lease holder, and
// run_manual/drain_here by the manual lane's owner. The consumer state (idle_budget_ns_,
// idle_spins_, and the inbox's) only by the one consumer. A ring lease holds the lane's
// owner alive.
#pragma once

#include <cstdint>

#include "core/deadline.h"
#include "core/lane.h"

namespace tether {

class PinnedLane final : public Lane {
 public:
  explicit PinnedLane(Options options);  // options.threads <= 1
  ~PinnedLane() override;

  [[nodiscard]] LanePresence* presence() const noexcept override { return presence_; }

  // lease_ring / end_lease: the inbox's (inbox.h).
  [[nodiscard]] CallRing* lease_ring() { return inbox_.lease_ring(); }
  static void end_lease(CallRing& ring) noexcept { Inbox::end_lease(ring); }
  // push_fast: appends call for target to the leased ring (room reserved beforehand with
  // ring.try_reserve(2)), publishes it (P1) and wakes the consumer if it parked (P2).
  void push_fast(CallRing& ring, const FastCall& call, FastTarget& target) noexcept {
    inbox_.push_fast(ring, call, target);
    if (sleepers_.load(std::memory_order_seq_cst) != 0) wake_parked();  // P2
  }

  // run_manual: a manual lane's loop on the calling thread, which becomes its owner for
  // good. TETHER_OK at the deadline, TETHER_E_SHUTDOWN once closed, TETHER_E_WRONG_STATE
  // from another thread than the owner or from inside a task of this lane.
  [[nodiscard]] int32_t run_manual(Deadline deadline);
  // is_owner: the calling thread drives this manual lane.
  [[nodiscard]] bool is_owner() const noexcept;

 private:
  void serve() noexcept override;
  void wake_parked() noexcept override;
  // next: the next work to run, waiting as the wait protocol says until the deadline.
  // False at the deadline or once the lane is closed and empty.
  bool next(Work& w, const Deadline& deadline);
  // idle_spin_budget: how long C1 spins now (publishes where the consumer is).
  int64_t idle_spin_budget() noexcept;
  bool drain_ring() noexcept { return open_.load(std::memory_order_acquire) && inbox_.drain_ring(*this); }

  std::atomic<bool> running_manual_{false};
  LanePresence* const presence_;  // see "How long C1 spins"

  // Consumer state (see Thread safety).
  alignas(64) int64_t idle_budget_ns_;  // C1's adaptive budget
  uint32_t idle_spins_ = 0;              // C1's spins, for the probes
};

}  // namespace tether
