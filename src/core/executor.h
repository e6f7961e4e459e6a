// Executor: one lane with one OS thread for life (or, manual, the thread that first runs
// it), plus the ledger of its own tasks. Actors may share it: each holds it as a user,
// and the lane closes only when the last user (its handle, its actors) has gone.
//
// Thread safety: every member may be called from any thread. users_ is atomic; the
// lane and the ledger are thread-safe themselves.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "core/call_ledger.h"
#include "core/deadline.h"
#include "core/lazy_thread_group.h"
#include "core/pinned_lane.h"
#include "core/scope.h"
#include "core/thread_group.h"
#include "core/user_arg.h"

namespace tether {

class Executor : public std::enable_shared_from_this<Executor> {
 public:
  struct Options {
    std::string name = "tether-exec";
    int cpu = -1;
    size_t queue_capacity = 0;
    size_t stack_size = 0;
    int64_t idle_spin_ns = 20000;
    bool manual = false;
  };

  // create: the executor with its thread started (none if manual). Throws StatusError.
  static std::shared_ptr<Executor> create(Options options);
  ~Executor();

  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  [[nodiscard]] PinnedLane& lane() noexcept { return *lane_; }
  [[nodiscard]] CallLedger& ledger() noexcept { return ledger_; }
  [[nodiscard]] const Options& options() const noexcept { return options_; }

  // submit: queues fn(task, arg); with want_future, returns the call's scope (its future).
  // Throws StatusError: TETHER_E_QUEUE_FULL / TETHER_E_TIMEOUT (per deadline),
  // TETHER_E_SHUTDOWN. arg is dropped before a failing submit returns.
  std::shared_ptr<Scope> submit(tether_fn fn, UserArg arg, bool want_future, Deadline room);

  // add_user: an actor lives on this executor. False if it is already shutting down.
  [[nodiscard]] bool add_user() noexcept;
  // drop_user: an actor (or the handle) is gone; the last one closes the lane. With
  // wait, the caller joins the thread; otherwise the control thread does.
  void drop_user(bool wait);

  // closed: the last user (the handle, or the last actor) has gone: the thread is ending.
  [[nodiscard]] bool closed() const noexcept { return users_.load(std::memory_order_acquire) == 0; }

  // release_handle: the handle's end (see tether_executor_release).
  void release_handle(bool wait);

  // task_origin: its tasks' (nested threads join its group).
  [[nodiscard]] const TaskOrigin& task_origin() const noexcept { return task_origin_; }

  // join_threads: blocks until the executor's thread has exited and been joined.
  void join_threads() { threads_.join_all(); }

 private:
  explicit Executor(Options options);

  const Options options_;
  alignas(64) CallLedger ledger_;  // where a line starts (call_ledger.h)
  std::shared_ptr<PinnedLane> lane_;
  LazyThreadGroup threads_;  // made at create: the lane's threads are its first
  const TaskOrigin task_origin_{nullptr, 0, &threads_};
  std::atomic<int64_t> users_{1};  // the handle + every actor on it; 0 = shutting down
};

}  // namespace tether
