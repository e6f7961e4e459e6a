#include "core/executor.h"

#include "core/call_outcome.h"
#include "core/control_thread.h"
#include "core/status_error.h"
#include "core/task.h"
#include "core/thread_role.h"

namespace tether {
namespace {

// TaskCall: a task submitted to an executor. A fire-and-forget task keeps its arg; a
// task with a future leaves it in the future's scope, which decides start or cancel.
class TaskCall : public Call {
 public:
  TaskCall(Executor& executor, tether_fn fn, UserArg arg, std::shared_ptr<Scope> future)
      : Call(nullptr), executor_(executor), fn_(fn), arg_(std::move(arg)), future_(std::move(future)) {
    static_assert(sizeof(TaskCall) <= CallPool::kSlotSize, "fits a pool slot");
  }

  void run(Lane& lane) noexcept override {
    CallLedger& ledger = executor_.ledger();
    ledger.leave();
    if (future_) {
      UserArg arg;
      if (!future_->start_call(arg)) return;  // cancelled while queued (counted then)
      ErrorPtr err;
      {
        Task task(future_.get(), lane.name(), /*is_target=*/true, &executor_.task_origin());
        err = run_task(task, [&](tether_task* t) { return fn_(t, arg.get()); });
      }
      arg.reset();
      future_->finish_call_of(executor_, std::move(err));  // the scope counts it
      return;
    }
    Task task(nullptr, lane.name(), /*is_target=*/true, &executor_.task_origin());
    ErrorPtr err = run_task(task, [&](tether_task* t) { return fn_(t, arg_.get()); });
    arg_.reset();
    settle_fire_and_forget(task, std::move(err), ledger, executor_);
  }

  void cancel() noexcept override {
    CallLedger& ledger = executor_.ledger();
    ledger.leave();
    arg_.reset();
    if (future_) {
      future_->cancel();  // counted by the scope, unless it ended (and was counted) before
    } else {
      ledger.cancelled();
    }
  }

 private:
  Executor& executor_;  // outlives the call: the lane's threads hold it alive
  tether_fn fn_;
  UserArg arg_;
  std::shared_ptr<Scope> future_;
};

}  // namespace

Executor::Executor(Options options) : options_(std::move(options)), ledger_(options_.queue_capacity) {}

Executor::~Executor() = default;

std::shared_ptr<Executor> Executor::create(Options options) {
  std::shared_ptr<Executor> executor(new Executor(std::move(options)));
  const Options& o = executor->options_;
  Lane::Options lane{o.name, o.manual ? size_t{0} : size_t{1}, o.stack_size, o.cpu, o.idle_spin_ns, false};
  executor->lane_ = std::make_shared<PinnedLane>(std::move(lane));
  if (!o.manual) {
    try {
      executor->lane_->start(*executor->threads_.get(), executor);
    } catch (...) {
      executor->threads_.join_all();  // nothing is left behind
      throw;
    }
  }
  return executor;
}

std::shared_ptr<Scope> Executor::submit(tether_fn fn, UserArg arg, bool want_future, Deadline room) {
  // The submit holds the executor as a user while it pushes, so the lane cannot close
  // between the check and the push (a task pushed to a closed lane would never run).
  if (!add_user()) {
    ledger_.reject();
    throw StatusError(TETHER_E_SHUTDOWN, "executor '" + options_.name + "' is shutting down");
  }
  struct UserHold {
    Executor* executor;
    ~UserHold() { executor->drop_user(false); }
  } hold{this};

  ledger_.admit_or_throw(room, [&] { return lane_->is_inside(); }, {"executor", options_.name, "queue"});
  std::shared_ptr<Scope> future;
  Call* call;
  try {
    if (want_future) {
      Scope::Options scope_options;
      scope_options.name = options_.name;
      scope_options.serving_lane = lane_.get();
      scope_options.serving_lane_id = lane_->id();
      scope_options.spin_wait = true;
      scope_options.spin_partner = lane_->presence();
      scope_options.threads = &threads_;
      scope_options.ledger = &ledger_;
      future = Scope::pending(std::move(scope_options), std::move(arg));
      call = new TaskCall(*this, fn, UserArg(), future);
    } else {
      call = new TaskCall(*this, fn, std::move(arg), nullptr);
    }
  } catch (...) {
    ledger_.leave();
    throw;
  }
  lane_->push(call);
  return future;
}

bool Executor::add_user() noexcept {
  int64_t n = users_.load(std::memory_order_acquire);
  while (n > 0) {
    if (users_.compare_exchange_weak(n, n + 1, std::memory_order_acq_rel)) return true;
  }
  return false;
}

void Executor::drop_user(bool wait) {
  if (users_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  // The last user: run or cancel what is queued, then let the thread end. (A manual
  // executor shut down when its handle went: release_handle.)
  if (options_.manual) {
    lane_->close();
    return;
  }
  lane_->close();
  const bool inside = this_thread_role().serves(lane_.get()) || ControlThread::is_current();
  if (wait && !inside) {
    threads_.join_all();
  } else {
    threads_.orphan();
  }
}

void Executor::release_handle(bool wait) {
  ledger_.end_handle();
  // A manual executor whose handle is gone can never run again (tether_executor_run needs
  // the handle): it shuts down now, whatever actors still use it. Its owner drains what
  // is queued; anyone else cancels it; later pushes are cancelled (Lane::push), and the
  // actors on it refuse calls with SHUTDOWN (Actor::call), so nothing waits for ever.
  if (options_.manual) {
    lane_->close();  // first: a push that follows sees it and cancels itself
    if (lane_->is_owner()) {
      lane_->drain_here();
    } else {
      (void)lane_->cancel_all_queued();
    }
  }
  drop_user(wait);
}

}  // namespace tether
