// runner_semantics_test.cpp: the ThreadRunner's scope semantics (API.md section 5) seen from
// C++ threads: failures of nested threads, recursion, the target returning early, the error
// list, concurrent failures, cancellation and foreign reports.
#include <gtest/gtest.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <future>
#include <latch>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "test_support.h"

namespace {

using namespace tt;

// ---------------------------------------------------------------------------------------
// A nested thread fails while the target is blocked.

struct BlockedTargetCase {
  Gate observer_started, failer_started, fail_gate, target_gate, observer_done, spawned;
  std::atomic<int> observer_saw_failed{0};
  std::atomic<int> observer_stop{-1};  // stop_requested when the observer first saw FAILED
  std::atomic<int> target_stop{-1};    // stop_requested when the target was let go
  std::atomic<int> spawn_status{-1};
  Clock::time_point fail_time{};       // written by the failer before it returns
  std::atomic<bool> fail_time_set{false};
};

// Starts: target -> {observer, failer}; the observer polls the runner through its borrowed
// handle and, at the first FAILED, reads its own stop flag.
void start_blocked_target_case(BlockedTargetCase &c, int stop_on_error, Counter &drops,
                               Runner &r) {
  const tether_runner_options o = runner_options("blk-target", stop_on_error);
  ASSERT_EQ(TETHER_OK, start_runner(&o, [&c, &drops](tether_task *t) {
    tether_status s1 = spawn(t, "observer", [&c](tether_task *ot) {
      tether_runner self{};
      if (tether_task_runner(ot, &self) != TETHER_OK) return tether_status{TETHER_E_INTERNAL};
      c.observer_started.set();
      const auto deadline = Clock::now() + kLong;
      while (Clock::now() < deadline) {
        int32_t s = -1;
        if (tether_runner_poll(self, &s) != TETHER_OK) break;
        if (s == TETHER_FAILED) {
          // Read the stop flag right after FAILED became visible: the contract publishes
          // the stop request before the failure.
          c.observer_stop = tether_task_stop_requested(ot);
          c.observer_saw_failed = 1;
          break;
        }
        relax();
      }
      c.observer_done.set();
      return tether_status{TETHER_OK};
    }, &drops);
    tether_status s2 = spawn(t, "failer", [&c](tether_task *ft) {
      c.failer_started.set();
      if (!c.fail_gate.wait_for(kLong)) return tether_status{TETHER_OK};
      c.fail_time = Clock::now();
      c.fail_time_set = true;
      return tether_task_fail(ft, 7, "nested boom");
    }, &drops);
    c.spawn_status = (s1 == TETHER_OK && s2 == TETHER_OK) ? TETHER_OK : (s1 != TETHER_OK ? s1 : s2);
    c.spawned.set();
    (void)c.target_gate.wait_for(kLong);
    c.target_stop = tether_task_stop_requested(t);
    return tether_status{TETHER_OK};
  }, &drops, r.out()));
}

class NestedFailureWhileTargetBlocked : public ::testing::TestWithParam<int> {};

TEST_P(NestedFailureWhileTargetBlocked, JoinWakesAtFirstErrorAndStopFollowsOption) {
  const int stop_on_error = GetParam();
  BlockedTargetCase c;
  Counter drops;
  {
    Runner r;
    r.open_on_exit({&c.fail_gate, &c.target_gate});
    start_blocked_target_case(c, stop_on_error, drops, r);
    ASSERT_TRUE(c.observer_started.wait_for(kLong));
    ASSERT_TRUE(c.failer_started.wait_for(kLong));
    ASSERT_TRUE(c.spawned.wait_for(kLong));
    ASSERT_EQ(TETHER_OK, c.spawn_status.load());
    EXPECT_EQ(TETHER_RUNNING, r.state());
    EXPECT_EQ(3u, r.live());

    Gate joiner_ready;
    auto joiner = std::async(std::launch::async, [&] {
      joiner_ready.set();
      return tether_runner_join(r.get(), kLongNs);
    });
    ASSERT_TRUE(joiner_ready.wait_for(kLong));
    // The join is blocked: nothing has failed and the target is blocked.
    ASSERT_EQ(std::future_status::timeout, joiner.wait_for(50ms));

    c.fail_gate.set();
    // The join returns while the target is still blocked: only the failure can wake it.
    ASSERT_EQ(std::future_status::ready, joiner.wait_for(kLong));
    EXPECT_EQ(TETHER_OK, joiner.get());
    EXPECT_FALSE(c.target_gate.is_set());
    EXPECT_EQ(TETHER_FAILED, r.state());
    EXPECT_GE(r.live(), 1u) << "the target still runs";

    {
      Error e = first_error(r.get());
      ASSERT_FALSE(e.null());
      EXPECT_EQ(TETHER_E_TASK_FAILED, e.code());
      EXPECT_EQ(7, e.user_code());
      EXPECT_EQ("nested boom", e.message());
      EXPECT_EQ("failer", e.thread_name());
    }

    ASSERT_TRUE(c.observer_done.wait_for(kLong));
    EXPECT_EQ(1, c.observer_saw_failed.load());
    if (stop_on_error) {
      EXPECT_NE(0, c.observer_stop.load()) << "a thread that saw FAILED must see stop requested";
    } else {
      EXPECT_EQ(0, c.observer_stop.load()) << "stop_on_error = 0 must not request a stop";
    }

    c.target_gate.set();
    EXPECT_EQ(TETHER_OK, tether_runner_join_all(r.get(), kLongNs));
    EXPECT_EQ(0u, r.live());
    if (stop_on_error) {
      EXPECT_NE(0, c.target_stop.load());
    } else {
      EXPECT_EQ(0, c.target_stop.load());
    }
    EXPECT_EQ(TETHER_FAILED, r.state());
    EXPECT_EQ(1u, tether_runner_error_count(r.get()));
    EXPECT_EQ(TETHER_OK, r.release());
  }
  EXPECT_TRUE(drops.wait_for(3, kLong));
  EXPECT_EQ(3, drops.get());
}

INSTANTIATE_TEST_SUITE_P(StopOnError, NestedFailureWhileTargetBlocked, ::testing::Values(1, 0),
                         [](const ::testing::TestParamInfo<int> &i) {
                           return i.param ? std::string("On") : std::string("Off");
                         });

// The join wakes from the failure itself, not from a polling interval: measured over many
// rounds, the median delay from the failure to the join's return is far below any sane
// polling period. (Checked only where timings mean something.)
TEST(RunnerSemantics, JoinWakesWithoutPollingInterval) {
  const size_t rounds = instrumented() ? 3 : 15;
  std::vector<double> delays_ms;
  Counter drops;
  for (size_t i = 0; i < rounds; ++i) {
    Gate nested_started, fail_gate, target_gate;
    std::atomic<int64_t> fail_at_ns{0};
    {
      Runner r;
      r.open_on_exit({&fail_gate, &target_gate});
      const tether_runner_options o = runner_options("latency");
      ASSERT_EQ(TETHER_OK, start_runner(&o, [&](tether_task *t) {
        (void)spawn(t, "latency-fail", [&](tether_task *ft) {
          nested_started.set();
          if (!fail_gate.wait_for(kLong)) return tether_status{TETHER_OK};
          fail_at_ns = Clock::now().time_since_epoch().count();
          return tether_task_fail(ft, 1, "late");
        }, &drops);
        (void)target_gate.wait_for(kLong);
        return tether_status{TETHER_OK};
      }, &drops, r.out()));
      ASSERT_TRUE(nested_started.wait_for(kLong));
      Gate joiner_ready;
      auto joiner = std::async(std::launch::async, [&] {
        joiner_ready.set();
        const tether_status st = tether_runner_join(r.get(), kLongNs);
        return std::make_pair(st, Clock::now().time_since_epoch().count());
      });
      ASSERT_TRUE(joiner_ready.wait_for(kLong));
      ASSERT_EQ(std::future_status::timeout, joiner.wait_for(20ms));
      fail_gate.set();
      ASSERT_EQ(std::future_status::ready, joiner.wait_for(kLong));
      const auto [st, woke_ns] = joiner.get();
      ASSERT_EQ(TETHER_OK, st);
      EXPECT_EQ(TETHER_FAILED, r.state());
      delays_ms.push_back(static_cast<double>(woke_ns - fail_at_ns.load()) / 1e6);
      target_gate.set();
      EXPECT_EQ(TETHER_OK, r.release());
    }
  }
  std::sort(delays_ms.begin(), delays_ms.end());
  const double median = delays_ms[delays_ms.size() / 2];
  std::printf("join wake-up after the failure: median %.3f ms, max %.3f ms\n", median,
              delays_ms.back());
  if (!instrumented()) {
    EXPECT_LT(median, 20.0) << "join woke " << median << " ms after the failure (median)";
  }
  EXPECT_TRUE(drops.wait_for(static_cast<int>(2 * rounds), kLong));
  EXPECT_EQ(static_cast<int>(2 * rounds), drops.get());
}

// ---------------------------------------------------------------------------------------
// Nested threads spawning nested threads, depth 3.

struct DepthCase {
  Counter started, ended;
  Gate fail_gate, release_all;
  std::atomic<int> spawn_failures{0};
  bool fail_at_depth3 = true;
};

tether_status depth_fn(DepthCase &c, Counter &drops, tether_task *t, int depth) {
  c.started.add();
  if (depth < 3) {
    const std::string name = "depth-" + std::to_string(depth + 1);
    if (spawn(t, name.c_str(), [&c, &drops, depth](tether_task *nt) {
          return depth_fn(c, drops, nt, depth + 1);
        }, &drops) != TETHER_OK) {
      c.spawn_failures.fetch_add(1);
    }
    (void)c.release_all.wait_for(kLong);
    c.ended.add();
    return TETHER_OK;
  }
  (void)c.fail_gate.wait_for(kLong);
  c.ended.add();
  if (c.fail_at_depth3) return tether_task_fail(t, 3, "depth 3");
  return TETHER_OK;
}

TEST(RunnerSemantics, FailureAtDepthThreeSurfacesAndJoinAllWaitsForAll) {
  DepthCase c;
  Counter drops;
  {
    Runner r;
    r.open_on_exit({&c.fail_gate, &c.release_all});
    const tether_runner_options o = runner_options("depth-0");
    ASSERT_EQ(TETHER_OK, start_runner(&o, [&](tether_task *t) {
      return depth_fn(c, drops, t, 0);
    }, &drops, r.out()));
    ASSERT_TRUE(c.started.wait_for(4, kLong));
    EXPECT_EQ(0, c.spawn_failures.load());
    EXPECT_EQ(4u, r.live()) << "the target and three nested generations";
    EXPECT_EQ(TETHER_RUNNING, r.state());
    EXPECT_EQ(TETHER_E_TIMEOUT, tether_runner_join(r.get(), 0));

    c.fail_gate.set();
    ASSERT_EQ(TETHER_OK, tether_runner_join(r.get(), kLongNs));
    EXPECT_EQ(TETHER_FAILED, r.state());
    {
      Error e = first_error(r.get());
      ASSERT_FALSE(e.null());
      EXPECT_EQ(TETHER_E_TASK_FAILED, e.code());
      EXPECT_EQ(3, e.user_code());
      EXPECT_EQ("depth 3", e.message());
      EXPECT_EQ("depth-3", e.thread_name());
    }
    // Depths 0..2 are still blocked: join_all must not return yet.
    EXPECT_EQ(TETHER_E_TIMEOUT, tether_runner_join_all(r.get(), ns_from_ms(30)));
    EXPECT_TRUE(wait_until([&] { return r.live() == 3; }, kLong));
    EXPECT_EQ(3u, r.live());

    c.release_all.set();
    ASSERT_EQ(TETHER_OK, tether_runner_join_all(r.get(), kLongNs));
    EXPECT_EQ(4, c.ended.get()) << "join_all returned before every thread ended";
    EXPECT_EQ(0u, r.live());
    EXPECT_EQ(1u, tether_runner_error_count(r.get()));
    EXPECT_EQ(TETHER_OK, r.release());
  }
  EXPECT_TRUE(drops.wait_for(4, kLong));
  EXPECT_EQ(4, drops.get());
}

TEST(RunnerSemantics, DepthThreeSuccessEndsOnlyWhenTheDeepestThreadReturns) {
  DepthCase c;
  c.fail_at_depth3 = false;
  Counter drops;
  {
    Runner r;
    r.open_on_exit({&c.fail_gate, &c.release_all});
    c.release_all.set();  // depths 0..2 return at once; depth 3 waits for fail_gate
    ASSERT_EQ(TETHER_OK, start_runner(nullptr, [&](tether_task *t) {
      return depth_fn(c, drops, t, 0);
    }, &drops, r.out()));
    ASSERT_TRUE(c.ended.wait_for(3, kLong));
    EXPECT_TRUE(wait_until([&] { return r.live() == 1; }, kLong));
    EXPECT_EQ(1u, r.live());
    EXPECT_EQ(TETHER_RUNNING, r.state());
    EXPECT_EQ(TETHER_E_TIMEOUT, tether_runner_join(r.get(), ns_from_ms(20)));
    c.fail_gate.set();
    ASSERT_EQ(TETHER_OK, tether_runner_join_all(r.get(), kLongNs));
    EXPECT_EQ(TETHER_SUCCEEDED, r.state());
    EXPECT_EQ(0u, tether_runner_error_count(r.get()));
    EXPECT_TRUE(first_error(r.get()).null());
    EXPECT_EQ(TETHER_OK, r.release());
  }
  EXPECT_TRUE(drops.wait_for(4, kLong));
  EXPECT_EQ(4, drops.get());
}

// ---------------------------------------------------------------------------------------
// The target returns before its nested thread.

TEST(RunnerSemantics, TargetReturnsFirstScopeRunsUntilNestedEnds) {
  Gate nested_gate, target_returning, nested_started;
  Counter drops, result_drops;
  {
    Runner r;
    r.open_on_exit({&nested_gate});
    ASSERT_EQ(TETHER_OK, start_runner(nullptr, [&](tether_task *t) {
      EXPECT_EQ(TETHER_OK, tether_task_set_result(t, new int(42), [](void *p) {
        delete static_cast<int *>(p);
      }));
      (void)spawn(t, "late-nested", [&](tether_task *nt) {
        nested_started.set();
        (void)nested_gate.wait_for(kLong);
        // A nested thread may not fill the result slot.
        int *v = new int(7);
        const tether_status st = tether_task_set_result(nt, v, [](void *p) {
          delete static_cast<int *>(p);
        });
        return st == TETHER_E_WRONG_STATE ? tether_status{TETHER_OK} : tether_status{99};
      }, &drops);
      target_returning.set();
      return tether_status{TETHER_OK};
    }, &drops, r.out()));
    ASSERT_TRUE(target_returning.wait_for(kLong));
    ASSERT_TRUE(nested_started.wait_for(kLong));
    // The target has returned (or is about to): the scope is still running.
    EXPECT_TRUE(wait_until([&] { return r.live() == 1; }, kLong));
    EXPECT_EQ(TETHER_RUNNING, r.state());
    EXPECT_EQ(TETHER_E_TIMEOUT, tether_runner_join(r.get(), 0));
    EXPECT_EQ(TETHER_E_TIMEOUT, tether_runner_join(r.get(), ns_from_ms(30)));
    void *out = reinterpret_cast<void *>(0x1);
    EXPECT_EQ(TETHER_E_WRONG_STATE, tether_runner_take_result(r.get(), &out));

    nested_gate.set();
    ASSERT_EQ(TETHER_OK, tether_runner_join(r.get(), kLongNs));
    EXPECT_EQ(TETHER_SUCCEEDED, r.state());
    EXPECT_EQ(0u, tether_runner_error_count(r.get())) << "the nested set_result was not refused";
    out = nullptr;
    ASSERT_EQ(TETHER_OK, tether_runner_take_result(r.get(), &out));
    ASSERT_NE(nullptr, out);
    EXPECT_EQ(42, *static_cast<int *>(out));
    delete static_cast<int *>(out);
    void *again = nullptr;
    EXPECT_EQ(TETHER_E_WRONG_STATE, tether_runner_take_result(r.get(), &again));
    EXPECT_EQ(nullptr, again);
    EXPECT_EQ(TETHER_OK, r.release());
  }
  EXPECT_TRUE(drops.wait_for(2, kLong));
  EXPECT_EQ(2, drops.get());
}

// ---------------------------------------------------------------------------------------
// The error list.

TEST(RunnerSemantics, ThreeNestedFailuresKeptInOrderFirstStable) {
  Gate gates[3];
  Gate target_gate;
  Counter started, drops;
  {
    Runner r;
    r.open_on_exit({&gates[0], &gates[1], &gates[2], &target_gate});
    ASSERT_EQ(TETHER_OK, start_runner(nullptr, [&](tether_task *t) {
      for (int i = 0; i < 3; ++i) {
        const std::string name = "fail-" + std::to_string(i);
        (void)spawn(t, name.c_str(), [&, i](tether_task *nt) {
          started.add();
          (void)gates[i].wait_for(kLong);
          const std::string msg = "failure " + std::to_string(i);
          return tether_task_fail(nt, 100 + i, msg.c_str());
        }, &drops);
      }
      (void)target_gate.wait_for(kLong);
      return tether_status{TETHER_OK};
    }, &drops, r.out()));
    ASSERT_TRUE(started.wait_for(3, kLong));
    EXPECT_EQ(0u, tether_runner_error_count(r.get()));
    EXPECT_TRUE(first_error(r.get()).null());

    for (size_t i = 0; i < 3; ++i) {
      gates[i].set();
      ASSERT_TRUE(wait_until([&] { return tether_runner_error_count(r.get()) == i + 1; }, kLong))
          << "error " << i << " was not recorded";
      EXPECT_EQ(TETHER_FAILED, r.state());
      Error first = first_error(r.get());
      ASSERT_FALSE(first.null());
      EXPECT_EQ(100, first.user_code()) << "the first error changed";
      EXPECT_EQ("failure 0", first.message());
    }
    ASSERT_EQ(TETHER_OK, tether_runner_join(r.get(), 0));
    for (size_t i = 0; i < 3; ++i) {
      Error e = error_at(r.get(), i);
      ASSERT_FALSE(e.null()) << i;
      EXPECT_EQ(TETHER_E_TASK_FAILED, e.code());
      EXPECT_EQ(static_cast<int64_t>(100 + i), e.user_code());
      EXPECT_EQ("failure " + std::to_string(i), e.message());
      EXPECT_EQ("fail-" + std::to_string(i), e.thread_name());
    }
    tether_error past{};
    EXPECT_EQ(TETHER_E_INVALID_ARGUMENT, tether_runner_error_at(r.get(), 3, &past));
    EXPECT_EQ(0u, past.id);
    target_gate.set();
    ASSERT_EQ(TETHER_OK, tether_runner_join_all(r.get(), kLongNs));
    EXPECT_EQ(3u, tether_runner_error_count(r.get()));
    EXPECT_EQ(TETHER_OK, r.release());
  }
  EXPECT_TRUE(drops.wait_for(4, kLong));
  EXPECT_EQ(4, drops.get());
}

// "An error is recorded before its thread leaves live_threads": as soon as live_threads
// reads 0 (observed by polling, no join), the list holds every error.
TEST(RunnerSemantics, ErrorListCompleteOnceLiveThreadsReadsZero) {
  const size_t rounds = scaled(200);
  Counter drops;
  size_t incomplete = 0;
  for (size_t round = 0; round < rounds; ++round) {
    Runner r;
    const tether_runner_options o = runner_options("complete");
    ASSERT_EQ(TETHER_OK, start_runner(&o, [&](tether_task *t) {
      for (int i = 0; i < 3; ++i) {
        (void)spawn(t, "quick-fail", [i](tether_task *nt) {
          return tether_task_fail(nt, i, "quick");
        }, &drops);
      }
      return tether_status{TETHER_OK};
    }, &drops, r.out()));
    size_t live = SIZE_MAX;
    size_t count_at_zero = 0;
    const auto deadline = Clock::now() + kLong;
    while (Clock::now() < deadline) {
      ASSERT_EQ(TETHER_OK, tether_runner_live_threads(r.get(), &live));
      if (live == 0) {
        count_at_zero = tether_runner_error_count(r.get());
        break;
      }
      relax();
    }
    ASSERT_EQ(0u, live);
    if (count_at_zero != 3) ++incomplete;
    EXPECT_EQ(TETHER_FAILED, r.state());
    EXPECT_EQ(TETHER_OK, r.release());
  }
  EXPECT_EQ(0u, incomplete) << "rounds where live_threads read 0 before the list was complete";
  EXPECT_TRUE(drops.wait_for(static_cast<int>(4 * rounds), kLong));
  EXPECT_EQ(static_cast<int>(4 * rounds), drops.get());
}

// ---------------------------------------------------------------------------------------
// Many concurrent failures.

TEST(RunnerSemantics, SixteenConcurrentFailuresAllRecordedOneFirst) {
  constexpr int kThreads = 16;
  const size_t rounds = scaled(20);
  Counter drops;
  for (size_t round = 0; round < rounds; ++round) {
    std::latch go(kThreads);
    std::atomic<int> spawn_failures{0};
    Runner r;
    const tether_runner_options o = runner_options("many-fail");
    ASSERT_EQ(TETHER_OK, start_runner(&o, [&](tether_task *t) {
      for (int i = 0; i < kThreads; ++i) {
        const tether_status st = spawn(t, "racer", [&go, i](tether_task *nt) {
          go.arrive_and_wait();
          return tether_task_fail(nt, i, "racing failure");
        }, &drops);
        if (st != TETHER_OK) {
          spawn_failures.fetch_add(1);
          go.count_down();  // never leave the others waiting for a thread that is not there
        }
      }
      return tether_status{TETHER_OK};
    }, &drops, r.out()));

    // A poller checks, while the failures race, that the state and the first error never
    // change once visible.
    std::atomic<bool> stop{false};
    std::atomic<int> violations{0};
    std::thread poller([&] {
      bool seen_failed = false;
      int64_t first_code = -1;
      while (!stop.load()) {
        int32_t s = -1;
        if (tether_runner_poll(r.get(), &s) != TETHER_OK) break;
        if (seen_failed && s != TETHER_FAILED) violations.fetch_add(1);
        if (s == TETHER_SUCCEEDED || s == TETHER_CANCELLED) violations.fetch_add(1);
        if (s == TETHER_FAILED) {
          seen_failed = true;
          Error e = first_error(r.get());
          if (e.null()) {
            violations.fetch_add(1);
          } else if (first_code < 0) {
            first_code = e.user_code();
          } else if (first_code != e.user_code()) {
            violations.fetch_add(1);
          }
        }
        relax();
      }
    });

    const tether_status joined = tether_runner_join_all(r.get(), kLongNs);
    stop = true;
    poller.join();
    ASSERT_EQ(TETHER_OK, joined);
    EXPECT_EQ(0, spawn_failures.load());
    EXPECT_EQ(0, violations.load());
    EXPECT_EQ(TETHER_FAILED, r.state());
    ASSERT_EQ(static_cast<size_t>(kThreads), tether_runner_error_count(r.get()));
    Error first = first_error(r.get());
    ASSERT_FALSE(first.null());
    std::multiset<int64_t> codes;
    for (size_t i = 0; i < kThreads; ++i) {
      Error e = error_at(r.get(), i);
      ASSERT_FALSE(e.null());
      EXPECT_EQ(TETHER_E_TASK_FAILED, e.code());
      codes.insert(e.user_code());
      if (i == 0) {
        EXPECT_EQ(first.user_code(), e.user_code()) << "error_at(0) is not the first";
      }
    }
    for (int i = 0; i < kThreads; ++i) EXPECT_EQ(1u, codes.count(i)) << "user code " << i;
    EXPECT_EQ(TETHER_OK, r.release());
  }
  EXPECT_TRUE(drops.wait_for(static_cast<int>((kThreads + 1) * rounds), kLong));
  EXPECT_EQ(static_cast<int>((kThreads + 1) * rounds), drops.get());
}

// ---------------------------------------------------------------------------------------
// Cancellation.

TEST(RunnerCancel, RunningScopeEndsCancelledWithCancelledError) {
  Gate check, started_all;
  Counter started, drops, result_drops;
  std::atomic<int> target_stop{-1}, nested_stop{-1}, initial_stop{-1};
  {
    Runner r;
    r.open_on_exit({&check});
    ASSERT_EQ(TETHER_OK, start_runner(nullptr, [&](tether_task *t) {
      (void)tether_task_set_result(t, &result_drops, count_drop);
      (void)spawn(t, "cancel-nested", [&](tether_task *nt) {
        started.add();
        (void)check.wait_for(kLong);
        nested_stop = tether_task_stop_requested(nt);
        return tether_status{TETHER_OK};
      }, &drops);
      initial_stop = tether_task_stop_requested(t);  // before the test may cancel
      started.add();
      (void)check.wait_for(kLong);
      target_stop = tether_task_stop_requested(t);
      return tether_status{TETHER_OK};
    }, &drops, r.out()));
    ASSERT_TRUE(started.wait_for(2, kLong));
    EXPECT_EQ(0, initial_stop.load()) << "stop requested before any cancel";
    ASSERT_EQ(TETHER_OK, tether_runner_cancel(r.get()));
    // Every thread still runs: the scope is not CANCELLED until they have ended.
    EXPECT_EQ(TETHER_RUNNING, r.state());
    EXPECT_EQ(TETHER_E_TIMEOUT, tether_runner_join(r.get(), 0));
    EXPECT_EQ(TETHER_OK, tether_runner_cancel(r.get())) << "a second cancel is harmless";
    check.set();
    ASSERT_EQ(TETHER_OK, tether_runner_join_all(r.get(), kLongNs));
    EXPECT_NE(0, target_stop.load());
    EXPECT_NE(0, nested_stop.load());
    EXPECT_EQ(TETHER_CANCELLED, r.state());
    Error e = first_error(r.get());
    ASSERT_FALSE(e.null()) << "a CANCELLED scope has an error";
    EXPECT_EQ(TETHER_E_CANCELLED, e.code());
    EXPECT_EQ(1u, tether_runner_error_count(r.get()));
    void *out = nullptr;
    EXPECT_EQ(TETHER_E_WRONG_STATE, tether_runner_take_result(r.get(), &out));
    EXPECT_EQ(TETHER_E_WRONG_STATE, tether_runner_report_error(r.get(), TETHER_E_TASK_FAILED, 1, "late"));
    EXPECT_EQ(1u, tether_runner_error_count(r.get()));
    EXPECT_EQ(TETHER_CANCELLED, r.state());
    // The result of a CANCELLED scope is dropped, at the latest when the runner is freed.
    EXPECT_EQ(TETHER_OK, r.release());
  }
  EXPECT_TRUE(result_drops.wait_for(1, kLong));
  EXPECT_EQ(1, result_drops.get());
  EXPECT_TRUE(drops.wait_for(2, kLong));
  EXPECT_EQ(2, drops.get());
}

TEST(RunnerCancel, ErrorDuringCancellationEndsFailed) {
  Gate check, started;
  Counter drops;
  {
    Runner r;
    r.open_on_exit({&check});
    ASSERT_EQ(TETHER_OK, start_runner(nullptr, [&](tether_task *t) {
      started.set();
      (void)check.wait_for(kLong);
      if (tether_task_stop_requested(t)) return tether_task_fail(t, 9, "failed while stopping");
      return tether_status{TETHER_OK};
    }, &drops, r.out()));
    ASSERT_TRUE(started.wait_for(kLong));
    ASSERT_EQ(TETHER_OK, tether_runner_cancel(r.get()));
    check.set();
    ASSERT_EQ(TETHER_OK, tether_runner_join_all(r.get(), kLongNs));
    EXPECT_EQ(TETHER_FAILED, r.state());
    Error e = first_error(r.get());
    ASSERT_FALSE(e.null());
    EXPECT_EQ(TETHER_E_TASK_FAILED, e.code()) << "the first error must be the task's failure";
    EXPECT_EQ(9, e.user_code());
    EXPECT_EQ("failed while stopping", e.message());
    EXPECT_EQ(TETHER_OK, r.release());
  }
  EXPECT_TRUE(drops.wait_for(1, kLong));
  EXPECT_EQ(1, drops.get());
}

TEST(RunnerCancel, CancelOnTerminalRunnerChangesNothing) {
  Counter drops;
  // SUCCEEDED: the result stays takeable, no error appears.
  {
    Runner r;
    ASSERT_EQ(TETHER_OK, start_runner(nullptr, [](tether_task *t) {
      (void)tether_task_set_result(t, new int(5), [](void *p) { delete static_cast<int *>(p); });
      return tether_status{TETHER_OK};
    }, &drops, r.out()));
    ASSERT_EQ(TETHER_OK, tether_runner_join_all(r.get(), kLongNs));
    ASSERT_EQ(TETHER_SUCCEEDED, r.state());
    EXPECT_EQ(TETHER_OK, tether_runner_cancel(r.get()));
    EXPECT_EQ(TETHER_SUCCEEDED, r.state());
    EXPECT_TRUE(first_error(r.get()).null());
    EXPECT_EQ(0u, tether_runner_error_count(r.get()));
    EXPECT_EQ(TETHER_E_WRONG_STATE, tether_runner_report_error(r.get(), TETHER_E_TASK_FAILED, 1, "late"));
    EXPECT_EQ(0u, tether_runner_error_count(r.get()));
    EXPECT_EQ(TETHER_SUCCEEDED, r.state());
    void *out = nullptr;
    ASSERT_EQ(TETHER_OK, tether_runner_take_result(r.get(), &out));
    ASSERT_NE(nullptr, out);
    EXPECT_EQ(5, *static_cast<int *>(out));
    delete static_cast<int *>(out);
  }
  // FAILED: the first error and the count stay.
  {
    Runner r;
    ASSERT_EQ(TETHER_OK, start_runner(nullptr, [](tether_task *t) {
      return tether_task_fail(t, 3, "done failing");
    }, &drops, r.out()));
    ASSERT_EQ(TETHER_OK, tether_runner_join_all(r.get(), kLongNs));
    ASSERT_EQ(TETHER_FAILED, r.state());
    EXPECT_EQ(TETHER_OK, tether_runner_cancel(r.get()));
    EXPECT_EQ(TETHER_FAILED, r.state());
    EXPECT_EQ(1u, tether_runner_error_count(r.get()));
    Error e = first_error(r.get());
    ASSERT_FALSE(e.null());
    EXPECT_EQ(TETHER_E_TASK_FAILED, e.code());
    EXPECT_EQ(3, e.user_code());
  }
  EXPECT_TRUE(drops.wait_for(2, kLong));
  EXPECT_EQ(2, drops.get());
}

// ---------------------------------------------------------------------------------------
// Threads the scope did not create report through tether_runner_report_error.

TEST(RunnerSemantics, ForeignThreadReportFailsScopeAndWakesJoin) {
  Gate target_gate, started;
  Counter drops;
  std::atomic<int> target_stop{-1};
  {
    Runner r;
    r.open_on_exit({&target_gate});
    ASSERT_EQ(TETHER_OK, start_runner(nullptr, [&](tether_task *t) {
      started.set();
      (void)target_gate.wait_for(kLong);
      target_stop = tether_task_stop_requested(t);
      return tether_status{TETHER_OK};
    }, &drops, r.out()));
    ASSERT_TRUE(started.wait_for(kLong));
    auto joiner = std::async(std::launch::async, [&] { return tether_runner_join(r.get(), kLongNs); });
    ASSERT_EQ(std::future_status::timeout, joiner.wait_for(20ms));
    std::thread foreign([&] {
      pthread_setname_np(pthread_self(), "foreign-1");
      EXPECT_EQ(TETHER_OK, tether_runner_report_error(r.get(), TETHER_E_TASK_FAILED, 5, "from outside"));
    });
    foreign.join();
    ASSERT_EQ(std::future_status::ready, joiner.wait_for(kLong));
    EXPECT_EQ(TETHER_OK, joiner.get());
    EXPECT_EQ(TETHER_FAILED, r.state());
    {
      Error e = first_error(r.get());
      ASSERT_FALSE(e.null());
      EXPECT_EQ(TETHER_E_TASK_FAILED, e.code());
      EXPECT_EQ(5, e.user_code());
      EXPECT_EQ("from outside", e.message());
      EXPECT_EQ("foreign-1", e.thread_name());
    }
    // A later report on a FAILED scope is kept, after the first.
    EXPECT_EQ(TETHER_OK, tether_runner_report_error(r.get(), TETHER_E_PANIC, 6, "second"));
    EXPECT_EQ(2u, tether_runner_error_count(r.get()));
    {
      Error e = error_at(r.get(), 1);
      ASSERT_FALSE(e.null());
      EXPECT_EQ(TETHER_E_PANIC, e.code());
    }
    target_gate.set();
    ASSERT_EQ(TETHER_OK, tether_runner_join_all(r.get(), kLongNs));
    EXPECT_NE(0, target_stop.load());
  }
  EXPECT_TRUE(drops.wait_for(1, kLong));
  EXPECT_EQ(1, drops.get());
}

// With stop_on_error, a thread spawned after the scope FAILED starts with stop requested.
TEST(RunnerSemantics, SpawnAfterFailureStartsWithStopRequested) {
  Gate failed_seen;
  Counter drops;
  std::atomic<int> late_stop{-1}, spawn_status{-1};
  {
    Runner r;
    ASSERT_EQ(TETHER_OK, start_runner(nullptr, [&](tether_task *t) {
      tether_runner self{};
      (void)tether_task_runner(t, &self);
      (void)spawn(t, "early-fail", [](tether_task *nt) { return tether_task_fail(nt, 1, "early"); }, &drops);
      // Wait (bounded) until the scope is FAILED, then spawn another thread.
      const bool failed = wait_until([&] {
        int32_t s = -1;
        return tether_runner_poll(self, &s) == TETHER_OK && s == TETHER_FAILED;
      }, kLong);
      if (failed) failed_seen.set();
      spawn_status = spawn(t, "late", [&](tether_task *lt) {
        late_stop = tether_task_stop_requested(lt);
        return tether_status{TETHER_OK};
      }, &drops);
      return tether_status{TETHER_OK};
    }, &drops, r.out()));
    ASSERT_EQ(TETHER_OK, tether_runner_join_all(r.get(), kLongNs));
    EXPECT_TRUE(failed_seen.is_set());
    EXPECT_EQ(TETHER_OK, spawn_status.load()) << "spawn succeeds while a thread of the scope runs";
    EXPECT_NE(0, late_stop.load());
    EXPECT_EQ(TETHER_FAILED, r.state());
    EXPECT_EQ(1u, tether_runner_error_count(r.get()));
  }
  EXPECT_TRUE(drops.wait_for(3, kLong));
  EXPECT_EQ(3, drops.get());
}

}  // namespace
