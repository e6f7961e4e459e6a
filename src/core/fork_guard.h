// fork_guard: what fork() leaves of the library in the child.
//
// POSIX lets a child of a multithreaded process do little before exec, and a library must
// not be stricter than that. So: a child forked before the library made any object uses
// it like any process. A child forked from a process with live objects gets
// TETHER_E_FORKED from every handle of the parent's (nothing of the parent's is dropped,
// joined or run there: the threads that owned it do not exist), and new objects it makes
// work. How:
//   - The fork epoch counts the forks between the process that loaded the library and
//     this one. A handle (handle_table.h) and a task (task.h) remember the epoch they were
//     made in; one from an earlier epoch is the parent's.
//   - The library's global locks (fork_guard.cpp lists them, in lock order) are taken by
//     the atfork prepare handler and released after the fork in parent and child, so no
//     thread of the parent's holds one in the child.
//   - The child handler resets what is per process and cannot be the parent's: the
//     control thread (not running in the child: started afresh on first use), the count
//     of unjoined threads, the membarrier registration; the C boundary's own handler
//     leaves the forking thread's actor cache (capi/actor_cache.cpp).
//   - A library thread that forked from a callback is, in the child, the only thread: when
//     the callback returns there, it runs nothing more of the parent's work and ends
//     (lane.cpp, thread_runner.cpp), which ends the child with exit status 0. The child
//     handler marks the task current on the forking thread (Task::mark_forked), so that
//     its runner sees the fork past its common case, one test (task.h); a drop that forks
//     in a run of fire-and-forget calls, with no task current, is checked after it
//     (actor_fast_path.cpp). cpp.Process.ForkInsideACallbackEndsTheChild holds them.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

namespace tether {

namespace fork_detail {
// Memory ordering: relaxed. Written only by the child handler, while the child has one
// thread, before that thread makes any further call; threads made later start after it.
extern std::atomic<uint32_t> g_epoch;
}  // namespace fork_detail

// fork_epoch: inline, it runs on every handle lookup.
[[nodiscard]] inline uint32_t fork_epoch() noexcept { return fork_detail::g_epoch.load(std::memory_order_relaxed); }

// ForkSafeMutex: a global mutex fork() leaves usable: locked by the prepare handler and
// unlocked after the fork on both sides (fork_guard.cpp calls the three). In the child the
// forking thread, its one thread, is the one that holds it (as glibc's malloc does it).
class ForkSafeMutex {
 public:
  void lock() { mutex_.lock(); }
  void unlock() noexcept { mutex_.unlock(); }
  bool try_lock() noexcept { return mutex_.try_lock(); }

  void before_fork() { mutex_.lock(); }
  void after_fork_in_parent() noexcept { mutex_.unlock(); }
  void after_fork_in_child() noexcept { mutex_.unlock(); }

 private:
  std::mutex mutex_;
};

}  // namespace tether
