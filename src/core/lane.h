// Lane: the queues in front of a set of threads that run them — an executor's one thread,
// an actor group's N threads, or, for a manual executor, whichever thread calls
// run_manual().
//
// What is queued, and in what order it is taken, is the lane's Inbox (inbox.h): a
// mailbox for any Call, and with ONE consumer (an executor's lane, a manual one) the
// producers' rings for fire-and-forget calls. The lane adds the threads that consume it,
// the gate (open), the close, and the parking below.
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

// Thread safety: push/push_fast/open/close/cancel_*/lease_ring from any thread; the
// consumer state (marked, and the inbox's) only by the lane's consumer: its thread, the
// thread in run_manual/drain_here, or the destructor. Lifetime: shared; each lane thread
// holds the lane and its owner alive until it exits; a ring lease holds the lane's owner
// alive.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "core/deadline.h"
#include "core/inbox.h"
#include "core/spin_policy.h"
#include "core/thread_group.h"

namespace tether {

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

  // lease_ring / end_lease: the inbox's (inbox.h).
  [[nodiscard]] CallRing* lease_ring() { return inbox_.lease_ring(); }
  static void end_lease(CallRing& ring) noexcept { Inbox::end_lease(ring); }
  // push_fast: appends call for target to the leased ring (room reserved beforehand with
  // ring.try_reserve(2)), publishes it (P1) and wakes the consumer if it parked (P2).
  void push_fast(CallRing& ring, const FastCall& call, FastTarget& target) noexcept {
    inbox_.push_fast(ring, call, target);
    if (sleepers_.load(std::memory_order_seq_cst) != 0) wake_parked();  // P2
  }

  // open: lets a gated lane's threads start popping.
  void open();
  // close: the threads exit once every source is empty (no more pushes may follow).
  void close();

  // cancel_queued_of / cancel_all_queued: the inbox's (inbox.h): every queued call of
  // owner / every queued call is cancelled before it returns; never waits on user code.
  size_t cancel_queued_of(const void* owner) { return inbox_.cancel_queued_of(owner); }
  size_t cancel_all_queued() { return inbox_.cancel_all_queued(); }

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
  using Work = Inbox::Work;

  // next: the next work to run, waiting as the wait protocol says until the deadline.
  // False at the deadline or once the lane is closed and empty.
  bool next(Work& w, const Deadline& deadline);
  // idle_spin_budget: how long C1 spins now (publishes where the consumer is).
  int64_t idle_spin_budget() noexcept;
  // try_pop / drain_ring: the inbox's, once the lane is open.
  bool try_pop(Work& w) { return open_.load(std::memory_order_acquire) && inbox_.try_pop(w); }
  bool drain_ring() noexcept { return open_.load(std::memory_order_acquire) && inbox_.drain_ring(*this); }
  void execute(Work& w) noexcept { Inbox::run(w, *this); }
  void wake_one() noexcept;
  void wake_parked() noexcept;  // wake_one once sleepers_ was seen set
  bool work_ready() noexcept { return open_.load(std::memory_order_acquire) && inbox_.anything_queued(); }

  const Options options_;
  const uint64_t id_;
  const bool has_rings_;  // one consumer: rings may be leased
  Inbox inbox_;
  alignas(64) std::atomic<uint32_t> sleepers_{0};
  std::atomic<bool> open_;
  std::atomic<bool> closed_{false};
  std::atomic<uint64_t> tid_{0};  // the first thread's gettid(); a manual lane's owner
  std::atomic<bool> running_manual_{false};
  std::mutex mutex_;               // pairs with cv_ for parking only
  std::condition_variable cv_;

  // Consumer state (see Thread safety).
  alignas(64) int64_t idle_budget_ns_;  // C1's adaptive budget (one consumer)
  uint32_t idle_spins_ = 0;              // C1's spins, for the probes
  LanePresence* const presence_;         // one consumer: see "How long C1 spins"
};

}  // namespace tether
