// The fire-and-forget fast path (src/core/actor_fast_path.cpp): what it must keep of the
// general path's semantics — order across producer threads whatever queue each one's
// calls take, a handle released while another thread has the actor cached, the queued
// count, and the destructor waiting for a call's nested threads.
#include <gtest/gtest.h>

#include <memory>
#include <thread>

#include "actors_support.h"

using namespace at;

namespace {

// ActorOrder: the tags calls append, touched only by the actor's default thread until a
// final call's future is waited on.
struct ActorOrder {
  std::vector<uint32_t> seen;
};

MethodFn append(ActorOrder &order, uint32_t tag) {
  return [&order, tag](tether_task *, void *) {
    order.seen.push_back(tag);
    return static_cast<tether_status>(TETHER_OK);
  };
}

}  // namespace

// Six producer threads, more than the rings a lane lends, take turns: each makes a run of
// fire-and-forget calls, then opens the next one's gate. A turn starts after the previous
// turn's calls returned (the gate orders them), so the actor runs the runs in turn order,
// whether a producer's calls went through a ring of its own or through the mailbox.
TEST(FastPath, CallsOrderedAcrossProducerThreads) {
  constexpr size_t kThreads = 6;
  const size_t rounds = scaled(40);
  constexpr size_t kRun = 50;
  ActorOrder order;
  ActorState st;
  Counter drops;
  std::vector<Gate> turn(kThreads * rounds + 1);  // turn t lets thread t % kThreads go
  std::atomic<int> failures{0};
  const tether_actor_options o = actor_options("ordered-producers");
  Actor a;
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));
  std::vector<std::thread> producers;
  for (size_t i = 0; i < kThreads; ++i) {
    producers.emplace_back([&, i] {
      for (size_t r = 0; r < rounds; ++r) {
        const size_t t = r * kThreads + i;
        if (!turn[t].wait_for(kLong)) {
          failures.fetch_add(1);
          return;
        }
        for (size_t j = 0; j < kRun; ++j) {
          if (call(a.get(), nullptr, append(order, static_cast<uint32_t>(t * kRun + j)), &drops, nullptr) != TETHER_OK) {
            failures.fetch_add(1);
          }
        }
        turn[t + 1].set();
      }
    });
  }
  turn[0].set();
  const bool all_turns = turn.back().wait_for(kLong);
  if (!all_turns) {
    for (Gate &g : turn) g.set();  // let every producer finish before the join
  }
  for (std::thread &p : producers) p.join();
  ASSERT_TRUE(all_turns);
  ASSERT_EQ(0, failures.load());
  Future last;
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [](tether_task *, void *) { return TETHER_OK; }, nullptr, last.out()));
  ASSERT_EQ(TETHER_SUCCEEDED, last.outcome());
  const size_t n = kThreads * rounds * kRun;
  ASSERT_EQ(n, order.seen.size());
  size_t out_of_order = 0;
  for (size_t k = 0; k < n; ++k) out_of_order += order.seen[k] != k;
  EXPECT_EQ(0u, out_of_order);
  EXPECT_EQ(static_cast<int>(n), drops.get());
  EXPECT_EQ(TETHER_OK, a.release());
  EXPECT_EQ(1, st.dtors.get());
}

// A thread that called an actor keeps it cached; once another thread released the
// handle, the next call is TETHER_E_INVALID_HANDLE with its arg dropped once.
TEST(FastPath, HandleReleasedWhileAnotherThreadHasItCached) {
  ActorState st;
  Counter ran, first_drops, late_drops;
  Gate cached, released;
  tether_status late = TETHER_OK;
  const tether_actor_options o = actor_options("cached-release");
  Actor a;
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));
  const tether_actor handle = a.get();
  std::thread caller([&] {
    for (int i = 0; i < 3; ++i) {
      (void)call(handle, nullptr, [&](tether_task *, void *) {
        ran.add();
        return TETHER_OK;
      }, &first_drops, nullptr);
    }
    cached.set();
    if (!released.wait_for(kLong)) return;
    late = call(handle, nullptr, [](tether_task *, void *) { return TETHER_OK; }, &late_drops, nullptr);
  });
  ASSERT_TRUE(cached.wait_for(kLong));
  EXPECT_EQ(TETHER_OK, a.release()) << "DRAIN: the cached thread's calls ran first";
  EXPECT_EQ(3, ran.get());
  EXPECT_EQ(3, first_drops.get());
  EXPECT_EQ(1, st.dtors.get());
  released.set();
  caller.join();
  EXPECT_EQ(TETHER_E_INVALID_HANDLE, late);
  EXPECT_EQ(1, late_drops.get());
}

// Fire-and-forget calls queued behind a blocked method count as queued, then as
// completed once they ran.
TEST(FastPath, QueuedAndCompletedCountFireAndForgetCalls) {
  ActorState st;
  Gate go;
  Counter drops;
  const tether_actor_options o = actor_options("ff-stats");
  Actor a;
  a.open_on_exit({&go});
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));
  Future blocker;
  ASSERT_NO_FATAL_FAILURE(block(a.get(), go, blocker));
  const uint64_t completed_before = actor_stats(a.get()).completed;
  constexpr int kCalls = 7;
  for (int i = 0; i < kCalls; ++i) {
    ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [](tether_task *, void *) { return TETHER_OK; }, &drops, nullptr));
  }
  EXPECT_EQ(static_cast<uint64_t>(kCalls), actor_stats(a.get()).queued);
  go.set();
  ASSERT_EQ(TETHER_SUCCEEDED, blocker.outcome());
  Future last;
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [](tether_task *, void *) { return TETHER_OK; }, nullptr, last.out()));
  ASSERT_EQ(TETHER_SUCCEEDED, last.outcome());
  const tether_actor_stats after = actor_stats(a.get());
  EXPECT_EQ(0u, after.queued);
  EXPECT_EQ(completed_before + kCalls + 2, after.completed) << "the blocker, the calls, the last one";
  EXPECT_EQ(kCalls, drops.get());
  EXPECT_EQ(TETHER_OK, a.release());
}

// A fire-and-forget call that spawned a nested thread is not done until that thread is:
// the destructor waits for it.
TEST(FastPath, DestructorWaitsForNestedThreadsOfAFireAndForgetCall) {
  ActorState st;
  Gate spawned, go;
  Counter nested_done;
  const tether_actor_options o = actor_options("ff-nested-wait");
  Actor a;
  a.open_on_exit({&go});
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [&](tether_task *t, void *) {
              const tether_status rc = spawn(t, "ff-nested", [&](tether_task *) -> tether_status {
                const bool opened = go.wait_for(kLong);
                nested_done.add();
                return opened ? TETHER_OK : 1;
              }, nullptr);
              spawned.set();
              return rc;
            }, nullptr, nullptr));
  ASSERT_TRUE(spawned.wait_for(kLong));
  EXPECT_EQ(TETHER_E_TIMEOUT, tether_actor_stop(a.get(), TETHER_STOP_DRAIN, kShortNs));
  EXPECT_EQ(0, st.dtors.get()) << "the nested thread still runs";
  go.set();
  EXPECT_EQ(TETHER_OK, tether_actor_stop(a.get(), TETHER_STOP_DRAIN, kLongNs));
  EXPECT_EQ(1, nested_done.get());
  EXPECT_EQ(1, st.dtors.get());
  EXPECT_EQ(0u, actor_stats(a.get()).failed);
  EXPECT_EQ(TETHER_OK, a.release());
}

namespace {

// StashedTask: a fire-and-forget call's arg that keeps the task its method ran as, and
// what a tether_task_* call with that task returned from the arg's drop.
struct StashedTask {
  tether_task *task = nullptr;
  std::atomic<tether_status> from_drop{TETHER_OK};
  std::atomic<int> drops{0};
};

tether_status stash_task(tether_task *t, void *, void *arg) {
  static_cast<StashedTask *>(arg)->task = t;
  return TETHER_OK;
}

void use_stashed_task(void *arg) {
  auto *s = static_cast<StashedTask *>(arg);
  s->from_drop.store(tether_task_set_result(s->task, nullptr, nullptr));
  s->drops.fetch_add(1);
}

}  // namespace

// The actor's thread runs the fire-and-forget calls queued back to back as one run with
// one set-up (Actor::run_fast), and none of it shows: a call that fails in the middle
// of the run is counted failed and kept, the calls after it run as tasks of their own,
// one that starts a nested thread waits for it, and an arg's drop runs outside the task
// (a tether_task_* call from it is refused, as from any code that is not the callback).
TEST(FastPath, ARunOfCallsKeepsEachCallsOutcomeAndTask) {
  ActorState st;
  Gate go;
  Counter drops, nested_done;
  const tether_actor_options o = actor_options("ff-run");
  Actor a;
  a.open_on_exit({&go});
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));
  Future blocker;
  ASSERT_NO_FATAL_FAILURE(block(a.get(), go, blocker));
  const tether_actor_stats before = actor_stats(a.get());
  // Queued behind the blocker, all through this thread's ring: ok, fails (7), ok, starts a
  // nested thread, ok, stashes its task.
  std::atomic<int> actor_seen{0};
  auto ok = [&](tether_task *t, void *) {
    tether_actor self{0};
    if (tether_task_actor(t, &self) == TETHER_OK && self.id == a.get().id) actor_seen.fetch_add(1);
    return static_cast<tether_status>(TETHER_OK);
  };
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, ok, &drops, nullptr));
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [](tether_task *, void *) { return static_cast<tether_status>(7); },
                            &drops, nullptr));
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, ok, &drops, nullptr));
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [&](tether_task *t, void *) {
              return spawn(t, "ff-run-nested", [&](tether_task *) -> tether_status {
                nested_done.add();
                return TETHER_OK;
              }, nullptr);
            }, &drops, nullptr));
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, ok, &drops, nullptr));
  StashedTask stashed;
  ASSERT_EQ(TETHER_OK, tether_actor_call(a.get(), nullptr, stash_task, &stashed, use_stashed_task, nullptr));
  go.set();
  ASSERT_EQ(TETHER_SUCCEEDED, blocker.outcome());
  ASSERT_EQ(TETHER_OK, tether_actor_stop(a.get(), TETHER_STOP_DRAIN, kLongNs));  // the nested thread too
  const tether_actor_stats after = actor_stats(a.get());
  EXPECT_EQ(before.completed + 1 + 5, after.completed) << "the blocker, the four ok calls and the stashing one";
  EXPECT_EQ(before.failed + 1, after.failed);
  EXPECT_EQ(0u, after.queued);
  EXPECT_EQ(3, actor_seen.load()) << "each ok call ran as a task of the actor, the ones after the failure too";
  EXPECT_EQ(1, nested_done.get());
  EXPECT_EQ(5, drops.get());
  EXPECT_EQ(1, stashed.drops.load());
  EXPECT_EQ(TETHER_E_INVALID_ARGUMENT, stashed.from_drop.load()) << "the drop ran as the task";
  tether_error kept{0};
  ASSERT_EQ(TETHER_OK, tether_actor_error(a.get(), 0, &kept));
  EXPECT_EQ(TETHER_E_TASK_FAILED, tether_error_code(kept));
  EXPECT_EQ(7, tether_error_user_code(kept));
  EXPECT_EQ(TETHER_OK, tether_error_release(kept));
  EXPECT_EQ(TETHER_OK, a.release());
}

// A stop CANCEL while the first call of a run blocks: the calls queued behind it in the
// ring (read by the consumer as one span, core/inbox.h's FastRun) are cancelled before
// stop returns, none runs, each arg is dropped once; the blocked call ends as it will.
// Then the same with the calls behind it published after its run began (beyond the span).
TEST(FastPath, StopCancelReachesTheCallsBehindABlockedCallOfARun) {
  for (const bool behind_span : {false, true}) {
    SCOPED_TRACE(behind_span ? "published while the first call runs" : "published before the run");
    ActorState st;
    Gate go, entered;
    Counter runs, drops, first_drops;
    const tether_actor_options o = actor_options("ff-cancel-run");
    Actor a;
    a.open_on_exit({&go});
    ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));
    Future blocker;
    if (!behind_span) {
      ASSERT_NO_FATAL_FAILURE(block(a.get(), go, blocker));
    }
    // Polls for the stop, bounded: a method blocked in user code.
    ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [&entered](tether_task *t, void *) -> tether_status {
                entered.set();
                const auto deadline = Clock::now() + kLong;
                while (!tether_task_stop_requested(t) && Clock::now() < deadline) std::this_thread::yield();
                return TETHER_OK;
              }, &first_drops, nullptr));
    if (behind_span) {
      ASSERT_TRUE(entered.wait_for(kLong));
    }
    constexpr int kBehind = 1100;  // more than a run takes at once (1,024 calls at most)
    for (int i = 0; i < kBehind; ++i) {
      ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [&runs](tether_task *, void *) {
                  runs.add();
                  return static_cast<tether_status>(TETHER_OK);
                }, &drops, nullptr));
    }
    go.set();
    ASSERT_TRUE(entered.wait_for(kLong));
    const tether_status rc = tether_actor_stop(a.get(), TETHER_STOP_CANCEL, ns_from_ms(10));
    EXPECT_TRUE(rc == TETHER_OK || rc == TETHER_E_TIMEOUT) << tether_status_name(rc);
    EXPECT_EQ(kBehind, drops.get()) << "each call behind the blocked one dropped before stop returned";
    EXPECT_EQ(0, runs.get());
    EXPECT_EQ(TETHER_OK, tether_actor_stop(a.get(), TETHER_STOP_CANCEL, kLongNs));
    EXPECT_EQ(0, runs.get());
    EXPECT_EQ(1, first_drops.get());
    EXPECT_EQ(static_cast<uint64_t>(kBehind), actor_stats(a.get()).cancelled);
    EXPECT_EQ(TETHER_OK, a.release());
  }
}
