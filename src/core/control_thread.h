// ControlThread: the library's own background thread. It finishes what a caller may not
// wait for: joining the threads of objects released from the inside or with _nowait, and
// freeing those objects once their threads are gone. Jobs must not block on user code:
// each one joins only threads that have already finished their work.
//
// Thread safety: post() may be called from any thread, the control thread included.
// The instance is never destroyed (a process may exit while library threads still post
// to it); at exit the thread itself is stopped and joined, so no library thread of ours
// outlives the process's static destructors, and later posts run on the caller.
//
// Nothing here allocates after start(): jobs are intrusive nodes their owners embed, so a
// post from an exiting thread's TLS destructor (where nothing can report a failure) cannot
// fail. The thread itself is started by start(), which every owner of threads calls
// before it creates one (ThreadGroup::spawn): so the thread that needs it gets the
// TETHER_E_THREAD_CREATE, and an exiting thread never has to run a job itself.
#pragma once

#include <condition_variable>
#include <mutex>

#include "core/immortal.h"
#include "platform/platform.h"

namespace tether {

// ControlJob: one queued unit of work. Its owner keeps it alive until run() is called
// and posts it again only after that (one node, one queue entry at a time).
class ControlJob {
 public:
  virtual void run() noexcept = 0;

 protected:
  ~ControlJob() = default;

 private:
  friend class ControlThread;
  ControlJob* next_ = nullptr;  // guarded by the control thread's mutex_ while queued
};

class ControlThread {
 public:
  static ControlThread& instance();

  ControlThread(const ControlThread&) = delete;
  ControlThread& operator=(const ControlThread&) = delete;

  // start: starts the thread if it is not running yet, and returns once it waits for
  // jobs, so no thread of the library is still starting up when the first group thread
  // is made (a fork at that moment would copy the half-made thread's runtime locks, held:
  // ASan's allocator has no fork handler). Throws StatusError (TETHER_E_THREAD_CREATE)
  // when the OS refuses it; nothing else changes then.
  void start();

  // post: queues job to run on the control thread. Never fails and never allocates. If
  // the thread is not running (the process is exiting, or start() was never called), the
  // job runs on the caller: it only joins exited threads.
  void post(ControlJob& job) noexcept;

  // is_current: true on the control thread (a wait there would stall every other job).
  [[nodiscard]] static bool is_current() noexcept;

  // stop_at_exit: runs what is queued, then ends and joins the thread. Called once, by a
  // static destructor when the process exits or the library is unloaded.
  void stop_at_exit();

  // The fork handlers (fork_guard.cpp). In the child the thread does not exist: its jobs
  // (the parent's objects) are left alone for good, and a later start() makes a new one.
  void before_fork();
  void after_fork_in_parent() noexcept;
  void after_fork_in_child() noexcept;

 private:
  template <class T>
  friend T& immortal() noexcept;
  ControlThread() = default;
  void loop();

  std::mutex mutex_;
  std::condition_variable cv_;              // jobs queued, or stopping_
  std::condition_variable looping_cv_;      // looping_ set
  ControlJob* head_ = nullptr;              // guarded by mutex_: FIFO of queued jobs
  ControlJob* tail_ = nullptr;              // guarded by mutex_
  bool started_ = false;                    // guarded by mutex_
  bool looping_ = false;                    // guarded by mutex_: the thread runs loop()
  bool stopping_ = false;                   // guarded by mutex_: posts run on the caller
  platform::Thread thread_{};               // valid once started_
};

}  // namespace tether
