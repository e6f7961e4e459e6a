// Calls with a future from a thread that calls the actor again and again go through that
// thread's ring (src/core/actor_future_call.h, actor_ring_future.cpp); through the
// mailbox otherwise. Each case here runs twice and asserts the same outcome: once on an
// actor with an unbounded mailbox after two warm-up calls (the thread's cache then holds
// the actor and a sender: the ring), once on one with a bounded mailbox (no sender: the
// mailbox). The outcomes: results, errors, drops, counts and order, a cancel while queued,
// a stop CANCEL, a constructor that fails with calls queued, nested threads, a released
// handle.
#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

#include "actors_support.h"

using namespace at;

namespace {

// kBounded: a mailbox capacity no case fills: its calls take the mailbox, never a ring.
constexpr size_t kBounded = 1 << 20;

class RingFuture : public ::testing::TestWithParam<bool> {
 protected:
  [[nodiscard]] bool ring() const { return GetParam(); }
  [[nodiscard]] tether_actor_options options(const char* name) const {
    return actor_options(name, nullptr, 0, ring() ? 0 : kBounded);
  }
  // start: creates a (state st) and warms it up from this thread (warm_drops counts the
  // warm-up calls' args).
  void start(const char* name, Actor& a, ActorState& st, Counter* warm_drops) const {
    const tether_actor_options o = options(name);
    ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));
    ASSERT_NO_FATAL_FAILURE(warm(a.get(), warm_drops));
  }
  // warm: two calls waited for: the second lookup makes this thread's cache keep the
  // actor with a sender (capi/actor_cache.h), so the next calls take the ring.
  static void warm(tether_actor a, Counter* drops) {
    for (int i = 0; i < 2; ++i) {
      Future f;
      ASSERT_EQ(TETHER_OK, call(a, nullptr, [](tether_task*, void*) { return static_cast<tether_status>(TETHER_OK); },
                                drops, f.out()));
      ASSERT_EQ(TETHER_SUCCEEDED, f.outcome());
    }
  }
};

std::string way(const ::testing::TestParamInfo<bool>& info) { return info.param ? "Ring" : "Mailbox"; }

tether_status add_one(tether_task* t, void*, void* arg) {
  return tether_task_set_result(t, reinterpret_cast<void*>(reinterpret_cast<intptr_t>(arg) + 1), nullptr);
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(BothPaths, RingFuture, ::testing::Values(true, false), way);

// A stream of calls in flight, then their answers: each its own result, every call
// counted once as completed, nothing left queued.
TEST_P(RingFuture, AStreamOfCallsEachGetsItsResult) {
  ActorState st;
  Counter drops;
  Actor a;
  ASSERT_NO_FATAL_FAILURE(start("ring-stream", a, st, &drops));
  const size_t n = scaled(2000);
  std::vector<Future> fs(n);
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(TETHER_OK, tether_actor_call(a.get(), nullptr, add_one, reinterpret_cast<void*>(i), nullptr, fs[i].out()));
  }
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(TETHER_OK, fs[i].wait());
    void* out = nullptr;
    ASSERT_EQ(TETHER_OK, tether_future_take_result(fs[i].get(), &out));
    EXPECT_EQ(i + 1, reinterpret_cast<uintptr_t>(out));
  }
  const tether_actor_stats s = actor_stats(a.get());
  EXPECT_EQ(n + 2, s.completed);
  EXPECT_EQ(0u, s.queued);
  EXPECT_EQ(0u, s.failed + s.cancelled + s.rejected);
  EXPECT_EQ(2, drops.get());
  EXPECT_EQ(TETHER_OK, a.release());
  EXPECT_EQ(1, st.dtors.get());
}

// A failing method: FAILED with its error, counted as failed; the arg dropped once.
TEST_P(RingFuture, AFailureGivesItsError) {
  ActorState st;
  Counter drops;
  Actor a;
  ASSERT_NO_FATAL_FAILURE(start("ring-failure", a, st, &drops));
  Future f;
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [](tether_task* t, void*) { return tether_task_fail(t, 42, "no disk"); },
                            &drops, f.out()));
  EXPECT_EQ(TETHER_FAILED, f.outcome());
  Err e = f.error();
  EXPECT_EQ(TETHER_E_TASK_FAILED, e.code());
  EXPECT_EQ(42, e.user_code());
  EXPECT_EQ("no disk", e.message());
  EXPECT_TRUE(drops.wait_for(3, kLong));
  EXPECT_EQ(1u, actor_stats(a.get()).failed);
  EXPECT_EQ(2u, actor_stats(a.get()).completed);
}

// Calls cancelled while queued never run: CANCELLED, their args dropped at the cancel,
// counted as cancelled; the others run in order; the actor ends once all are settled.
TEST_P(RingFuture, ACancelWhileQueuedEndsOnlyThatCall) {
  ActorState st;
  Counter warm_drops, drops, runs;
  Gate go;
  Actor a;
  a.open_on_exit({&go});
  ASSERT_NO_FATAL_FAILURE(start("ring-cancel", a, st, &warm_drops));
  Future blocker;
  ASSERT_NO_FATAL_FAILURE(block(a.get(), go, blocker));
  constexpr size_t kQueued = 6;
  std::vector<uint32_t> order;  // the default thread's until the calls are waited for
  std::vector<Future> fs(kQueued);
  for (uint32_t i = 0; i < kQueued; ++i) {
    ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [&order, &runs, i](tether_task*, void*) {
                runs.add();
                order.push_back(i);
                return static_cast<tether_status>(TETHER_OK);
              }, &drops, fs[i].out()));
  }
  ASSERT_EQ(TETHER_OK, tether_future_cancel(fs[1].get()));
  ASSERT_EQ(TETHER_OK, tether_future_cancel(fs[4].get()));
  EXPECT_EQ(TETHER_CANCELLED, fs[1].state());
  EXPECT_EQ(TETHER_CANCELLED, fs[4].state());
  EXPECT_EQ(2, drops.get()) << "a cancelled call's arg goes at the cancel";
  EXPECT_EQ(kQueued, actor_stats(a.get()).queued) << "still queued until the default thread steps past them";
  go.set();
  for (size_t i = 0; i < kQueued; ++i) {
    EXPECT_EQ(i == 1 || i == 4 ? TETHER_CANCELLED : TETHER_SUCCEEDED, fs[i].outcome()) << i;
  }
  EXPECT_EQ(TETHER_SUCCEEDED, blocker.outcome());
  EXPECT_EQ((std::vector<uint32_t>{0, 2, 3, 5}), order);
  EXPECT_EQ(4, runs.get());
  EXPECT_TRUE(drops.wait_for(kQueued, kLong));
  EXPECT_TRUE(wait_until([&] { return actor_stats(a.get()).queued == 0; }, kLong));
  const tether_actor_stats s = actor_stats(a.get());
  EXPECT_EQ(2u, s.cancelled);
  EXPECT_EQ(2u + 1u + 4u, s.completed);
  EXPECT_EQ(TETHER_OK, a.release());
  EXPECT_EQ(1, st.dtors.get());
}

// A stop CANCEL with calls queued behind a running one: the queued never run (CANCELLED,
// args dropped), the running one that then returns OK is CANCELLED, the destructor runs.
TEST_P(RingFuture, AStopCancelEndsTheQueuedCalls) {
  ActorState st;
  Counter warm_drops, drops, runs;
  Actor a;
  ASSERT_NO_FATAL_FAILURE(start("ring-stop", a, st, &warm_drops));
  Gate entered;
  Future running;
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [&](tether_task* t, void*) -> tether_status {
              entered.set();
              const auto deadline = Clock::now() + kLong;
              while (!tether_task_stop_requested(t) && Clock::now() < deadline) std::this_thread::sleep_for(1ms);
              return TETHER_OK;
            }, nullptr, running.out()));
  ASSERT_TRUE(entered.wait_for(kLong));
  constexpr size_t kQueued = 5;
  std::vector<Future> fs(kQueued);
  for (size_t i = 0; i < kQueued; ++i) {
    ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [&](tether_task*, void*) {
                runs.add();
                return static_cast<tether_status>(TETHER_OK);
              }, &drops, fs[i].out()));
  }
  const tether_status rc = tether_actor_stop(a.get(), TETHER_STOP_CANCEL, kLongNs);
  EXPECT_EQ(TETHER_OK, rc) << tether_status_name(rc);
  for (Future& f : fs) EXPECT_EQ(TETHER_CANCELLED, f.outcome());
  EXPECT_EQ(TETHER_CANCELLED, running.outcome());
  EXPECT_EQ(0, runs.get());
  EXPECT_TRUE(drops.wait_for(kQueued, kLong));
  EXPECT_EQ(kQueued + 1, actor_stats(a.get()).cancelled);
  EXPECT_EQ(1, st.dtors.get());
  Future after;
  EXPECT_EQ(TETHER_E_SHUTDOWN, call(a.get(), nullptr, [](tether_task*, void*) {
              return static_cast<tether_status>(TETHER_OK);
            }, &drops, after.out())) << "a call after the stop is refused, its arg dropped";
  EXPECT_EQ(kQueued + 1, static_cast<size_t>(drops.get()));
}

// Calls queued while the constructor runs, which then fails: each FAILED with
// ACTOR_DEAD (the constructor's error its cause), never run, its arg dropped.
TEST_P(RingFuture, AConstructorFailureFailsTheQueuedCalls) {
  Gate ctor_go, ctor_entered;
  Counter drops, runs;
  const tether_actor_options o = options("ring-dead");
  Actor a;
  a.open_on_exit({&ctor_go});
  ASSERT_EQ(TETHER_OK, create_actor(&o, [&](tether_task* t, void**) -> tether_status {
              ctor_entered.set();
              if (!ctor_go.wait_for(kLong)) return 1;
              return tether_task_fail(t, 7, "ctor exploded");
            }, nullptr, a.out()));
  ASSERT_TRUE(ctor_entered.wait_for(kLong));
  constexpr size_t kQueued = 6;  // the first two through the mailbox, the rest (ring) behind them
  std::vector<Future> fs(kQueued);
  for (size_t i = 0; i < kQueued; ++i) {
    ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [&](tether_task*, void*) {
                runs.add();
                return static_cast<tether_status>(TETHER_OK);
              }, &drops, fs[i].out()));
  }
  ctor_go.set();
  for (Future& f : fs) {
    EXPECT_EQ(TETHER_FAILED, f.outcome());
    Err e = f.error();
    EXPECT_EQ(TETHER_E_ACTOR_DEAD, e.code());
    EXPECT_EQ(TETHER_E_TASK_FAILED, e.cause().code());
  }
  EXPECT_EQ(0, runs.get());
  EXPECT_TRUE(drops.wait_for(kQueued, kLong));
  EXPECT_EQ(kQueued, actor_stats(a.get()).failed);
}

// Calls with a future and fire-and-forget calls from one thread run in the order it made
// them, whichever queue each took.
TEST_P(RingFuture, OrderedWithTheThreadsFireAndForgetCalls) {
  ActorState st;
  Counter warm_drops;
  Actor a;
  ASSERT_NO_FATAL_FAILURE(start("ring-order", a, st, &warm_drops));
  std::vector<uint32_t> order;  // the default thread's until the last call is waited for
  const uint32_t n = static_cast<uint32_t>(scaled(600));
  std::vector<Future> fs;
  for (uint32_t i = 0; i < n; ++i) {
    auto append = [&order, i](tether_task*, void*) {
      order.push_back(i);
      return static_cast<tether_status>(TETHER_OK);
    };
    if (i % 3 == 0) {
      ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, append, nullptr, nullptr));
    } else {
      fs.emplace_back();
      ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, append, nullptr, fs.back().out()));
    }
  }
  for (Future& f : fs) ASSERT_EQ(TETHER_SUCCEEDED, f.outcome());
  Future last;
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [](tether_task*, void*) { return static_cast<tether_status>(TETHER_OK); },
                            nullptr, last.out()));
  ASSERT_EQ(TETHER_SUCCEEDED, last.outcome());
  ASSERT_EQ(n, order.size());
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(i, order[i]);
}

// A method that starts nested threads ends with them: SUCCEEDED once they all did,
// FAILED at the first that fails; the destructor waits for them.
TEST_P(RingFuture, NestedThreadsEndTheCall) {
  ActorState st;
  Counter warm_drops;
  Gate go;
  Actor a;
  a.open_on_exit({&go});
  ASSERT_NO_FATAL_FAILURE(start("ring-nested", a, st, &warm_drops));
  Future ok, failed;
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [&go](tether_task* t, void*) {
              return spawn(t, "ring-nested-ok", [&go](tether_task*) {
                return go.wait_for(kLong) ? static_cast<tether_status>(TETHER_OK) : 1;
              }, nullptr);
            }, nullptr, ok.out()));
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [](tether_task* t, void*) {
              return spawn(t, "ring-nested-bad", [](tether_task* nt) { return tether_task_fail(nt, 9, "upload failed"); },
                           nullptr);
            }, nullptr, failed.out()));
  EXPECT_EQ(TETHER_FAILED, failed.outcome());
  EXPECT_EQ(9, failed.error().user_code());
  EXPECT_EQ(TETHER_E_TIMEOUT, ok.wait(0)) << "its nested thread still runs";
  go.set();
  EXPECT_EQ(TETHER_SUCCEEDED, ok.outcome());
  EXPECT_EQ(TETHER_OK, a.release());
  EXPECT_EQ(1, st.dtors.get());
}

// After the handle is released, a call is refused (INVALID_HANDLE, its arg dropped),
// whatever a thread's cache held: the releasing thread's, and another's that still
// caches the actor and its sender.
TEST_P(RingFuture, AReleasedHandleRefusesTheNextCall) {
  ActorState st;
  Counter warm_drops, drops;
  Gate warmed, released;
  Actor a;
  ASSERT_NO_FATAL_FAILURE(start("ring-released", a, st, &warm_drops));
  const tether_actor stale = a.get();
  auto refused = [&] {
    Future f;
    const tether_status rc = call(stale, nullptr, [](tether_task*, void*) {
      return static_cast<tether_status>(TETHER_OK);
    }, &drops, f.out());
    return rc == TETHER_E_INVALID_HANDLE && f.null();
  };
  std::atomic<bool> other_refused{false};
  std::thread other([&] {
    warm(stale, &warm_drops);
    warmed.set();
    if (released.wait_for(kLong)) other_refused = refused();
  });
  ASSERT_TRUE(warmed.wait_for(kLong));
  ASSERT_EQ(TETHER_OK, a.release());
  released.set();
  other.join();
  EXPECT_TRUE(other_refused.load());
  EXPECT_TRUE(refused());
  EXPECT_EQ(2, drops.get());
  EXPECT_EQ(4, warm_drops.get());
  EXPECT_EQ(1, st.dtors.get());
}
