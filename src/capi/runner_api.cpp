// tether_runner_*: the ThreadRunner's C surface.
#include "capi/boundary.h"
#include "core/thread_runner.h"

using namespace tether;
using namespace tether::capi;

namespace {

// The first published tether_runner_options ends after stack_size.
constexpr size_t kRunnerOptionsV1 = offsetof(tether_runner_options, stack_size) + sizeof(size_t);

std::string reporting_thread_name() {
  Task* task = Task::current();
  return task != nullptr ? task->thread_name() : os_thread_name();
}

}  // namespace

extern "C" {

TETHER_API void tether_runner_options_init(tether_runner_options* o) {
  if (o == nullptr) return;
  *o = tether_runner_options{};
  o->struct_size = sizeof(tether_runner_options);
  o->name = "tether-run";
  o->stop_on_error = 1;
  o->stack_size = 0;
}

TETHER_API tether_status tether_runner_start(const tether_runner_options* opts, tether_fn target, void* arg,
                                             tether_drop_fn arg_drop, tether_runner* out) {
  if (out != nullptr) *out = tether_runner{0};
  return guarded_adopting(arg, arg_drop, [&](UserArg& owned) {
    require(out, "out");
    require(target, "target");
    const tether_runner_options o =
        read_options(opts, &tether_runner_options_init, kRunnerOptionsV1, "tether_runner_options");
    Scope::Options options;
    options.name = name_option(o.name, "tether-run", "tether_runner_options.name");
    options.stop_on_error = o.stop_on_error != 0;
    options.stack_size = o.stack_size;
    auto scope = std::make_shared<Scope>(std::move(options));
    const tether_runner r = make_handle<tether_runner>(scope);  // before the target can ask for it
    scope->set_handle(r.id);
    try {
      start_runner(*scope, target, std::move(owned));
    } catch (...) {
      (void)take(r);
      throw;
    }
    *out = r;
    return TETHER_OK;
  });
}

TETHER_API tether_status tether_runner_report_error(tether_runner r, int32_t code, int64_t user_code,
                                                    const char* message) {
  return guarded([&] {
    auto scope = lookup(r);
    require_failure_code(code);
    scope->report(make_error(code, user_code, message != nullptr ? message : "", reporting_thread_name()));
    return TETHER_OK;
  });
}

TETHER_API tether_status tether_runner_poll(tether_runner r, int32_t* state) {
  return guarded([&] {
    auto scope = lookup(r);
    require(state, "state");
    *state = scope->state();
    return TETHER_OK;
  });
}

TETHER_API tether_status tether_runner_join(tether_runner r, int64_t timeout_ns) {
  return guarded([&] {
    auto scope = lookup(r);
    return wait_outcome(scope->wait(Deadline::after(timeout_ns), /*all_threads=*/false), "runner join");
  });
}

TETHER_API tether_status tether_runner_join_all(tether_runner r, int64_t timeout_ns) {
  return guarded([&] {
    auto scope = lookup(r);
    return wait_outcome(scope->wait(Deadline::after(timeout_ns), /*all_threads=*/true), "runner join_all");
  });
}

TETHER_API tether_status tether_runner_on_done(tether_runner r, tether_notify_fn fn, void* arg,
                                               tether_drop_fn arg_drop) {
  return on_done_of(r, fn, arg, arg_drop);
}

TETHER_API tether_status tether_runner_error(tether_runner r, tether_error* out) {
  return read_out(r, out, "out", [](const Scope& scope) { return error_handle(scope.first_error()); });
}

TETHER_API size_t tether_runner_error_count(tether_runner r) {
  return guarded_value<size_t>(0, [&] { return lookup(r)->error_count(); });
}

TETHER_API tether_status tether_runner_error_at(tether_runner r, size_t i, tether_error* out) {
  return read_out(r, out, "out", [&](const Scope& scope) {
    ErrorPtr e = scope.error_at(i);
    if (!e) {
      fail(TETHER_E_INVALID_ARGUMENT, "error index " + std::to_string(i) + " is past the end (" +
                                          std::to_string(scope.error_count()) + " errors)");
    }
    return error_handle(e);
  });
}

TETHER_API tether_status tether_runner_take_result(tether_runner r, void** out) {
  return read_out(r, out, "out", [](Scope& scope) { return scope.take_result(); });
}

TETHER_API tether_status tether_runner_live_threads(tether_runner r, size_t* out) {
  return guarded([&] {
    auto scope = lookup(r);
    require(out, "out");
    *out = scope->live();
    return TETHER_OK;
  });
}

TETHER_API tether_status tether_runner_cancel(tether_runner r) {
  return guarded([&] {
    lookup(r)->cancel();
    return TETHER_OK;
  });
}

TETHER_API tether_status tether_runner_release(tether_runner r) {
  return guarded([&] {
    release_runner(take(r), /*wait=*/true);
    return TETHER_OK;
  });
}

TETHER_API tether_status tether_runner_release_nowait(tether_runner r) {
  return guarded([&] {
    release_runner(take(r), /*wait=*/false);
    return TETHER_OK;
  });
}

}  // extern "C"
