// tether_future_*: the state of one submitted task or actor call.
#include <condition_variable>
#include <mutex>
#include <vector>

#include "capi/boundary.h"
#include "core/future_graveyard.h"

using namespace tether;
using namespace tether::capi;

namespace {

// AnyWaiter: woken by an on_done notice of any future it waits on.
struct AnyWaiter {
  std::mutex mutex;
  std::condition_variable cv;
  bool fired = false;  // guarded by mutex

  static void notify(void* raw) {
    auto& waiter = **static_cast<std::shared_ptr<AnyWaiter>*>(raw);
    {
      std::lock_guard lock(waiter.mutex);
      waiter.fired = true;
    }
    waiter.cv.notify_all();
  }
  static void drop(void* raw) { delete static_cast<std::shared_ptr<AnyWaiter>*>(raw); }
};

}  // namespace

extern "C" {

TETHER_API tether_status tether_future_wait(tether_future f, int64_t timeout_ns) {
  return guarded([&] {
    // A future already settled (most of a burst's) is answered under the handle's slot
    // lock; only one that may wait takes a reference to its scope.
    std::shared_ptr<Future> future;
    const bool settled = visit(f, [&](const Future& s, const std::shared_ptr<void>& owner) {
      if (s.waits_for_nothing()) return true;
      future = std::static_pointer_cast<Future>(owner);
      return false;
    });
    if (settled) {
      FutureGraveyard::waited(/*pending=*/false);  // answers come ready: nothing to put off
      return tether_status{TETHER_OK};
    }
    const int32_t outcome = future->wait_done(Deadline::after(timeout_ns));
    FutureGraveyard::defer(std::move(future));  // dropped now, or (quiet) at this thread's next wait
    return wait_outcome(outcome, "future wait");
  });
}

TETHER_API tether_status tether_future_poll(tether_future f, int32_t* state) {
  return guarded([&] {
    const int32_t now = visit(f, [](const Future& s, const std::shared_ptr<void>&) { return s.state(); });
    require(state, "state");
    *state = now;
    return TETHER_OK;
  });
}

TETHER_API tether_status tether_future_error(tether_future f, tether_error* out) {
  return read_out(f, out, "out", [](const Future& future) { return error_handle(future.first_error()); });
}

TETHER_API tether_status tether_future_take_result(tether_future f, void** out) {
  if (out != nullptr) *out = nullptr;
  return guarded([&] {
    // Under the handle's slot lock, with no reference taken (it neither waits nor throws).
    void* result = nullptr;
    Future::NoResult why{};
    const int32_t rc = visit(f, [&](Future& s, const std::shared_ptr<void>&) -> int32_t {
      return out != nullptr ? s.try_take_result(&result, &why) : TETHER_OK;
    });
    require(out, "out");
    if (rc != TETHER_OK) Future::explain_no_result(why);
    *out = result;
    return TETHER_OK;
  });
}

TETHER_API tether_status tether_future_outputs(tether_future f, void** outs, size_t n) {
  return guarded([&] {
    auto future = lookup(f);
    require(outs, "outs");
    future->copy_outputs(outs, n);
    return TETHER_OK;
  });
}

TETHER_API tether_status tether_future_cancel(tether_future f) {
  return guarded([&] {
    lookup(f)->request_cancel();
    return TETHER_OK;
  });
}

TETHER_API tether_status tether_future_wait_any(const tether_future* fs, size_t n, int64_t timeout_ns,
                                                size_t* index) {
  return guarded([&] {
    require(index, "index");
    require(fs, "fs");
    if (n == 0) fail(TETHER_E_INVALID_ARGUMENT, "wait_any needs at least one future");
    std::vector<std::shared_ptr<Future>> scopes;
    scopes.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      try {
        scopes.push_back(lookup(fs[i]));
      } catch (const StatusError&) {
        *index = i;
        throw;
      }
    }
    const Deadline deadline = Deadline::after(timeout_ns);
    auto lowest_terminal = [&]() -> size_t {
      for (size_t i = 0; i < n; ++i) {
        if (scopes[i]->state() >= TETHER_SUCCEEDED) return i;
      }
      return n;
    };
    if (size_t i = lowest_terminal(); i < n) {
      *index = i;
      return TETHER_OK;
    }
    if (deadline.never_blocks()) fail(TETHER_E_TIMEOUT, "no future completed (timeout 0)");
    bool all_inside = true;
    for (auto& s : scopes) all_inside = all_inside && s->is_inside();
    if (all_inside) fail(TETHER_E_DEADLOCK, "every future's work can only run on this thread, which would be waiting");

    auto waiter = std::make_shared<AnyWaiter>();
    // Each notice is taken back after the wait: a timed-out wait leaves nothing behind on
    // the futures it watched (they may stay pending for long, and be waited on again).
    std::vector<uint64_t> notices(n, 0);
    struct TakeBack {
      std::vector<std::shared_ptr<Future>>& scopes;
      std::vector<uint64_t>& notices;
      ~TakeBack() {
        for (size_t i = 0; i < notices.size(); ++i) scopes[i]->remove_notice(notices[i]);
      }
    } take_back{scopes, notices};
    for (size_t i = 0; i < n; ++i) {
      auto* held = new std::shared_ptr<AnyWaiter>(waiter);
      UserArg arg(held, &AnyWaiter::drop);
      notices[i] = scopes[i]->add_notice(&AnyWaiter::notify, std::move(arg));
    }
    std::unique_lock lock(waiter->mutex);
    deadline.wait(waiter->cv, lock, [&] { return waiter->fired; });
    lock.unlock();
    if (size_t i = lowest_terminal(); i < n) {
      *index = i;
      return TETHER_OK;
    }
    fail(TETHER_E_TIMEOUT, "no future completed within the timeout");
  });
}

TETHER_API tether_status tether_future_on_done(tether_future f, tether_notify_fn fn, void* arg,
                                               tether_drop_fn arg_drop) {
  return on_done_of(f, fn, arg, arg_drop);
}

TETHER_API tether_status tether_future_release(tether_future f) {
  return guarded([&] {
    std::shared_ptr<Future> future = take(f);
    future->end_future_handle();
    FutureGraveyard::defer(std::move(future));  // dropped now, or (quiet) at this thread's next wait
    return TETHER_OK;
  });
}

}  // extern "C"
