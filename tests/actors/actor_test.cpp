// Actors: the pinned thread, ordering, constructor and method failure, stop CANCEL and
// DRAIN, bounded mailboxes, waiting on yourself, manual executors and threads the OS
// refuses (issue 3, acceptance 2).
#include <gtest/gtest.h>

#include <future>
#include <set>

#include "actors_support.h"

using namespace at;

namespace {

// OrderState: the state of the ordering test; touched only on the actor's default thread
// until the final call's future is waited on.
struct OrderState {
  std::vector<uint32_t> seen;
};
std::atomic<int> g_order_drops{0};
void order_drop(void *) { g_order_drops.fetch_add(1); }
tether_status append_index(tether_task *, void *state, void *arg) {
  static_cast<OrderState *>(state)->seen.push_back(static_cast<uint32_t>(reinterpret_cast<uintptr_t>(arg) - 1));
  return TETHER_OK;
}
tether_status order_ctor(tether_task *, void *arg, void **state_out) {
  *state_out = arg;  // the test's OrderState: no arg_drop, the test owns it
  return TETHER_OK;
}

}  // namespace

// The constructor, every method (with or without a future) and the destructor run on one
// OS thread: the actor's, which is not the caller's and is the stats' os_thread_id.
TEST(Actor, ConstructorMethodsAndDestructorOnOneThread) {
  ActorState st;
  std::atomic<uint64_t> ctor_tid{0};
  Counter ctor_drops;
  std::mutex mu;
  std::vector<uint64_t> method_tids;  // guarded by mu
  const tether_actor_options o = actor_options("pinned");
  Actor a;
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st, &ctor_tid), &ctor_drops, a.out()));
  auto record = [&](tether_task *, void *state) -> tether_status {
    std::lock_guard<std::mutex> lk(mu);
    method_tids.push_back(tid());
    return state == &st ? TETHER_OK : 1;
  };
  Counter ff_drops;
  std::vector<Future> fs(10);
  for (size_t i = 0; i < fs.size(); ++i) {
    ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, record, nullptr, fs[i].out()));
    ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, record, &ff_drops, nullptr));  // fire and forget
  }
  for (Future &f : fs) EXPECT_EQ(TETHER_SUCCEEDED, f.outcome());
  EXPECT_EQ(1, ctor_drops.get()) << "the constructor's arg is dropped once it has returned";
  const uint64_t pinned = ctor_tid.load();
  EXPECT_NE(0u, pinned);
  EXPECT_NE(tid(), pinned);
  EXPECT_EQ(pinned, actor_stats(a.get()).os_thread_id);

  EXPECT_EQ(TETHER_OK, a.release());
  EXPECT_EQ(1, st.dtors.get());
  EXPECT_EQ(pinned, st.dtor_tid.load());
  EXPECT_EQ(static_cast<int>(fs.size()), ff_drops.get());
  std::lock_guard<std::mutex> lk(mu);
  EXPECT_EQ(2 * fs.size(), method_tids.size());
  for (uint64_t t : method_tids) EXPECT_EQ(pinned, t);
  EXPECT_EQ(1, ctor_drops.get());
}

// 1,000 actors on one shared executor all live on that executor's one thread.
TEST(Actor, ThousandActorsShareOneExecutorThread) {
  const size_t n = scaled(1000);
  std::vector<ActorState> states(n);
  std::vector<uint64_t> ctor_tids(n, 0);  // slot i written by actor i's constructor only
  Counter ctors;
  Executor e;
  tether_executor_options eo;
  tether_executor_options_init(&eo);
  eo.name = "shared-exec";
  ASSERT_EQ(TETHER_OK, tether_executor_create(&eo, e.out()));
  uint64_t exec_tid = 0;
  {
    Future f;
    ASSERT_EQ(TETHER_OK, submit(e.get(), [&](tether_task *) {
                exec_tid = tid();
                return TETHER_OK;
              }, nullptr, f.out()));
    ASSERT_EQ(TETHER_SUCCEEDED, f.outcome());
  }
  ASSERT_EQ(exec_tid, executor_stats(e.get()).os_thread_id);

  std::vector<Actor> actors(n);
  for (size_t i = 0; i < n; ++i) {
    tether_actor_options o = actor_options("many");
    o.executor = e.get();
    ASSERT_EQ(TETHER_OK, create_actor(&o, [&, i](tether_task *, void **out) {
                ctor_tids[i] = tid();
                ctors.add();
                *out = &states[i];
                return TETHER_OK;
              }, nullptr, actors[i].out()));
  }
  std::vector<Future> fs(n);
  std::vector<uint64_t> method_tids(n, 0);
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(TETHER_OK, call(actors[i].get(), nullptr, [&, i](tether_task *, void *) {
                method_tids[i] = tid();
                return TETHER_OK;
              }, nullptr, fs[i].out()));
  }
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(TETHER_SUCCEEDED, fs[i].outcome()) << "actor " << i;
  EXPECT_EQ(static_cast<int>(n), ctors.get());
  size_t elsewhere = 0;
  for (size_t i = 0; i < n; ++i) {
    elsewhere += (ctor_tids[i] != exec_tid) + (method_tids[i] != exec_tid);
    EXPECT_EQ(exec_tid, actor_stats(actors[i].get()).os_thread_id) << "actor " << i;
  }
  EXPECT_EQ(0u, elsewhere) << "every constructor and method runs on the executor's thread";
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(TETHER_OK, actors[i].release());
    EXPECT_EQ(1, states[i].dtors.get());
    EXPECT_EQ(exec_tid, states[i].dtor_tid.load());
  }
  EXPECT_EQ(TETHER_OK, e.release());
}

// 20,000 calls from one producer run in submission order.
TEST(Actor, CallsFromOneProducerRunInOrder) {
  const size_t n = scaled(20000);
  g_order_drops.store(0);
  OrderState state;
  state.seen.reserve(n);
  const tether_actor_options o = actor_options("order");
  Actor a;
  ASSERT_EQ(TETHER_OK, tether_actor_create(&o, order_ctor, nullptr, &state, nullptr, a.out()));
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(TETHER_OK, tether_actor_call(a.get(), nullptr, append_index, reinterpret_cast<void *>(uintptr_t{i + 1}),
                                           order_drop, nullptr));
  }
  // The last call, with a future, runs after all of them on the same thread.
  size_t out_of_order = 0, size_seen = 0;
  Future last;
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [&](tether_task *, void *s) {
              const auto &seen = static_cast<OrderState *>(s)->seen;
              size_seen = seen.size();
              for (size_t i = 0; i < seen.size(); ++i) out_of_order += seen[i] != i;
              return TETHER_OK;
            }, nullptr, last.out()));
  ASSERT_EQ(TETHER_SUCCEEDED, last.outcome());
  EXPECT_EQ(n, size_seen);
  EXPECT_EQ(0u, out_of_order);
  EXPECT_EQ(static_cast<int>(n), g_order_drops.load()) << "every arg dropped once after its call";
  const tether_actor_stats stats = actor_stats(a.get());
  EXPECT_EQ(n + 1, stats.completed);
  EXPECT_EQ(0u, stats.failed);
  EXPECT_EQ(0u, stats.queued);
  EXPECT_EQ(TETHER_OK, a.release());
}

// A failing constructor: the actor is DEAD with the constructor's error as its cause; the
// calls queued behind it fail with TETHER_E_ACTOR_DEAD whose cause is that error; later
// calls return TETHER_E_ACTOR_DEAD themselves (arg dropped, no future); no method and no
// destructor ever run.
TEST(Actor, ConstructorFailureMakesTheActorDead) {
  Gate ctor_go, ctor_entered;
  Counter ctor_drops, method_runs, queued_drops;
  ActorState st;
  const tether_actor_options o = actor_options("dead");
  Actor a;
  a.open_on_exit({&ctor_go});
  ASSERT_EQ(TETHER_OK, create_actor(&o, [&](tether_task *t, void **) -> tether_status {
              ctor_entered.set();
              if (!ctor_go.wait_for(kLong)) return 1;
              return tether_task_fail(t, 7, "ctor exploded");
            }, &ctor_drops, a.out()));
  ASSERT_TRUE(ctor_entered.wait_for(kLong));
  EXPECT_EQ(TETHER_ACTOR_ALIVE, a.state()) << "ALIVE while the constructor runs";

  auto method = [&](tether_task *, void *) {
    method_runs.add();
    return TETHER_OK;
  };
  std::vector<Future> queued(3);
  for (Future &f : queued) ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, method, &queued_drops, f.out()));
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, method, &queued_drops, nullptr));
  for (Future &f : queued) EXPECT_EQ(TETHER_PENDING, f.state());
  ctor_go.set();

  for (Future &f : queued) {
    ASSERT_EQ(TETHER_FAILED, f.outcome());
    Err e = f.error();
    EXPECT_EQ(TETHER_E_ACTOR_DEAD, e.code());
    Err cause = e.cause();
    ASSERT_FALSE(cause.null()) << "an ACTOR_DEAD error's cause is the constructor's error";
    EXPECT_EQ(TETHER_E_TASK_FAILED, cause.code());
    EXPECT_EQ(7, cause.user_code());
    EXPECT_EQ("ctor exploded", cause.message());
  }
  EXPECT_TRUE(queued_drops.wait_for(4, kLong));
  EXPECT_EQ(1, ctor_drops.get());

  int32_t s = -1;
  Err cause;
  ASSERT_EQ(TETHER_OK, tether_actor_state(a.get(), &s, cause.out()));
  EXPECT_EQ(TETHER_ACTOR_DEAD, s);
  EXPECT_EQ(TETHER_E_TASK_FAILED, cause.code());
  EXPECT_EQ("ctor exploded", cause.message());

  for (int i = 0; i < 3; ++i) {
    Counter drops;
    Future f;
    EXPECT_EQ(TETHER_E_ACTOR_DEAD, call(a.get(), nullptr, method, &drops, f.out()));
    EXPECT_TRUE(f.null());
    EXPECT_EQ(1, drops.get()) << "a rejected call's arg is dropped before it returns";
    Counter ff_drops;
    EXPECT_EQ(TETHER_E_ACTOR_DEAD, call(a.get(), nullptr, method, &ff_drops, nullptr));
    EXPECT_EQ(1, ff_drops.get());
  }
  EXPECT_EQ(TETHER_ACTOR_DEAD, a.state());
  EXPECT_EQ(TETHER_OK, a.release());
  EXPECT_EQ(0, method_runs.get());
  EXPECT_EQ(0, st.dtors.get()) << "no destructor for a state that was never built";
  EXPECT_EQ(4, queued_drops.get());
  EXPECT_EQ(1, ctor_drops.get());
}

// A constructor that fails by returning a code: the cause says "task returned N".
TEST(Actor, ConstructorReturningACodeMakesTheActorDead) {
  Counter ctor_drops;
  const tether_actor_options o = actor_options("dead-rc");
  Actor a;
  ASSERT_EQ(TETHER_OK, create_actor(&o, [](tether_task *, void **) { return 3; }, &ctor_drops, a.out()));
  Future f;
  const tether_status rc = call(a.get(), nullptr, [](tether_task *, void *) { return TETHER_OK; }, nullptr, f.out());
  if (rc == TETHER_OK) {  // queued before the constructor failed
    ASSERT_EQ(TETHER_FAILED, f.outcome());
    EXPECT_EQ(TETHER_E_ACTOR_DEAD, f.error().code());
  } else {
    EXPECT_EQ(TETHER_E_ACTOR_DEAD, rc);
  }
  ASSERT_TRUE(wait_until([&] { return a.state() == TETHER_ACTOR_DEAD; }, kLong));
  int32_t s = -1;
  Err cause;
  ASSERT_EQ(TETHER_OK, tether_actor_state(a.get(), &s, cause.out()));
  EXPECT_EQ(TETHER_E_TASK_FAILED, cause.code());
  EXPECT_EQ(3, cause.user_code());
  EXPECT_EQ("task returned 3", cause.message());
  EXPECT_EQ(TETHER_OK, a.release());
  EXPECT_EQ(1, ctor_drops.get());
}

// A failing method fails only its own future; the actor stays ALIVE and the next call
// works. A fire-and-forget failure is counted and kept by the actor.
TEST(Actor, MethodFailureFailsOnlyItsFuture) {
  ActorState st;
  const tether_actor_options o = actor_options("failing");
  Actor a;
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));

  Future failed, returned, next;
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [](tether_task *t, void *) { return tether_task_fail(t, 5, "boom"); },
                            nullptr, failed.out()));
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [](tether_task *, void *) { return 9; }, nullptr, returned.out()));
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [](tether_task *, void *) { return TETHER_OK; }, nullptr, next.out()));

  ASSERT_EQ(TETHER_FAILED, failed.outcome());
  Err e1 = failed.error();
  EXPECT_EQ(TETHER_E_TASK_FAILED, e1.code());
  EXPECT_EQ(5, e1.user_code());
  EXPECT_EQ("boom", e1.message());
  EXPECT_EQ("failing", e1.thread_name());
  EXPECT_TRUE(e1.cause().null());

  ASSERT_EQ(TETHER_FAILED, returned.outcome());
  Err e2 = returned.error();
  EXPECT_EQ(TETHER_E_TASK_FAILED, e2.code());
  EXPECT_EQ(9, e2.user_code());
  EXPECT_EQ("task returned 9", e2.message());

  EXPECT_EQ(TETHER_SUCCEEDED, next.outcome());
  EXPECT_EQ(TETHER_ACTOR_ALIVE, a.state());

  // Fire and forget: counted in the stats and kept.
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [](tether_task *t, void *) { return tether_task_fail(t, 11, "lost?"); },
                            nullptr, nullptr));
  Future flush;
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [](tether_task *, void *) { return TETHER_OK; }, nullptr, flush.out()));
  ASSERT_EQ(TETHER_SUCCEEDED, flush.outcome());
  const tether_actor_stats stats = actor_stats(a.get());
  EXPECT_EQ(3u, stats.failed);
  EXPECT_EQ(2u, stats.completed);
  Err kept;
  ASSERT_EQ(TETHER_OK, tether_actor_error(a.get(), 0, kept.out()));
  EXPECT_EQ(11, kept.user_code());
  EXPECT_EQ("lost?", kept.message());
  Err none;
  EXPECT_EQ(TETHER_E_INVALID_ARGUMENT, tether_actor_error(a.get(), 1, none.out()));
  EXPECT_TRUE(none.null());

  EXPECT_EQ(TETHER_ACTOR_ALIVE, a.state());
  EXPECT_EQ(TETHER_OK, a.release());
  EXPECT_EQ(1, st.dtors.get());
}

// stop(CANCEL) while a method is blocked: every queued call is CANCELLED by the time stop
// returns (or times out), each arg dropped exactly once; the running method sees
// stop_requested and exits; later calls are TETHER_E_SHUTDOWN.
TEST(Actor, StopCancelWhileAMethodIsBlocked) {
  Gate entered;
  Counter queued_drops, queued_runs, running_drops;
  std::atomic<bool> saw_stop{false};
  ActorState st;
  std::atomic<uint64_t> ctor_tid{0};
  const tether_actor_options o = actor_options("cancel");
  Actor a;
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st, &ctor_tid), nullptr, a.out()));

  Future running;
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [&](tether_task *t, void *) -> tether_status {
              entered.set();
              // Runs until asked to stop (bounded): a method blocked in user code that polls.
              const auto deadline = Clock::now() + kLong;
              while (!tether_task_stop_requested(t) && Clock::now() < deadline) std::this_thread::sleep_for(1ms);
              saw_stop = tether_task_stop_requested(t) != 0;
              return TETHER_OK;
            }, &running_drops, running.out()));
  ASSERT_TRUE(entered.wait_for(kLong));

  auto never = [&](tether_task *, void *) {
    queued_runs.add();
    return TETHER_OK;
  };
  std::vector<Future> queued(5);
  for (Future &f : queued) ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, never, &queued_drops, f.out()));
  for (int i = 0; i < 3; ++i) ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, never, &queued_drops, nullptr));

  const tether_status rc = tether_actor_stop(a.get(), TETHER_STOP_CANCEL, ns_from_ms(10));
  // Right after stop returned (OK or timed out): the queued calls are already cancelled.
  for (Future &f : queued) {
    EXPECT_EQ(TETHER_CANCELLED, f.state());
    EXPECT_EQ(TETHER_E_CANCELLED, f.error().code());
  }
  EXPECT_EQ(8, queued_drops.get()) << "each cancelled call's arg is dropped before stop returns";
  EXPECT_TRUE(rc == TETHER_OK || rc == TETHER_E_TIMEOUT) << tether_status_name(rc);
  EXPECT_EQ(TETHER_ACTOR_STOPPED, a.state());

  Counter late_drops;
  Future late;
  EXPECT_EQ(TETHER_E_SHUTDOWN, call(a.get(), nullptr, never, &late_drops, late.out()));
  EXPECT_TRUE(late.null());
  EXPECT_EQ(1, late_drops.get());
  Counter late_ff_drops;
  EXPECT_EQ(TETHER_E_SHUTDOWN, call(a.get(), nullptr, never, &late_ff_drops, nullptr));
  EXPECT_EQ(1, late_ff_drops.get());

  EXPECT_EQ(TETHER_OK, tether_actor_stop(a.get(), TETHER_STOP_CANCEL, kLongNs));
  EXPECT_TRUE(saw_stop.load()) << "the running method saw tether_task_stop_requested";
  EXPECT_EQ(TETHER_CANCELLED, running.outcome()) << "asked to stop, returned OK: CANCELLED";
  EXPECT_EQ(1, running_drops.get());
  EXPECT_EQ(1, st.dtors.get());
  EXPECT_EQ(ctor_tid.load(), st.dtor_tid.load());
  EXPECT_EQ(0, queued_runs.get());
  EXPECT_EQ(8, queued_drops.get());
  // The 8 queued calls and the running one, which returned OK after the stop: its future
  // says CANCELLED, and so does the count (never completed).
  EXPECT_EQ(9u, actor_stats(a.get()).cancelled);
  EXPECT_EQ(0u, actor_stats(a.get()).completed);
  EXPECT_EQ(TETHER_OK, a.release());
  EXPECT_EQ(1, st.dtors.get());
}

// stop(DRAIN): what is queued all runs, in order, then the destructor, all on the pinned
// thread; new calls are TETHER_E_SHUTDOWN from the stop on.
TEST(Actor, StopDrainRunsQueuedCallsThenTheDestructor) {
  Gate gate, entered;
  std::mutex mu;
  std::vector<std::pair<std::string, uint64_t>> events;  // guarded by mu
  auto log = [&](std::string what) {
    std::lock_guard<std::mutex> lk(mu);
    events.emplace_back(std::move(what), tid());
  };
  ActorState st;
  st.on_dtor = [&] { log("dtor"); };
  std::atomic<uint64_t> ctor_tid{0};
  Counter drops;
  const tether_actor_options o = actor_options("drain");
  Actor a;
  a.open_on_exit({&gate});
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st, &ctor_tid), nullptr, a.out()));

  Future first;
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [&](tether_task *, void *) -> tether_status {
              entered.set();
              const bool ok = gate.wait_for(kLong);
              log("m");
              return ok ? TETHER_OK : 1;
            }, &drops, first.out()));
  ASSERT_TRUE(entered.wait_for(kLong));
  const int k = 5;
  std::vector<Future> queued(k);
  for (int i = 0; i < k; ++i) {
    ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [&, i](tether_task *t, void *) {
                log("q" + std::to_string(i));
                return tether_task_stop_requested(t) ? 1 : TETHER_OK;  // DRAIN asks nobody to stop
              }, &drops, queued[i].out()));
  }
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [&](tether_task *, void *) {
              log("ff");
              return TETHER_OK;
            }, &drops, nullptr));

  EXPECT_EQ(TETHER_E_TIMEOUT, tether_actor_stop(a.get(), TETHER_STOP_DRAIN, 0));
  EXPECT_EQ(TETHER_ACTOR_STOPPED, a.state());
  Counter late_drops;
  EXPECT_EQ(TETHER_E_SHUTDOWN, call(a.get(), nullptr, [](tether_task *, void *) { return TETHER_OK; }, &late_drops, nullptr));
  EXPECT_EQ(1, late_drops.get());
  for (Future &f : queued) EXPECT_EQ(TETHER_PENDING, f.state()) << "DRAIN cancels nothing";

  gate.set();
  EXPECT_EQ(TETHER_OK, tether_actor_stop(a.get(), TETHER_STOP_DRAIN, kLongNs));
  EXPECT_EQ(TETHER_SUCCEEDED, first.outcome());
  for (Future &f : queued) EXPECT_EQ(TETHER_SUCCEEDED, f.outcome());
  EXPECT_EQ(1, st.dtors.get());
  EXPECT_EQ(k + 2, drops.get());
  {
    std::lock_guard<std::mutex> lk(mu);
    std::vector<std::string> names;
    for (auto &[what, t] : events) {
      names.push_back(what);
      EXPECT_EQ(ctor_tid.load(), t) << what << " ran off the pinned thread";
    }
    EXPECT_EQ((std::vector<std::string>{"m", "q0", "q1", "q2", "q3", "q4", "ff", "dtor"}), names);
  }
  EXPECT_EQ(TETHER_OK, a.release());
  EXPECT_EQ(1, st.dtors.get());
}

// A bounded mailbox (capacity 2) with the default thread blocked: two calls fill it, the
// next is TETHER_E_QUEUE_FULL, call_timeout with a small timeout is TETHER_E_TIMEOUT (args
// dropped once), and a call_timeout succeeds once room is made.
TEST(Actor, BoundedMailbox) {
  Gate gate, entered;
  ActorState st;
  Counter drops, runs;
  const tether_actor_options o = actor_options("mailbox", nullptr, 0, /*mailbox_capacity=*/2);
  Actor a;
  a.open_on_exit({&gate});
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));
  Future blocker;
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [&](tether_task *, void *) -> tether_status {
              entered.set();
              return gate.wait_for(kLong) ? TETHER_OK : 1;
            }, nullptr, blocker.out()));
  ASSERT_TRUE(entered.wait_for(kLong));  // started: it no longer counts against the mailbox

  auto method = [&](tether_task *, void *) {
    runs.add();
    return TETHER_OK;
  };
  Future q1, q2;
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, method, &drops, q1.out()));
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, method, &drops, q2.out()));
  EXPECT_EQ(2u, actor_stats(a.get()).queued);

  Counter full_drops;
  Future full;
  EXPECT_EQ(TETHER_E_QUEUE_FULL, call(a.get(), nullptr, method, &full_drops, full.out()));
  EXPECT_TRUE(full.null());
  EXPECT_EQ(1, full_drops.get());
  EXPECT_EQ(TETHER_E_QUEUE_FULL, call(a.get(), nullptr, method, &full_drops, nullptr));
  EXPECT_EQ(2, full_drops.get());

  Counter timeout_drops;
  Future timed_out;
  tether_status rc = TETHER_OK;
  const auto took = elapsed([&] {
    rc = call_timeout(a.get(), nullptr, method, &timeout_drops, timed_out.out(), ns_from_ms(50));
  });
  EXPECT_EQ(TETHER_E_TIMEOUT, rc);
  EXPECT_GE(took, 50ms);
  EXPECT_TRUE(timed_out.null());
  EXPECT_EQ(1, timeout_drops.get());
  EXPECT_GE(actor_stats(a.get()).rejected, 2u);
  EXPECT_EQ(2u, actor_stats(a.get()).queued) << "the mailbox never grows past its capacity";

  // A producer waits for room; the blocker's end makes it.
  Future waited;
  auto producer = std::async(std::launch::async, [&] {
    return call_timeout(a.get(), nullptr, method, &drops, waited.out(), kLongNs);
  });
  gate.set();
  ASSERT_EQ(std::future_status::ready, producer.wait_for(kLong));
  EXPECT_EQ(TETHER_OK, producer.get());
  EXPECT_EQ(TETHER_SUCCEEDED, blocker.outcome());
  EXPECT_EQ(TETHER_SUCCEEDED, q1.outcome());
  EXPECT_EQ(TETHER_SUCCEEDED, q2.outcome());
  EXPECT_EQ(TETHER_SUCCEEDED, waited.outcome());
  EXPECT_EQ(3, runs.get());
  EXPECT_EQ(TETHER_OK, a.release());
  EXPECT_EQ(3, drops.get());
  EXPECT_EQ(1, st.dtors.get());
}

// call_timeout from the group's own thread on a full mailbox could never get room (the
// thread that would make it is the caller): TETHER_E_DEADLOCK, not a hang.
TEST(Actor, CallTimeoutFromOwnThreadOnAFullMailboxIsDeadlock) {
  ActorState st;
  Counter drops;
  const tether_actor_options o = actor_options("mailbox-self", nullptr, 0, /*mailbox_capacity=*/1);
  Actor a;
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));
  tether_status fill_rc = -1, self_rc = -1;
  std::chrono::nanoseconds took{};
  Future f;
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [&](tether_task *t, void *) {
              tether_actor self{};
              if (tether_task_actor(t, &self) != TETHER_OK) return 1;
              fill_rc = call(self, nullptr, [](tether_task *, void *) { return TETHER_OK; }, &drops, nullptr);
              took = elapsed([&] {
                self_rc = call_timeout(self, nullptr, [](tether_task *, void *) { return TETHER_OK; }, &drops, nullptr, kLongNs);
              });
              return 0;
            }, nullptr, f.out()));
  ASSERT_EQ(TETHER_SUCCEEDED, f.outcome());
  EXPECT_EQ(TETHER_OK, fill_rc);
  EXPECT_EQ(TETHER_E_DEADLOCK, self_rc);
  EXPECT_LT(took, kPrompt);
  EXPECT_EQ(TETHER_OK, a.release());
  EXPECT_EQ(2, drops.get());
}

// A method that waits on a call it queued to its own default group waits on itself:
// TETHER_E_DEADLOCK at once (TETHER_E_TIMEOUT with timeout 0). The inner call still runs
// after the method returns. Waiting from another group on the default group is fine.
TEST(Actor, WaitingOnYourOwnGroupIsDeadlock) {
  const tether_group_spec groups[] = {{"io", 1}};
  const tether_actor_options o = actor_options("selfwait", groups, 1);
  ActorState st;
  Counter inner_runs, inner_drops;
  Actor a;
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));

  for (const char *group : {static_cast<const char *>(nullptr), "io"}) {
    SCOPED_TRACE(group ? group : "default");
    tether_status wait_rc = -1, wait0_rc = -1, any_rc = -1, call_rc = -1;
    std::chrono::nanoseconds took{};
    Future outer;
    ASSERT_EQ(TETHER_OK, call(a.get(), group, [&, group](tether_task *t, void *) {
                tether_actor self{};
                if (tether_task_actor(t, &self) != TETHER_OK) return 1;
                Future inner;
                call_rc = call(self, group, [&](tether_task *, void *) {
                  inner_runs.add();
                  return TETHER_OK;
                }, &inner_drops, inner.out());
                took = elapsed([&] { wait_rc = inner.wait(kLongNs); });
                wait0_rc = inner.wait(0);
                size_t index = 99;
                const tether_future fs[] = {inner.get()};
                any_rc = tether_future_wait_any(fs, 1, kLongNs, &index);
                return 0;  // inner's handle is released here; the call still runs
              }, nullptr, outer.out()));
    ASSERT_EQ(TETHER_SUCCEEDED, outer.outcome());
    EXPECT_EQ(TETHER_OK, call_rc);
    EXPECT_EQ(TETHER_E_DEADLOCK, wait_rc);
    EXPECT_LT(took, kPrompt) << "DEADLOCK must be returned at once, not after the timeout";
    EXPECT_EQ(TETHER_E_TIMEOUT, wait0_rc);
    EXPECT_EQ(TETHER_E_DEADLOCK, any_rc);
  }
  EXPECT_TRUE(inner_runs.wait_for(2, kLong)) << "the inner calls still run after their waiters gave up";
  EXPECT_TRUE(inner_drops.wait_for(2, kLong));

  // From the io group, a default-group call is someone else's thread: the wait works.
  tether_status rc = -1;
  Future outer;
  ASSERT_EQ(TETHER_OK, call(a.get(), "io", [&](tether_task *t, void *) {
              tether_actor self{};
              if (tether_task_actor(t, &self) != TETHER_OK) return 1;
              Future inner;
              if (call(self, nullptr, [](tether_task *, void *) { return TETHER_OK; }, nullptr, inner.out()) != TETHER_OK) return 2;
              rc = inner.wait(kLongNs);
              return 0;
            }, nullptr, outer.out()));
  ASSERT_EQ(TETHER_SUCCEEDED, outer.outcome());
  EXPECT_EQ(TETHER_OK, rc);
  EXPECT_EQ(TETHER_OK, a.release());
  EXPECT_EQ(2, inner_runs.get());
}

// A manual executor run on the test's thread: tasks submitted from another thread run here,
// inside tether_executor_run; so do an actor's constructor, methods and destructor. run from
// another thread is TETHER_E_WRONG_STATE.
TEST(Actor, ManualExecutorRunsOnTheCallersThread) {
  const uint64_t me = tid();
  const int n = 20;
  std::vector<uint64_t> task_tids;  // written only by tasks, on this thread
  std::vector<int> order;
  Counter task_drops;
  ActorState st;
  std::atomic<uint64_t> ctor_tid{0};
  std::vector<uint64_t> method_tids;
  Executor e;
  tether_executor_options eo;
  tether_executor_options_init(&eo);
  eo.manual = 1;
  eo.name = "manual";
  ASSERT_EQ(TETHER_OK, tether_executor_create(&eo, e.out()));
  EXPECT_EQ(0u, executor_stats(e.get()).os_thread_id) << "0 until a manual executor first runs";

  // Before the first run, this thread is not yet the owner: run from another thread would
  // take it. Make this thread the owner first.
  EXPECT_EQ(TETHER_OK, tether_executor_run(e.get(), 0));
  EXPECT_EQ(me, executor_stats(e.get()).os_thread_id);

  std::thread producer([&] {
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(TETHER_OK, submit(e.get(), [&, i](tether_task *) {
                  task_tids.push_back(tid());
                  order.push_back(i);
                  return TETHER_OK;
                }, &task_drops, nullptr));
    }
    // run from a thread that is not the owner
    EXPECT_EQ(TETHER_E_WRONG_STATE, tether_executor_run(e.get(), ns_from_ms(10)));
  });
  producer.join();
  EXPECT_EQ(0, task_drops.get()) << "nothing ran before run";
  const auto deadline = Clock::now() + kLong;
  while (task_drops.get() < n && Clock::now() < deadline) {
    ASSERT_EQ(TETHER_OK, tether_executor_run(e.get(), ns_from_ms(10)));
  }
  ASSERT_EQ(n, task_drops.get());
  {  // The same for a task's future: only this thread can run it.
    Future pending;
    ASSERT_EQ(TETHER_OK, submit(e.get(), [](tether_task *) { return TETHER_OK; }, nullptr, pending.out()));
    tether_status rc = -1;
    const auto took_task = elapsed([&] { rc = pending.wait(ns_from_ms(2000)); });
    EXPECT_EQ(TETHER_E_DEADLOCK, rc) << tether_status_name(rc);
    EXPECT_LT(took_task, 1500ms);
    EXPECT_EQ(TETHER_E_TIMEOUT, pending.wait(0));
    ASSERT_EQ(TETHER_OK, tether_executor_run(e.get(), 0));
    EXPECT_EQ(TETHER_SUCCEEDED, pending.outcome());
  }
  ASSERT_EQ(static_cast<size_t>(n), task_tids.size());
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(me, task_tids[i]);
    EXPECT_EQ(i, order[i]);
  }

  // An actor on the manual executor: created and called from another thread, run here.
  Actor a;
  Future f;
  std::thread caller([&] {
    tether_actor_options o = actor_options("manual-actor");
    o.executor = e.get();
    ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st, &ctor_tid), nullptr, a.out()));
    ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [&](tether_task *, void *) {
                method_tids.push_back(tid());
                return TETHER_OK;
              }, nullptr, f.out()));
  });
  caller.join();
  ASSERT_FALSE(f.null());
  EXPECT_EQ(TETHER_PENDING, f.state());
  EXPECT_EQ(TETHER_E_TIMEOUT, f.wait(0));
  // This thread is the only one that can run the call: waiting here outside run is a wait
  // on yourself (contract, "Inside and outside": a manual executor's owner thread outside
  // run). The bound is short so that a library that waits anyway fails fast.
  tether_status self_rc = -1;
  const auto took_self = elapsed([&] { self_rc = f.wait(ns_from_ms(2000)); });
  EXPECT_EQ(TETHER_E_DEADLOCK, self_rc) << tether_status_name(self_rc);
  EXPECT_LT(took_self, 1500ms);
  const auto deadline2 = Clock::now() + kLong;
  while (f.state() != TETHER_SUCCEEDED && Clock::now() < deadline2) {
    ASSERT_EQ(TETHER_OK, tether_executor_run(e.get(), ns_from_ms(10)));
  }
  ASSERT_EQ(TETHER_SUCCEEDED, f.state());
  EXPECT_EQ(me, ctor_tid.load());
  ASSERT_EQ(1u, method_tids.size());
  EXPECT_EQ(me, method_tids[0]);
  EXPECT_EQ(me, actor_stats(a.get()).os_thread_id);

  // Releasing the actor from the owner thread outside run never waits on itself: the handle
  // ends at once and the destructor runs at the next run.
  EXPECT_EQ(TETHER_OK, a.release());
  const auto deadline3 = Clock::now() + kLong;
  while (st.dtors.get() == 0 && Clock::now() < deadline3) {
    ASSERT_EQ(TETHER_OK, tether_executor_run(e.get(), ns_from_ms(10)));
  }
  EXPECT_EQ(1, st.dtors.get());
  EXPECT_EQ(me, st.dtor_tid.load());

  // run from inside one of its own tasks is WRONG_STATE too.
  tether_status nested = -1;
  ASSERT_EQ(TETHER_OK, submit(e.get(), [&](tether_task *) {
              nested = tether_executor_run(e.get(), 0);
              return TETHER_OK;
            }, nullptr, nullptr));
  ASSERT_EQ(TETHER_OK, tether_executor_run(e.get(), ns_from_ms(10)));
  EXPECT_EQ(TETHER_E_WRONG_STATE, nested);
  EXPECT_EQ(TETHER_OK, e.release());
}

// run on a manual executor returns TETHER_E_SHUTDOWN promptly when another thread releases
// it; run on an executor that is not manual is TETHER_E_WRONG_STATE.
TEST(Actor, ManualExecutorRunEndsWithShutdownOnRelease) {
  tether_executor_options eo;
  tether_executor_options_init(&eo);
  eo.manual = 1;
  tether_executor e{};
  ASSERT_EQ(TETHER_OK, tether_executor_create(&eo, &e));
  ASSERT_EQ(TETHER_OK, tether_executor_run(e, 0));  // this thread owns it
  Counter ran;
  ASSERT_EQ(TETHER_OK, submit(e, [&](tether_task *) {
              ran.add();
              return TETHER_OK;
            }, nullptr, nullptr));
  std::thread releaser([&] {
    EXPECT_TRUE(ran.wait_for(1, kLong));
    EXPECT_EQ(TETHER_OK, tether_executor_release(e));
  });
  tether_status rc = -1;
  const auto took = elapsed([&] { rc = tether_executor_run(e, kLongNs); });
  releaser.join();
  EXPECT_EQ(TETHER_E_SHUTDOWN, rc);
  EXPECT_LT(took, kPrompt);
  EXPECT_EQ(1, ran.get());
  EXPECT_EQ(TETHER_E_INVALID_HANDLE, tether_executor_run(e, 0));

  Executor plain;
  ASSERT_EQ(TETHER_OK, tether_executor_create(nullptr, plain.out()));
  EXPECT_EQ(TETHER_E_WRONG_STATE, tether_executor_run(plain.get(), 0));
}

// Owning a manual executor ends with it: once it is released, this thread is inside
// nothing, so a wait here on a pending call of another actor is an ordinary wait
// (TETHER_E_TIMEOUT when it times out), never TETHER_E_DEADLOCK. Many fresh lanes (actors
// with three one-thread groups, on dedicated and shared executors) are made after the
// release, so that one is likely to be allocated where the released executor's was.
TEST(Actor, ManualOwnershipEndsWithTheExecutor) {
  constexpr int kActors = 24;
  const tether_group_spec groups[] = {{"g1", 1}, {"g2", 1}, {"g3", 1}};
  const char *names[] = {"g1", "g2", "g3", nullptr};
  struct Probe {
    Gate gates[4];
    Counter entered;
    ActorState st;
  };
  std::vector<Probe> probes(kActors);  // before the actors: their threads use them
  Executor shared;
  ASSERT_EQ(TETHER_OK, tether_executor_create(nullptr, shared.out()));
  {
    tether_executor_options eo;
    tether_executor_options_init(&eo);
    eo.manual = 1;
    tether_executor m{};
    ASSERT_EQ(TETHER_OK, tether_executor_create(&eo, &m));
    ASSERT_EQ(TETHER_OK, tether_executor_run(m, 0));  // this thread owns it now
    ASSERT_EQ(TETHER_OK, tether_executor_release(m));
  }
  std::vector<Actor> actors(kActors);
  int deadlocks = 0;
  for (int i = 0; i < kActors; ++i) {
    Probe &p = probes[i];
    tether_actor_options o = actor_options("after-manual", groups, 3);
    if (i % 2 == 1) o.executor = shared.get();
    actors[i].open_on_exit({&p.gates[0], &p.gates[1], &p.gates[2], &p.gates[3]});
    ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&p.st), nullptr, actors[i].out()));
    // On the shared executor the default thread is everyone's: block only the groups.
    const int lanes = i % 2 == 1 ? 3 : 4;
    std::vector<Future> pending(4);
    for (int g = 0; g < lanes; ++g) {
      Gate *gate = &p.gates[g];
      Counter *entered = &p.entered;
      ASSERT_EQ(TETHER_OK, call(actors[i].get(), names[g], [gate, entered](tether_task *, void *) -> tether_status {
                  entered->add();
                  return gate->wait_for(kLong) ? TETHER_OK : 1;
                }, nullptr, nullptr));
      ASSERT_EQ(TETHER_OK, call(actors[i].get(), names[g], [](tether_task *, void *) { return TETHER_OK; }, nullptr,
                                pending[g].out()));
    }
    ASSERT_TRUE(p.entered.wait_for(lanes, kLong));
    for (int g = 0; g < lanes; ++g) {
      const tether_status rc = pending[g].wait(ns_from_ms(1));
      deadlocks += rc == TETHER_E_DEADLOCK;
      EXPECT_EQ(TETHER_E_TIMEOUT, rc) << "actor " << i << " group " << (names[g] ? names[g] : "default")
                                      << ": a wait from a thread that owned a released manual executor: "
                                      << tether_status_name(rc) << " (" << last_error() << ")";
    }
    if (deadlocks > 0) break;
  }
  for (int i = 0; i < kActors; ++i) {
    for (Gate &g : probes[i].gates) g.set();
    if (actors[i].get().id != 0) {
      EXPECT_EQ(TETHER_OK, actors[i].release());
      EXPECT_EQ(1, probes[i].st.dtors.get());
    }
  }
}

namespace {

// ensure_control_thread: the library starts its control thread lazily, and that start is
// a thread creation too; start it before a test counts creations or threads.
void ensure_control_thread() {
  if (threads_named("tether-ctl") > 0) return;
  tether_executor e{};
  ASSERT_EQ(TETHER_OK, tether_executor_create(nullptr, &e));
  ASSERT_EQ(TETHER_OK, tether_executor_release_nowait(e));  // the control thread joins it
  ASSERT_TRUE(wait_until([] { return threads_named("tether-ctl") > 0; }, kLong));
  ASSERT_TRUE(wait_until([] { return threads_named("tether-exec") == 0; }, kLong));
}

}  // namespace

// A group whose threads the OS refuses: create fails with TETHER_E_THREAD_CREATE, the
// constructor's arg is dropped once, no constructor ran, and nothing is left behind (no
// thread of the actor, no handle). `k` successes come before the failure: 0 fails the
// default thread, 1..3 the first..third thread of the 3-thread group.
class ThreadCreateFailure : public ::testing::TestWithParam<uint32_t> {};

TEST_P(ThreadCreateFailure, CreateFailsAndLeavesNothingBehind) {
  ensure_control_thread();
  const size_t baseline = thread_count();
  const tether_group_spec groups[] = {{"io", 3}};
  const tether_actor_options o = actor_options("refused", groups, 1);
  Counter drops, ctors;
  ActorState st;
  Actor a;
  tether_debug_fail_thread_create(GetParam());
  const tether_status rc = create_actor(&o, [&](tether_task *, void **out) {
    ctors.add();
    *out = &st;
    return TETHER_OK;
  }, &drops, a.out());
  tether_debug_fail_thread_create(UINT32_MAX);
  EXPECT_EQ(TETHER_E_THREAD_CREATE, rc) << tether_status_name(rc);
  EXPECT_EQ(0u, a.get().id);
  EXPECT_EQ(1, drops.get()) << "the constructor's arg is dropped once, before create returns";
  EXPECT_EQ(0, ctors.get());
  EXPECT_TRUE(threads_gone("refused")) << "a thread of the failed actor was left running";
  EXPECT_TRUE(wait_until([&] { return thread_count() <= baseline; }, kPrompt))
      << thread_count() << " threads, " << baseline << " before";
  EXPECT_EQ(0, st.dtors.get());

  // Disarmed: the same actor can be created now.
  Actor ok;
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, ok.out()));
  Future f;
  ASSERT_EQ(TETHER_OK, call(ok.get(), "io", [](tether_task *, void *) { return TETHER_OK; }, nullptr, f.out()));
  EXPECT_EQ(TETHER_SUCCEEDED, f.outcome());
  EXPECT_EQ(TETHER_OK, ok.release());
  EXPECT_EQ(1, st.dtors.get());
}

INSTANTIATE_TEST_SUITE_P(Actor, ThreadCreateFailure, ::testing::Values(0u, 1u, 2u, 3u),
                         [](const ::testing::TestParamInfo<uint32_t> &info) {
                           return "after_" + std::to_string(info.param) + "_successes";
                         });

// Group threads start methods only once the constructor has returned; a group call queued
// behind a failing constructor fails with TETHER_E_ACTOR_DEAD.
TEST(Actor, GroupMethodsStartOnlyAfterTheConstructor) {
  const tether_group_spec groups[] = {{"io", 2}};
  for (bool ctor_fails : {false, true}) {
    SCOPED_TRACE(ctor_fails ? "constructor fails" : "constructor succeeds");
    Gate ctor_go, ctor_entered;
    std::atomic<bool> ctor_done{false};
    std::atomic<int> ran_before_ctor{0};
    Counter runs;
    ActorState st;
    const tether_actor_options o = actor_options("ctor-first", groups, 1);
    Actor a;
    a.open_on_exit({&ctor_go});
    ASSERT_EQ(TETHER_OK, create_actor(&o, [&](tether_task *t, void **out) -> tether_status {
                ctor_entered.set();
                const bool go = ctor_go.wait_for(kLong);
                *out = &st;
                ctor_done = true;
                if (!go) return 1;
                return ctor_fails ? tether_task_fail(t, 1, "no") : TETHER_OK;
              }, nullptr, a.out()));
    ASSERT_TRUE(ctor_entered.wait_for(kLong));
    std::vector<Future> fs(4);
    for (Future &f : fs) {
      ASSERT_EQ(TETHER_OK, call(a.get(), "io", [&](tether_task *, void *) {
                  if (!ctor_done.load()) ran_before_ctor.fetch_add(1);
                  runs.add();
                  return TETHER_OK;
                }, nullptr, f.out()));
    }
    EXPECT_EQ(TETHER_E_TIMEOUT, fs[0].wait(kShortNs)) << "a group method started while the constructor ran";
    for (Future &f : fs) EXPECT_EQ(TETHER_PENDING, f.state());
    ctor_go.set();
    for (Future &f : fs) {
      ASSERT_EQ(ctor_fails ? TETHER_FAILED : TETHER_SUCCEEDED, f.outcome());
      if (ctor_fails) {
        Err e = f.error();
        EXPECT_EQ(TETHER_E_ACTOR_DEAD, e.code());
        EXPECT_EQ("no", e.cause().message());
      }
    }
    EXPECT_EQ(0, ran_before_ctor.load());
    EXPECT_EQ(ctor_fails ? 0 : 4, runs.get());
    EXPECT_EQ(TETHER_OK, a.release());
    EXPECT_EQ(ctor_fails ? 0 : 1, st.dtors.get());
  }
}

// Methods of a one-thread group run in the order they were queued (ordering is per group),
// while default-group calls interleave freely.
TEST(Actor, OrderingIsPerGroup) {
  const size_t n = scaled(5000);
  const tether_group_spec groups[] = {{"io", 1}};
  const tether_actor_options o = actor_options("per-group", groups, 1);
  std::vector<uint32_t> io_seen, def_seen;  // each touched by one lane thread until the end
  ActorState st;
  Counter drops;
  Actor a;
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(TETHER_OK, call(a.get(), "io", [&, i](tether_task *, void *) {
                io_seen.push_back(static_cast<uint32_t>(i));
                return TETHER_OK;
              }, &drops, nullptr));
    ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [&, i](tether_task *, void *) {
                def_seen.push_back(static_cast<uint32_t>(i));
                return TETHER_OK;
              }, &drops, nullptr));
  }
  Future io_last, def_last;
  ASSERT_EQ(TETHER_OK, call(a.get(), "io", [](tether_task *, void *) { return TETHER_OK; }, nullptr, io_last.out()));
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [](tether_task *, void *) { return TETHER_OK; }, nullptr, def_last.out()));
  ASSERT_EQ(TETHER_SUCCEEDED, io_last.outcome());
  ASSERT_EQ(TETHER_SUCCEEDED, def_last.outcome());
  ASSERT_EQ(n, io_seen.size());
  ASSERT_EQ(n, def_seen.size());
  size_t io_bad = 0, def_bad = 0;
  for (size_t i = 0; i < n; ++i) {
    io_bad += io_seen[i] != i;
    def_bad += def_seen[i] != i;
  }
  EXPECT_EQ(0u, io_bad);
  EXPECT_EQ(0u, def_bad);
  EXPECT_EQ(static_cast<int>(2 * n), drops.get());
  EXPECT_EQ(TETHER_OK, a.release());
}

// The destructor waits until every group is idle: stop with the io group blocked (and the
// default thread idle) times out without running it; it runs once io returns.
TEST(Actor, DestructorWaitsForEveryGroup) {
  const tether_group_spec groups[] = {{"io", 1}};
  const tether_actor_options o = actor_options("dtor-waits", groups, 1);
  Gate gate, entered;
  std::atomic<bool> dtor_saw_io_running{false};
  std::atomic<bool> io_running{false};
  ActorState st;
  st.on_dtor = [&] { dtor_saw_io_running = io_running.load(); };
  std::atomic<uint64_t> ctor_tid{0};
  Actor a;
  a.open_on_exit({&gate});
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st, &ctor_tid), nullptr, a.out()));
  Future blocked;
  ASSERT_EQ(TETHER_OK, call(a.get(), "io", [&](tether_task *, void *) -> tether_status {
              io_running = true;
              entered.set();
              const bool ok = gate.wait_for(kLong);
              io_running = false;
              return ok ? TETHER_OK : 1;
            }, nullptr, blocked.out()));
  ASSERT_TRUE(entered.wait_for(kLong));
  EXPECT_EQ(TETHER_E_TIMEOUT, tether_actor_stop(a.get(), TETHER_STOP_DRAIN, ns_from_ms(50)));
  EXPECT_EQ(0, st.dtors.get()) << "the destructor ran while the io group was busy";
  EXPECT_EQ(TETHER_ACTOR_STOPPED, a.state());
  gate.set();
  EXPECT_EQ(TETHER_OK, tether_actor_stop(a.get(), TETHER_STOP_DRAIN, kLongNs));
  EXPECT_EQ(TETHER_SUCCEEDED, blocked.outcome());
  EXPECT_EQ(1, st.dtors.get());
  EXPECT_FALSE(dtor_saw_io_running.load());
  EXPECT_EQ(ctor_tid.load(), st.dtor_tid.load());
  EXPECT_EQ(TETHER_OK, a.release());
}

// A second stop may turn a DRAIN into a CANCEL: the calls the DRAIN left queued are
// cancelled at once by the CANCEL, and the running method is asked to stop.
TEST(Actor, SecondStopTurnsDrainIntoCancel) {
  Gate entered;
  Counter queued_drops, queued_runs;
  std::atomic<bool> saw_stop{false};
  ActorState st;
  const tether_actor_options o = actor_options("drain-cancel");
  Actor a;
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));
  Future running;
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [&](tether_task *t, void *) {
              entered.set();
              const auto deadline = Clock::now() + kLong;
              while (!tether_task_stop_requested(t) && Clock::now() < deadline) std::this_thread::sleep_for(1ms);
              saw_stop = tether_task_stop_requested(t) != 0;
              return TETHER_OK;
            }, nullptr, running.out()));
  ASSERT_TRUE(entered.wait_for(kLong));
  std::vector<Future> queued(4);
  for (Future &f : queued) {
    ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [&](tether_task *, void *) {
                queued_runs.add();
                return TETHER_OK;
              }, &queued_drops, f.out()));
  }
  EXPECT_EQ(TETHER_E_TIMEOUT, tether_actor_stop(a.get(), TETHER_STOP_DRAIN, 0));
  for (Future &f : queued) EXPECT_EQ(TETHER_PENDING, f.state());
  EXPECT_EQ(0, queued_drops.get());
  const tether_status rc = tether_actor_stop(a.get(), TETHER_STOP_CANCEL, 0);
  EXPECT_TRUE(rc == TETHER_OK || rc == TETHER_E_TIMEOUT) << tether_status_name(rc);
  for (Future &f : queued) EXPECT_EQ(TETHER_CANCELLED, f.state());
  EXPECT_EQ(4, queued_drops.get());
  EXPECT_EQ(TETHER_OK, tether_actor_stop(a.get(), TETHER_STOP_DRAIN, kLongNs));
  EXPECT_TRUE(saw_stop.load());
  EXPECT_EQ(TETHER_CANCELLED, running.outcome());
  EXPECT_EQ(0, queued_runs.get());
  EXPECT_EQ(1, st.dtors.get());
  EXPECT_EQ(TETHER_OK, a.release());
}

// stop(CANCEL) before the constructor even ran (it is queued behind a blocked task on a
// shared executor): the calls queued behind it are cancelled at once; the constructor's
// arg is dropped exactly once; a destructor runs only for a state that was built.
TEST(Actor, StopCancelBeforeTheConstructorRan) {
  Gate gate, entered;
  Counter ctor_drops, ctors, queued_drops;
  ActorState st;
  Executor e;
  e.open_on_exit({&gate});
  ASSERT_EQ(TETHER_OK, tether_executor_create(nullptr, e.out()));
  Future blocker;
  ASSERT_EQ(TETHER_OK, submit(e.get(), [&](tether_task *) -> tether_status {
              entered.set();
              return gate.wait_for(kLong) ? TETHER_OK : 1;
            }, nullptr, blocker.out()));
  ASSERT_TRUE(entered.wait_for(kLong));
  tether_actor_options o = actor_options("early-stop");
  o.executor = e.get();
  Actor a;
  ASSERT_EQ(TETHER_OK, create_actor(&o, [&](tether_task *, void **out) {
              ctors.add();
              *out = &st;
              return TETHER_OK;
            }, &ctor_drops, a.out()));
  std::vector<Future> queued(3);
  for (Future &f : queued) {
    ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [](tether_task *, void *) { return TETHER_OK; }, &queued_drops, f.out()));
  }
  const tether_status rc = tether_actor_stop(a.get(), TETHER_STOP_CANCEL, 0);
  EXPECT_TRUE(rc == TETHER_OK || rc == TETHER_E_TIMEOUT) << tether_status_name(rc);
  for (Future &f : queued) EXPECT_EQ(TETHER_CANCELLED, f.state());
  EXPECT_EQ(3, queued_drops.get());
  gate.set();
  EXPECT_EQ(TETHER_OK, tether_actor_stop(a.get(), TETHER_STOP_CANCEL, kLongNs));
  EXPECT_EQ(TETHER_OK, a.release());
  EXPECT_EQ(1, ctor_drops.get());
  EXPECT_LE(ctors.get(), 1);
  EXPECT_EQ(ctors.get(), st.dtors.get()) << "a destructor exactly for a constructed state";
  EXPECT_EQ(TETHER_OK, e.release());
}

// Calls count against the actor's mailbox and stats, not the executor's: an actor on an
// executor with queue_capacity 1 takes more calls than that while the thread is busy.
TEST(Actor, CallsCountAgainstTheActorNotTheExecutor) {
  Gate gate, entered;
  ActorState st;
  Executor e;
  e.open_on_exit({&gate});
  tether_executor_options eo;
  tether_executor_options_init(&eo);
  eo.queue_capacity = 1;
  ASSERT_EQ(TETHER_OK, tether_executor_create(&eo, e.out()));
  tether_actor_options o = actor_options("own-ledger");
  o.executor = e.get();
  Actor a;
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));
  Future first;
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [](tether_task *, void *) { return TETHER_OK; }, nullptr, first.out()));
  ASSERT_EQ(TETHER_SUCCEEDED, first.outcome());
  Future blocker;
  ASSERT_EQ(TETHER_OK, submit(e.get(), [&](tether_task *) -> tether_status {
              entered.set();
              return gate.wait_for(kLong) ? TETHER_OK : 1;
            }, nullptr, blocker.out()));
  ASSERT_TRUE(entered.wait_for(kLong));
  std::vector<Future> calls(5);
  for (Future &f : calls) {
    ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [](tether_task *, void *) { return TETHER_OK; }, nullptr, f.out()));
  }
  EXPECT_EQ(5u, actor_stats(a.get()).queued);
  EXPECT_EQ(0u, executor_stats(e.get()).queued);
  Future task;
  EXPECT_EQ(TETHER_OK, submit(e.get(), [](tether_task *) { return TETHER_OK; }, nullptr, task.out()));
  EXPECT_EQ(TETHER_E_QUEUE_FULL, submit(e.get(), [](tether_task *) { return TETHER_OK; }, nullptr, nullptr));
  gate.set();
  for (Future &f : calls) EXPECT_EQ(TETHER_SUCCEEDED, f.outcome());
  EXPECT_EQ(TETHER_SUCCEEDED, task.outcome());
  EXPECT_EQ(6u, actor_stats(a.get()).completed);
  EXPECT_EQ(2u, executor_stats(e.get()).completed);
  EXPECT_EQ(TETHER_OK, a.release());
  EXPECT_EQ(TETHER_OK, e.release());
}

// From the inside: stop waits on yourself (TETHER_E_DEADLOCK once the stop has started;
// TETHER_E_TIMEOUT with timeout 0), and release never waits: the handle ends at once and
// the destructor runs once the method has returned.
TEST(Actor, StopAndReleaseFromInside) {
  {
    ActorState st;
    std::atomic<uint64_t> ctor_tid{0};
    const tether_actor_options o = actor_options("stop-inside");
    Actor a;
    ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st, &ctor_tid), nullptr, a.out()));
    const tether_actor h = a.get();
    tether_status rc0 = -1, rc = -1;
    int32_t state_after = -1;
    std::chrono::nanoseconds took{};
    Future f;
    ASSERT_EQ(TETHER_OK, call(h, nullptr, [&](tether_task *, void *) {
                rc0 = tether_actor_stop(h, TETHER_STOP_DRAIN, 0);
                took = elapsed([&] { rc = tether_actor_stop(h, TETHER_STOP_DRAIN, kLongNs); });
                (void)tether_actor_state(h, &state_after, nullptr);
                return TETHER_OK;
              }, nullptr, f.out()));
    ASSERT_EQ(TETHER_SUCCEEDED, f.outcome());
    EXPECT_EQ(TETHER_E_TIMEOUT, rc0);
    EXPECT_EQ(TETHER_E_DEADLOCK, rc);
    EXPECT_LT(took, kPrompt);
    EXPECT_EQ(TETHER_ACTOR_STOPPED, state_after);
    EXPECT_TRUE(st.dtors.wait_for(1, kLong)) << "the stop started from the inside goes on";
    EXPECT_EQ(ctor_tid.load(), st.dtor_tid.load());
    EXPECT_EQ(TETHER_OK, tether_actor_stop(h, TETHER_STOP_DRAIN, kLongNs));
    EXPECT_EQ(TETHER_OK, a.release());
  }
  {
    const tether_group_spec groups[] = {{"io", 2}};
    ActorState st;
    const tether_actor_options o = actor_options("rel-inside", groups, 1);
    Actor a;
    ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));
    const tether_actor h = a.get();
    tether_status rc = -1;
    std::chrono::nanoseconds took{};
    Future f;
    ASSERT_EQ(TETHER_OK, call(h, "io", [&](tether_task *, void *) {
                took = elapsed([&] { rc = tether_actor_release(h); });
                return TETHER_OK;
              }, nullptr, f.out()));
    ASSERT_EQ(TETHER_SUCCEEDED, f.outcome());
    a.forget();
    EXPECT_EQ(TETHER_OK, rc);
    EXPECT_LT(took, kPrompt);
    EXPECT_TRUE(st.dtors.wait_for(1, kLong));
    Counter drops;
    EXPECT_EQ(TETHER_E_INVALID_HANDLE, call(h, nullptr, [](tether_task *, void *) { return TETHER_OK; }, &drops, nullptr));
    EXPECT_EQ(1, drops.get());
    EXPECT_EQ(TETHER_E_INVALID_HANDLE, tether_actor_release(h));
    EXPECT_TRUE(wait_until([] { return threads_named("rel-inside") == 0; }, kLong))
        << "the control thread joins the actor's threads";
  }
}

// A stop waiting on the actor returns TETHER_E_INVALID_HANDLE promptly when another thread
// releases the handle; the release goes on and the destructor still runs.
TEST(Actor, StopWaiterSeesInvalidHandleWhenReleased) {
  Gate gate, entered, stopping;
  ActorState st;
  const tether_actor_options o = actor_options("stop-waiter");
  Actor a;
  a.open_on_exit({&gate});
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));
  const tether_actor h = a.get();
  Future blocked;
  ASSERT_EQ(TETHER_OK, call(h, nullptr, [&](tether_task *, void *) -> tether_status {
              entered.set();
              return gate.wait_for(kLong) ? TETHER_OK : 1;
            }, nullptr, blocked.out()));
  ASSERT_TRUE(entered.wait_for(kLong));
  auto waiter = std::async(std::launch::async, [&] {
    stopping.set();
    return tether_actor_stop(h, TETHER_STOP_DRAIN, kLongNs);
  });
  ASSERT_TRUE(stopping.wait_for(kLong));
  ASSERT_EQ(TETHER_OK, tether_actor_release_nowait(h));
  a.forget();
  ASSERT_EQ(std::future_status::ready, waiter.wait_for(kPrompt)) << "the stop kept waiting on a released handle";
  EXPECT_EQ(TETHER_E_INVALID_HANDLE, waiter.get());
  EXPECT_EQ(0, st.dtors.get());
  gate.set();
  EXPECT_EQ(TETHER_SUCCEEDED, blocked.outcome());
  EXPECT_TRUE(st.dtors.wait_for(1, kLong));
  EXPECT_TRUE(wait_until([] { return threads_named("stop-waiter") == 0; }, kLong));
}

// Bad handles, modes and arguments: the right status, every arg dropped exactly once.
TEST(Actor, BadHandlesAndArguments) {
  ActorState st;
  Counter drops;
  auto ok_method = [](tether_task *, void *) { return TETHER_OK; };
  Executor e;
  ASSERT_EQ(TETHER_OK, tether_executor_create(nullptr, e.out()));
  const tether_actor_options o = actor_options("bad-args");
  Actor a;
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));

  EXPECT_EQ(TETHER_E_INVALID_ARGUMENT, tether_actor_stop(a.get(), 7, 0));
  EXPECT_EQ(TETHER_ACTOR_ALIVE, a.state()) << "a stop with an unknown mode stops nothing";
  EXPECT_EQ(TETHER_E_INVALID_ARGUMENT, tether_actor_state(a.get(), nullptr, nullptr));
  EXPECT_EQ(TETHER_E_INVALID_ARGUMENT, tether_actor_call(a.get(), nullptr, nullptr, &drops, count_drop, nullptr));
  EXPECT_EQ(1, drops.get());
  const tether_actor wrong_kind{e.get().id};
  EXPECT_EQ(TETHER_E_INVALID_HANDLE, call(wrong_kind, nullptr, ok_method, &drops, nullptr));
  EXPECT_EQ(2, drops.get());
  EXPECT_EQ(TETHER_E_INVALID_HANDLE, call(tether_actor{0}, nullptr, ok_method, &drops, nullptr));
  EXPECT_EQ(3, drops.get());
  int32_t s = -1;
  EXPECT_EQ(TETHER_E_INVALID_HANDLE, tether_actor_state(wrong_kind, &s, nullptr));

  // create: NULL ctor, NULL out, a struct_size too large, a released executor.
  tether_actor out{};
  EXPECT_EQ(TETHER_E_INVALID_ARGUMENT, tether_actor_create(&o, nullptr, nullptr, &drops, count_drop, &out)) << "NULL ctor";
  EXPECT_EQ(4, drops.get());
  EXPECT_EQ(0u, out.id);
  EXPECT_EQ(TETHER_E_INVALID_ARGUMENT, create_actor(&o, ctor_with_state(&st), &drops, nullptr)) << "NULL out";
  EXPECT_EQ(5, drops.get());
  tether_actor_options big = o;
  big.struct_size = sizeof big + 8;
  EXPECT_EQ(TETHER_E_INVALID_ARGUMENT, create_actor(&big, ctor_with_state(&st), &drops, &out));
  EXPECT_EQ(6, drops.get());
  EXPECT_EQ(0u, out.id);
  tether_executor gone{};
  ASSERT_EQ(TETHER_OK, tether_executor_create(nullptr, &gone));
  ASSERT_EQ(TETHER_OK, tether_executor_release(gone));
  tether_actor_options on_gone = o;
  on_gone.executor = gone;
  EXPECT_EQ(TETHER_E_INVALID_HANDLE, create_actor(&on_gone, ctor_with_state(&st), &drops, &out));
  EXPECT_EQ(7, drops.get());

  const tether_actor h = a.get();
  EXPECT_EQ(TETHER_OK, a.release());
  EXPECT_EQ(1, st.dtors.get());
  EXPECT_EQ(TETHER_E_INVALID_HANDLE, tether_actor_release(h)) << "releasing twice";
  EXPECT_EQ(TETHER_E_INVALID_HANDLE, tether_actor_release_nowait(h));
  EXPECT_EQ(TETHER_E_INVALID_HANDLE, tether_actor_stop(h, TETHER_STOP_DRAIN, 0));
  EXPECT_EQ(TETHER_E_INVALID_HANDLE, call(h, nullptr, ok_method, &drops, nullptr));
  EXPECT_EQ(8, drops.get());
  const tether_executor eh = e.get();
  EXPECT_EQ(TETHER_OK, e.release());
  EXPECT_EQ(TETHER_E_INVALID_HANDLE, tether_executor_release(eh));
  EXPECT_EQ(TETHER_E_INVALID_HANDLE, submit(eh, [](tether_task *) { return TETHER_OK; }, &drops, nullptr));
  EXPECT_EQ(9, drops.get());
}

namespace {

// ActorTls: a thread_local with a destructor, armed on an actor's threads.
Counter g_actor_tls_destroyed;
struct ActorTls {
  bool armed = false;
  ~ActorTls() {
    if (armed) g_actor_tls_destroyed.add();
  }
};
thread_local ActorTls tl_actor;

}  // namespace

// release is stop(DRAIN) waited to the end plus the end of the actor's own threads: when
// it returns, the default thread and the group threads have ended (their thread-local
// destructors ran) and none of them is left.
TEST(Actor, ReleaseEndsTheActorsOwnThreads) {
  const int before = g_actor_tls_destroyed.get();
  const tether_group_spec groups[] = {{"io", 2}};
  const tether_actor_options o = actor_options("own-threads", groups, 1);
  ActorState st;
  Actor a;
  ASSERT_EQ(TETHER_OK, create_actor(&o, [&](tether_task *, void **out) {
              tl_actor.armed = true;  // the default thread
              *out = &st;
              return TETHER_OK;
            }, nullptr, a.out()));
  // Arm both io threads: two calls that wait for each other run on both.
  Counter barrier;
  std::vector<Future> fs(2);
  for (Future &f : fs) {
    ASSERT_EQ(TETHER_OK, call(a.get(), "io", [&](tether_task *, void *) -> tether_status {
                tl_actor.armed = true;
                barrier.add();
                return barrier.wait_for(2, kLong) ? TETHER_OK : 1;
              }, nullptr, f.out()));
  }
  for (Future &f : fs) ASSERT_EQ(TETHER_SUCCEEDED, f.outcome());
  EXPECT_EQ(3u, threads_named("own-threads"));
  EXPECT_EQ(before, g_actor_tls_destroyed.get());
  EXPECT_EQ(TETHER_OK, a.release());
  EXPECT_EQ(1, st.dtors.get());
  EXPECT_EQ(before + 3, g_actor_tls_destroyed.get()) << "release returned before the actor's threads ended";
  EXPECT_TRUE(threads_gone("own-threads"));
}

// A fire-and-forget call whose nested thread fails: the failure is counted in the actor's
// stats and kept (tether_actor_error), never lost, even though the method returned OK.
TEST(Actor, FireAndForgetNestedFailureIsKept) {
  ActorState st;
  Counter nested_drops;
  const tether_actor_options o = actor_options("ff-nested");
  Actor a;
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [&](tether_task *t, void *) {
              return spawn(t, "ff-nested-1", [](tether_task *nt) { return tether_task_fail(nt, 31, "nested lost?"); },
                           &nested_drops);
            }, nullptr, nullptr));
  ASSERT_TRUE(wait_until([&] { return actor_stats(a.get()).failed == 1; }, kLong)) << "the failure was not counted";
  Err kept;
  ASSERT_EQ(TETHER_OK, tether_actor_error(a.get(), 0, kept.out()));
  EXPECT_EQ(TETHER_E_TASK_FAILED, kept.code());
  EXPECT_EQ(31, kept.user_code());
  EXPECT_EQ("nested lost?", kept.message());
  EXPECT_EQ("ff-nested-1", kept.thread_name());
  EXPECT_EQ(0u, actor_stats(a.get()).completed);
  EXPECT_TRUE(nested_drops.wait_for(1, kLong));
  EXPECT_EQ(TETHER_OK, a.release());
  EXPECT_EQ(1, st.dtors.get());
}
