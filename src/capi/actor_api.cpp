// tether_actor_*: actors pinned to their threads.
#include <optional>
#include <set>

#include "capi/actor_cache.h"
#include "capi/boundary.h"
#include "core/actor.h"
#include "core/future_graveyard.h"
#include "core/hot_path.h"

using namespace tether;
using namespace tether::capi;

namespace {

constexpr size_t kActorOptionsV1 = offsetof(tether_actor_options, mailbox_capacity) + sizeof(size_t);

Actor::Options read_actor_options(const tether_actor_options* o) {
  const tether_actor_options in = read_options(o, &tether_actor_options_init, kActorOptionsV1, "tether_actor_options");
  Actor::Options options;
  options.name = name_option(in.name, Actor::kDefaultName, "tether_actor_options.name");
  if (in.executor.id != 0) options.executor = lookup(in.executor);
  if (in.group_count > 0 && in.groups == nullptr) {
    fail(TETHER_E_INVALID_ARGUMENT, "tether_actor_options.groups is NULL but group_count is " +
                                        std::to_string(in.group_count));
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < in.group_count; ++i) {
    const tether_group_spec& spec = in.groups[i];
    if (spec.name == nullptr || *spec.name == '\0') {
      fail(TETHER_E_INVALID_ARGUMENT, "concurrency group " + std::to_string(i) + " has no name");
    }
    if (spec.threads == 0) {
      fail(TETHER_E_INVALID_ARGUMENT, std::string("concurrency group '") + spec.name + "' has 0 threads");
    }
    if (!seen.insert(spec.name).second) {
      fail(TETHER_E_INVALID_ARGUMENT, std::string("concurrency group '") + spec.name + "' is named twice");
    }
    options.groups.push_back(Actor::GroupSpec{spec.name, spec.threads});
  }
  options.mailbox_capacity = in.mailbox_capacity;
  return options;
}

// queue_with_future: the call with a future to a, as the core makes it (no handle yet):
// through this thread's cache when a was the actor it called last, else looked up and
// remembered. room bounds the wait for a full mailbox.
std::shared_ptr<Future> queue_with_future(tether_actor a, const char* group, tether_method_fn m, UserArg& arg,
                                          Deadline room) {
  Actor::Sender* sender = nullptr;
  if (Actor* cached = actor_cache::future_target(a.id, &sender)) {  // this thread called it last
    require(m, "m");
    actor_cache::Cached senders(sender);  // through its ring when it has one (Actor::call chooses)
    return cached->call(group, m, std::move(arg), /*want_future=*/true, room, &senders);
  }
  actor_cache::forget_released(a.id);
  auto actor = lookup(a);
  require(m, "m");
  auto future = actor->call(group, m, std::move(arg), /*want_future=*/true, room, nullptr);
  actor_cache::remember(a.id, actor);  // last: it may close an entry it evicts
  return future;
}

tether_status call(tether_actor a, const char* group, tether_method_fn m, UserArg& arg, tether_future* out,
                   int64_t timeout_ns) {
  if (out != nullptr) {
    *out = future_handle(queue_with_future(a, group, m, arg, Deadline::after(timeout_ns)));
    return TETHER_OK;
  }
  actor_cache::forget_released(a.id);
  auto actor = lookup(a);
  require(m, "m");
  // The core chooses the path; a fast call caches the actor for this thread's next calls.
  actor_cache::ThisThread senders(a.id, actor);
  (void)actor->call(group, m, std::move(arg), /*want_future=*/false, Deadline::after(timeout_ns), &senders);
  return TETHER_OK;
}

// fail_with: a call that did not succeed, as tether_actor_call_wait reports it: its
// error's code returned, its message the thread's last error, the error itself in *error
// when asked for.
[[noreturn]] void fail_with(const ErrorPtr& err, tether_error* error) {
  if (!err) fail(TETHER_E_INTERNAL, "internal error: a call ended without success and without an error");
  if (error != nullptr) *error = error_handle(err);
  fail(err->code, err->message);
}

// answer: a terminal call's outcome as tether_actor_call_wait gives it: TETHER_OK with the
// result taken into *result (left to be dropped with the call when result is NULL), or
// the call's error: its code returned, its message the thread's last error, the error
// itself in *error when asked for.
tether_status answer(Future& call, void** result, tether_error* error) {
  // The take first: it reads the answer from the line the wait just read (call_future.h's
  // settled copy), where state() would fetch the running side's line across CPUs.
  Future::NoResult why{};
  if (result != nullptr ? call.try_take_result(result, &why) == TETHER_OK : call.state() == TETHER_SUCCEEDED) {
    return TETHER_OK;
  }
  if (why == Future::NoResult::kTaken) Future::explain_no_result(why);  // never: nobody else can take it
  fail_with(call.first_error(), error);  // a call that did not succeed always has one
}

// waited_answer: the answer of the waited call this thread just made (its terminal state
// terminal), as answer() gives it.
TETHER_HOT_PATH tether_status waited_answer(int32_t terminal, void** result, tether_error* error) {
  WaitedCall& w = *WaitedCall::of_this_thread();  // the one the call was made with
  UserArg value = w.take_result();
  ErrorPtr err = w.take_error();
  if (terminal == TETHER_SUCCEEDED) {
    if (result != nullptr) *result = value.release();  // else dropped with value
    return TETHER_OK;
  }
  value.reset();  // a call that did not succeed has no result to take
  fail_with(err, error);
}

// call_waited_uncached: call_waited when a is not this thread's most recent entry: looked
// up, and its sender opened and cached for the next calls. Out of line: the cached path
// stays short (after an idle spell its code is cold, each line a miss).
[[gnu::noinline]] std::optional<tether_status> call_waited_uncached(tether_actor a, tether_method_fn m, UserArg& arg,
                                                                    void** result, tether_error* error) {
  actor_cache::forget_released(a.id);
  std::shared_ptr<Actor> actor = lookup(a);
  actor_cache::ThisThread senders(a.id, actor);  // evicts, at the end, the entry it made room with
  Actor::Sender* sender = senders.sender_for(*actor);
  int32_t terminal = TETHER_PENDING;
  if (sender == nullptr || !actor->try_call_waited(*sender, m, arg, &terminal)) return std::nullopt;
  return waited_answer(terminal, result, error);  // before the eviction: closing may run code that calls in
}

// call_waited: tether_actor_call_wait with no deadline, to the default thread, as this
// thread's WaitedCall (core/waited_call.h) through its sender for a (cached, or opened
// here as a fire-and-forget call opens it): no future, no handle, no lock. Its answer,
// as answer() gives it; empty when the general path must take the call (arg untouched:
// the actor takes no fast calls, or this thread runs it).
TETHER_HOT_PATH
std::optional<tether_status> call_waited(tether_actor a, tether_method_fn m, UserArg& arg, void** result,
                                         tether_error* error) {
  if (m == nullptr) return std::nullopt;  // the general path says which argument is bad
  Actor* actor = nullptr;
  Actor::Sender* sender = nullptr;
  if (!actor_cache::waited_target(a.id, &actor, &sender)) [[unlikely]] {
    return call_waited_uncached(a, m, arg, result, error);
  }
  int32_t terminal = TETHER_PENDING;
  if (!actor->try_call_waited(*sender, m, arg, &terminal)) return std::nullopt;
  return waited_answer(terminal, result, error);
}

// call_and_wait_general: call_and_wait past the waited call's path: a call with a future,
// waited for here. Out of line, as call_waited_uncached.
[[gnu::noinline]] tether_status call_and_wait_general(tether_actor a, const char* group, tether_method_fn m,
                                                      UserArg& arg, int64_t timeout_ns, void** result,
                                                      tether_error* error) {
  const Deadline deadline = Deadline::after(timeout_ns);
  std::shared_ptr<Future> call = queue_with_future(a, group, m, arg, deadline);
  // Ends the call's only owner outside the library on every way out, as a released handle.
  struct Release {
    std::shared_ptr<Future>& call;
    ~Release() {
      call->end_future_handle();
      FutureGraveyard::defer(std::move(call));  // dropped now, or (quiet) at this thread's next wait
    }
  } release{call};
  const int32_t outcome = call->wait_done(deadline);
  if (outcome != TETHER_OK) {
    call->request_cancel();  // PENDING: never runs, its arg dropped; RUNNING: asked to stop
    return wait_outcome(outcome, "actor call");
  }
  return answer(*call, result, error);
}

// call_and_wait: tether_actor_call_wait's body. One deadline bounds both the wait for
// mailbox room and the wait for the answer; a call not answered by then (or whose wait
// would deadlock) is cancelled, as its caller will never see it. With no deadline and no
// group, the waited call's path first (call_waited).
TETHER_HOT_PATH
tether_status call_and_wait(tether_actor a, const char* group, tether_method_fn m, UserArg& arg, int64_t timeout_ns,
                            void** result, tether_error* error) {
  if (timeout_ns < 0 && group == nullptr) [[likely]] {
    if (const std::optional<tether_status> done = call_waited(a, m, arg, result, error)) return *done;
  }
  return call_and_wait_general(a, group, m, arg, timeout_ns, result, error);
}

// call_slow: tether_actor_call(_timeout) past the fast path (out of line: the fast path
// keeps no registers for it).
[[gnu::noinline]] tether_status call_slow(tether_actor a, const char* group, tether_method_fn m, void* arg,
                                          tether_drop_fn arg_drop, tether_future* out, int64_t timeout_ns) {
  if (out != nullptr) *out = tether_future{0};
  return guarded_adopting(arg, arg_drop, [&](UserArg& owned) { return call(a, group, m, owned, out, timeout_ns); });
}

// call_slow_untimed: call_slow for tether_actor_call, in six arguments: post's call of it
// is then a jump, and post keeps no register for it.
[[gnu::noinline]] tether_status call_slow_untimed(tether_actor a, const char* group, tether_method_fn m, void* arg,
                                                  tether_drop_fn arg_drop, tether_future* out) {
  return call_slow(a, group, m, arg, arg_drop, out, 0);
}

// post_rare: what post's fast path left to finish out of line (a wake-up, a ring block,
// marks, a stop seen), else the general path. A fast call has no group and no future.
[[gnu::noinline]] tether_status post_rare(Actor::FastPost how, tether_actor a, tether_method_fn m, void* arg,
                                          tether_drop_fn arg_drop, int64_t timeout_ns) {
  if (actor_cache::finish_post(how, m, arg, arg_drop)) return TETHER_OK;
  return call_slow(a, nullptr, m, arg, arg_drop, nullptr, timeout_ns);
}

// post: tether_actor_call(_timeout): through this thread's cached sender when the core
// lets the call take the fast path (no handle table, no reference count:
// capi/actor_cache.h), else the general path. Inline: every call starts here. Its common
// case calls nothing and its others are jumps (six arguments at most), so it saves no
// register (scripts/callgrind.sh, a fire-and-forget call's caller: 110.6 -> 82.7 instructions).
inline tether_status post(tether_actor a, const char* group, tether_method_fn m, void* arg, tether_drop_fn arg_drop,
                          tether_future* out, int64_t timeout_ns) {
  const Actor::FastPost how = actor_cache::try_post(a.id, group, out != nullptr, m, arg, arg_drop);
  if (how == Actor::FastPost::kPosted) [[likely]] return TETHER_OK;
  if (how != Actor::FastPost::kRefused) return post_rare(how, a, m, arg, arg_drop, timeout_ns);
  if (timeout_ns == 0) return call_slow_untimed(a, group, m, arg, arg_drop, out);
  return call_slow(a, group, m, arg, arg_drop, out, timeout_ns);
}

}  // namespace

extern "C" {

TETHER_API void tether_actor_options_init(tether_actor_options* o) {
  if (o == nullptr) return;
  *o = tether_actor_options{};
  o->struct_size = sizeof(tether_actor_options);
  o->name = Actor::kDefaultName;
  o->executor = tether_executor{0};
  o->groups = nullptr;
  o->group_count = 0;
  o->mailbox_capacity = 0;
}

TETHER_API tether_status tether_actor_create(const tether_actor_options* o, tether_ctor_fn ctor, tether_dtor_fn dtor,
                                             void* arg, tether_drop_fn arg_drop, tether_actor* out) {
  if (out != nullptr) *out = tether_actor{0};
  return guarded_adopting(arg, arg_drop, [&](UserArg& owned) {
    require(out, "out");
    require(ctor, "ctor");
    Actor::Options options = read_actor_options(o);  // before owned moves: a FORKED executor keeps arg
    *out = tether_actor{Actor::create(std::move(options), ctor, dtor, std::move(owned), &publish<tether_actor>)};
    return TETHER_OK;
  });
}

TETHER_HOT_PATH
TETHER_API tether_status tether_actor_call(tether_actor a, const char* group, tether_method_fn m, void* arg,
                                           tether_drop_fn arg_drop, tether_future* out) {
  return post(a, group, m, arg, arg_drop, out, 0);
}

TETHER_API tether_status tether_actor_call_timeout(tether_actor a, const char* group, tether_method_fn m, void* arg,
                                                   tether_drop_fn arg_drop, tether_future* out, int64_t timeout_ns) {
  return post(a, group, m, arg, arg_drop, out, timeout_ns);
}

TETHER_HOT_PATH
TETHER_API tether_status tether_actor_call_wait(tether_actor a, const char* group, tether_method_fn m, void* arg,
                                                tether_drop_fn arg_drop, int64_t timeout_ns, void** result,
                                                tether_error* error) {
  if (result != nullptr) *result = nullptr;
  if (error != nullptr) *error = tether_error{0};
  return guarded_adopting(arg, arg_drop, [&](UserArg& owned) {
    return call_and_wait(a, group, m, owned, timeout_ns, result, error);
  });
}

TETHER_API tether_status tether_actor_state(tether_actor a, int32_t* state, tether_error* cause) {
  if (cause != nullptr) *cause = tether_error{0};
  return guarded([&] {
    auto actor = lookup(a);
    require(state, "state");
    ErrorPtr why;
    *state = actor->state(&why);
    if (cause != nullptr) *cause = error_handle(why);
    return TETHER_OK;
  });
}

TETHER_API tether_status tether_actor_get_stats(tether_actor a, tether_actor_stats* out) {
  return guarded([&] {
    auto actor = lookup(a);
    fill_stats(actor->ledger(), out, actor->os_thread_id());
    return TETHER_OK;
  });
}

TETHER_API tether_status tether_actor_error(tether_actor a, size_t i, tether_error* out) {
  return read_out(a, out, "out", [&](Actor& actor) { return kept_error(actor.ledger(), i); });
}

TETHER_API tether_status tether_actor_stop(tether_actor a, int32_t mode, int64_t timeout_ns) {
  return guarded([&] {
    auto actor = lookup(a);
    if (mode != TETHER_STOP_DRAIN && mode != TETHER_STOP_CANCEL) {
      fail(TETHER_E_INVALID_ARGUMENT, "stop mode " + std::to_string(mode) + " is neither DRAIN nor CANCEL");
    }
    const int32_t rc = actor->stop(mode, Deadline::after(timeout_ns));
    if (rc == TETHER_E_DEADLOCK) fail(rc, "the stop was started, but waiting for it from the actor's own thread would wait on itself");
    if (rc == TETHER_E_TIMEOUT) fail(rc, "the stop goes on: the destructor has not run within the timeout");
    if (rc == TETHER_E_INVALID_HANDLE) fail(rc, "invalid handle: actor was released during the wait");
    return rc;
  });
}

TETHER_API tether_status tether_actor_release(tether_actor a) {
  return guarded([&] {
    actor_cache::forget(a.id);
    take(a)->release(/*wait=*/true);
    return TETHER_OK;
  });
}

TETHER_API tether_status tether_actor_release_nowait(tether_actor a) {
  return guarded([&] {
    actor_cache::forget(a.id);
    take(a)->release(/*wait=*/false);
    return TETHER_OK;
  });
}

}  // extern "C"
