// Futures (contract section 7) of executor tasks and actor calls, and nested threads
// spawned inside an actor's method (section 8).
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "actors_support.h"

using namespace at;

namespace {

// Result: a task result whose drop is counted.
struct Result {
  int value;
  Counter *drops;
};
void result_drop(void *p) {
  auto *r = static_cast<Result *>(p);
  Counter *drops = r->drops;
  delete r;
  if (drops != nullptr) drops->add();
}

tether_executor_options exec_options(const char *name) {
  tether_executor_options o;
  tether_executor_options_init(&o);
  o.name = name;
  return o;
}

// BlockedExecutor: an executor whose thread is held by a blocker task until open().
struct BlockedExecutor {
  Gate gate, entered;
  Executor e;
  Future blocker;
  explicit BlockedExecutor(const char *name) {
    e.open_on_exit({&gate});
    const tether_executor_options o = exec_options(name);
    EXPECT_EQ(TETHER_OK, tether_executor_create(&o, e.out()));
    EXPECT_EQ(TETHER_OK, submit(e.get(), [this](tether_task *) -> tether_status {
                entered.set();
                return gate.wait_for(kLong) ? TETHER_OK : 1;
              }, nullptr, blocker.out()));
    EXPECT_TRUE(entered.wait_for(kLong));
  }
  void open() { gate.set(); }
  ~BlockedExecutor() { gate.set(); }
};

// on_done notice: counts its runs and records the thread.
struct Notice {
  Counter runs;
  Counter drops;
  std::atomic<uint64_t> thread{0};
};
void notice_fn(void *arg) {
  auto *n = static_cast<Notice *>(arg);
  n->thread.store(tid());
  n->runs.add();
}
void notice_drop(void *arg) { static_cast<Notice *>(arg)->drops.add(); }

}  // namespace

// wait with a timeout: TETHER_E_TIMEOUT while the work runs, TETHER_OK once terminal
// (whatever the outcome).
TEST(Future, WaitTimesOut) {
  BlockedExecutor be("wait-timeout");
  Future pending;
  ASSERT_EQ(TETHER_OK, submit(be.e.get(), [](tether_task *) { return 4; }, nullptr, pending.out()));
  const auto took = elapsed([&] { EXPECT_EQ(TETHER_E_TIMEOUT, be.blocker.wait(kShortNs)); });
  EXPECT_GE(took, std::chrono::nanoseconds(kShortNs));
  EXPECT_EQ(TETHER_E_TIMEOUT, pending.wait(0));
  EXPECT_EQ(TETHER_RUNNING, be.blocker.state());
  EXPECT_EQ(TETHER_PENDING, pending.state());
  be.open();
  EXPECT_EQ(TETHER_OK, be.blocker.wait(kLongNs));
  EXPECT_EQ(TETHER_SUCCEEDED, be.blocker.state());
  EXPECT_EQ(TETHER_OK, pending.wait(kLongNs)) << "wait is OK once terminal, even when the work failed";
  EXPECT_EQ(TETHER_FAILED, pending.state());
  EXPECT_EQ(TETHER_OK, pending.wait(0));
}

// take_result works once, on a SUCCEEDED future; the caller owns the value (its drop does
// not run). A result nobody takes, or of work that failed, is dropped once.
TEST(Future, TakeResultOnce) {
  Counter drops;
  Executor e;
  ASSERT_EQ(TETHER_OK, tether_executor_create(nullptr, e.out()));
  {
    Future f;
    ASSERT_EQ(TETHER_OK, submit(e.get(), [&](tether_task *t) {
                return tether_task_set_result(t, new Result{42, &drops}, result_drop);
              }, nullptr, f.out()));
    ASSERT_EQ(TETHER_SUCCEEDED, f.outcome());
    void *out = nullptr;
    ASSERT_EQ(TETHER_OK, tether_future_take_result(f.get(), &out));
    ASSERT_NE(nullptr, out);
    EXPECT_EQ(42, static_cast<Result *>(out)->value);
    void *again = reinterpret_cast<void *>(1);
    EXPECT_EQ(TETHER_E_WRONG_STATE, tether_future_take_result(f.get(), &again));
    EXPECT_EQ(TETHER_OK, f.release());
    EXPECT_EQ(0, drops.get()) << "a taken result is the caller's";
    delete static_cast<Result *>(out);
  }
  {  // not taken: dropped once when the future goes
    Future f;
    ASSERT_EQ(TETHER_OK, submit(e.get(), [&](tether_task *t) {
                return tether_task_set_result(t, new Result{1, &drops}, result_drop);
              }, nullptr, f.out()));
    ASSERT_EQ(TETHER_SUCCEEDED, f.outcome());
    EXPECT_EQ(TETHER_OK, f.release());
    EXPECT_TRUE(drops.wait_for(1, kLong));
  }
  {  // the work failed after setting a result: no take, the result is dropped once
    Future f;
    ASSERT_EQ(TETHER_OK, submit(e.get(), [&](tether_task *t) {
                (void)tether_task_set_result(t, new Result{2, &drops}, result_drop);
                return tether_task_fail(t, 1, "after the result");
              }, nullptr, f.out()));
    ASSERT_EQ(TETHER_FAILED, f.outcome());
    void *out = nullptr;
    EXPECT_EQ(TETHER_E_WRONG_STATE, tether_future_take_result(f.get(), &out));
    EXPECT_EQ(nullptr, out);
    EXPECT_EQ(TETHER_OK, f.release());
    EXPECT_TRUE(drops.wait_for(2, kLong));
  }
  EXPECT_EQ(TETHER_OK, e.release());
  EXPECT_EQ(2, drops.get());
}

// The same on an actor call's future (a CallFuture): a taken result is the caller's; one
// nobody took is dropped once, when the future goes (not at this thread's next wait: a
// future whose drop would run user code is never put off, core/future_graveyard.h).
TEST(Future, ActorCallTakeResultOnce) {
  Counter drops;
  ActorState st;
  const tether_actor_options o = actor_options("take-once");
  Actor a;
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));
  auto set_result = [&](int value) {
    return [&drops, value](tether_task *t, void *) {
      return tether_task_set_result(t, new Result{value, &drops}, result_drop);
    };
  };
  for (int round = 0; round < 3; ++round) {  // a graveyard with entries from the rounds before
    Future taken, untaken;
    ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, set_result(42), nullptr, taken.out()));
    ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, set_result(1), nullptr, untaken.out()));
    ASSERT_EQ(TETHER_SUCCEEDED, taken.outcome());
    void *out = nullptr;
    ASSERT_EQ(TETHER_OK, tether_future_take_result(taken.get(), &out));
    ASSERT_NE(nullptr, out);
    void *again = reinterpret_cast<void *>(1);
    EXPECT_EQ(TETHER_E_WRONG_STATE, tether_future_take_result(taken.get(), &again));
    EXPECT_EQ(nullptr, again);
    EXPECT_EQ(TETHER_OK, taken.release());
    ASSERT_EQ(TETHER_SUCCEEDED, untaken.outcome());
    EXPECT_EQ(round, drops.get()) << "a taken result is the caller's";
    EXPECT_EQ(TETHER_OK, untaken.release());
    // Dropped by the release, or by the lane if it still held the call (a bounded wait,
    // not this thread's next wait: nothing on this thread waits on a future meanwhile).
    EXPECT_TRUE(drops.wait_for(round + 1, kLong)) << "an untaken result is dropped once its future goes";
    EXPECT_EQ(42, static_cast<Result *>(out)->value);
    delete static_cast<Result *>(out);
  }
  EXPECT_EQ(TETHER_OK, a.release());
  EXPECT_EQ(3, drops.get());
  EXPECT_EQ(1, st.dtors.get());
}

// A cancel racing the end of a running actor call, while the caller waits: the call ends
// once, SUCCEEDED or CANCELLED, and what the waiter, the take and the release see agrees
// with that end (a cancel that comes after the end, or during it, changes nothing; under
// ThreadSanitizer this also checks that only the ending thread publishes the answer).
TEST(Future, ActorCallCancelRacingItsEnd) {
  ActorState st;
  const tether_actor_options o = actor_options("cancel-race");
  Actor a;
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));
  int succeeded = 0, cancelled = 0;
  for (int round = 0; round < 300; ++round) {
    Gate started;
    Future f;
    ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [&started, round](tether_task *t, void *) {
                started.set();
                return tether_task_set_result(t, reinterpret_cast<void *>(static_cast<intptr_t>(round + 1)), nullptr);
              }, nullptr, f.out()));
    ASSERT_TRUE(started.wait_for(kLong));
    std::thread canceller([&] { EXPECT_EQ(TETHER_OK, tether_future_cancel(f.get())); });
    ASSERT_EQ(TETHER_OK, f.wait(kLongNs));
    canceller.join();
    const int32_t end = f.state();
    void *out = nullptr;
    if (end == TETHER_SUCCEEDED) {
      ++succeeded;
      EXPECT_EQ(TETHER_OK, tether_future_take_result(f.get(), &out));
      EXPECT_EQ(reinterpret_cast<void *>(static_cast<intptr_t>(round + 1)), out);
    } else {
      ++cancelled;
      EXPECT_EQ(TETHER_CANCELLED, end) << "a method that returned OK ends SUCCEEDED or, asked to stop, CANCELLED";
      EXPECT_EQ(TETHER_E_WRONG_STATE, tether_future_take_result(f.get(), &out));
    }
    EXPECT_EQ(end, f.state()) << "it ended once";
    EXPECT_EQ(TETHER_OK, f.release());
  }
  EXPECT_EQ(300, succeeded + cancelled);
  EXPECT_EQ(TETHER_OK, a.release());
  EXPECT_EQ(1, st.dtors.get());
}

// take_result with a NULL out is TETHER_E_INVALID_ARGUMENT and must not consume the
// result: a later take gets it, and nothing is leaked or dropped.
TEST(Future, TakeResultWithNullOutDoesNotConsumeTheResult) {
  Counter drops;
  Executor e;
  ASSERT_EQ(TETHER_OK, tether_executor_create(nullptr, e.out()));
  Future f;
  ASSERT_EQ(TETHER_OK, submit(e.get(), [&](tether_task *t) {
              return tether_task_set_result(t, new Result{77, &drops}, result_drop);
            }, nullptr, f.out()));
  ASSERT_EQ(TETHER_SUCCEEDED, f.outcome());
  EXPECT_EQ(TETHER_E_INVALID_ARGUMENT, tether_future_take_result(f.get(), nullptr));
  void *out = nullptr;
  const tether_status rc = tether_future_take_result(f.get(), &out);
  EXPECT_EQ(TETHER_OK, rc) << "the NULL-out call consumed the result: " << tether_status_name(rc);
  if (out != nullptr) {
    EXPECT_EQ(77, static_cast<Result *>(out)->value);
    result_drop(out);  // ours now: counted by hand
  }
  EXPECT_EQ(TETHER_OK, f.release());
  EXPECT_EQ(TETHER_OK, e.release());
  EXPECT_EQ(1, drops.get()) << "the result must be taken (then freed here) exactly once, never lost";
}

// cancel on PENDING work (queued behind a blocked task): CANCELLED at once, its arg dropped
// before cancel returns, and the work never runs.
TEST(Future, CancelPendingNeverRuns) {
  Counter drops, runs;
  BlockedExecutor be("cancel-pending");
  Future f, next;
  ASSERT_EQ(TETHER_OK, submit(be.e.get(), [&](tether_task *) {
              runs.add();
              return TETHER_OK;
            }, &drops, f.out()));
  ASSERT_EQ(TETHER_OK, submit(be.e.get(), [&](tether_task *) { return TETHER_OK; }, nullptr, next.out()));
  ASSERT_EQ(TETHER_PENDING, f.state());
  ASSERT_EQ(TETHER_OK, tether_future_cancel(f.get()));
  EXPECT_EQ(1, drops.get()) << "the arg is dropped before cancel returns";
  EXPECT_EQ(TETHER_CANCELLED, f.state());
  EXPECT_EQ(TETHER_E_CANCELLED, f.error().code());
  EXPECT_EQ(TETHER_OK, tether_future_cancel(f.get())) << "cancel on a terminal future changes nothing";
  EXPECT_EQ(TETHER_CANCELLED, f.state());
  be.open();
  EXPECT_EQ(TETHER_SUCCEEDED, next.outcome());
  EXPECT_EQ(TETHER_CANCELLED, f.state());
  EXPECT_EQ(0, runs.get());
  EXPECT_EQ(1, drops.get());
  EXPECT_EQ(1u, executor_stats(be.e.get()).cancelled);
}

// cancel on an actor call queued behind a blocked method: the same.
TEST(Future, CancelPendingActorCall) {
  Gate gate, entered;
  Counter drops, runs;
  ActorState st;
  const tether_actor_options o = actor_options("cancel-call");
  Actor a;
  a.open_on_exit({&gate});
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));
  Future blocker, f;
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [&](tether_task *, void *) -> tether_status {
              entered.set();
              return gate.wait_for(kLong) ? TETHER_OK : 1;
            }, nullptr, blocker.out()));
  ASSERT_TRUE(entered.wait_for(kLong));
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [&](tether_task *, void *) {
              runs.add();
              return TETHER_OK;
            }, &drops, f.out()));
  ASSERT_EQ(TETHER_OK, tether_future_cancel(f.get()));
  EXPECT_EQ(1, drops.get());
  EXPECT_EQ(TETHER_CANCELLED, f.state());
  gate.set();
  EXPECT_EQ(TETHER_SUCCEEDED, blocker.outcome());
  EXPECT_EQ(TETHER_OK, a.release());
  EXPECT_EQ(0, runs.get());
  EXPECT_EQ(1, drops.get());
  EXPECT_EQ(1, st.dtors.get());
}

// cancel on RUNNING work: the task sees stop_requested; returning OK then ends CANCELLED
// (its result dropped); failing then ends FAILED.
TEST(Future, CancelRunningRequestsStop) {
  Executor e;
  ASSERT_EQ(TETHER_OK, tether_executor_create(nullptr, e.out()));
  for (bool fail_after : {false, true}) {
    SCOPED_TRACE(fail_after ? "fails after the stop" : "returns OK after the stop");
    Gate entered;
    Counter drops, result_drops;
    std::atomic<bool> saw_stop{false};
    Future f;
    ASSERT_EQ(TETHER_OK, submit(e.get(), [&, fail_after](tether_task *t) -> tether_status {
                entered.set();
                const auto deadline = Clock::now() + kLong;
                while (!tether_task_stop_requested(t) && Clock::now() < deadline) std::this_thread::sleep_for(1ms);
                saw_stop = tether_task_stop_requested(t) != 0;
                (void)tether_task_set_result(t, new Result{3, &result_drops}, result_drop);
                return fail_after ? tether_task_fail(t, 8, "failed while cancelled") : TETHER_OK;
              }, &drops, f.out()));
    ASSERT_TRUE(entered.wait_for(kLong));
    EXPECT_EQ(TETHER_RUNNING, f.state());
    const tether_executor_stats before = executor_stats(e.get());
    ASSERT_EQ(TETHER_OK, tether_future_cancel(f.get()));
    ASSERT_EQ(TETHER_OK, f.wait(kLongNs));
    EXPECT_TRUE(saw_stop.load());
    // Counted as the future ended, and before it showed it: read right after the wait.
    const tether_executor_stats after = executor_stats(e.get());
    EXPECT_EQ(before.completed, after.completed) << "never counted completed: its future did not succeed";
    Err err = f.error();
    if (fail_after) {
      EXPECT_EQ(TETHER_FAILED, f.state());
      EXPECT_EQ(TETHER_E_TASK_FAILED, err.code());
      EXPECT_EQ(8, err.user_code());
      EXPECT_EQ(before.failed + 1, after.failed);
      EXPECT_EQ(before.cancelled, after.cancelled);
    } else {
      EXPECT_EQ(TETHER_CANCELLED, f.state());
      EXPECT_EQ(TETHER_E_CANCELLED, err.code());
      EXPECT_EQ(before.cancelled + 1, after.cancelled) << "returned OK after the stop: CANCELLED, counted so";
      EXPECT_EQ(before.failed, after.failed);
    }
    void *out = nullptr;
    EXPECT_EQ(TETHER_E_WRONG_STATE, tether_future_take_result(f.get(), &out));
    EXPECT_EQ(TETHER_OK, f.release());
    EXPECT_TRUE(result_drops.wait_for(1, kLong)) << "the result of work that did not succeed is dropped";
    EXPECT_TRUE(drops.wait_for(1, kLong));
  }
  EXPECT_EQ(TETHER_OK, e.release());
}

// A call is counted in the state its future ends in: a task that returns OK while its
// nested thread then fails ends FAILED, counted failed (not completed), once.
TEST(Future, CountedAsItsFutureEndsWhenANestedThreadFails) {
  Gate target_returned;
  Executor e;
  e.open_on_exit({&target_returned});
  ASSERT_EQ(TETHER_OK, tether_executor_create(nullptr, e.out()));
  Future f;
  ASSERT_EQ(TETHER_OK, submit(e.get(), [&](tether_task *t) -> tether_status {
              return spawn(t, "late-fail", [&](tether_task *n) -> tether_status {
                return target_returned.wait_for(kLong) ? tether_task_fail(n, 5, "nested failure") : TETHER_OK;
              }, nullptr);
            }, nullptr, f.out()));
  ASSERT_TRUE(wait_until([&] { return executor_stats(e.get()).queued == 0; }, kLong));
  // The target has started; its nested thread waits for the gate. Nothing is counted yet.
  ASSERT_TRUE(wait_until([&] { return threads_named("late-fail") == 1; }, kLong));
  EXPECT_EQ(0u, executor_stats(e.get()).completed);
  target_returned.set();
  ASSERT_EQ(TETHER_OK, f.wait(kLongNs));
  EXPECT_EQ(TETHER_FAILED, f.state());
  const tether_executor_stats s = executor_stats(e.get());
  EXPECT_EQ(0u, s.completed);
  EXPECT_EQ(1u, s.failed);
  EXPECT_EQ(0u, s.cancelled);
  EXPECT_EQ(TETHER_OK, f.release());
  EXPECT_EQ(TETHER_OK, e.release());
}

// The executor may end before a call's nested thread does (release_nowait, its thread
// gone); the call is counted when that thread ends, so the executor's ledger must still
// be there (under ASan and valgrind a use after free otherwise).
TEST(Future, NestedThreadOutlivingItsExecutorIsCountedSafely) {
  const size_t unjoined_before = tether_debug_unjoined_threads();
  tether_executor_options eo;
  tether_executor_options_init(&eo);
  eo.name = "outlived-exec";
  Executor e;
  ASSERT_EQ(TETHER_OK, tether_executor_create(&eo, e.out()));
  Gate nested_go;
  struct OpenAtEnd {
    Gate &gate;
    ~OpenAtEnd() { gate.set(); }
  } open_at_end{nested_go};  // a failed assertion does not leave the nested thread waiting
  Counter nested_runs;
  Future f;
  ASSERT_EQ(TETHER_OK, submit(e.get(), [&](tether_task *t) -> tether_status {
              return spawn(t, "outliving", [&](tether_task *) -> tether_status {
                const bool go = nested_go.wait_for(kLong);
                nested_runs.add();
                return go ? TETHER_OK : 1;
              }, nullptr);
            }, nullptr, f.out()));
  ASSERT_TRUE(wait_until([] { return threads_named("outliving") == 1; }, kLong));
  ASSERT_EQ(TETHER_OK, tether_executor_release_nowait(std::exchange(*e.out(), tether_executor{})));
  ASSERT_TRUE(wait_until([] { return threads_named("outlived-exec") == 0; }, kLong)) << "the executor's thread ended";
  EXPECT_EQ(TETHER_RUNNING, f.state());
  nested_go.set();
  ASSERT_EQ(TETHER_OK, f.wait(kLongNs));
  EXPECT_EQ(TETHER_SUCCEEDED, f.state());
  EXPECT_EQ(1, nested_runs.get());
  EXPECT_EQ(TETHER_OK, f.release());
  // Nobody joins an orphaned thread by hand: the control thread does, once it exited.
  EXPECT_TRUE(wait_until([&] { return tether_debug_unjoined_threads() == unjoined_before; }, kLong));
}

// wait_any: the lowest index of a terminal future; n == 0 or NULL is INVALID_ARGUMENT; an
// invalid handle is INVALID_HANDLE with *index its position; a timeout leaves *index alone.
TEST(Future, WaitAny) {
  BlockedExecutor b1("any-1");
  BlockedExecutor b2("any-2");
  Executor free_exec;
  ASSERT_EQ(TETHER_OK, tether_executor_create(nullptr, free_exec.out()));
  Future p1, p2, d1, d2;
  ASSERT_EQ(TETHER_OK, submit(b1.e.get(), [](tether_task *) { return TETHER_OK; }, nullptr, p1.out()));
  ASSERT_EQ(TETHER_OK, submit(b2.e.get(), [](tether_task *) { return TETHER_OK; }, nullptr, p2.out()));
  ASSERT_EQ(TETHER_OK, submit(free_exec.get(), [](tether_task *) { return TETHER_OK; }, nullptr, d1.out()));
  ASSERT_EQ(TETHER_OK, submit(free_exec.get(), [](tether_task *) { return 1; }, nullptr, d2.out()));
  ASSERT_EQ(TETHER_OK, d1.wait());
  ASSERT_EQ(TETHER_OK, d2.wait());

  size_t index = 12345;
  {
    const tether_future fs[] = {p1.get(), d2.get(), d1.get()};
    EXPECT_EQ(TETHER_OK, tether_future_wait_any(fs, 3, 0, &index));
    EXPECT_EQ(1u, index) << "the lowest index of a terminal future";
    index = 12345;
    EXPECT_EQ(TETHER_OK, tether_future_wait_any(fs, 3, kLongNs, &index));
    EXPECT_EQ(1u, index);
  }
  {
    const tether_future fs[] = {p1.get(), p2.get()};
    index = 12345;
    EXPECT_EQ(TETHER_E_TIMEOUT, tether_future_wait_any(fs, 2, kShortNs, &index));
    EXPECT_EQ(12345u, index) << "a timeout leaves *index untouched";
    EXPECT_EQ(TETHER_E_TIMEOUT, tether_future_wait_any(fs, 2, 0, &index));
    EXPECT_EQ(12345u, index);
    EXPECT_EQ(TETHER_E_INVALID_ARGUMENT, tether_future_wait_any(fs, 0, 0, &index));
    EXPECT_EQ(TETHER_E_INVALID_ARGUMENT, tether_future_wait_any(nullptr, 2, 0, &index));
    EXPECT_EQ(TETHER_E_INVALID_ARGUMENT, tether_future_wait_any(fs, 2, 0, nullptr));
    EXPECT_EQ(12345u, index);

    // A blocking wait_any wakes when one of them completes: the second.
    b2.open();
    EXPECT_EQ(TETHER_OK, tether_future_wait_any(fs, 2, kLongNs, &index));
    EXPECT_EQ(1u, index);
  }
  {
    Future released;
    ASSERT_EQ(TETHER_OK, submit(free_exec.get(), [](tether_task *) { return TETHER_OK; }, nullptr, released.out()));
    const tether_future gone = released.get();
    ASSERT_EQ(TETHER_OK, released.release());
    const tether_future fs[] = {p1.get(), d1.get(), gone, tether_future{0}};
    index = 12345;
    EXPECT_EQ(TETHER_E_INVALID_HANDLE, tether_future_wait_any(fs, 4, 0, &index));
    EXPECT_EQ(2u, index) << "*index is the position of the invalid handle";
    const tether_future fs2[] = {p1.get(), tether_future{0}};
    EXPECT_EQ(TETHER_E_INVALID_HANDLE, tether_future_wait_any(fs2, 2, 0, &index));
    EXPECT_EQ(1u, index);
  }
  b1.open();
  EXPECT_EQ(TETHER_SUCCEEDED, p1.outcome());
}

// on_done runs fn exactly once when the future becomes terminal, on the thread that
// completes it (or at once on the caller if it already is), then drops arg; several may
// be registered; fn still runs when the future was released first.
TEST(Future, OnDoneRunsExactlyOnce) {
  Notice n1, n2, n3;  // before the executor: its thread may run them until it ends
  uint64_t exec_tid = 0;
  BlockedExecutor be("on-done");
  Future f;
  ASSERT_EQ(TETHER_OK, submit(be.e.get(), [&](tether_task *) {
              exec_tid = tid();
              return TETHER_OK;
            }, nullptr, f.out()));
  ASSERT_EQ(TETHER_OK, tether_future_on_done(f.get(), notice_fn, &n1, notice_drop));
  ASSERT_EQ(TETHER_OK, tether_future_on_done(f.get(), notice_fn, &n2, notice_drop));
  // A third on a future released before the work ends.
  Future released;
  ASSERT_EQ(TETHER_OK, submit(be.e.get(), [](tether_task *) { return TETHER_OK; }, nullptr, released.out()));
  ASSERT_EQ(TETHER_OK, tether_future_on_done(released.get(), notice_fn, &n3, notice_drop));
  ASSERT_EQ(TETHER_OK, released.release());
  EXPECT_EQ(0, n1.runs.get());
  EXPECT_EQ(0, n3.runs.get());

  be.open();
  ASSERT_EQ(TETHER_SUCCEEDED, f.outcome());
  EXPECT_TRUE(n1.runs.wait_for(1, kLong));
  EXPECT_TRUE(n2.runs.wait_for(1, kLong));
  EXPECT_TRUE(n3.runs.wait_for(1, kLong)) << "fn runs even though the future was released first";
  EXPECT_TRUE(n1.drops.wait_for(1, kLong));
  EXPECT_TRUE(n2.drops.wait_for(1, kLong));
  EXPECT_TRUE(n3.drops.wait_for(1, kLong));
  EXPECT_EQ(exec_tid, n1.thread.load()) << "on the thread that completed it";
  EXPECT_EQ(exec_tid, n2.thread.load());

  // Already terminal: at once, on the caller.
  Notice n4;
  ASSERT_EQ(TETHER_OK, tether_future_on_done(f.get(), notice_fn, &n4, notice_drop));
  EXPECT_EQ(1, n4.runs.get());
  EXPECT_EQ(1, n4.drops.get());
  EXPECT_EQ(tid(), n4.thread.load());

  // NULL fn: INVALID_ARGUMENT, arg dropped.
  Notice n5;
  EXPECT_EQ(TETHER_E_INVALID_ARGUMENT, tether_future_on_done(f.get(), nullptr, &n5, notice_drop));
  EXPECT_EQ(1, n5.drops.get());
  EXPECT_EQ(0, n5.runs.get());

  EXPECT_EQ(TETHER_OK, be.e.release());
  for (Notice *n : {&n1, &n2, &n3, &n4}) {
    EXPECT_EQ(1, n->runs.get());
    EXPECT_EQ(1, n->drops.get());
  }
}

// Releasing a future before its task runs: the task still runs, its arg and its result
// are each dropped once.
TEST(Future, ReleaseBeforeTheTaskRuns) {
  Counter runs, drops, result_drops;
  BlockedExecutor be("release-early");
  Future f;
  ASSERT_EQ(TETHER_OK, submit(be.e.get(), [&](tether_task *t) {
              runs.add();
              return tether_task_set_result(t, new Result{5, &result_drops}, result_drop);
            }, &drops, f.out()));
  const tether_future gone = f.get();
  ASSERT_EQ(TETHER_OK, f.release());
  int32_t s = -1;
  EXPECT_EQ(TETHER_E_INVALID_HANDLE, tether_future_poll(gone, &s));
  EXPECT_EQ(TETHER_E_INVALID_HANDLE, tether_future_release(gone)) << "releasing twice";
  be.open();
  EXPECT_TRUE(runs.wait_for(1, kLong)) << "a released future's task still runs";
  EXPECT_TRUE(result_drops.wait_for(1, kLong));
  EXPECT_TRUE(drops.wait_for(1, kLong));
  EXPECT_EQ(TETHER_OK, be.e.release());
  EXPECT_EQ(1, runs.get());
  EXPECT_EQ(1, result_drops.get());
  EXPECT_EQ(1, drops.get());
}

// A wait blocked on a future that another thread releases returns
// TETHER_E_INVALID_HANDLE promptly; the work still runs.
TEST(Future, WaitReturnsInvalidHandleWhenReleasedDuringTheWait) {
  Counter runs;
  BlockedExecutor be("released-wait");
  tether_future f{};
  ASSERT_EQ(TETHER_OK, submit(be.e.get(), [&](tether_task *) {
              runs.add();
              return TETHER_OK;
            }, nullptr, &f));
  Gate waiting;
  auto waiter = std::async(std::launch::async, [&] {
    waiting.set();
    return tether_future_wait(f, kLongNs);
  });
  ASSERT_TRUE(waiting.wait_for(kLong));
  ASSERT_EQ(TETHER_OK, tether_future_release(f));
  ASSERT_EQ(std::future_status::ready, waiter.wait_for(kPrompt)) << "the wait kept waiting on a released handle";
  EXPECT_EQ(TETHER_E_INVALID_HANDLE, waiter.get());
  be.open();
  EXPECT_TRUE(runs.wait_for(1, kLong));
}

// tether_future_outputs is for compiled graph executions: on a task's or a call's future it
// is TETHER_E_WRONG_STATE.
TEST(Future, OutputsIsWrongStateForTasksAndCalls) {
  Executor e;
  ASSERT_EQ(TETHER_OK, tether_executor_create(nullptr, e.out()));
  Future f;
  ASSERT_EQ(TETHER_OK, submit(e.get(), [](tether_task *) { return TETHER_OK; }, nullptr, f.out()));
  ASSERT_EQ(TETHER_SUCCEEDED, f.outcome());
  void *outs[2] = {nullptr, nullptr};
  EXPECT_EQ(TETHER_E_WRONG_STATE, tether_future_outputs(f.get(), outs, 2));
  EXPECT_EQ(TETHER_E_INVALID_ARGUMENT, tether_future_outputs(f.get(), nullptr, 1));

  ActorState st;
  const tether_actor_options o = actor_options("outputs");
  Actor a;
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));
  Future c;
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [](tether_task *, void *) { return TETHER_OK; }, nullptr, c.out()));
  ASSERT_EQ(TETHER_SUCCEEDED, c.outcome());
  EXPECT_EQ(TETHER_E_WRONG_STATE, tether_future_outputs(c.get(), outs, 2));
  EXPECT_EQ(TETHER_OK, a.release());
}

// Nested threads in a method (tether_task_spawn): the call's future completes only once
// the nested thread has ended, and fails with the nested thread's error.
TEST(Future, NestedThreadsInAMethod) {
  // Per round, declared before the actor so that its threads never outlive them.
  struct Round {
    Gate nested_go, nested_entered, method_returned;
    Counter nested_drops, nested_ended;
    tether_status spawn_rc = -1;
  } rounds[2];
  ActorState st;
  const tether_actor_options o = actor_options("nesting");
  Actor a;
  a.open_on_exit({&rounds[0].nested_go, &rounds[1].nested_go});
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));

  for (int round = 0; round < 2; ++round) {
    const bool nested_fails = round == 1;
    Round &r = rounds[round];
    SCOPED_TRACE(nested_fails ? "nested thread fails" : "nested thread succeeds");
    Future f;
    ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [&r, nested_fails](tether_task *t, void *) {
                r.spawn_rc = spawn(t, "nested-1", [&r, nested_fails](tether_task *nt) -> tether_status {
                  r.nested_entered.set();
                  const bool go = r.nested_go.wait_for(kLong);
                  r.nested_ended.add();
                  if (!go) return 1;
                  return nested_fails ? tether_task_fail(nt, 21, "nested broke") : TETHER_OK;
                }, &r.nested_drops);
                r.method_returned.set();
                return TETHER_OK;
              }, nullptr, f.out()));
    ASSERT_TRUE(r.method_returned.wait_for(kLong));
    ASSERT_TRUE(r.nested_entered.wait_for(kLong));
    EXPECT_EQ(TETHER_OK, r.spawn_rc);
    EXPECT_EQ(TETHER_E_TIMEOUT, f.wait(kShortNs)) << "the method returned but its nested thread runs";
    EXPECT_EQ(TETHER_RUNNING, f.state());

    // Other calls to the actor are not held up by the nested thread.
    Future other;
    ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [](tether_task *, void *) { return TETHER_OK; }, nullptr, other.out()));
    EXPECT_EQ(TETHER_SUCCEEDED, other.outcome());
    EXPECT_EQ(TETHER_RUNNING, f.state());

    r.nested_go.set();
    ASSERT_EQ(TETHER_OK, f.wait(kLongNs));
    EXPECT_EQ(1, r.nested_ended.get()) << "completed only after the nested thread ended";
    if (nested_fails) {
      ASSERT_EQ(TETHER_FAILED, f.state());
      Err err = f.error();
      EXPECT_EQ(TETHER_E_TASK_FAILED, err.code());
      EXPECT_EQ(21, err.user_code());
      EXPECT_EQ("nested broke", err.message());
      EXPECT_EQ("nested-1", err.thread_name());
    } else {
      EXPECT_EQ(TETHER_SUCCEEDED, f.state());
      EXPECT_TRUE(f.error().null());
    }
    EXPECT_TRUE(r.nested_drops.wait_for(1, kLong));
  }
  EXPECT_EQ(TETHER_ACTOR_ALIVE, a.state());
  EXPECT_EQ(TETHER_OK, a.release());
  EXPECT_EQ(1, st.dtors.get());
}

// A nested thread of a method fails while the method still runs: the future fails at
// that first error, before the method returns (as a runner's scope does).
TEST(Future, NestedThreadFailureFailsTheCallAtOnce) {
  ActorState st;
  Gate method_go;
  std::atomic<bool> method_saw_stop{false};
  const tether_actor_options o = actor_options("nest-fail");
  Actor a;
  a.open_on_exit({&method_go});
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));
  Future f;
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [&](tether_task *t, void *) -> tether_status {
              if (spawn(t, "nested-f", [](tether_task *nt) { return tether_task_fail(nt, 4, "early"); }, nullptr) !=
                  TETHER_OK) {
                return 1;
              }
              const bool go = method_go.wait_for(kLong);
              method_saw_stop = tether_task_stop_requested(t) != 0;
              return go ? TETHER_OK : 2;
            }, nullptr, f.out()));
  ASSERT_EQ(TETHER_OK, f.wait(kLongNs)) << "the first error completes the future";
  EXPECT_EQ(TETHER_FAILED, f.state());
  EXPECT_EQ(4, f.error().user_code());
  method_go.set();
  Future after;
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [](tether_task *, void *) { return TETHER_OK; }, nullptr, after.out()));
  EXPECT_EQ(TETHER_SUCCEEDED, after.outcome());
  EXPECT_TRUE(method_saw_stop.load()) << "stop_on_error: the method is asked to stop";
  EXPECT_EQ(TETHER_FAILED, f.state());
  EXPECT_EQ(4, f.error().user_code());
  EXPECT_EQ(TETHER_OK, a.release());
}

// stop_requested_for: polls t's stop request until it is set or kLong passes (the nested
// thread has no other way to hear it); true when it was set.
bool stop_requested_for(tether_task *t) {
  const auto deadline = Clock::now() + kLong;
  while (!tether_task_stop_requested(t) && Clock::now() < deadline) std::this_thread::sleep_for(1ms);
  return tether_task_stop_requested(t) != 0;
}

// cancel on a call whose method returned while its nested threads run: the nested
// threads are asked to stop, and the call ends CANCELLED once they return OK, counted
// cancelled once. Whether the cancel comes before the method's first spawn or after it.
TEST(Future, CancelReachesTheNestedThreadsOfACall) {
  ActorState st;
  const tether_actor_options o = actor_options("nest-cancel");
  Actor a;
  Gate gates[2];
  a.open_on_exit({&gates[0], &gates[1]});
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));
  for (bool cancel_first : {false, true}) {
    SCOPED_TRACE(cancel_first ? "cancelled before the spawn" : "cancelled after the method returned");
    Gate &cancelled = gates[cancel_first ? 1 : 0];
    Gate entered, method_returned;
    std::atomic<bool> nested_saw_stop{false};
    Counter nested_drops;
    Future f;
    ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [&](tether_task *t, void *) -> tether_status {
                entered.set();
                if (cancel_first && !cancelled.wait_for(kLong)) return 1;
                const tether_status rc = spawn(t, "nested-c", [&](tether_task *nt) -> tether_status {
                  nested_saw_stop = stop_requested_for(nt);
                  return TETHER_OK;
                }, &nested_drops);
                method_returned.set();
                return rc;
              }, nullptr, f.out()));
    ASSERT_TRUE(entered.wait_for(kLong));
    if (!cancel_first) {
      ASSERT_TRUE(method_returned.wait_for(kLong));
    }
    const tether_actor_stats before = actor_stats(a.get());
    ASSERT_EQ(TETHER_OK, tether_future_cancel(f.get()));
    cancelled.set();
    ASSERT_EQ(TETHER_OK, f.wait(kLongNs));
    EXPECT_TRUE(nested_saw_stop.load()) << "the nested thread was asked to stop";
    EXPECT_EQ(TETHER_CANCELLED, f.state());
    EXPECT_EQ(TETHER_E_CANCELLED, f.error().code());
    const tether_actor_stats after = actor_stats(a.get());
    EXPECT_EQ(before.cancelled + 1, after.cancelled) << "counted cancelled as its future ended";
    EXPECT_EQ(before.completed, after.completed);
    EXPECT_TRUE(nested_drops.wait_for(1, kLong));
  }
  EXPECT_EQ(TETHER_OK, a.release());
  EXPECT_EQ(1, st.dtors.get());
}

// A nested thread of a call that waits on the call's own future waits on itself (the call
// ends only when the nested thread does): TETHER_E_DEADLOCK at once, not a hang; the call
// then succeeds.
TEST(Future, NestedThreadWaitingOnItsOwnCallIsADeadlock) {
  ActorState st;
  const tether_actor_options o = actor_options("nest-self");
  Actor a;
  Gate handle_ready;
  a.open_on_exit({&handle_ready});
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));
  std::atomic<uint64_t> own{0};
  std::atomic<tether_status> wait_rc{-1};
  Future f;
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [&](tether_task *t, void *) -> tether_status {
              return spawn(t, "nested-w", [&](tether_task *) -> tether_status {
                if (!handle_ready.wait_for(kLong)) return 1;
                wait_rc = tether_future_wait(tether_future{own.load()}, ns_from_ms(2000));
                return TETHER_OK;
              }, nullptr);
            }, nullptr, f.out()));
  own = f.get().id;
  const auto took = elapsed([&] {
    handle_ready.set();
    ASSERT_EQ(TETHER_OK, f.wait(kLongNs));
  });
  EXPECT_EQ(TETHER_E_DEADLOCK, wait_rc.load()) << tether_status_name(wait_rc.load());
  EXPECT_LT(took, 1500ms) << "DEADLOCK must be returned at once, not after the timeout";
  EXPECT_EQ(TETHER_SUCCEEDED, f.state());
  EXPECT_EQ(TETHER_OK, a.release());
}

// Calls with a future cancelled by another thread while the actor starts and ends them
// (a quarter of them start a nested thread): each ends once, SUCCEEDED with its result
// or CANCELLED (never FAILED: every method and thread returns OK); each arg and each
// result is dropped exactly once (a result taken is the taker's); the actor counts each
// call once, in the state its future ended in.
TEST(Future, CancelsRacingTheActorEndEachCallOnce) {
  constexpr size_t kCalls = 16;
  const size_t rounds = scaled(60);
  ActorState st;
  const tether_actor_options o = actor_options("cancel-race");
  Actor a;
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));
  const tether_actor_stats before = actor_stats(a.get());
  Counter arg_drops, result_drops, nested_drops, ran, spawned;
  size_t succeeded = 0, cancelled = 0, taken = 0;
  for (size_t round = 0; round < rounds; ++round) {
    std::vector<Future> fs(kCalls);
    std::atomic<uint64_t> ids[kCalls] = {};
    std::thread canceller([&] {
      for (size_t i = 0; i < kCalls; ++i) {
        uint64_t id;
        const auto deadline = Clock::now() + kLong;
        while ((id = ids[i].load(std::memory_order_acquire)) == 0 && Clock::now() < deadline) std::this_thread::yield();
        if (id != 0) (void)tether_future_cancel(tether_future{id});
      }
    });
    for (size_t i = 0; i < kCalls; ++i) {
      const bool spawns = (round + i) % 4 == 0;
      ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [&, spawns](tether_task *t, void *) -> tether_status {
                  ran.add();
                  if (spawns) {
                    if (spawn(t, "race-nested", [](tether_task *) { return TETHER_OK; }, &nested_drops) != TETHER_OK) {
                      return 1;
                    }
                    spawned.add();
                  }
                  return tether_task_set_result(t, new Result{1, &result_drops}, result_drop);
                }, &arg_drops, fs[i].out()));
      ids[i].store(fs[i].get().id, std::memory_order_release);
    }
    canceller.join();
    for (Future &f : fs) {
      ASSERT_EQ(TETHER_OK, f.wait(kLongNs));
      const int32_t state = f.state();
      if (state == TETHER_SUCCEEDED) {
        ++succeeded;
        if (taken % 2 == 0) {  // take half of the results; the others go with their futures
          void *out = nullptr;
          ASSERT_EQ(TETHER_OK, tether_future_take_result(f.get(), &out));
          result_drop(out);
        }
        ++taken;
      } else {
        ASSERT_EQ(TETHER_CANCELLED, state) << "no call here may fail";
        EXPECT_EQ(TETHER_E_CANCELLED, f.error().code());
        ++cancelled;
      }
    }
  }
  const int calls = static_cast<int>(rounds * kCalls);
  EXPECT_TRUE(arg_drops.wait_for(calls, kLong)) << arg_drops.get() << " of " << calls << " args dropped";
  const tether_actor_stats after = actor_stats(a.get());
  EXPECT_EQ(before.completed + succeeded, after.completed);
  EXPECT_EQ(before.cancelled + cancelled, after.cancelled);
  EXPECT_EQ(before.failed, after.failed);
  EXPECT_EQ(TETHER_OK, a.release());
  EXPECT_EQ(1, st.dtors.get());
  EXPECT_EQ(calls, arg_drops.get()) << "each arg dropped once";
  // Each method that ran made one result, dropped once: by its taker, or with its future
  // (a call cancelled while it ran ends CANCELLED, its result dropped unread).
  EXPECT_GE(ran.get(), static_cast<int>(succeeded));
  EXPECT_TRUE(result_drops.wait_for(ran.get(), kLong));
  EXPECT_EQ(ran.get(), result_drops.get());
  EXPECT_TRUE(nested_drops.wait_for(spawned.get(), kLong));
  EXPECT_EQ(spawned.get(), nested_drops.get()) << "each nested thread's arg dropped once";
  RecordProperty("succeeded", static_cast<int>(succeeded));
  RecordProperty("cancelled", static_cast<int>(cancelled));
}

// A thread that called an actor with a future twice in a row, or fire and forget, keeps it
// cached (the next calls skip the handle table); once the handle is released, by this
// thread or another, the next call with a future is TETHER_E_INVALID_HANDLE with its arg
// dropped once, and a cached actor still takes fire-and-forget calls and calls with a
// future in turn.
TEST(Future, CallsThroughAThreadsCachedActorSeeItsRelease) {
  for (int variant = 0; variant < 4; ++variant) {
    const bool released_elsewhere = (variant & 1) != 0;
    const bool fire_and_forget = (variant & 2) == 0;  // else calls with a future only
    SCOPED_TRACE(released_elsewhere ? "released by another thread" : "released by the caller");
    SCOPED_TRACE(fire_and_forget ? "futures and fire and forget in turn" : "futures only");
    ActorState st;
    Counter drops, late_drops, ran;
    const tether_actor_options o = actor_options("future-cache");
    Actor a;
    ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));
    const tether_actor handle = a.get();
    for (int i = 0; i < 3; ++i) {  // future, fire and forget, future: each through the cache after the first
      Future f;
      ASSERT_EQ(TETHER_OK, call(handle, nullptr, [&](tether_task *, void *) {
                  ran.add();
                  return TETHER_OK;
                }, &drops, f.out()));
      EXPECT_EQ(TETHER_SUCCEEDED, f.outcome());
      Future g;
      ASSERT_EQ(TETHER_OK, call(handle, nullptr, [&](tether_task *, void *) {
                  ran.add();
                  return TETHER_OK;
                }, &drops, fire_and_forget ? nullptr : g.out()));
      if (!fire_and_forget) {
        EXPECT_EQ(TETHER_SUCCEEDED, g.outcome());
      }
    }
    if (released_elsewhere) {
      std::thread releaser([&] { EXPECT_EQ(TETHER_OK, a.release()); });
      releaser.join();
    } else {
      EXPECT_EQ(TETHER_OK, a.release());
    }
    EXPECT_EQ(6, ran.get()) << "DRAIN: every accepted call ran";
    EXPECT_EQ(1, st.dtors.get());
    tether_future late{0};
    EXPECT_EQ(TETHER_E_INVALID_HANDLE, call(handle, nullptr, [](tether_task *, void *) { return TETHER_OK; },
                                            &late_drops, &late));
    EXPECT_EQ(0u, late.id) << "no future for a refused call";
    EXPECT_EQ(1, late_drops.get());
    EXPECT_EQ(6, drops.get());
  }
}
