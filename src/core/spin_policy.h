// Spin policy: a thread that waits for another spins only while spinning can succeed.
//
// Spinning wins only when the thread it waits for is RUNNING ON ANOTHER CPU: then the
// answer comes in the time of a cache-line transfer (~0.1-3 us here) instead of a futex
// wake-up (~40-60 us from one vCPU to the other on this project's VMs, ~3.5-4.5 us on
// one CPU). When both share a CPU, every spin turn is time taken from the thread that
// would answer (measured before this policy: a same-CPU actor round trip took 27-28 us,
// 6-8x a plain mutex + condition variable's 4.2 us); when the other side is parked,
// nothing can arrive before the wake-up the spinner itself is waiting behind.
//
// So (as glibc's adaptive mutexes, WebKit's ParkingLot and Go's scheduler do) each lane
// publishes where its consumer is, in a LanePresence:
//   - the consumer stores its CPU (sched_getcpu, read from the kernel's rseq area: ~1 ns)
//     when it becomes idle and after every wake-up, and kParked just before it parks;
//   - a thread that waits for one of the lane's calls, or pushes work to the lane, stores
//     its own CPU (partner_cpu): the thread the consumer's next work will come from;
//   - the producer that wakes a parked consumer marks it kWaking (parked_on_ keeps the CPU
//     it parked on, where the kernel wakes it when that CPU is idle).
// A waiter whose consumer is parked (and not being woken) or on its own CPU parks at once
// (and stops spinning as soon as that becomes true); so does one whose consumer is being
// woken on the waiter's own CPU. A waiter whose consumer is being woken on ANOTHER CPU
// spins through the wake-up (the wake budget, up to kWakeSpinMaxNs): the answer then
// comes one wake-up after the call instead of two, as the waiter needs no wake-up of its
// own. Otherwise it spins on pauses alone, never yielding (the consumer is on another
// CPU: a yield would not help it, and on a loaded machine hands this CPU to another
// process for a time slice). A consumer whose last partner is on its own CPU parks at
// once: two actors handing a compiled graph's steps to each other on one CPU would
// otherwise each spin away the time slice the other needs to answer (measured 2026-12-03,
// bench/compare's graph rows, all on one CPU: a step of a 32-node chain 6.89 us before
// pushers counted as partners and the execution's future had one, the graph A -> B 30.5
// us per execution against 14.3 us for the same two calls chained). Otherwise each spins
// within an adaptive budget that doubles when a spin succeeds and halves when it times
// out, between the bounds below: a lane whose calls come back within a spin keeps
// spinning; one whose calls take long (a slow method, a caller that goes quiet) spins
// little. A budget at its floor could stay there for good when answers take just longer
// than the floor, so every kProbeEvery-th spin uses the full budget (a probe): its success
// grows the budget again, to at least twice what that spin took for the waiter's wake
// spin and the consumer's idle spin (timed only when it lasted over ~0.5 us: SpinEnd),
// so one probe lifts a budget whose work comes just later than its double.
// Three threads on two CPUs (a compiled graph's execution: the caller, actor A, actor B,
// each pair of them sharing a CPU in turn): two more rules, both about not letting a CPU
// halt while work for it is on its way (a halted vCPU is woken by the host in 10-40 us
// here, sometimes 200), nor spinning on a CPU a woken thread needs.
//   - A thread that woke a parked waiter on its own CPU (Scope::notify_waiters: the
//     waiter's CPU is kept as it parks) parks at its next idle look instead of spinning
//     (woke_waiter_on / take_woke_here): the woken thread needs this CPU, and with a
//     longer time slice than the spinner's (time_slice.h) it would wait for the spin to
//     end. The lane's last partner cannot say so: the waiter on an execution is not the
//     lane's pusher (the node before it is), and the pusher's CPU overwrites the waiter's.
//   - A waiter on an execution whose partner (the lane of its output) is parked still
//     spins while another lane of the graph (a feeder) runs or is being woken on another
//     CPU (AnswerSpin's feeders): that lane's step will wake the partner, and a spinning
//     CPU takes the wake-up at once where a parked waiter's would have halted. It parks
//     as soon as the partner runs, or is being woken, on its own CPU.
//
// Figures that chose the constants (2 vCPUs shared with other work, bench/compare):
//   kWaitSpinMaxNs 10 us: a cross-CPU call answers in 1.3-3 us back to back, and the
//     wake-up it saves costs 40-60 us; 10 us covers a short method with room to spare.
//   kWaitSpinMinNs, kIdleSpinMinNs 3 us: at least one cross-CPU hand-over (1.3-3 us), so
//     a back-to-back caller still succeeds at the floor; an idle actor then burns 3 us of
//     CPU once per park, not 20.
//   kProbeEvery 16: a trapped budget costs at most 1 probe in 16 calls to escape.
//   kWakeSpinMaxNs 150 us, kWakeSpinMinNs 3 us: waking a parked thread on the other vCPU
//     takes 10-60 us here (a halted vCPU is woken by the host); 150 us covers it with a
//     short method. A successful spin sets the budget to at least twice what it took, so
//     one probe lifts a budget trapped at its floor; a timed-out one halves it, so on a
//     machine too loaded to wake the consumer promptly the spin fades to 3 us a call.
//     Measured (2026-12-04, AMD EPYC VM, a C program calling an actor on the other CPU
//     after 1 ms idle each time, medians of 300, old and new library alternating): 84 ->
//     50, 65 -> 35, 93 -> 55 us a call; bench/compare's after-idle rows (20 calls x 5,
//     three alternating runs): different CPUs 55-71 -> 31-42 us, unpinned 39-57 -> 31-40
//     us, the raw futex ping-pong 49-65 us. The price, in the same rows: the caller burns
//     0.05-0.06 CPU seconds a second instead of 0.03-0.04 (the spin through the wake-up).
// What the policy did, back to back on the same loaded VM (load 11-26 on 2 vCPUs,
// bench/compare --only futex, medians of 5): actor round trip on one CPU 67-98 us before,
// 19-21 us after (the raw futex ping-pong: 8-21 us); unpinned 78-110 us before, 21-25
// after. Cross-CPU figures under that load varied 10x between runs of either version.
// Why a waiter whose partner shares its CPU parks rather than yields to it (tried on
// 2026-12-02: each side yielded instead of parking while the other was awake on its CPU,
// which on a quiet CPU would save both futex calls): with other processes runnable on
// that CPU, a yield hands it to them for their time slice, and neither side ran (0.00
// CPU seconds per second on both): same-CPU round trip 12.0 us parking, 1,249-1,341 us
// yielding; after 1 ms idle 13.7 us against 233-301 us; a burst of 1,024 1.22 against
// 1.75-1.95 us per call (bench/compare --only mutex, load 3-5). A parked thread that is
// woken gets the scheduler's wake-up preference; a yielding one does not.
// The one yield: a lane's consumer whose last partner is on its CPU and whose last work
// was fire-and-forget calls yields once before it parks (pinned_lane.h, C1). Such a
// producer does not wait for its calls, so it is most likely still pushing: parked, the
// consumer would be woken by its next push, and the kernel lets the woken thread preempt
// the pusher at once, so the two traded the CPU every few calls (or every call: a
// futex wake, a context switch, a membarrier and a park for each). Yielding, the consumer
// stays runnable, the producer pushes without waking it, and the consumer next runs a
// whole time slice's calls. If nothing came during the yield it parks as before; after a
// call with a future (whose caller waits) it never yields. Measured 2026-12-05 (a C
// program, 65,536 fire-and-forget calls then one with a future, 30 times, both threads
// on one CPU, old and new library alternating): 18.1-18.9 ns a call before, 13.8-13.9
// after (16.6-17.2 with only the consumer's runs of calls, actor_fast_path.cpp, whose
// faster consumer parked more often: 1,778-3,526 context switches a run, 771-834 before,
// 86 with the yield); beside a busy loop on that CPU 30-36 -> 25-28 ns;
// a round trip right after 100 such calls, same CPU, p50 / p99: quiet 5.3 / 8.3-9.1 ->
// 5.2 / 8.9-9.3 us, beside the busy loop 5.6-7.1 / 13.8-2,950 -> 5.3-6.9 / 11.0-14.4 us.
// A waited call (waited_call.h: call_wait with no deadline, made in the ring) counts as
// fire-and-forget here, though its caller waits: its consumer parks with a ring leased,
// so behind a membarrier (pinned_lane.h, C3), and yielding first lets the caller it just
// woke on this CPU take its answer before that. Measured 2026-12-06 (AMD EPYC VM, both
// threads on one CPU, alternating): without the yield after a waited call, the round
// trip 0.98-0.99 -> 1.06-1.10x the futex ping-pong and after 1 ms idle 0.97-1.02 ->
// 1.27-1.34x (bench/compare), p50 5.3 -> 6.5 us (a C driver); beside a busy loop on that
// CPU alike with and without (p50 5.0-7.2 us, p99.9 2.3-3.5 ms, as the call with a future's).
// But the mean is not: beside a busy loop about 1 % of those yields handed the CPU to it
// for its whole slice (1.4-3.9 ms), so 2,000 waited round trips in a row took 14-18 us
// each against 11-15 us for calls with a future (20,000 alternating ones: p50 alike, the
// tail the yield's). So a yield that took over 250 us while at most one call came marks
// its CPU for 10 s, during which consumers there park at once (pinned_lane.cpp,
// kYieldHandedAway): measured 2026-12-06, waited round trips beside a busy loop pinned to
// that CPU 14.1-18.6 -> 14.3-15.5 us (calls with a future 12.1-15.8 beside them), quiet
// alike (6.0-6.3 us); bench/compare --load 2, target 1's round trip on one CPU 1.33-1.35
// -> 1.09-1.12x the futex floor (the rest is C3's membarrier: 0.98-1.01x with
// TETHER_NO_MEMBARRIER=1, at 2.0 against 0.5 us unpinned).
//
// Memory ordering: every field is a hint: relaxed loads and stores, read possibly stale.
// A wrong hint costs only time (a spin that fails, or a park the waker then ends); the
// wait protocols stay correct whatever it says.
// Lifetime: presences are type-stable: a presence returned by acquire() is never freed,
// only reused by a later lane, so a waiter that outlives the lane reads a stale hint and
// nothing worse.
#pragma once

#include <atomic>
#include <cstdint>

namespace tether {

inline constexpr int64_t kWaitSpinMaxNs = 10'000;
inline constexpr int64_t kWaitSpinMinNs = 3'000;
inline constexpr int64_t kIdleSpinMinNs = 3'000;
inline constexpr int64_t kWakeSpinMaxNs = 150'000;
inline constexpr int64_t kWakeSpinMinNs = 3'000;
inline constexpr uint32_t kProbeEvery = 16;

// current_cpu: the CPU the calling thread runs on now (-1 if unknown).
int32_t current_cpu() noexcept;

// A thread that woke a parked waiter on its own CPU says so (woke_waiter_on); the lane
// consumer it is then parks at its next idle look instead of spinning (take_woke_here),
// as the woken thread needs that CPU and a woken thread with a longer time slice than a
// spinning one waits for the spin to end (core/time_slice.h).
void woke_waiter_on(int32_t cpu) noexcept;
[[nodiscard]] bool take_woke_here() noexcept;

// AdaptiveBudget: a spin budget in [min, max] nanoseconds: doubled after a success,
// halved after a timeout. Not thread-safe on its own (see LanePresence for the shared one).
class AdaptiveBudget {
 public:
  static int64_t grown(int64_t ns, int64_t max) noexcept { return ns > max / 2 ? max : ns * 2; }  // no overflow
  static int64_t shrunk(int64_t ns, int64_t min) noexcept { return ns / 2 < min ? min : ns / 2; }
  // after_success: a spin that succeeded after took_ns: at least twice that (so a budget
  // stuck at its floor jumps to what the answers take), at least grown, at most max.
  static int64_t after_success(int64_t ns, int64_t took_ns, int64_t max) noexcept {
    const int64_t twice = took_ns > max / 2 ? max : took_ns * 2;
    const int64_t g = grown(ns, max);
    return g > twice ? g : twice;
  }
  // probe: true for one call in kProbeEvery of the calling counter's owner.
  static bool probe(uint32_t& counter) noexcept { return ++counter % kProbeEvery == 0; }
};

class alignas(64) LanePresence {
 public:
  static constexpr int32_t kWaking = -3;  // was parked; a producer woke it; it has not run since
  static constexpr int32_t kParked = -2;
  static constexpr int32_t kUnknown = -1;

  // acquire: a presence for a new lane (reused or new; never freed). Throws std::bad_alloc.
  static LanePresence* acquire();
  // release: the lane is gone; a later lane may reuse p.
  static void release(LanePresence* p) noexcept;
  // The free list's lock across fork() (core/fork_guard.h).
  static void before_fork();
  static void after_fork_in_parent() noexcept;
  static void after_fork_in_child() noexcept;

  // The consumer's side.
  void consumer_at(int32_t cpu) noexcept { store_if_changed(consumer_cpu_, cpu); }
  // consumer_cpu: where the consumer said it runs (a CPU, kParked, kWaking or kUnknown).
  [[nodiscard]] int32_t consumer_cpu() const noexcept { return consumer_cpu_.load(std::memory_order_relaxed); }
  // consumer_parks: about to park, last seen on cpu (where the kernel most often wakes it).
  void consumer_parks(int32_t cpu) noexcept {
    store_if_changed(parked_on_, cpu);
    store_if_changed(consumer_cpu_, kParked);
  }
  [[nodiscard]] int32_t partner_cpu() const noexcept { return partner_cpu_.load(std::memory_order_relaxed); }

  // A producer's side: it pushed work to the lane from cpu.
  void pusher_at(int32_t cpu) noexcept { store_if_changed(partner_cpu_, cpu); }
  // consumer_woken: the producer that wakes a parked consumer says so before the wake-up
  // (only a parked presence changes: a consumer that already runs has said where).
  void consumer_woken() noexcept {
    int32_t parked = kParked;
    (void)consumer_cpu_.compare_exchange_strong(parked, kWaking, std::memory_order_relaxed);
  }

  // What spinning for the consumer can do for a waiter on my_cpu.
  enum class Spin {
    kNo,       // parked and nobody woke it, or on my_cpu: park at once
    kAnswer,   // it runs on another CPU: spin within wait_budget_ns
    kWake,     // it is being woken and last ran on another CPU: spin within wake_budget_ns
  };
  // worth_spinning: the waiter's first look (it is recorded as the lane's last partner).
  [[nodiscard]] Spin worth_spinning(int32_t my_cpu) noexcept {
    store_if_changed(partner_cpu_, my_cpu);
    const int32_t c = consumer_cpu_.load(std::memory_order_relaxed);
    if (c == kParked) return Spin::kNo;
    if (c == kWaking) {
      const int32_t was = parked_on_.load(std::memory_order_relaxed);
      return my_cpu >= 0 && was >= 0 && was != my_cpu ? Spin::kWake : Spin::kNo;
    }
    return c != my_cpu || my_cpu < 0 ? Spin::kAnswer : Spin::kNo;
  }
  // parked: the consumer parked and nobody has woken it yet.
  [[nodiscard]] bool parked() const noexcept { return consumer_cpu_.load(std::memory_order_relaxed) == kParked; }
  // runs_elsewhere: the consumer runs, or is being woken, on a CPU known and not cpu.
  [[nodiscard]] bool runs_elsewhere(int32_t cpu) const noexcept {
    int32_t c = consumer_cpu_.load(std::memory_order_relaxed);
    if (c == kWaking) c = parked_on_.load(std::memory_order_relaxed);
    return c >= 0 && c != cpu;
  }
  // on_or_waking_on: the consumer runs on cpu or is being woken there (it needs cpu).
  [[nodiscard]] bool on_or_waking_on(int32_t cpu) const noexcept {
    if (cpu < 0) return false;
    const int32_t c = consumer_cpu_.load(std::memory_order_relaxed);
    return c == cpu || (c == kWaking && parked_on_.load(std::memory_order_relaxed) == cpu);
  }
  [[nodiscard]] int64_t wait_budget_ns() const noexcept { return wait_budget_ns_.load(std::memory_order_relaxed); }
  void wait_spin_succeeded() noexcept {
    update(wait_budget_ns_, AdaptiveBudget::grown(wait_budget_ns(), kWaitSpinMaxNs));
  }
  void wait_spin_timed_out() noexcept {
    update(wait_budget_ns_, AdaptiveBudget::shrunk(wait_budget_ns(), kWaitSpinMinNs));
  }
  [[nodiscard]] int64_t wake_budget_ns() const noexcept { return wake_budget_ns_.load(std::memory_order_relaxed); }
  void wake_spin_succeeded(int64_t took_ns) noexcept {
    update(wake_budget_ns_, AdaptiveBudget::after_success(wake_budget_ns(), took_ns, kWakeSpinMaxNs));
  }
  void wake_spin_timed_out() noexcept {
    update(wake_budget_ns_, AdaptiveBudget::shrunk(wake_budget_ns(), kWakeSpinMinNs));
  }

 private:
  static void store_if_changed(std::atomic<int32_t>& a, int32_t v) noexcept {
    if (a.load(std::memory_order_relaxed) != v) a.store(v, std::memory_order_relaxed);  // no line transfer when unchanged
  }
  static void update(std::atomic<int64_t>& budget, int64_t ns) noexcept {
    if (budget.load(std::memory_order_relaxed) != ns) budget.store(ns, std::memory_order_relaxed);
  }

  std::atomic<int32_t> consumer_cpu_{kUnknown};
  std::atomic<int32_t> partner_cpu_{kUnknown};
  std::atomic<int32_t> parked_on_{kUnknown};  // the consumer's CPU when it last parked
  // The budgets: racy read-modify-writes are fine, they are hints.
  std::atomic<int64_t> wait_budget_ns_{kWaitSpinMaxNs};
  std::atomic<int64_t> wake_budget_ns_{kWakeSpinMaxNs};
  LanePresence* next_free_ = nullptr;                    // guarded by the free list's mutex
};

}  // namespace tether
