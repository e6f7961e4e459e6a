// ThreadGroup: the OS threads one owner (a runner's scope, an executor, an actor's
// groups) created, and their ends. A thread has ENDED once its exit notice came
// (thread_exit.h): its body, every C++ thread_local destructor of the thread and the
// library's cleanups have run; what is left is the C library's own teardown. Each thread
// is released exactly once after it ended, by whoever claims its entry: the owner's
// blocking join_all() or the control thread. Released means detached on POSIX: the OS
// frees the thread when its teardown is over, and nobody waits for that (on Windows it is
// joined after its notice: platform::release_ended_thread says why).
//
// Why not join: a scope's joiner is woken when its last thread's body ends (Scope), and a
// join then waits a second time, for the kernel's exit (the C library's teardown, a stack
// madvise, the exit system call), where std::thread::join waits once. Its exit notice
// comes right after the wake-up (the library's cleanups), so the joiner finds it, or
// waits a moment for it. Measured (2026-12-07, tether_bench_runner, start + join +
// release of an empty target against a bare std::thread create + join, medians of 7,
// three alternating pairs of runs): 1.08 / 1.15 / 1.08x joined, 0.92 / 0.87 / 0.90x released
// at its exit notice.
// Rust's std::thread::scope does the same: it waits for its threads' closures, not their
// OS exits.
//
// A thread that ends while others of its group still run is released soon after by the
// control thread, so a long-lived scope that keeps spawning short threads keeps no
// ended thread around. The last one is left for join_all(), unless the group was
// orphaned (its owner released without waiting): then the control thread releases it too.
//
// Thread safety: every member may be called from any thread. mutex_ guards every field
// below it. Lifetime: shared; each running thread and each queued control-thread job
// holds a reference, so the group outlives its threads.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/control_thread.h"
#include "platform/platform.h"

namespace tether {

// ThreadOptions: how a library thread is made.
struct ThreadOptions {
  std::string name;       // full name; the OS sees its first 15 bytes
  size_t stack_size = 0;  // 0: platform default
  int cpu = -1;           // -1: no affinity; else the only CPU the thread runs on
};

// unjoined_threads: library threads created and not yet released (joined, or detached
// once ended: ThreadGroup; the control thread aside), for tests that must see every
// thread end before the process ends.
[[nodiscard]] size_t unjoined_threads() noexcept;

// forget_parent_threads: in a forked child, none of the parent's threads exist (fork_guard).
void forget_parent_threads() noexcept;

// fail_thread_creates_after: test hook; the creation after `successes` more fails once
// as if the OS refused it. UINT32_MAX disarms it.
void fail_thread_creates_after(uint32_t successes) noexcept;

// ThreadBody: what a library thread runs. run() throws nothing but abi::__forced_unwind,
// and only where a callback may end its thread (a runner's: let_next_task_end_thread, task.h).
class ThreadBody {
 public:
  virtual ~ThreadBody() = default;
  virtual void run() = 0;
};

// start_os_thread: a new thread running body with asynchronous signals blocked and its
// OS name set. Throws StatusError: TETHER_E_INVALID_ARGUMENT (stack size below the
// minimum), TETHER_E_THREAD_CREATE (the OS refused). The body is destroyed on failure.
// on_exit, when set, runs on the thread after every C++ thread_local of the thread has
// been destroyed (its own thread-local destructors included).
struct ThreadExitHook {
  virtual ~ThreadExitHook() = default;
  virtual void exited(const platform::Thread& self) noexcept = 0;
};
[[nodiscard]] platform::Thread start_os_thread(const ThreadOptions& options, std::unique_ptr<ThreadBody> body,
                                               std::shared_ptr<ThreadExitHook> on_exit);

// os_visible_name: name cut to the 15 bytes Linux keeps, never inside a UTF-8 sequence.
[[nodiscard]] std::string os_visible_name(const std::string& name);

class ThreadGroup : public ThreadExitHook, public std::enable_shared_from_this<ThreadGroup> {
 public:
  ThreadGroup() = default;
  ThreadGroup(const ThreadGroup&) = delete;
  ThreadGroup& operator=(const ThreadGroup&) = delete;

  // spawn: starts body on a new thread of the group. Throws like start_os_thread.
  void spawn(const ThreadOptions& options, std::unique_ptr<ThreadBody> body);

  // join_all: blocks until every thread spawned so far (and any spawned meanwhile by
  // them) has ended, and releases them — but the calling thread, when it is one of the
  // group's: the control thread releases that one once it has ended.
  void join_all();

  // orphan: nobody will call join_all; the control thread releases every thread left.
  void orphan();

  // running: threads spawned and not yet exited.
  [[nodiscard]] size_t running() const;
  // orphaned: orphan() was called.
  [[nodiscard]] bool orphaned() const;

  void exited(const platform::Thread& self) noexcept override;

 private:
  struct Entry {
    platform::Thread thread;
    bool exited;  // its exit notice came: it has ended (see above)
  };
  // ReapJob: the group's one control-thread job, embedded so posting allocates nothing.
  class ReapJob : public ControlJob {
   public:
    explicit ReapJob(ThreadGroup* group) : group_(group) {}
    void run() noexcept override;

   private:
    ThreadGroup* group_;
  };
  void reap() noexcept;  // the job: releases the ended threads until there are none
  // schedule_reap_locked: marks the reap scheduled and keeps the group alive for it.
  void schedule_reap_locked() noexcept;
  // claim_exited_locked: removes one ended entry other than the calling thread's into
  // *out; false when there is none. The caller releases it. Holds mutex_.
  bool claim_exited_locked(platform::Thread* out) noexcept;
  // others_left_locked: an entry other than the calling thread's is left. Holds mutex_.
  bool others_left_locked() const noexcept;

  mutable std::mutex mutex_;
  std::condition_variable cv_;     // signalled when a reap ends, and at an exit notice with end_waiters_
  std::vector<Entry> threads_;     // spawned, not yet claimed for releasing
  size_t running_ = 0;             // spawned, exit notice not yet in
  size_t end_waiters_ = 0;         // join_all callers waiting on cv_ for an exit notice
  bool reap_scheduled_ = false;    // a control-thread job is claiming and releasing
  bool orphaned_ = false;
  ReapJob reap_job_{this};                       // queued while reap_scheduled_
  std::shared_ptr<ThreadGroup> reap_keepalive_;  // guarded by mutex_: set while reap_scheduled_
};

}  // namespace tether
