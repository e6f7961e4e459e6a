#include "core/pinned_lane.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <utility>

#include "core/asymmetric_fence.h"
#include "core/chaos.h"
#include "core/cpu_relax.h"
#include "core/hot_path.h"
#include "core/thread_role.h"
#include "platform/platform.h"
#include "tether/tether.h"

namespace tether {

namespace {

// C1's yield when another process shares this CPU (spin_policy.h, "The one yield"): a
// yield that took longer than kYieldHandedAway while at most one call came (a waited
// call's caller posts its next one within ~5 us: p99 7 us measured on a quiet CPU; a
// producer that streams fire-and-forget calls posts thousands) gave the CPU to another
// thread, for up to its whole time slice (1.4-3.9 ms measured beside a busy loop). Then
// no consumer on that CPU yields for kYieldRest (parks at once), a process-wide hint per
// CPU (the load is the machine's, and outlives any one lane). 10 s: under a steady load
// the next try costs ~2 ms in 10 s (bench/compare --load 2 read alike with 1 s and 10 s:
// 1.11 / 1.11x and 1.09 / 1.12x the futex floor on one CPU); once the load is gone a
// waited round trip on one CPU is ~11 % slower for at most that long (7.0-7.1 against
// 6.3 us without the yield).
constexpr std::chrono::microseconds kYieldHandedAway{250};
constexpr std::chrono::seconds kYieldRest{10};
constexpr size_t kYieldCpus = 256;  // CPUs beyond share slots: a hint
TETHER_HOT_DATA std::atomic<int64_t> g_yields_resume_ns[kYieldCpus] = {};  // steady clock; relaxed: a hint

}  // namespace

PinnedLane::PinnedLane(Options options)
    : Lane(std::move(options), /*one_consumer=*/true),
      presence_(LanePresence::acquire()),
      idle_budget_ns_(options_.idle_spin_ns) {
  // The consumer's per-call writes stay off the line of presence_, which producers read
  // on every call (measured: 1,024 calls in flight across CPUs 254-389 -> 198-217 ns a
  // call once ran_fast_calls_ left that line; bench/README.md).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
  static_assert(offsetof(PinnedLane, ran_fast_calls_) / 64 != offsetof(PinnedLane, presence_) / 64,
                "pinned_lane.h: consumer state on a line of its own");
#pragma GCC diagnostic pop
}

PinnedLane::~PinnedLane() {
  // The inbox is cancelled by ~Lane, after this; a waiter may keep the (type-stable)
  // presence, so releasing it first is safe.
  LanePresence::release(presence_);
}

TETHER_HOT_PATH void PinnedLane::serve() noexcept {
  const Deadline forever = Deadline::after(-1);
  preemption_.start_serving();
  Work w;
  for (;;) {
    if (drain_ring()) {
      ran_fast_calls_ = !inbox_.took_futures();
      // A waiter woken here by the run's last call with a future (Actor::run_fast takes
      // what the calls before it woke: only the last work before a park counts).
      const bool woke = take_woke_here();
      preemption_.ran(woke);
      woke_waiter_here_ = woke_waiter_here_ || woke;
      continue;
    }
    if (!next(w, forever)) break;
    ran_fast_calls_ = w.call == nullptr && !inbox_.took_futures();
    execute(w);
    const bool woke = take_woke_here();
    preemption_.ran(woke);
    woke_waiter_here_ = woke_waiter_here_ || woke;  // for C1 (idle_spin_budget)
  }
}

TETHER_HOT_PATH void PinnedLane::wake_after_push_fast(bool waited) noexcept {
  presence_->pusher_at(current_cpu());  // a hint (spin_policy.h), paid only with a wake-up
  wake_parked_for(waited);
}

TETHER_HOT_PATH void PinnedLane::wake_parked_for(bool waited) noexcept {
  // P3 (see the state table in pinned_lane.h): the first producer to clear the mark wakes
  // the consumer; the others need not, it is waking (each would pay a system call).
  // Pairs with the consumer's fence after C2: a producer whose clear lands before the
  // consumer's mark in sleepers_'s order has its publication seen by the consumer's C4
  // (the ring side published with only a light fence; this slow path pays the real one).
  fence_detail::full_fence();  // mfence: TSan does not model std fences (asymmetric_fence.cpp)
  chaos_point();
  if (sleepers_.exchange(0, std::memory_order_seq_cst) == 0) return;
  chaos_point();
  presence_->consumer_woken();  // a hint for waiters (core/spin_policy.h), before it can run
  if (woken_for_waited_call_.load(std::memory_order_relaxed) != waited) {  // a hint (wake_preemption.h)
    woken_for_waited_call_.store(waited, std::memory_order_relaxed);
  }
  platform::wake_one_parked(sleepers_);  // P4
}

TETHER_HOT_PATH bool PinnedLane::next(Work& w, const Deadline& deadline) {
  // C1..C6 follow the state table in pinned_lane.h.
  SpinWait link;  // kRetry: a producer between its exchange and its link
  for (;;) {
    if (const Take t = take(w); t != Take::kNothing) {
      if (t == Take::kRetry) {
        const int32_t cpu = current_cpu();
        wait_for_link(link, partner_here(cpu));
        continue;
      }
      return t == Take::kWork;
    }
    const int32_t cpu = current_cpu();
    const int64_t budget = idle_spin_budget(cpu);
    if (budget > 0 || !deadline.forever()) {  // no clock to read for a consumer that parks at once
      const auto now = Deadline::now();
      if (!deadline.forever() && now >= deadline.at()) return false;
      auto spin_until = Deadline::saturating_after(now, budget);
      if (!deadline.forever() && deadline.at() < spin_until) spin_until = deadline.at();
      SpinWait spin;  // C1
      SpinEnd end(spin_until);
      while (!work_ready() && !closed_relaxed() && !end.passed()) spin.once();
      const bool arrived = work_ready() || closed_.load(std::memory_order_acquire);
      if (budget > 0) {
        idle_budget_ns_ = next_idle_budget(arrived, end.long_spin() ? Deadline::now() - now
                                                                     : Deadline::Clock::duration::zero());
      }
      if (arrived) continue;
    }
    if (ran_fast_calls_ && partner_here(cpu)) {  // C1's one yield (see "How long C1 spins")
      ran_fast_calls_ = false;
      std::atomic<int64_t>& resume = g_yields_resume_ns[static_cast<size_t>(cpu) % kYieldCpus];
      const auto before = Deadline::now();
      if (before.time_since_epoch().count() >= resume.load(std::memory_order_relaxed)) {
        const uint64_t published = inbox_.published_total();
        platform::yield_cpu();
        const auto after = Deadline::now();
        if (after - before > kYieldHandedAway && inbox_.published_total() - published <= 1) {
          resume.store((after + kYieldRest).time_since_epoch().count(), std::memory_order_relaxed);
        }
        if (work_ready()) continue;
      }
    }
    if (preemption_.adapting()) {  // may switch this thread's policy
      preemption_.before_park(partner_here(cpu), inbox_.published_total());
    }
    presence_->consumer_parks(cpu);
    sleepers_.store(1, std::memory_order_seq_cst);  // C2: a waker sets it back to 0 (P3)
    chaos_point();
    // C3. A ring's lease holder that fences lightly reads sleepers_ after only a compiler
    // barrier: make it a full fence while one does. A holder that starts to fence lightly
    // after this load counts itself first (Inbox::fence_lightly), and its seq_cst load of
    // sleepers_ then sees ours.
    if (inbox_.light_leases_live() != 0) {
      heavy_fence();
    } else {
      fence_detail::full_fence();  // mfence: TSan does not model std fences (asymmetric_fence.cpp)
    }
    chaos_point();
    // C4: work, a close or an opening since the announcement: do not sleep. C5: sleep
    // while sleepers_ is still 1; the kernel compares it atomically with P4's wake, so a
    // producer's P3 clear, before or after this compare, is never slept through.
    if (!work_ready() && !closed_.load(std::memory_order_acquire)) {
      platform::park_while(sleepers_, 1, deadline.steady_ns());
    }
    // C6: awake; producers need not wake us until we announce again.
    sleepers_.store(0, std::memory_order_relaxed);
    preemption_.woken(woken_for_waited_call_.load(std::memory_order_relaxed));
    presence_->consumer_at(current_cpu());
  }
}

TETHER_HOT_PATH int64_t PinnedLane::next_idle_budget(bool arrived, Deadline::Clock::duration took) const noexcept {
  if (!arrived) return AdaptiveBudget::shrunk(idle_budget_ns_, std::min(options_.idle_spin_ns, kIdleSpinMinNs));
  const int64_t took_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(took).count();
  return AdaptiveBudget::after_success(idle_budget_ns_, took_ns, options_.idle_spin_ns);
}

TETHER_HOT_PATH bool PinnedLane::consumer_on_this_cpu() const noexcept {
  const int32_t cpu = current_cpu();
  return cpu >= 0 && presence_->consumer_cpu() == cpu;
}

TETHER_HOT_PATH int64_t PinnedLane::idle_spin_budget(int32_t cpu) noexcept {
  presence_->consumer_at(cpu);
  // The next push comes from this CPU, or a thread this one woke here waits for it.
  // (serve() takes the flag after each work; a manual lane's loop leaves it to this.)
  const bool woke = std::exchange(woke_waiter_here_, false);
  if (take_woke_here() || woke || partner_here(cpu)) return 0;
  return AdaptiveBudget::probe(idle_spins_) ? options_.idle_spin_ns : idle_budget_ns_;
}

bool PinnedLane::is_owner() const noexcept {
  const uint64_t owner = tid_.load(std::memory_order_acquire);
  return owner != 0 && owner == platform::current_thread_id();
}

int32_t PinnedLane::run_manual(Deadline deadline) {
  uint64_t none = 0;
  const uint64_t self = platform::current_thread_id();
  if (!tid_.compare_exchange_strong(none, self, std::memory_order_acq_rel) && none != self) {
    return TETHER_E_WRONG_STATE;  // another thread drives this executor
  }
  this_thread_role().manual_lane = id_;  // for good: see thread_role.h
  if (running_manual_.exchange(true, std::memory_order_acq_rel)) return TETHER_E_WRONG_STATE;  // nested run
  {
    ServingAs serving(this);
    Work w;
    while (next(w, deadline)) execute(w);
  }
  running_manual_.store(false, std::memory_order_release);
  return closed_.load(std::memory_order_acquire) ? TETHER_E_SHUTDOWN : TETHER_OK;
}

}  // namespace tether
