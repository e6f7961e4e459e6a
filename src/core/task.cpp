#include "core/task.h"

#include <cstdio>
#include <cstdlib>

#include <cxxabi.h>

#include <exception>
#include <new>
#include <typeinfo>

#include "core/hot_path.h"
#include "core/hot_tls.h"
#include "core/call_future.h"
#include "core/scope.h"
#include "core/status_error.h"

namespace tether {
namespace task_detail {
TETHER_HOT_TLS constinit thread_local Task* t_current_task = nullptr;
TETHER_HOT_TLS constinit thread_local bool t_thread_may_end = false;
}  // namespace task_detail

TETHER_HOT_PATH Task* Task::current() noexcept { return task_detail::t_current_task; }

bool Task::stop_requested() const noexcept {
  if (scope_ != nullptr && scope_->stop_requested()) return true;
  if (call_ != nullptr && call_->stop_requested()) return true;
  if (origin_->graph_stop != nullptr && origin_->graph_stop->load(std::memory_order_acquire)) return true;
  return origin_->owner_stop != nullptr && origin_->owner_stop->load(std::memory_order_acquire);
}

Scope& Task::scope_for_spawn() {
  if (origin_->graph_node()) {
    throw StatusError(TETHER_E_WRONG_STATE,
                      "a compiled graph's node cannot spawn nested threads: its step ends when it returns");
  }
  if (scope_ != nullptr) return *scope_;
  Scope::Options options;
  options.name = thread_name_;
  options.owner_stop = origin_->owner_stop;
  options.actor = origin_->actor;
  options.threads = origin_->threads;
  std::shared_ptr<Scope> made = Scope::pending(std::move(options), UserArg());
  UserArg none;
  (void)made->start_call(none);  // this task is its running target
  if (call_ != nullptr) call_->adopt_nested(made);
  lazy_scope_ = std::move(made);
  scope_ = lazy_scope_.get();
  unusual_ = true;
  return *scope_;
}


void end_forked_callback() noexcept { std::exit(0); }

void abort_thread_ended(const Task& task) noexcept {
  std::fprintf(stderr,
               "tether: a callback on thread '%s' ended its thread (pthread_exit or cancellation); only a "
               "runner's threads may end so: an executor's or actor's thread cannot leave the work queued "
               "behind it\n",
               task.thread_name().c_str());
  std::abort();
}

ErrorPtr thread_ended_error(const std::string& thread_name) noexcept {
  try {
    return make_error(TETHER_E_UNKNOWN_EXCEPTION, 0, "the callback ended its thread (pthread_exit or cancellation)",
                      thread_name, "abi::__forced_unwind");
  } catch (...) {
    return out_of_memory_error();
  }
}

ErrorPtr task_outcome(const Task& task, int32_t rc) {
  if (task.failure()) return task.failure();
  if (rc == TETHER_OK) return nullptr;
  return make_error(TETHER_E_TASK_FAILED, rc, "task returned " + std::to_string(rc), task.thread_name());
}

ErrorPtr exception_error(const Task& task) noexcept {
  try {
    const std::type_info* type = abi::__cxa_current_exception_type();
    std::string type_name = type != nullptr ? demangle(type->name()) : std::string();
    try {
      throw;
    } catch (const std::exception& e) {
      return make_error(TETHER_E_EXCEPTION, 0, e.what(), task.thread_name(), std::move(type_name));
    } catch (...) {
      return make_error(TETHER_E_UNKNOWN_EXCEPTION, 0, "unknown exception of type " + type_name,
                        task.thread_name(), type_name);
    }
  } catch (...) {
    return out_of_memory_error();
  }
}


}  // namespace tether
