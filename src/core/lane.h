// Lane: a mailbox and the threads that run it — an executor's one thread, an actor
// group's N threads, or, for a manual executor, whichever thread calls run_manual().
//
// Wait protocol (both sides spin, then park; a wake-up costs a syscall only when the
// other side really parked): a consumer with nothing to do spins for idle_spin_ns, then
// registers in sleepers_ and re-checks the mailbox under mutex_ before waiting on cv_. A
// producer's push exchanges the mailbox tail, then it reads sleepers_; both are seq_cst, so
// either the consumer sees the work or the producer sees the sleeper and notifies
// (taking mutex_ first, so the notify cannot fall between check and wait).
//
// Thread safety: push/open/close/cancel_queued from any thread. Lifetime: shared; each
// lane thread holds the lane and its owner alive until it exits.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "core/call_pool.h"
#include "core/deadline.h"
#include "core/mailbox.h"
#include "core/thread_group.h"

namespace tether {

class Lane;

// Call: one unit of work on a lane. Owned by the mailbox until popped; a canceller that
// claims it (under the consumer token) holds a second reference while it cancels.
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
  [[nodiscard]] uint64_t os_thread_id() const noexcept { return tid_.load(std::memory_order_acquire); }

  // push: queues c for the lane's threads (the lane owns it from now on).
  void push(Call* c) noexcept;
  // open: lets a gated lane's threads start popping.
  void open();
  // close: the threads exit once the mailbox is empty (no more pushes may follow).
  void close();

  // cancel_queued: claims every queued call for which pred(call) holds and cancels it
  // here (args dropped, futures CANCELLED) before returning. Never waits on user code.
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
  // next: the next call to run, waiting as the wait protocol says until the deadline.
  // Null at the deadline or once the lane is closed and empty.
  Call* next(const Deadline& deadline);
  Call* try_pop();
  void execute(Call* c) noexcept;
  void wake_one() noexcept;
  bool work_ready() const noexcept;

  const Options options_;
  const uint64_t id_;
  Mailbox mailbox_;
  alignas(64) std::atomic<uint32_t> sleepers_{0};
  std::atomic<bool> open_;
  std::atomic<bool> closed_{false};
  std::atomic<uint64_t> tid_{0};  // the first thread's gettid(); a manual lane's owner
  std::atomic<bool> running_manual_{false};
  std::mutex mutex_;               // pairs with cv_ for parking only
  std::condition_variable cv_;
};

}  // namespace tether
