// tether_executor_*: pinned executors.
#include "capi/boundary.h"
#include "core/executor.h"

using namespace tether;
using namespace tether::capi;

namespace {

constexpr size_t kExecutorOptionsV1 = offsetof(tether_executor_options, manual) + sizeof(int);

tether_status submit(tether_executor e, tether_fn fn, UserArg& arg, tether_future* out, int64_t timeout_ns) {
  auto executor = lookup(e);
  require(fn, "fn");
  std::shared_ptr<Scope> future = executor->submit(fn, std::move(arg), out != nullptr, Deadline::after(timeout_ns));
  if (out != nullptr) *out = future_handle(std::move(future));
  return TETHER_OK;
}

}  // namespace

extern "C" {

TETHER_API void tether_executor_options_init(tether_executor_options* o) {
  if (o == nullptr) return;
  *o = tether_executor_options{};
  o->struct_size = sizeof(tether_executor_options);
  o->name = "tether-exec";
  o->cpu = -1;
  o->queue_capacity = 0;
  o->stack_size = 0;
  o->idle_spin_ns = 20000;
  o->manual = 0;
}

TETHER_API tether_status tether_executor_create(const tether_executor_options* o, tether_executor* out) {
  if (out != nullptr) *out = tether_executor{0};
  return guarded([&] {
    require(out, "out");
    const tether_executor_options in =
        read_options(o, &tether_executor_options_init, kExecutorOptionsV1, "tether_executor_options");
    Executor::Options options;
    options.name = name_option(in.name, "tether-exec", "tether_executor_options.name");
    if (in.cpu < -1) fail(TETHER_E_INVALID_ARGUMENT, "tether_executor_options.cpu must be -1 or a CPU number");
    if (in.idle_spin_ns < 0) fail(TETHER_E_INVALID_ARGUMENT, "tether_executor_options.idle_spin_ns must be >= 0");
    if (in.manual != 0 && in.manual != 1) fail(TETHER_E_INVALID_ARGUMENT, "tether_executor_options.manual must be 0 or 1");
    options.cpu = in.cpu;
    options.queue_capacity = in.queue_capacity;
    options.stack_size = in.stack_size;
    options.idle_spin_ns = in.idle_spin_ns;
    options.manual = in.manual == 1;
    std::shared_ptr<Executor> executor = Executor::create(std::move(options));
    try {
      *out = make_handle<tether_executor>(executor);
    } catch (...) {
      executor->release_handle(/*wait=*/true);
      throw;
    }
    return TETHER_OK;
  });
}

TETHER_API tether_status tether_executor_submit(tether_executor e, tether_fn fn, void* arg, tether_drop_fn arg_drop,
                                                tether_future* out) {
  if (out != nullptr) *out = tether_future{0};
  return guarded_adopting(arg, arg_drop, [&](UserArg& owned) { return submit(e, fn, owned, out, 0); });
}

TETHER_API tether_status tether_executor_submit_timeout(tether_executor e, tether_fn fn, void* arg,
                                                        tether_drop_fn arg_drop, tether_future* out,
                                                        int64_t timeout_ns) {
  if (out != nullptr) *out = tether_future{0};
  return guarded_adopting(arg, arg_drop, [&](UserArg& owned) { return submit(e, fn, owned, out, timeout_ns); });
}

TETHER_API tether_status tether_executor_get_stats(tether_executor e, tether_executor_stats* out) {
  return guarded([&] {
    auto executor = lookup(e);
    fill_stats(executor->ledger(), out, executor->lane().os_thread_id());
    return TETHER_OK;
  });
}

TETHER_API tether_status tether_executor_error(tether_executor e, size_t i, tether_error* out) {
  return read_out(e, out, "out", [&](Executor& executor) { return kept_error(executor.ledger(), i); });
}

TETHER_API tether_status tether_executor_run(tether_executor e, int64_t timeout_ns) {
  return guarded([&] {
    auto executor = lookup(e);
    if (!executor->options().manual) fail(TETHER_E_WRONG_STATE, "tether_executor_run is for manual executors only");
    const int32_t rc = executor->lane().run_manual(Deadline::after(timeout_ns));
    if (rc == TETHER_E_WRONG_STATE) {
      fail(rc, "another thread drives this manual executor, or run was called from inside one of its tasks");
    }
    if (rc == TETHER_E_SHUTDOWN) fail(rc, "the manual executor was released");
    return rc;
  });
}

TETHER_API tether_status tether_executor_release(tether_executor e) {
  return guarded([&] {
    take(e)->release_handle(/*wait=*/true);
    return TETHER_OK;
  });
}

TETHER_API tether_status tether_executor_release_nowait(tether_executor e) {
  return guarded([&] {
    take(e)->release_handle(/*wait=*/false);
    return TETHER_OK;
  });
}

}  // extern "C"
