// SharedLane: a lane with N > 1 consumers (an actor group of N threads). The mailbox alone
// (no rings: a ring has one consumer), every consumer spins for idle_spin_ns as set.
//
// Wait protocol. sleepers_ counts the consumers that announced they may sleep.
//
//   consumer (next)                          producer (push, wake_parked)
//   C1 nothing to pop: spin idle_spin_ns     P1 publish the call (the mailbox's seq_cst
//   C2 announce: sleepers_ += 1                 exchange)
//   C3 full fence                            P2 load sleepers_; 0: done, no syscall
//   C4 lock mutex_                           P4 lock and unlock mutex_, notify_one
//   C5 work or closed?  -> no wait, go to C8
//   C7 cv_.wait (unlocks atomically)
//   C8 sleepers_ -= 1; back to C1, which pops first
//
// Why no wake-up is lost: C2 and P1 form a Dekker pair with C3 and P1's seq_cst exchange:
// either C5 saw the call (no wait), or its producer saw the count in P2 and notifies one
// waiter after C7 unlocked (P4's lock orders it after C5's check). Every producer that
// sees a count notifies: a notified waiter is no longer a waiter, so two producers' notifies
// reach two threads. (The one-consumer protocol's P3 and C6 are not needed: nobody clears
// another's announcement.)
#pragma once

#include "core/lane.h"

namespace tether {

class SharedLane final : public Lane {
 public:
  explicit SharedLane(Options options);  // options.threads > 1

  [[nodiscard]] LanePresence* presence() const noexcept override { return nullptr; }

 private:
  void serve() noexcept override;
  void wake_parked() noexcept override;
  // next: the next work to run, waiting as the wait protocol says; false once the lane is
  // closed and empty.
  bool next(Work& w);
};

}  // namespace tether
