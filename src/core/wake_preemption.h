// Wake preemption: whether a serving thread, woken for work, may preempt the thread that
// woke it on their shared CPU. Each time it is about to park, a pinned lane's library
// thread chooses, and switches its scheduling policy between SCHED_OTHER (may preempt)
// and SCHED_BATCH (waits for the CPU) when the choice changes.
//
// Why: on one CPU a call is a hand-over (time_slice.h). A caller that waits for its call
// at once wants the woken thread to run at once: it preempts the caller in its wake-up
// system call, answers, and parks, handing the CPU back. A caller that streams calls
// (fire-and-forget, or futures waited later) does not: each wake-up preempted it, ran the
// one or two calls queued so far, parked, and the next push woke it again, a context
// switch and a futex call for every call or two. SCHED_BATCH makes the woken thread wait
// until the streaming caller's slice ends or it blocks; the calls queued meanwhile then
// run in one go. Static SCHED_BATCH would cost the waited round trips on one CPU (their
// answer then waits for the caller's slice, or its park), so the thread switches:
//
//   the serving thread, before it parks (C2 in pinned_lane.h)     policy for its next wake-up
//   its last partner (spin_policy.h) runs on this CPU, its last    SCHED_BATCH
//     wake-up was not for a waited call (tether_actor_call_wait),
//     in its last kPreemptParks parks the last work it ran before
//     each woke no waiter parked on this CPU, and batching has not
//     missed kMissesToPreempt times in a row since
//   anything else: a partner elsewhere or unknown, a waited call,  SCHED_OTHER
//     a waiter woken here (a call with a future waited at once),
//     batching that misses
//
// A miss: a batched thread that ran at most kFewCalls calls between two parks (the lane's
// published count, Inbox::published_total). Its caller does not stream: it waits after
// each call for something the library does not see (its own atomic or condition
// variable; a compiled graph's execution, whose last node wakes the caller), and the
// wake-up that no longer preempts it adds a wait and a wake-up to each hand-over. A
// stream's batched thread runs dozens to thousands of calls a park.
//
//   state      event                                             next       system call
//   kOff       (never changes: see start)                        kOff       none
//   kNormal    before_park wants batching                        kBatch     switch to SCHED_BATCH
//   kBatch     before_park wants preemption                      kNormal    switch to SCHED_OTHER
//   kNormal,   a switch refused, or the policy found is not the   kOff       none (the thread
//   kBatch     one this thread last set (a user changed it)                  stays as it is)
//
// The waker says why it wakes: the producer that wins P3 stores whether its call is a
// waited one (Lane::woken_for_waited_call_, a relaxed hint on sleepers_'s line, which it
// writes anyway) before P4; the consumer reads it after C6 (woken). A woken waiter is
// reported as the spin policy's take_woke_here (Scope::notify_waiters, CallFuture::announce),
// which the lane takes after each work it runs (ran). Only the LAST work before a park
// counts: with many calls in flight the caller waits for the oldest now and then, and
// the calls run after the one that woke it are a stream again.
// Every input is a hint: a stale one costs one slower hand-over, never a call.
//
// Whose threads: only the library's own pinned lane threads (an executor's, an actor's, a
// concurrency group of one thread) that start under SCHED_OTHER; never a manual executor's
// owner, a runner's thread, a thread started under SCHED_BATCH, SCHED_IDLE or a real-time
// policy, nor one whose policy its user changed since the library last set it (seen at the
// next switch; the library then leaves it for good). TETHER_BATCH_STREAMS=0, read once at
// the first serving thread's start, keeps every serving thread at SCHED_OTHER. Elsewhere
// than Linux nothing is switched (platform::switch_fair_policy).
//
// Figures (2026-12-07, AMD EPYC VM of 2 vCPUs, kernel 6.18, the library before and with
// this, alternating, bench/README.md has every run): 1,000 actors on two executors called
// round robin, 1,024 futures in flight, one executor's thread on the caller's CPU
// (BM_Tether_ManyActorsTwoExecutors/1) 681-795 -> 297-354 ns a call (both executors on
// the other CPU: 272-295 -> 264-272 ns); bench/compare on one CPU: target 1
// (tether_actor_call_wait) 0.98-1.08 -> 0.98-0.99x the futex ping-pong, target 5 (1,024
// calls in flight) 0.37 -> 0.31x the best peer, a compiled graph's A -> B 0.84-0.85 ->
// 0.93-0.94x two chained calls (the execution 9.3-9.5 -> 9.6-9.7 us, the chained calls
// 11.2-11.3 -> 10.3-10.4 us); the Go binding's ExecutorGo on one CPU 95-118 -> 80 ns.
// kPreemptParks: a version without it (only the waited-call hint) made a call with a
// future waited at once on one CPU 1.38-1.43x the futex ping-pong (its mailbox push is no
// waited call, so the thread batched and the answer waited for the caller's park); 64
// parks outlast the gaps between such calls while a stream's own parks come far apart.
// kFewCalls, kMissesToPreempt: a C++ driver on one CPU posting one fire-and-forget call
// whose method wakes a std::atomic the caller then waits on took 4.0-4.2 us a round trip
// with TETHER_BATCH_STREAMS=0 and 5.2-6.1 us batched without the miss rule (two calls a
// batched park: the caller's wait, then its wake-up); with it 4.7-5.1 us (five runs
// alternating; the same driver lands in a 4 us or a 5 us rhythm from run to run, and
// nothing here reaches the first every time). /1 kept its figures (259-330 ns).
// Tried: counting every waiter woken since the last idle look (not only by the last work
// before the park): /1 stayed at 648-720 ns (its caller waits for its oldest future every
// few calls). Tried: a compiled graph's first steps waking as waited calls (the execution's
// caller waits; the last node, not the first, wakes it): the execution 10.1-12.9 us.
//
// The price: a method on a batched thread that blocks (I/O, a lock) and is woken while its
// caller streams on that CPU waits for the rest of the caller's slice (the OS default: 1.4
// ms here) instead of preempting it; and a caller that waits on its own after each call
// (above) pays ~0.7-1 us a round trip on one CPU (TETHER_BATCH_STREAMS=0 takes it back).
//
// Thread safety: the consumer's state: only the one consumer thread of its lane.
#pragma once

#include <cstdint>

#include "platform/platform.h"

namespace tether {

// batch_streams_from: what a TETHER_BATCH_STREAMS value (nullptr: unset) asks for: false
// for "0" (never switch), true otherwise.
[[nodiscard]] bool batch_streams_from(const char* setting) noexcept;

class WakePreemption {
 public:
  static constexpr uint32_t kPreemptParks = 64;
  static constexpr uint64_t kFewCalls = 3;  // a batched park after at most this many: a miss
  static constexpr uint32_t kMissesToPreempt = 2;
  enum class State : uint8_t { kOff, kNormal, kBatch };
  // Switch: the OS call that changes the calling thread's policy (platform's; tests pass
  // their own): true once switched, false (the thread unchanged) if its policy was not
  // `from` or the OS refused.
  using Switch = bool (*)(platform::FairPolicy from, platform::FairPolicy to) noexcept;

  explicit WakePreemption(Switch change = &platform::switch_fair_policy) noexcept : switch_(change) {}

  // start: on the lane's own thread, before it serves: adapt from now on if its policy
  // is SCHED_OTHER (`found`) and TETHER_BATCH_STREAMS allows (`allowed`).
  void start(platform::FairPolicy found, bool allowed) noexcept {
    state_ = allowed && found == platform::FairPolicy::kNormal ? State::kNormal : State::kOff;
  }
  // start_serving: start with the calling thread's policy and the process's setting.
  void start_serving() noexcept;
  // woken: after C6, the waker's hint: its call was a waited one.
  void woken(bool for_waited_call) noexcept { last_wake_waited_ = for_waited_call; }
  // ran: after each work the thread ran; woke_waiter_here: it woke a waiter parked on
  // this CPU (spin_policy.h's take_woke_here).
  void ran(bool woke_waiter_here) noexcept { last_run_woke_waiter_ = woke_waiter_here; }
  // before_park: before C2; partner_here: the lane's last partner runs on this CPU;
  // published: the calls published to the lane so far.
  void before_park(bool partner_here, uint64_t published) noexcept {
    if (state_ == State::kOff) return;
    const uint64_t came = published - published_at_park_;
    published_at_park_ = published;
    if (state_ == State::kBatch) count_miss(came <= kFewCalls);
    if (last_run_woke_waiter_) preempt_parks_ = kPreemptParks;
    const bool batch = partner_here && !last_wake_waited_ && preempt_parks_ == 0;
    if (preempt_parks_ > 0) --preempt_parks_;
    if (batch != (state_ == State::kBatch)) switch_policy(batch);
  }
  [[nodiscard]] State state() const noexcept { return state_; }
  // adapting: before_park may switch (else the lane need not count its calls for it).
  [[nodiscard]] bool adapting() const noexcept { return state_ != State::kOff; }

 private:
  void switch_policy(bool batch) noexcept;
  void count_miss(bool missed) noexcept {
    misses_ = missed ? misses_ + 1 : 0;
    if (misses_ < kMissesToPreempt) return;
    misses_ = 0;
    preempt_parks_ = kPreemptParks;
  }

  Switch switch_;
  uint64_t published_at_park_ = 0;
  uint32_t preempt_parks_ = 0;  // parks left with preemption kept
  uint32_t misses_ = 0;         // batched parks in a row after few calls
  State state_ = State::kOff;
  bool last_wake_waited_ = false;
  bool last_run_woke_waiter_ = false;
};

}  // namespace tether
