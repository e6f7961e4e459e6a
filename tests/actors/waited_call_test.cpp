// tether_actor_call_wait with no deadline takes its own path (src/core/waited_call.h: the
// call in the caller's ring, no future); with a deadline, the general one (a call with a
// future). Each case here runs twice, once each way (the parameter is the timeout), and
// asserts the same outcome: status, error, result, drops, counts and order, in every way
// a call can end: a result, a failure, an exception, nested threads that succeed or fail,
// a stop that cancels it queued or running, a constructor that fails while it is queued,
// a wait on the actor's own thread, a released handle.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <thread>

#include "actors_support.h"

using namespace at;

namespace {

// call_wait: tether_actor_call_wait of fn (its arg counted on drops) with timeout_ns.
tether_status call_wait(tether_actor a, MethodFn fn, Counter *drops, int64_t timeout_ns, void **result,
                        tether_error *error) {
  return tether_actor_call_wait(a, nullptr, method_trampoline, new Closure<MethodSig>{std::move(fn), drops},
                                closure_drop<MethodSig>, timeout_ns, result, error);
}

// A result with a counted drop.
struct Value {
  int v;
  Counter *drops;
};
void drop_value(void *p) {
  auto *value = static_cast<Value *>(p);
  Counter *drops = value->drops;
  delete value;
  drops->add();
}
tether_status set_value(tether_task *t, int v, Counter *drops) {
  return tether_task_set_result(t, new Value{v, drops}, drop_value);
}

class WaitedCall : public ::testing::TestWithParam<int64_t> {
 protected:
  [[nodiscard]] int64_t timeout() const { return GetParam(); }
};

std::string way(const ::testing::TestParamInfo<int64_t> &info) {
  return info.param < 0 ? "NoDeadline" : "WithDeadline";
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(BothPaths, WaitedCall, ::testing::Values(int64_t{-1}, kLongNs), way);

// The result is the caller's (a second set replaces and drops the first); asked for
// none, it is dropped; the arg is dropped once, after the method. (When a result nobody
// takes is dropped, and on which thread, is either path's own: with a future, when the
// lane's reference goes too.)
TEST_P(WaitedCall, ResultTakenOrDropped) {
  Counter arg_drops, value_drops;
  ActorState st;
  const tether_actor_options o = actor_options("waited-result");
  Actor a;
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));
  auto twice = [&](tether_task *t, void *) -> tether_status {
    if (set_value(t, 1, &value_drops) != TETHER_OK) return 1;
    return set_value(t, 2, &value_drops);
  };
  void *out = nullptr;
  ASSERT_EQ(TETHER_OK, call_wait(a.get(), twice, &arg_drops, timeout(), &out, nullptr));
  ASSERT_NE(nullptr, out);
  EXPECT_EQ(2, static_cast<Value *>(out)->v);
  EXPECT_EQ(1, value_drops.get()) << "the replaced result is dropped";
  drop_value(out);
  EXPECT_EQ(1, arg_drops.get());

  ASSERT_EQ(TETHER_OK, call_wait(a.get(), twice, &arg_drops, timeout(), nullptr, nullptr));
  EXPECT_TRUE(value_drops.wait_for(4, kLong)) << "a result nobody asked for is dropped";
  EXPECT_TRUE(arg_drops.wait_for(2, kLong));
  EXPECT_EQ(2u, actor_stats(a.get()).completed);
  EXPECT_EQ(0u, actor_stats(a.get()).queued);
}

// A method that fails: its code, the error (message, user code, thread), no result (the
// one it set is dropped), counted failed.
TEST_P(WaitedCall, FailureGivesItsError) {
  Counter arg_drops, value_drops;
  ActorState st;
  const tether_actor_options o = actor_options("waited-fail");
  Actor a;
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));
  void *out = &st;
  Err e;
  ASSERT_EQ(TETHER_E_TASK_FAILED, call_wait(a.get(), [&](tether_task *t, void *) -> tether_status {
              (void)set_value(t, 1, &value_drops);
              return tether_task_fail(t, 7, "method exploded");
            }, &arg_drops, timeout(), &out, e.out()));
  EXPECT_EQ(nullptr, out) << "no result for a call that failed";
  EXPECT_EQ(TETHER_E_TASK_FAILED, e.code());
  EXPECT_EQ(7, e.user_code());
  EXPECT_EQ("method exploded", e.message());
  EXPECT_EQ("waited-fail", e.thread_name());
  EXPECT_EQ("method exploded", last_error());
  EXPECT_TRUE(value_drops.wait_for(1, kLong)) << "the result of a call that failed is dropped";
  EXPECT_TRUE(arg_drops.wait_for(1, kLong));

  ASSERT_EQ(TETHER_E_EXCEPTION, call_wait(a.get(), [](tether_task *, void *) -> tether_status {
              throw std::runtime_error("thrown by a method");
            }, &arg_drops, timeout(), nullptr, e.out()));
  EXPECT_EQ(TETHER_E_EXCEPTION, e.code());
  EXPECT_NE(std::string::npos, e.message().find("thrown by a method")) << e.message();
  EXPECT_TRUE(arg_drops.wait_for(2, kLong));
  EXPECT_EQ(2u, actor_stats(a.get()).failed);
  EXPECT_EQ(0u, actor_stats(a.get()).completed);
}

// A method that starts a nested thread: the call ends when the nested thread has (the
// caller sees what it did), with its failure if it fails.
TEST_P(WaitedCall, NestedThreadsEndTheCall) {
  Counter arg_drops;
  ActorState st;
  const tether_actor_options o = actor_options("waited-nested");
  Actor a;
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));
  Gate go;
  a.open_on_exit({&go});
  std::atomic<bool> nested_done{false};
  std::atomic<int32_t> rc{-1};
  std::thread caller([&] {
    rc = call_wait(a.get(), [&](tether_task *t, void *) -> tether_status {
      return spawn(t, "nested", [&](tether_task *) -> tether_status {
        if (!go.wait_for(kLong)) return 1;
        nested_done = true;
        return TETHER_OK;
      }, nullptr);
    }, &arg_drops, timeout(), nullptr, nullptr);
  });
  ASSERT_TRUE(arg_drops.wait_for(1, kLong)) << "the method returned (its arg is dropped)";
  EXPECT_EQ(-1, rc.load()) << "the call waits for its nested thread";
  go.set();
  caller.join();
  EXPECT_EQ(TETHER_OK, rc.load());
  EXPECT_TRUE(nested_done.load()) << "the caller sees what the nested thread did";

  Err e;
  ASSERT_EQ(TETHER_E_TASK_FAILED, call_wait(a.get(), [](tether_task *t, void *) -> tether_status {
              return spawn(t, "nested", [](tether_task *n) { return tether_task_fail(n, 9, "nested exploded"); },
                           nullptr);
            }, &arg_drops, timeout(), nullptr, e.out()));
  EXPECT_EQ(9, e.user_code());
  EXPECT_EQ("nested exploded", e.message());
  // With a future, the nested failure may end the call before the method has returned.
  EXPECT_TRUE(arg_drops.wait_for(2, kLong));
  EXPECT_EQ(TETHER_OK, a.release()) << "the destructor waits for nested threads, then runs";
  EXPECT_EQ(1, st.dtors.get());
}

// A stop CANCEL: a queued call is cancelled (its arg dropped, never run), a running one
// that returns OK is CANCELLED.
TEST_P(WaitedCall, StopCancelEndsQueuedAndRunningCalls) {
  Counter running_drops, queued_drops, runs;
  ActorState st;
  const tether_actor_options o = actor_options("waited-cancel");
  Actor a;
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));
  Gate entered;
  std::atomic<int32_t> running_rc{-1}, queued_rc{-1};
  std::atomic<int32_t> running_code{-1}, queued_code{-1};
  std::thread running([&] {
    Err e;
    running_rc = call_wait(a.get(), [&](tether_task *t, void *) -> tether_status {
      entered.set();
      const auto deadline = Clock::now() + kLong;
      while (!tether_task_stop_requested(t) && Clock::now() < deadline) std::this_thread::sleep_for(1ms);
      return TETHER_OK;
    }, &running_drops, timeout(), nullptr, e.out());
    running_code = e.code();
  });
  ASSERT_TRUE(entered.wait_for(kLong));
  std::thread queued([&] {
    Err e;
    queued_rc = call_wait(a.get(), [&](tether_task *, void *) -> tether_status {
      runs.add();
      return TETHER_OK;
    }, &queued_drops, timeout(), nullptr, e.out());
    queued_code = e.code();
  });
  ASSERT_TRUE(wait_until([&] { return actor_stats(a.get()).queued == 1; }, kLong)) << "the second call is queued";
  const tether_status rc = tether_actor_stop(a.get(), TETHER_STOP_CANCEL, kLongNs);
  EXPECT_EQ(TETHER_OK, rc) << tether_status_name(rc);
  queued.join();
  running.join();
  EXPECT_EQ(TETHER_E_CANCELLED, queued_rc.load());
  EXPECT_EQ(TETHER_E_CANCELLED, queued_code.load());
  EXPECT_TRUE(queued_drops.wait_for(1, kLong));
  EXPECT_EQ(0, runs.get());
  EXPECT_EQ(TETHER_E_CANCELLED, running_rc.load()) << "asked to stop, returned OK: CANCELLED";
  EXPECT_EQ(TETHER_E_CANCELLED, running_code.load());
  EXPECT_EQ(1, running_drops.get());
  EXPECT_EQ(2u, actor_stats(a.get()).cancelled);
  EXPECT_EQ(0u, actor_stats(a.get()).completed);
  EXPECT_EQ(1, st.dtors.get());
}

// A call queued while the constructor runs, which then fails: ACTOR_DEAD, with the
// constructor's error as its cause; never run, its arg dropped.
TEST_P(WaitedCall, ConstructorFailureFailsAQueuedCall) {
  Gate ctor_go, ctor_entered;
  Counter arg_drops, runs;
  const tether_actor_options o = actor_options("waited-dead");
  Actor a;
  a.open_on_exit({&ctor_go});
  ASSERT_EQ(TETHER_OK, create_actor(&o, [&](tether_task *t, void **) -> tether_status {
              ctor_entered.set();
              if (!ctor_go.wait_for(kLong)) return 1;
              return tether_task_fail(t, 7, "ctor exploded");
            }, nullptr, a.out()));
  ASSERT_TRUE(ctor_entered.wait_for(kLong));
  std::atomic<int32_t> rc{-1}, code{-1}, cause_code{-1};
  std::thread caller([&] {
    Err e;
    rc = call_wait(a.get(), [&](tether_task *, void *) -> tether_status {
      runs.add();
      return TETHER_OK;
    }, &arg_drops, timeout(), nullptr, e.out());
    code = e.code();
    cause_code = e.cause().code();
  });
  ASSERT_TRUE(wait_until([&] { return actor_stats(a.get()).queued == 1; }, kLong)) << "the call is queued";
  ctor_go.set();
  caller.join();
  EXPECT_EQ(TETHER_E_ACTOR_DEAD, rc.load());
  EXPECT_EQ(TETHER_E_ACTOR_DEAD, code.load());
  EXPECT_EQ(TETHER_E_TASK_FAILED, cause_code.load());
  EXPECT_EQ(0, runs.get());
  EXPECT_TRUE(arg_drops.wait_for(1, kLong));
  EXPECT_EQ(1u, actor_stats(a.get()).failed);
}

// From the actor's own thread: DEADLOCK at once (the call never runs: its arg is dropped).
TEST_P(WaitedCall, OwnThreadIsDeadlock) {
  Counter outer_drops, inner_drops, inner_runs;
  ActorState st;
  const tether_actor_options o = actor_options("waited-self");
  Actor a;
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));
  const tether_actor self = a.get();
  const int64_t t = timeout();
  std::atomic<int32_t> inner_rc{-1};
  ASSERT_EQ(TETHER_OK, call_wait(self, [&](tether_task *, void *) -> tether_status {
              inner_rc = call_wait(self, [&](tether_task *, void *) -> tether_status {
                inner_runs.add();
                return TETHER_OK;
              }, &inner_drops, t, nullptr, nullptr);
              return TETHER_OK;
            }, &outer_drops, t, nullptr, nullptr));
  EXPECT_EQ(TETHER_E_DEADLOCK, inner_rc.load());
  EXPECT_EQ(1, inner_drops.get());
  EXPECT_EQ(1, outer_drops.get());
  EXPECT_EQ(TETHER_OK, a.release());
  EXPECT_EQ(0, inner_runs.get()) << "a call whose caller gave up on it never runs";
}

// Behind a thread's fire-and-forget calls: it runs after them, and the counts it sees
// include them.
TEST_P(WaitedCall, RunsAfterTheThreadsEarlierCalls) {
  struct Count {
    int64_t n = 0;
  } count;
  ActorState st;
  st.user = &count;  // the default thread's only
  const tether_actor_options o = actor_options("waited-order");
  Actor a;
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));
  const int n = static_cast<int>(scaled(5000));
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [](tether_task *, void *state) {
                  ++static_cast<Count *>(static_cast<ActorState *>(state)->user)->n;
                  return static_cast<tether_status>(TETHER_OK);
                }, nullptr, nullptr));
    }
    void *seen = nullptr;
    ASSERT_EQ(TETHER_OK, call_wait(a.get(), [](tether_task *t, void *state) {
                const int64_t n_now = static_cast<Count *>(static_cast<ActorState *>(state)->user)->n;
                return tether_task_set_result(t, reinterpret_cast<void *>(n_now), nullptr);
              }, nullptr, timeout(), &seen, nullptr));
    EXPECT_EQ(static_cast<intptr_t>(n) * (round + 1), reinterpret_cast<intptr_t>(seen));
    const tether_actor_stats s = actor_stats(a.get());
    EXPECT_EQ(static_cast<uint64_t>(n + 1) * (round + 1), s.completed) << "counted before the caller's wait ends";
    EXPECT_EQ(0u, s.queued);
  }
}

// A released handle (this thread had the actor cached): INVALID_HANDLE, the arg dropped.
TEST_P(WaitedCall, ReleasedHandleIsInvalid) {
  Counter drops;
  ActorState st;
  const tether_actor_options o = actor_options("waited-released");
  Actor a;
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));
  const tether_actor h = a.get();
  ASSERT_EQ(TETHER_OK, call_wait(h, [](tether_task *, void *) { return static_cast<tether_status>(TETHER_OK); },
                                 &drops, timeout(), nullptr, nullptr));
  ASSERT_EQ(TETHER_OK, a.release());
  EXPECT_EQ(TETHER_E_INVALID_HANDLE,
            call_wait(h, [](tether_task *, void *) { return static_cast<tether_status>(TETHER_OK); }, &drops,
                      timeout(), nullptr, nullptr));
  EXPECT_EQ(2, drops.get());
}

// Many threads waiting on one actor at once, each on its own calls: every answer is its
// own call's.
TEST_P(WaitedCall, ManyWaitersEachGetTheirOwnAnswer) {
  ActorState st;
  const tether_actor_options o = actor_options("waited-many");
  Actor a;
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));
  constexpr int kThreads = 6;
  const int calls = static_cast<int>(scaled(2000));
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int k = 0; k < kThreads; ++k) {
    threads.emplace_back([&, k] {
      for (int i = 0; i < calls; ++i) {
        const intptr_t x = k * 1000000 + i;
        void *out = nullptr;
        const tether_status rc = call_wait(a.get(), [x](tether_task *t, void *) {
          return tether_task_set_result(t, reinterpret_cast<void *>(x + 1), nullptr);
        }, nullptr, timeout(), &out, nullptr);
        if (rc != TETHER_OK || reinterpret_cast<intptr_t>(out) != x + 1) wrong.fetch_add(1);
      }
    });
  }
  for (std::thread &t : threads) t.join();
  EXPECT_EQ(0, wrong.load());
  EXPECT_EQ(static_cast<uint64_t>(kThreads) * static_cast<uint64_t>(calls), actor_stats(a.get()).completed);
}
