// AnswerSpin: the spin a waiter on a call's answer makes before it parks (the spin
// policy's waiter side: core/spin_policy.h), shared by both kinds of future (Scope,
// CallFuture).
//
// The ending side writes `settled` only when a waiter said it spins: a look at the
// state's line would pull it back from the running side between each of that side's
// writes to it (lock, state, count, unlock), and each then fetches it again; and when
// nobody spins (calls answered before they are waited for) the line is never written, so
// a pool's next use of the block does not fetch it back from the running side's CPU.
//
//   waiter (spin)                              ending side (after its terminal store)
//   S1 waiter_spins = true (relaxed)           E1 state_ = terminal (release, under its lock)
//   S2 loop: settled (acquire)? done           E2 unlock, wake parked waiters
//       clock read: state terminal? done       E3 waiter_spins? settled = true (release)
//       budget passed / partner parked: park
// A waiter whose S1 E3 misses (the state became terminal first) sees the state at its
// next clock read (S2), at most one SpinEnd period later; either way it then parks on the
// future's own protocol, which loses nothing.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/deadline.h"
#include "core/spin_policy.h"

namespace tether {

struct AnswerSpin {
  // spin: S1-S2 within partner's budgets (partner null: a fixed kWaitSpin).
  static void spin(LanePresence* partner, std::atomic<bool>& waiter_spins, const std::atomic<bool>& settled,
                   const std::atomic<int32_t>& state, const Deadline& deadline) noexcept;
  // settle: E3, after the terminal store has been published.
  static void settle(const std::atomic<bool>& waiter_spins, std::atomic<bool>& settled) noexcept {
    if (waiter_spins.load(std::memory_order_relaxed)) settled.store(true, std::memory_order_release);
  }
};

}  // namespace tether
