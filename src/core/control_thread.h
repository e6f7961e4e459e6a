// ControlThread: the library's own background thread. It finishes what a caller may not
// wait for: joining the threads of objects released from the inside or with _nowait, and
// freeing those objects once their threads are gone. Jobs must not block on user code:
// each one joins only threads that have already finished their work.
//
// Thread safety: post() may be called from any thread, the control thread included.
// The instance is never destroyed (a process may exit while library threads still post
// to it); at exit the thread itself is stopped and joined, so no library thread of ours
// outlives the process's static destructors, and later posts run on the caller.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>

#include "platform/platform.h"

namespace tether {

class ControlThread {
 public:
  static ControlThread& instance();

  ControlThread(const ControlThread&) = delete;
  ControlThread& operator=(const ControlThread&) = delete;

  // post: queues job to run on the control thread, started on first use. If the OS
  // refuses that thread, the job runs on the caller instead (it only joins exited threads).
  void post(std::function<void()> job);

  // is_current: true on the control thread (a wait there would stall every other job).
  [[nodiscard]] static bool is_current() noexcept;

  // stop_at_exit: runs what is queued, then ends and joins the thread. Called once, by a
  // static destructor when the process exits or the library is unloaded.
  void stop_at_exit();

  // The fork handlers (fork_guard.cpp). In the child the thread does not exist: its jobs
  // (the parent's objects) are left alone for good, and a later post starts a new one.
  void before_fork();
  void after_fork_in_parent() noexcept;
  void after_fork_in_child() noexcept;

 private:
  ControlThread() = default;
  void loop();

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;  // guarded by mutex_
  bool started_ = false;                    // guarded by mutex_
  bool stopping_ = false;                   // guarded by mutex_: posts run on the caller
  platform::Thread thread_{};                      // valid once started_
};

}  // namespace tether
