// Lane: the queues in front of a set of threads that run them — an executor's one thread,
// an actor group's N threads, or, for a manual executor, whichever thread calls
// run_manual().
//
// Sources: every lane has a mailbox (any Call, from any thread). A lane with ONE consumer
// (an executor's, a manual one) also has up to kLaneRings rings, each leased by one
// producer thread for its fire-and-forget calls (lease_ring, push_fast): no atomic
// read-modify-write per call. The consumer merges the sources in program order as
// source_marks.h explains, in batches, a source at a time.
//
// Wait protocol (both sides spin, then park; a wake-up costs a syscall only when the
// other side really parked). sleepers_ is the consumer's announcement that it may sleep:
// with one consumer a flag (0 awake, 1 announced), with several a count of announcers.
//
//   consumer (next)                          producer (push, push_fast, wake_parked)
//   C1 nothing to pop: spin (policy below)   P1 publish the call (mailbox: seq_cst
//   C2 announce: sleepers_ = 1 (or +1)          exchange; ring: release store of its
//   C3 full fence (heavy_fence if rings)        count, then light_fence)
//   C4 lock mutex_                           P2 load sleepers_; 0: done, no syscall
//   C5 work or closed?  -> no wait, go to C8 P3 one consumer: seq_cst fence, then
//   C6 one consumer: sleepers_ == 0?            exchange(sleepers_, 0); it was 0: done
//      -> no wait, go to C8                  P4 lock and unlock mutex_, notify_one
//   C7 cv_.wait (unlocks atomically)
//   C8 sleepers_ = 0 (or -1); back to C1, which pops first
//
// Why no wake-up is lost (one consumer): suppose the consumer waits in C7 while call X
// is published. Its C2 store and X's P1 form a Dekker pair with C3 and P1's fence, so
// either C5 saw X (no wait), or X's producer read the announcement in P2 and reaches P3.
// If its P3 cleared the announcement after C6 read it, its P4 lock comes after C7 unlocked,
// so the notify reaches the waiter. If P3 came before C6's read, C6 saw 0 and did not wait.
// If P3 came before C2 in sleepers_'s order (a producer delayed since it saw an EARLIER
// announcement), P3's fence orders P1 before C2's fence, so C5 saw X. If P3 found 0, the
// producer that cleared it, or the consumer in C8, is in one of these same cases.
// C6 is what an earlier version lacked: a delayed producer cleared a fresh announcement
// and gave its notify before the consumer locked, and the consumer then waited with
// sleepers_ == 0, so no later producer woke it (the executor stall under Go bursts).
// Several consumers: P3 is skipped, every producer that sees a count notifies one waiter,
// and the Dekker pair alone decides (a notified waiter is no longer a waiter, so two
// notifies reach two threads).
//
// How long C1 spins (core/spin_policy.h). One consumer: not at all when the lane's last
// waiter runs on this CPU (spinning would only delay the thread that will push), else
// within an adaptive budget (idle_budget_ns_, between kIdleSpinMinNs and idle_spin_ns:
// doubled when work arrives during a spin, halved when the spin times out; every
// kProbeEvery-th spin is a full one). The consumer
// publishes its CPU in presence_ at C1 and after C8, and kParked before C2: hints for
// waiters, outside the protocol (a stale one costs time, never a wake-up). Several
// consumers: idle_spin_ns, as set.

// Cancelling queued calls (cancel_queued) reaches every call not yet started while the
// consumer may be blocked forever in user code. Mailbox: under the consumer token, as
// every pop. Rings: the consumer steps past an entry (a store of its position), makes a
// light_fence(), and reads cancelling_; a canceller holds the token, sets cancelling_,
// makes a heavy_fence(), then reads the consumer's position and claims entries beyond it.
// Either the canceller sees the step (and leaves that entry alone), or the consumer sees
// cancelling_ and takes the token before using the entry (and finds it claimed).
//
// Thread safety: push/push_fast/open/close/cancel_queued/lease_ring from any thread; the
// consumer state (marked) only by the lane's consumer: its thread, the thread in
// run_manual/drain_here, or the destructor. Lifetime: shared; each lane thread holds the
// lane and its owner alive until it exits; a ring lease holds the lane's owner alive.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "core/asymmetric_fence.h"
#include "core/call_pool.h"
#include "core/call_ring.h"
#include "core/chaos.h"
#include "core/deadline.h"
#include "core/mailbox.h"
#include "core/spin_policy.h"
#include "core/thread_group.h"

namespace tether {

class Lane;

// Call: one unit of work on a lane. Owned by the lane until popped; a canceller that
// claims it holds it (a mailbox canceller, under the consumer token, takes a second
// reference) while it cancels.
class Call : public MailboxNode {
 public:
  explicit Call(const void* owner) noexcept : owner_(owner) {}
  virtual ~Call() = default;

  // Calls come from the CallPool: a steady stream of them allocates nothing.
  static void* operator new(size_t size) { return CallPool::allocate(size); }
  static void operator delete(void* p) noexcept { CallPool::free(p); }
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;

  // run: executes the work on a lane thread (not called once claimed).
  virtual void run(Lane& lane) noexcept = 0;
  // cancel: the work never runs: drop its arg, complete its future CANCELLED.
  virtual void cancel() noexcept = 0;

  // owner: the actor the call belongs to; null for an executor's own task.
  [[nodiscard]] const void* owner() const noexcept { return owner_; }

 private:
  friend class Lane;
  void add_ref() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
  void unref() noexcept {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  const void* owner_;
  std::atomic<int> refs_{1};
  bool claimed_ = false;  // guarded by the mailbox's consumer token
};

// FastTarget: what runs the fast calls of a ring (an actor). It stays alive while any of
// its calls is queued: it counts them as accepted until run_fast or cancel_fast returns.
class FastTarget {
 public:
  // run_fast: runs call on the lane's consumer.
  virtual void run_fast(Lane& lane, const FastCall& call) noexcept = 0;
  // cancel_fast: the call never runs (claimed by a canceller, or its lane ended).
  virtual void cancel_fast(const FastCall& call) noexcept = 0;
  // fast_owner: what owner() is for its calls, as cancel_queued's predicate sees them.
  [[nodiscard]] virtual const void* fast_owner() const noexcept = 0;

 protected:
  ~FastTarget() = default;
};

class Lane : public std::enable_shared_from_this<Lane> {
 public:
  struct Options {
    std::string name;          // the threads' name
    size_t threads = 1;        // 0: manual (run by run_manual)
    size_t stack_size = 0;
    int cpu = -1;
    int64_t idle_spin_ns = 20000;
    bool gated = false;        // threads start popping only after open()
  };

  explicit Lane(Options options);
  ~Lane();  // cancels calls still queued (a manual lane nobody ran)
  Lane(const Lane&) = delete;
  Lane& operator=(const Lane&) = delete;

  // start: creates the threads into group; keepalive is held by each thread (the lane's
  // owner). Throws StatusError; on failure the threads made so far exit (close()).
  void start(ThreadGroup& group, std::shared_ptr<void> keepalive);

  [[nodiscard]] const std::string& name() const noexcept { return options_.name; }
  // id: unique for the process's life (never reused, unlike an address).
  [[nodiscard]] uint64_t id() const noexcept { return id_; }
  // is_inside: the calling thread is one that runs this lane's calls (a manual lane's
  // owner counts also outside run).
  [[nodiscard]] bool is_inside() const noexcept;
  [[nodiscard]] size_t thread_count() const noexcept { return options_.threads; }
  [[nodiscard]] bool manual() const noexcept { return options_.threads == 0; }
  [[nodiscard]] bool closed() const noexcept { return closed_.load(std::memory_order_acquire); }
  [[nodiscard]] uint64_t os_thread_id() const noexcept { return tid_.load(std::memory_order_acquire); }

  // presence: where the lane's one consumer runs, for waiters on its calls; null with
  // several consumers. Type-stable (core/spin_policy.h): a waiter may keep it.
  [[nodiscard]] LanePresence* presence() const noexcept { return presence_; }

  // push: queues c for the lane's threads (the lane owns it from now on).
  void push(Call* c) noexcept;

  // lease_ring: a ring for the calling producer thread's fast calls, or null when none is
  // free (or the lane has several consumers). The caller alone appends to it until
  // end_lease. Throws std::bad_alloc.
  [[nodiscard]] CallRing* lease_ring();
  static void end_lease(CallRing& ring) noexcept { ring.end_lease(); }
  // push_fast: appends call for target to the leased ring (room reserved beforehand with
  // ring.try_reserve(2)), publishes it and wakes the consumer if it parked.
  void push_fast(CallRing& ring, const FastCall& call, FastTarget& target) noexcept {
    // Only the rings made so far can hold calls that happened before this one: rings are
    // made in slot order and counted before anyone can see them (lease_ring), and what
    // made a ring happened before anything published through it. Relaxed suffices: a
    // call published before this one started carries that count with it.
    const size_t rings = ring_count_.load(std::memory_order_relaxed);
    ring.append_marks([this](size_t s) {
      return static_cast<uint32_t>(published_[s].value.load(std::memory_order_acquire));
    }, rings < kLaneRings ? rings : kLaneRings);
    ring.append_fast(call, &target);
    ring.publish();
    chaos_point();
    light_fence();  // P1: pairs with the heavy_fence of a consumer about to park (C3)
    if (sleepers_.load(std::memory_order_seq_cst) != 0) wake_parked();  // P2
  }

  // open: lets a gated lane's threads start popping.
  void open();
  // close: the threads exit once every source is empty (no more pushes may follow).
  void close();

  // cancel_queued: claims every queued call for which pred(call) holds and cancels it
  // here (args dropped, futures CANCELLED) before returning. A fast call is shown to pred
  // as a Call whose owner() is its target's fast_owner(). Never waits on user code.
  size_t cancel_queued(const std::function<bool(const Call&)>& pred);

  // run_manual: a manual lane's loop on the calling thread, which becomes its owner for
  // good. TETHER_OK at the deadline, TETHER_E_SHUTDOWN once closed, TETHER_E_WRONG_STATE
  // from another thread than the owner or from inside a task of this lane.
  [[nodiscard]] int32_t run_manual(Deadline deadline);
  // is_owner: the calling thread drives this manual lane.
  [[nodiscard]] bool is_owner() const noexcept;
  // drain_here: runs what is queued on the calling thread, then returns.
  void drain_here();

 private:
  class Worker;
  // Work: what the consumer took: a Call, or a fast call and its target.
  struct Work {
    Call* call = nullptr;
    FastTarget* target = nullptr;
    FastCall fast{};
  };
  // A counter on a cache line of its own.
  struct alignas(64) Counter {
    std::atomic<uint64_t> value{0};
  };

  // next: the next work to run, waiting as the wait protocol says until the deadline.
  // False at the deadline or once the lane is closed and empty.
  bool next(Work& w, const Deadline& deadline);
  // idle_spin_budget: how long C1 spins now (publishes where the consumer is).
  int64_t idle_spin_budget() noexcept;
  // drain_ring: the consumer's hot loop: runs up to a batch of the calls queued in the
  // ring being drained, straight from its entries. False when it ran none (the caller
  // takes next(): another source, marks to wait for, or the wait).
  bool drain_ring() noexcept;
  void build_up(CallRing& ring) noexcept;   // drain_ring's convoy guard (see lane.cpp)
  bool work_elsewhere(size_t source) noexcept;  // another source of the lane has calls
  bool try_pop(Work& w);
  bool pop_shared(Work& w);                         // several consumers: the mailbox alone
  bool pop_source(size_t s, Work& w, size_t& blocked);
  bool pop_mailbox(Work& w, size_t& blocked);
  bool pop_ring(size_t s, Work& w, size_t& blocked);
  // step_ring: the consumer steps past the entry it peeked (see cancel_queued).
  void step_ring(CallRing& ring) noexcept {
    CallRing::Block* left = ring.step();
    consumed_[ring.source()] = ring.consumed();
    light_fence();  // pairs with cancel_queued's heavy_fence
    if (cancelling_.load(std::memory_order_acquire)) [[unlikely]] {
      meet_canceller(ring, left);
    } else if (left != nullptr) [[unlikely]] {
      ring.recycle(left);
    }
  }
  void meet_canceller(CallRing& ring, CallRing::Block* left) noexcept;
  void execute(Work& w) noexcept;
  void wake_one() noexcept;
  void wake_parked() noexcept;  // wake_one once sleepers_ was seen set
  bool work_ready() noexcept;
  bool anything_queued() noexcept;
  [[nodiscard]] SourceMarks read_marks() const noexcept;
  void cancel_everything() noexcept;  // the destructor: nobody else is left

  const Options options_;
  const uint64_t id_;
  const bool has_rings_;  // one consumer: rings may be leased
  Mailbox mailbox_;
  std::mutex push_mutex_;  // with rings: orders mailbox pushes with their published count
  Counter published_[kLaneSources];                     // per source
  std::atomic<CallRing*> rings_[kLaneRings] = {};       // made at their first lease
  std::atomic<uint32_t> ring_count_{0};                 // rings made
  alignas(64) std::atomic<bool> cancelling_{false};     // a canceller walks the rings
  alignas(64) std::atomic<uint32_t> sleepers_{0};
  std::atomic<bool> open_;
  std::atomic<bool> closed_{false};
  std::atomic<uint64_t> tid_{0};  // the first thread's gettid(); a manual lane's owner
  std::atomic<bool> running_manual_{false};
  std::mutex mutex_;               // pairs with cv_ for parking only
  std::condition_variable cv_;

  // Consumer state (see Thread safety).
  alignas(64) uint64_t consumed_[kLaneSources] = {};  // per source
  size_t current_ = 0;                                // the source being drained
  uint32_t batch_ = 0;                                // taken from it in a row
  bool caught_up_ = false;                            // drain_ring last emptied its ring
  int64_t idle_budget_ns_;                            // C1's adaptive budget (one consumer)
  uint32_t idle_spins_ = 0;                           // C1's spins, for the probes
  LanePresence* const presence_;                      // one consumer: see "How long C1 spins"
};

}  // namespace tether
