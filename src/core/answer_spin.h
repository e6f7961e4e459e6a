// AnswerSpin: the spin a waiter on a call's answer makes before it parks (the spin
// policy's waiter side: core/spin_policy.h), shared by both kinds of future (Scope,
// CallFuture). The waiter watches `settled`, on a line the ending side writes once, after
// its terminal store, and (with a CallFuture) reads nothing else from: the state's line
// is the ending side's while it ends the call (lock, state, count, unlock), and a waiter
// that looked at it would pull it back between each of those writes.
//
// When the ending side writes `settled`, by the future's kind:
//   - announced (Scope): only when a waiter said it spins (waiter_spins), so a scope
//     nobody waits on never has that line written.
//   - always (CallFuture: waiter_spins null): after every terminal store, without
//     reading the line first. Measured 2026-12-05 (1,024 calls in flight across CPUs, a
//     C program, alternating): the waits 81-86 -> 48-52 ns a call, the whole burst
//     209-220 -> 180-189 ns. A line the ending side had only READ (to see whether a
//     waiter spun) must be upgraded before the caller's next locked instruction (taking
//     the result, releasing the handle) can write it, and that upgrade waited behind the
//     answer's own line; a line the ending side wrote comes back with the caller's first
//     read of it, beside the answer's. The round trip did not change (262-266 ns).
//
//   waiter (spin)                              ending side (after its terminal store)
//   S1 announced: waiter_spins = true          E1 state_ = terminal (release, under its lock)
//   S2 loop: settled (acquire)? done           E2 unlock, wake parked waiters
//       clock read: state terminal? done       E3 always, or announced and waiter_spins:
//       budget passed / partner parked (no       settled = true (release)
//       feeder runs elsewhere) or on this CPU:
//       park
// A waiter whose S1 E3 misses (the state became terminal first) sees the state at its
// next clock read (S2), at most one SpinEnd period later; either way it then parks on the
// future's own protocol, which loses nothing.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "core/deadline.h"
#include "core/spin_policy.h"

namespace tether {

struct AnswerSpin {
  // spin: S1-S2 within partner's budgets (partner null: a fixed kWaitSpin). waiter_spins
  // null: the ending side settles always. feeders (a compiled graph's lanes, or null):
  // while the partner is parked and one of them runs on another CPU, the waiter spins on
  // (that lane's step will wake the partner; a spinning CPU is woken into at once, a
  // halted vCPU in 10-40 us here) until the partner runs or is woken on this CPU.
  static void spin(LanePresence* partner, std::atomic<bool>* waiter_spins, const std::atomic<bool>& settled,
                   const std::atomic<int32_t>& state, const Deadline& deadline,
                   const std::vector<LanePresence*>* feeders = nullptr) noexcept;
  // spin_for_word: spin's policy, with no deadline, until word reads answered: for an
  // answer whose last write is that word (waited_call.h), which is then also what the
  // waiter parks on.
  static void spin_for_word(LanePresence* partner, const std::atomic<uint32_t>& word, uint32_t answered) noexcept;
  // settle / settle_always: E3, after the terminal store has been published.
  static void settle(const std::atomic<bool>& waiter_spins, std::atomic<bool>& settled) noexcept {
    if (waiter_spins.load(std::memory_order_relaxed)) settle_always(settled);
  }
  static void settle_always(std::atomic<bool>& settled) noexcept { settled.store(true, std::memory_order_release); }
};

}  // namespace tether
