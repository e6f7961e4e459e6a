// Task: the context of one user callback while it runs (the C API's tether_task).
// It lives on the stack of the thread that runs the callback and is valid only there,
// only during the callback: Task::current() is how the C boundary checks a tether_task*
// before using it, so a stale or foreign pointer is rejected instead of dereferenced.
//
// Thread safety: touched only by the thread running the callback.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "core/error.h"
#include "core/forced_unwind.h"
#include "core/fork_guard.h"
#include "core/task_origin.h"
#include "core/user_arg.h"
#include "core/hot_tls.h"
#include "tether/tether.h"

namespace tether {

class CallFuture;
class Scope;
class ThreadGroup;

class Task {
 public:
  using Origin = TaskOrigin;
  // A runner's threads and executor tasks have a scope; an actor call with a future has
  // its CallFuture instead, and a fire-and-forget call nothing; either gets a scope when
  // it spawns a nested thread (lazy_scope()).

  // origin: outlives the task (task_origin.h).
  Task(Scope* scope, const std::string& thread_name, bool is_target, const Origin* origin = &kNoOrigin) noexcept
      : scope_(scope), thread_name_(thread_name), is_target_(is_target), epoch_(fork_epoch()), origin_(origin) {}
  // A call with a future (the target of its CallFuture, alive while the task runs).
  Task(CallFuture& call, const std::string& thread_name, const Origin* origin) noexcept
      : scope_(nullptr), call_(&call), thread_name_(thread_name), is_target_(true), epoch_(fork_epoch()), origin_(origin) {}
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  // result_slot: where a call without a future that is waited for keeps its result.
  void set_result_slot(UserArg* slot) noexcept { result_slot_ = slot; }
  [[nodiscard]] UserArg* result_slot() const noexcept { return result_slot_; }

  [[nodiscard]] Scope* scope() const noexcept { return scope_; }
  // call: the call with a future this task runs, whose result it sets; null otherwise.
  [[nodiscard]] CallFuture* call() const noexcept { return call_; }
  [[nodiscard]] const Origin& origin() const noexcept { return *origin_; }
  [[nodiscard]] bool stop_requested() const noexcept;

  // scope_for_spawn: the scope nested threads join; a call without one gets one made now
  // (RUNNING, this task its target), which its runner must then finish; a call with a
  // future then ends when that scope does (CallFuture::adopt_nested). Throws
  // StatusError(TETHER_E_WRONG_STATE) in a compiled graph's node, std::bad_alloc.
  [[nodiscard]] Scope& scope_for_spawn();
  [[nodiscard]] const std::shared_ptr<Scope>& lazy_scope() const noexcept { return lazy_scope_; }
  [[nodiscard]] const std::string& thread_name() const noexcept { return thread_name_; }
  // is_target: the runner's target (it alone fills the result slot).
  [[nodiscard]] bool is_target() const noexcept { return is_target_; }
  // from_parent_process: the task began before a fork() and this is the child (fork_guard.h).
  [[nodiscard]] bool from_parent_process() const noexcept { return epoch_ != fork_epoch(); }

  // record_failure: the task fails with e even if it then returns OK; a later record wins.
  void record_failure(ErrorPtr e) noexcept {
    failure_ = std::move(e);
    unusual_ = true;
  }
  [[nodiscard]] const ErrorPtr& failure() const noexcept { return failure_; }
  // unusual: the callback did something its runner must look at past the common case: it
  // recorded a failure, made a scope for nested threads (scope_for_spawn), or forked and
  // returns in the child (mark_forked, by the fork handler). One byte: the common case
  // (a callback that returned OK and did none of these) is one test.
  [[nodiscard]] bool unusual() const noexcept { return unusual_; }
  // mark_forked: the fork child handler's, for the task current on the forking thread.
  void mark_forked() noexcept { unusual_ = true; }

  // current: the task whose callback runs on this thread now, or null.
  [[nodiscard]] static Task* current() noexcept;

  [[nodiscard]] tether_task* as_c() noexcept { return reinterpret_cast<tether_task*>(this); }
  [[nodiscard]] static Task* from_c(const tether_task* t) noexcept {
    return reinterpret_cast<Task*>(const_cast<tether_task*>(t));
  }

 private:
  friend class CurrentTask;
  Scope* scope_;
  CallFuture* call_ = nullptr;
  const std::string& thread_name_;
  // The two flags apart: side by side, g++ 12 stored their constant initial bytes as one
  // 16-bit word loaded from .rodata (its tuning avoids 16-bit immediates), a page a call
  // after an idle spell touched for nothing else (core/hot_path.h).
  bool is_target_;
  uint32_t epoch_;  // the fork epoch the task began in
  bool unusual_ = false;
  const Origin* origin_;
  ErrorPtr failure_;
  std::shared_ptr<Scope> lazy_scope_;
  UserArg* result_slot_ = nullptr;
};

namespace task_detail {
extern TETHER_HOT_TLS constinit thread_local Task* t_current_task;  // see Task::current
extern TETHER_HOT_TLS constinit thread_local bool t_thread_may_end;  // see let_next_task_end_thread
}  // namespace task_detail

// CurrentTask: makes task current on this thread for its lifetime (callbacks may nest).
// Inline: it wraps every callback.
class CurrentTask {
 public:
  explicit CurrentTask(Task& task) noexcept : previous_(task_detail::t_current_task) {
    task_detail::t_current_task = &task;
  }
  ~CurrentTask() { task_detail::t_current_task = previous_; }
  CurrentTask(const CurrentTask&) = delete;
  CurrentTask& operator=(const CurrentTask&) = delete;

 private:
  Task* previous_;
};

// end_forked_callback: a callback forked and returned in the child: nothing more of the
// parent's work may run there (its locks, its other threads do not exist), so the child
// process ends here, as by exit(0).
[[noreturn]] void end_forked_callback() noexcept;

// task_outcome: the error of a callback that returned rc (null when it succeeded).
[[nodiscard]] ErrorPtr task_outcome(const Task& task, int32_t rc);

// exception_error: the error for the exception being handled (call inside a catch).
[[nodiscard]] ErrorPtr exception_error(const Task& task) noexcept;

// Ending its thread from a callback (pthread_exit, thread cancellation) unwinds the stack
// with abi::__forced_unwind, which may not be swallowed (glibc aborts). Only a runner's
// thread may end so: its Scope::Participant allows it for its callback's run_task (not
// for callbacks nested in that one) and reports the failure on the way out. Any other
// library thread runs work it owes others (an executor's queue, an actor's pinned state)
// and has no way to go on without it: that is reported on stderr, then the process
// aborts, rather than let the queue behind it hang unseen.
inline void let_next_task_end_thread() noexcept { task_detail::t_thread_may_end = true; }
[[noreturn]] void abort_thread_ended(const Task& task) noexcept;
// thread_ended_error: the error of a runner thread whose callback ended the thread.
[[nodiscard]] ErrorPtr thread_ended_error(const std::string& thread_name) noexcept;

// take_thread_may_end: let_next_task_end_thread's permission, consumed: callbacks nested
// in the one it is for may not end the thread.
[[nodiscard]] inline bool take_thread_may_end() noexcept {
  const bool may_end_thread = task_detail::t_thread_may_end;
  task_detail::t_thread_may_end = false;
  return may_end_thread;
}

// run_current_task_allowing: run_current_task (below) with the permission taken
// beforehand, for calls that share one Task and take it once for all (Actor::run_fast:
// only a runner's own callback is ever given it, so theirs is false; taking it once saves
// a thread-local's load and store a call).
template <class Invoke>
[[nodiscard]] TETHER_CATCHES_FORCED_UNWIND bool run_current_task_allowing(Task& task, bool may_end_thread,
                                                                          Invoke&& invoke, ErrorPtr& err) {
  int32_t rc;
  try {
    rc = invoke(task.as_c());
  } catch (abi::__forced_unwind&) {
    if (!may_end_thread) abort_thread_ended(task);
    throw;
  } catch (...) {
    if (task.from_parent_process()) end_forked_callback();
    err = exception_error(task);
    return false;
  }
  // The common case, inline. A callback that forked returns in the child with its task
  // marked (fork_guard.cpp), so the fork is seen past this test.
  if (rc == TETHER_OK && !task.unusual()) [[likely]] return true;
  if (task.from_parent_process()) end_forked_callback();
  if (rc == TETHER_OK && !task.failure()) return true;
  try {
    err = task_outcome(task, rc);
  } catch (...) {  // only bad_alloc is possible: keep "it failed" rather than lose it
    err = task.failure() ? task.failure() : exception_error(task);
  }
  return err == nullptr;
}

// run_current_task: runs invoke(task.as_c()) as the callback of task, which the caller
// has made current (CurrentTask), and sets err to the task's error; true when there is
// none. A C++ exception out of the callback becomes TETHER_E_EXCEPTION /
// TETHER_E_UNKNOWN_EXCEPTION here: nothing escapes but the forced unwind of a callback
// that ends a runner's thread (let_next_task_end_thread above). Calls that share one
// Task (a run of fire-and-forget calls: Actor::run_fast) make it current once.
template <class Invoke>
[[nodiscard]] TETHER_CATCHES_FORCED_UNWIND bool run_current_task(Task& task, Invoke&& invoke, ErrorPtr& err) {
  return run_current_task_allowing(task, take_thread_may_end(), std::forward<Invoke>(invoke), err);
}

// run_task: run_current_task with task made current for the callback alone; returns the
// task's error, null on success.
template <class Invoke>
[[nodiscard]] TETHER_CATCHES_FORCED_UNWIND ErrorPtr run_task(Task& task, Invoke&& invoke) {
  CurrentTask current(task);
  ErrorPtr err;
  (void)run_current_task(task, std::forward<Invoke>(invoke), err);
  return err;
}

}  // namespace tether
