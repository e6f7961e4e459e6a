// tether_task_*: callback-only calls on the task running on this thread.
#include "capi/boundary.h"
#include "core/call_future.h"
#include "core/hot_path.h"
#include "core/scope.h"
#include "core/user_arg.h"

using namespace tether;
using namespace tether::capi;

namespace {

std::string failure_message(const char* message, const char* fallback) {
  return message != nullptr ? std::string(message) : std::string(fallback);
}

}  // namespace

extern "C" {

TETHER_API tether_status tether_task_fail(tether_task* t, int64_t user_code, const char* message) {
  const tether_status rc = guarded([&] {
    Task& task = current_task(t);
    task.record_failure(make_error(TETHER_E_TASK_FAILED, user_code, failure_message(message, "task failed"),
                                   task.thread_name()));
    return TETHER_OK;
  });
  return rc == TETHER_OK ? TETHER_E_TASK_FAILED : rc;
}

TETHER_API tether_status tether_task_fail_with(tether_task* t, int32_t code, int64_t user_code,
                                               const char* message) {
  const tether_status rc = guarded([&] {
    Task& task = current_task(t);
    require_failure_code(code);
    task.record_failure(make_error(code, user_code, failure_message(message, tether_status_describe(code)),
                                   task.thread_name()));
    return TETHER_OK;
  });
  return rc == TETHER_OK ? code : rc;
}

TETHER_HOT_PATH TETHER_API tether_status tether_task_set_result(tether_task* t, void* value, tether_drop_fn drop) {
  return guarded_adopting(value, drop, [&](UserArg& result) {
    Task& task = current_task(t);
    if (!task.is_target()) {
      fail(TETHER_E_WRONG_STATE, "only the runner's target sets the result; this is nested thread '" +
                                     task.thread_name() + "'");
    }
    if (CallFuture* call = task.call()) {
      call->set_result(std::move(result));
    } else if (UserArg* slot = task.result_slot()) {
      std::swap(*slot, result);
    } else if (task.scope() != nullptr) {
      task.scope()->set_result(std::move(result));
    }  // else fire and forget: nobody can take it; dropped now
    return TETHER_OK;
  });
}

TETHER_API int tether_task_stop_requested(const tether_task* t) {
  return guarded_value<int>(0, [&] { return current_task(t).stop_requested() ? 1 : 0; });
}

TETHER_API const char* tether_task_thread_name(const tether_task* t) {
  return guarded_value<const char*>("", [&] { return current_task(t).thread_name().c_str(); });
}

TETHER_API tether_status tether_task_runner(const tether_task* t, tether_runner* out) {
  if (out != nullptr) *out = tether_runner{0};
  return guarded([&] {
    Task& task = current_task(t);
    require(out, "out");
    const uint64_t runner = task.scope() != nullptr ? task.scope()->handle() : 0;
    if (runner == 0) fail(TETHER_E_WRONG_STATE, "this task belongs to no runner");
    *out = tether_runner{runner};
    return TETHER_OK;
  });
}

TETHER_API tether_status tether_task_actor(const tether_task* t, tether_actor* out) {
  if (out != nullptr) *out = tether_actor{0};
  return guarded([&] {
    Task& task = current_task(t);
    require(out, "out");
    if (task.origin().actor == 0) fail(TETHER_E_WRONG_STATE, "this task belongs to no actor");
    *out = tether_actor{task.origin().actor};
    return TETHER_OK;
  });
}

TETHER_API tether_status tether_task_spawn(tether_task* t, const char* name, tether_fn fn, void* arg,
                                           tether_drop_fn arg_drop) {
  return guarded_adopting(arg, arg_drop, [&](UserArg& owned) {
    Task& task = current_task(t);
    require(fn, "fn");
    Scope& scope = task.scope_for_spawn();
    std::string thread_name = name_option(name, scope.options().name.c_str(), "name");
    scope.spawn(std::move(thread_name), /*is_target=*/false, fn, std::move(owned));
    return TETHER_OK;
  });
}

}  // extern "C"
