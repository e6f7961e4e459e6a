// PinnedLane: a lane with ONE consumer: an executor's thread, a group of one thread, or a
// manual executor's owner (the thread in run_manual). Only this kind has the producers'
// rings (lease_ring, push_fast: fire-and-forget calls without an atomic read-modify-write)
// and publishes where its consumer runs (presence).
//
// Wait protocol (both sides spin, then park; a wake-up costs a syscall only when the
// other side really parked). sleepers_ is a flag: 0 awake, 1 the consumer announced that
// it may sleep; the consumer sleeps ON it (platform::park_while, a futex on Linux).
//
//   consumer (next)                          producer (push, push_fast, wake_parked)
//   C1 nothing to pop: spin (policy below)   P1 publish the call (mailbox: seq_cst
//   C2 announce: sleepers_ = 1                  exchange; ring: release store of its
//   C3 full fence (heavy_fence if a ring's      count, then light_fence; a full fence
//      holder fences lightly now)               for a waited call)
//   C4 work, closed or opened?  -> go to C6  P2 load sleepers_; 0: done, no syscall
//   C5 park_while(sleepers_ == 1)            P3 full fence, then exchange(sleepers_, 0);
//   C6 sleepers_ = 0; back to C1, which pops    it was 0: done
//      first                                 P4 wake_one_parked(sleepers_)
//   open() and close() store their flag, then run P3 and P4 as a producer does.
//   The fire-and-forget caller's hot path runs the same steps in two halves
//   (Actor::post_now: push_fast_ready is P1 and P2; Actor::finish_post, before the call
//   returns, P3 and P4 through wake_after_push_fast when P2 saw 1).
//   Outside the protocol (hints for core/wake_preemption.h): P3's winner stores, before
//   P4, whether its call is a waited one (woken_for_waited_call_), which the consumer reads
//   after C6; and before C2 the consumer may switch its own scheduling policy.
//
// Why no wake-up is lost: suppose the consumer sleeps in C5 while call X is published. Its
// C2 store and X's P1 form a Dekker pair with C3 and P1's fence, so either C4 saw X (no
// sleep), or X's producer read the announcement in P2 and reaches P3. If its P3 clear
// came before C5's compare, the kernel saw 0 and did not sleep; if after, the consumer
// was asleep on sleepers_ and P4 wakes it (the compare and the sleep are one step against
// a wake of the same word). If P3 came before C2 in sleepers_'s order (a producer delayed
// since it saw an EARLIER announcement), P3's fence orders P1 before C2's fence, so C4 saw
// X. If P3 found 0, the producer that cleared it, or the consumer in C6, is in one of
// these same cases. C4 looks at the rings only once one is counted (Inbox::anything_queued
// reads the count seq_cst): a ring counted after that read has its producers' seq_cst load
// of sleepers_ (P2) come after C2 in that order, so they see the announcement. C3's fence
// is heavy only while a ring's holder fences lightly (Inbox::light_leases_live, read
// seq_cst after C2): a producer publishes through a ring with a light fence only while
// it is counted there (Inbox::fence_lightly / fence_fully), so with none counted every
// publication's P1 is a full fence, and the pair is the plain Dekker pair above. A holder
// counted after that read counted itself (seq_cst) before its first light publication,
// so its P2 load comes after C2 and sees the announcement; one counted out before that
// read was counted out (release) after its last light publication, which C4 therefore
// sees. A lease starts fenced in full: its holder counts it in at its first light
// publication, and out at its end. A waited call (or one with a future) to a consumer
// that announced it may sleep counts its holder out: its caller blocks right after
// publishing, so a full fence (tens of ns) costs it little against a round trip of
// microseconds, while the consumer that answers it and parks would pay a membarrier
// system call (one CPU beside two busy loops, four alternating pairs, 2026-12-06: the
// round trip 1.06-1.23x -> 1.01-1.07x the futex ping-pong). To a consumer spinning on
// another CPU it stays light: that consumer does not park, and the full fence and the
// rare turn cost its round trip 2.49-2.55 -> 2.62-2.78x the spin floor. A
// fire-and-forget call, or a waited call that finds the consumer awake, counts the holder
// in again (fences_fully decides per call; only a change costs a read-modify-write).
// (Measured 2026-12-04, 1,000 actors on their own threads called round robin, each
// parking between calls: a heavy fence on every park of a lane with a ring cost 27-34 us
// a call against 15-17 without; the callers keep 4 senders, so most of those rings were
// leased by nobody.)
// (The version with a mutex and a condition variable needed one more check, that sleepers_
// was still 1 once locked, to close the same window a delayed producer's early clear
// opens; the kernel's compare closes it here. It also cost a system call more per park, as
// glibc re-locks a condition variable's mutex as contended so that the wait's unlock
// always made a FUTEX_WAKE, and a lock on either side.)
//
// How long C1 spins (core/spin_policy.h): not at all when the lane's last partner (a
// waiter on one of its calls, or a pusher) runs on this CPU, or when this thread has
// just woken a waiter parked on this CPU (spinning would only delay the thread that will
// push, or the one woken; if what serve() ran last was fire-and-forget calls, C1
// yields the CPU once instead, and parks only if nothing came meanwhile: spin_policy.h
// says why; not for 10 s on a CPU where such a yield was handed to another thread:
// pinned_lane.cpp, kYieldHandedAway), else within an adaptive budget (idle_budget_ns_, between
// kIdleSpinMinNs and idle_spin_ns: doubled, and at least twice the spin's length, when
// work arrives during a spin, halved when the spin times out; every kProbeEvery-th spin
// is a full one). The consumer publishes
// its CPU in presence_ at C1 and after C6, and kParked (with the CPU it parks on) before
// C2; the producer that wins P3 marks it kWaking before P4: hints for waiters, outside
// the protocol (a stale one costs time, never a wake-up).
//
// Thread safety: as Lane's, plus lease_ring/push_fast by a ring's lease holder, and
// run_manual/drain_here by the manual lane's owner. The consumer state (idle_budget_ns_,
// idle_spins_, and the inbox's) only by the one consumer. A ring lease holds the lane's
// owner alive.
#pragma once

#include <cstdint>

#include "core/deadline.h"
#include "core/lane.h"
#include "core/wake_preemption.h"

namespace tether {

class PinnedLane final : public Lane {
 public:
  explicit PinnedLane(Options options);  // options.threads <= 1
  ~PinnedLane() override;

  [[nodiscard]] LanePresence* presence() const noexcept override { return presence_; }

  // lease_ring / end_lease: the inbox's (inbox.h).
  [[nodiscard]] CallRing* lease_ring() { return inbox_.lease_ring(); }
  void end_lease(CallRing& ring) noexcept { inbox_.end_lease(ring); }
  // push_fast: appends call for target to the leased ring (room reserved beforehand with
  // ring.try_reserve(2)), publishes it (P1) and wakes the consumer if it parked (P2).
  void push_fast(CallRing& ring, const FastCall& call, FastTarget& target, uintptr_t flags) noexcept {
    inbox_.push_fast(ring, call, target, flags, fences_fully(flags));
    if (sleepers_.load(std::memory_order_seq_cst) != 0) [[unlikely]] {  // P2
      wake_after_push_fast((flags & RingEntry::kWaited) != 0);
    }
  }
  // ready_to_push_fast / push_fast_ready: push_fast in two halves, for a hot path that
  // calls nothing (Inbox's; not ready: push_fast must). push_fast_ready returns P2's
  // answer: true when the consumer announced it may sleep, and the caller must then
  // call wake_after_push_fast (out of line). kFence: light_fence_kind(), read by the
  // caller once for its fences.
  [[nodiscard]] bool ready_to_push_fast(const CallRing& ring) const noexcept { return inbox_.ready_to_push_fast(ring); }
  template <LightFence kFence>
  [[nodiscard]] bool push_fast_ready(CallRing& ring, const FastCall& call, FastTarget& target,
                                     uintptr_t flags) noexcept {
    inbox_.push_fast_ready<kFence>(ring, call, target, flags);
    return sleepers_.load(std::memory_order_seq_cst) != 0;  // P2
  }
  // prefetch_for_push: asks at once for the lines a push through ring and its wake-up
  // read and write: after an idle spell each is a miss (core/hot_path.h), and the push
  // would meet them one after another.
  void prefetch_for_push(const CallRing& ring) const noexcept {
    prefetch_for_read(&sleepers_);
    prefetch_for_read(presence_);
    inbox_.prefetch_for_push(ring);
  }
  // fences_fully: whether a call with these flags publishes with a full fence: an
  // answered call (waited, or with a future) when the consumer announced it may sleep
  // (C2; a relaxed read, a hint), or a call with a future when the consumer last said it
  // runs on this thread's CPU (so it is not running now: most likely the answer it gave
  // last woke this thread, which preempted it before it could park): the consumer that
  // answers it will likely park again, and its park then needs no heavy fence for that
  // caller's ring (C3). (Without the second case, a call with a future and its wait on one
  // CPU, in turn: 14 % of the round trips made a membarrier, 4.19-4.31 -> 4.40-4.52 us.)
  // Actor::post_now_as sends such a call, and an answered call through a ring that fences
  // in full, to push_fast.
  [[nodiscard]] bool fences_fully(uintptr_t flags) const noexcept {
    if ((flags & (RingEntry::kWaited | RingEntry::kFuture)) == 0) return false;
    if (sleepers_.load(std::memory_order_relaxed) != 0) return true;
    return (flags & RingEntry::kFuture) != 0 && consumer_on_this_cpu();
  }
  // wake_after_push_fast: P3/P4 after push_fast's P2 saw the consumer's announcement;
  // waited: the call pushed was a waited one (core/wake_preemption.h).
  [[gnu::noinline]] void wake_after_push_fast(bool waited) noexcept;

  // run_manual: a manual lane's loop on the calling thread, which becomes its owner for
  // good. TETHER_OK at the deadline, TETHER_E_SHUTDOWN once closed, TETHER_E_WRONG_STATE
  // from another thread than the owner or from inside a task of this lane.
  [[nodiscard]] int32_t run_manual(Deadline deadline);
  // is_owner: the calling thread drives this manual lane.
  [[nodiscard]] bool is_owner() const noexcept;

 private:
  void serve() noexcept override;
  void wake_parked() noexcept override { wake_parked_for(false); }
  // wake_parked_for: P3/P4, for a waited call or not (core/wake_preemption.h).
  void wake_parked_for(bool waited) noexcept;
  // next: the next work to run, waiting as the wait protocol says until the deadline.
  // False at the deadline or once the lane is closed and empty.
  bool next(Work& w, const Deadline& deadline);
  // idle_spin_budget: how long C1 spins now on cpu (publishes where the consumer is).
  int64_t idle_spin_budget(int32_t cpu) noexcept;
  // next_idle_budget: C1's budget after a spin in which work arrived (after took; zero:
  // a short spin, not timed) or not.
  [[nodiscard]] int64_t next_idle_budget(bool arrived, Deadline::Clock::duration took) const noexcept;
  bool drain_ring() noexcept { return open_.load(std::memory_order_acquire) && inbox_.drain_ring(*this); }

  // consumer_on_this_cpu: the consumer last said it runs on the calling thread's CPU.
  [[nodiscard]] bool consumer_on_this_cpu() const noexcept;
  // partner_here: the lane's last partner (core/spin_policy.h) runs on cpu, this thread's.
  [[nodiscard]] bool partner_here(int32_t cpu) const noexcept { return cpu >= 0 && presence_->partner_cpu() == cpu; }

  std::atomic<bool> running_manual_{false};
  LanePresence* const presence_;  // see "How long C1 spins"

  // Consumer state (see Thread safety), on a line of its own: the consumer writes it as
  // it serves, and a producer reads presence_ on every call (a write to its line would
  // make each call fetch that line back from the consumer's CPU).
  alignas(64) int64_t idle_budget_ns_;  // C1's adaptive budget
  uint32_t idle_spins_ = 0;              // C1's spins, for the probes
  // ran_fast_calls_: the work serve() ran last was fire-and-forget (or waited) calls, not
  // calls with a future: their caller may wait for them parked (wake_preemption.h), as
  // for a call with a future from the mailbox.
  bool ran_fast_calls_ = false;
  // woke_waiter_here_: the work serve() ran since C1's last look woke a waiter parked on
  // this CPU (spin_policy.h's take_woke_here, which serve() takes after each work).
  bool woke_waiter_here_ = false;
  WakePreemption preemption_;  // switched on by serve(), a library thread's loop
};

}  // namespace tether
