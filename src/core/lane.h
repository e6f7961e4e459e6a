// Lane: the queues in front of a set of threads that run them, in two kinds:
//   - PinnedLane (pinned_lane.h): ONE consumer: an executor's thread, an actor's default
//     group or any group of one thread, or, for a manual executor, whichever thread calls
//     run_manual(). It has the producers' rings for fire-and-forget calls, an adaptive
//     idle spin and a one-consumer wait protocol.
//   - SharedLane (shared_lane.h): N consumers (an actor group of N > 1 threads): the
//     mailbox alone, a fixed idle spin and a counting wait protocol.
// Lane::make picks the kind from Options::threads.
//
// What is queued, and in what order it is taken, is the lane's Inbox (inbox.h). This base
// adds what both kinds share: the threads that consume it, the gate (open), the close,
// and the producers' side of parking (push, then wake a parked consumer). How a consumer
// waits, and so how sleepers_ counts and what a wake-up must do, is the kind's: each
// writes down its wait protocol (C for consumer steps, P for producer steps) beside its
// code.
//
// Thread safety: push/open/close/cancel_* from any thread; the consumer state (the
// inbox's, and the kind's) only by the lane's consumers. Lifetime: shared; each lane
// thread holds the lane and its owner alive until it exits.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "core/cpu_relax.h"
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

  // make: a PinnedLane for threads <= 1, else a SharedLane.
  [[nodiscard]] static std::shared_ptr<Lane> make(Options options);

  virtual ~Lane();  // cancels calls still queued (a manual lane nobody ran)
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

  // presence: where a PinnedLane's consumer runs, for waiters on its calls; null for a
  // SharedLane. Type-stable (core/spin_policy.h): a waiter may keep it.
  [[nodiscard]] virtual LanePresence* presence() const noexcept = 0;

  // push: queues c for the lane's threads (the lane owns it from now on).
  void push(Call* c) noexcept;

  // open: lets a gated lane's threads start popping.
  void open();
  // close: the threads exit once every source is empty (no more pushes may follow).
  void close();

  // cancel_queued_of / cancel_all_queued: the inbox's (inbox.h): every queued call of
  // owner / every queued call is cancelled before it returns; never waits on user code.
  size_t cancel_queued_of(const void* owner) { return inbox_.cancel_queued_of(owner); }
  size_t cancel_all_queued() { return inbox_.cancel_all_queued(); }

  // drain_here: runs what is queued on the calling thread, then returns.
  void drain_here();

 protected:
  using Work = Inbox::Work;

  Lane(Options options, bool one_consumer);

  // serve: one lane thread's loop, until the lane is closed and empty.
  virtual void serve() noexcept = 0;
  // wake_parked: P3/P4 of the kind's protocol, once a producer saw sleepers_ set (P2).
  virtual void wake_parked() noexcept = 0;

  // wake_one: P2, after a publication whose fence (or seq_cst exchange) the kind's
  // protocol pairs with its consumer's announcement.
  void wake_one() noexcept;
  // take: what both kinds' next() does first: kWork (w holds it), kClosed (closed and
  // empty: the consumer may leave), kRetry (a producer is between its exchange and its
  // link: wait_for_link, then try again), kNothing (go on to C1, the spin).
  enum class Take { kWork, kClosed, kRetry, kNothing };
  Take take(Work& w);
  // wait_for_link: between two kRetry takes. A producer that runs finishes its push within
  // nanoseconds: pause (SpinWait: ~50 us of pauses, then yields). One that shares this CPU
  // (producer_here) cannot finish until this thread lets it: yield at once. Never a yield
  // first on a loaded machine: there a yield hands the CPU to another process for its
  // time slice (measured 2026-12-04, two busy processes beside a caller with 1,024 calls
  // in flight to an actor on the other CPU: ~3 yields a burst, each burst ~4 ms, 3.9 us
  // a call; the quiet machine's 0.3 us).
  static void wait_for_link(SpinWait& spin, bool producer_here) noexcept;
  // try_pop: the inbox's, once the lane is open.
  bool try_pop(Work& w) { return open_.load(std::memory_order_acquire) && inbox_.try_pop(w); }
  void execute(Work& w) noexcept { Inbox::run(w, *this); }
  bool work_ready() noexcept { return open_.load(std::memory_order_acquire) && inbox_.anything_queued(); }
  bool closed_relaxed() const noexcept { return closed_.load(std::memory_order_relaxed); }
  // closed_and_empty: a consumer may leave for good.
  bool closed_and_empty() noexcept { return closed_.load(std::memory_order_acquire) && !inbox_.anything_queued(); }
  // consumer_tid_once: the first consumer thread records its OS id (os_thread_id).
  void consumer_tid_once() noexcept;

  const Options options_;
  const uint64_t id_;
  Inbox inbox_;
  // The consumers' announcement that they may sleep (the kind's protocol says how it
  // counts); producers read it after publishing, and wake only when it is set.
  alignas(64) std::atomic<uint32_t> sleepers_{0};
  std::atomic<bool> open_;
  std::atomic<bool> closed_{false};
  // A pinned lane's: the producer that wakes its consumer (P3) says whether it pushed a
  // waited call (core/wake_preemption.h; a relaxed hint, on the line P3 writes anyway).
  std::atomic<bool> woken_for_waited_call_{false};
  std::atomic<uint64_t> tid_{0};  // the first thread's OS id; a manual lane's owner
  std::mutex mutex_;               // pairs with cv_: the shared kind's parking (a pinned lane parks on sleepers_)
  std::condition_variable cv_;

 private:
  class Worker;
};

}  // namespace tether
