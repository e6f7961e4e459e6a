// runner_on_done_test.cpp: tether_runner_on_done, the non-blocking join: exactly once, every
// registration, on the completing thread or at once, still after a release, arg dropped once.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "test_support.h"

namespace {

using namespace tt;

// Notice: what one on_done registration observed.
struct Notice {
  std::atomic<int> runs{0};
  std::atomic<int> drops{0};
  std::atomic<int> dropped_before_run{0};
  std::thread::id thread;
  std::string thread_name;
  int32_t state_seen = -1;       // poll from inside fn (when `runner` is set)
  int first_error_code = -1;     // error code from inside fn
  tether_runner runner{};        // read from inside fn when non-null
  Counter *done = nullptr;       // counts runs across registrations
};

void notice_fn(void *arg) {
  auto *n = static_cast<Notice *>(arg);
  n->thread = std::this_thread::get_id();
  n->thread_name = os_thread_name();
  if (n->runner.id != 0) {
    int32_t s = -1;
    if (tether_runner_poll(n->runner, &s) == TETHER_OK) n->state_seen = s;
    tether_error e{};
    if (tether_runner_error(n->runner, &e) == TETHER_OK && e.id != 0) {
      n->first_error_code = tether_error_code(e);
      (void)tether_error_release(e);
    }
  }
  n->runs.fetch_add(1);
  if (n->done != nullptr) n->done->add();
}

void notice_drop(void *arg) {
  auto *n = static_cast<Notice *>(arg);
  if (n->runs.load() == 0) n->dropped_before_run.fetch_add(1);
  n->drops.fetch_add(1);
  if (n->done != nullptr) n->done->add();
}

TEST(RunnerOnDone, SeveralRegistrationsRunOnceOnTheCompletingThread) {
  Gate gate, started;
  Counter drops, done;
  std::thread::id target_thread;
  constexpr int kNotices = 3;
  Notice notices[kNotices];
  {
    Runner r;
    r.open_on_exit({&gate});
    const tether_runner_options o = runner_options("od-runner");
    ASSERT_EQ(TETHER_OK, start_runner(&o, [&](tether_task *) {
      target_thread = std::this_thread::get_id();
      started.set();
      (void)gate.wait_for(kLong);
      return tether_status{TETHER_OK};
    }, &drops, r.out()));
    ASSERT_TRUE(started.wait_for(kLong));
    for (Notice &n : notices) {
      n.done = &done;
      n.runner = r.get();
      ASSERT_EQ(TETHER_OK, tether_runner_on_done(r.get(), notice_fn, &n, notice_drop));
    }
    for (Notice &n : notices) EXPECT_EQ(0, n.runs.load()) << "on_done ran before the scope ended";
    gate.set();
    // Every fn and every drop: 2 per registration.
    ASSERT_TRUE(done.wait_for(2 * kNotices, kLong));
    ASSERT_EQ(TETHER_OK, tether_runner_join_all(r.get(), kLongNs));
    for (Notice &n : notices) {
      EXPECT_EQ(1, n.runs.load());
      EXPECT_EQ(1, n.drops.load());
      EXPECT_EQ(0, n.dropped_before_run.load()) << "arg dropped before fn ran";
      EXPECT_NE(std::this_thread::get_id(), n.thread);
      EXPECT_EQ(target_thread, n.thread) << "fn must run on the thread that completed the scope";
      EXPECT_EQ("od-runner", n.thread_name);
      EXPECT_EQ(TETHER_SUCCEEDED, n.state_seen) << "fn polled a non-terminal state";
    }
  }
  EXPECT_EQ(2 * kNotices, done.get()) << "a notice ran or dropped twice";
  EXPECT_TRUE(drops.wait_for(1, kLong));
}

TEST(RunnerOnDone, AlreadyTerminalRunsAtOnceOnTheCaller) {
  Counter drops;
  Runner r;
  ASSERT_EQ(TETHER_OK, start_runner(nullptr, [](tether_task *) { return tether_status{TETHER_OK}; },
                                    &drops, r.out()));
  ASSERT_EQ(TETHER_OK, tether_runner_join_all(r.get(), kLongNs));
  Notice n;
  n.runner = r.get();
  ASSERT_EQ(TETHER_OK, tether_runner_on_done(r.get(), notice_fn, &n, notice_drop));
  // Synchronously: before on_done returned.
  EXPECT_EQ(1, n.runs.load());
  EXPECT_EQ(1, n.drops.load());
  EXPECT_EQ(std::this_thread::get_id(), n.thread);
  EXPECT_EQ(TETHER_SUCCEEDED, n.state_seen);
  EXPECT_EQ(TETHER_OK, r.release());
  EXPECT_EQ(1, n.runs.load());
  EXPECT_EQ(1, n.drops.load());
}

// A scope that FAILS is terminal at its first error: on_done runs then, on the failing
// thread, while the target still runs; from fn the runner reads FAILED with its error.
TEST(RunnerOnDone, RunsAtFirstErrorWhileTargetStillRuns) {
  Gate gate, fail_gate, started;
  Counter drops, done;
  Notice n;
  {
    Runner r;
    r.open_on_exit({&gate, &fail_gate});
    ASSERT_EQ(TETHER_OK, start_runner(nullptr, [&](tether_task *t) {
      (void)spawn(t, "od-fail", [&](tether_task *nt) {
        (void)fail_gate.wait_for(kLong);
        return tether_task_fail(nt, 4, "od failure");
      }, &drops);
      started.set();
      (void)gate.wait_for(kLong);
      return tether_status{TETHER_OK};
    }, &drops, r.out()));
    ASSERT_TRUE(started.wait_for(kLong));
    n.done = &done;
    n.runner = r.get();
    ASSERT_EQ(TETHER_OK, tether_runner_on_done(r.get(), notice_fn, &n, notice_drop));
    fail_gate.set();
    ASSERT_TRUE(done.wait_for(2, kLong)) << "on_done did not run at the first error";
    EXPECT_FALSE(gate.is_set());
    EXPECT_EQ(1, n.runs.load());
    EXPECT_EQ(TETHER_FAILED, n.state_seen);
    EXPECT_EQ(TETHER_E_TASK_FAILED, n.first_error_code);
    EXPECT_EQ("od-fail", n.thread_name);
    gate.set();
    ASSERT_EQ(TETHER_OK, tether_runner_join_all(r.get(), kLongNs));
  }
  EXPECT_EQ(1, n.runs.load());
  EXPECT_EQ(1, n.drops.load());
  EXPECT_TRUE(drops.wait_for(2, kLong));
  EXPECT_EQ(2, drops.get());
}

// fn still runs when the handle was released first (release_nowait: the finalizer path).
TEST(RunnerOnDone, StillRunsAfterReleaseNowait) {
  Gate gate, started;
  Counter drops, done;
  Notice n;
  n.done = &done;
  {
    Runner r;
    r.open_on_exit({&gate});
    const tether_runner_options o = runner_options("od-nowait");
    ASSERT_EQ(TETHER_OK, start_runner(&o, [&](tether_task *) {
      started.set();
      (void)gate.wait_for(kLong);
      return tether_status{TETHER_OK};
    }, &drops, r.out()));
    ASSERT_TRUE(started.wait_for(kLong));
    ASSERT_EQ(TETHER_OK, tether_runner_on_done(r.get(), notice_fn, &n, notice_drop));
    const tether_runner old = r.get();
    ASSERT_EQ(TETHER_OK, tether_runner_release_nowait(old));
    r.forget();
    int32_t s = -1;
    EXPECT_EQ(TETHER_E_INVALID_HANDLE, tether_runner_poll(old, &s));
    EXPECT_EQ(0, n.runs.load());
    gate.set();
  }
  ASSERT_TRUE(done.wait_for(2, kLong)) << "fn or its drop never ran after release_nowait";
  EXPECT_TRUE(drops.wait_for(1, kLong));
  EXPECT_EQ(1, n.runs.load());
  EXPECT_EQ(1, n.drops.load());
  EXPECT_EQ(0, n.dropped_before_run.load());
  EXPECT_EQ(1, drops.get());
  EXPECT_TRUE(threads_gone("od-nowait", kLong));
}

TEST(RunnerOnDone, FailedRegistrationDropsArgAndNeverRuns) {
  Counter drops;
  Notice n;
  // NULL fn on a valid runner.
  {
    Runner r;
    ASSERT_EQ(TETHER_OK, start_runner(nullptr, [](tether_task *) { return tether_status{TETHER_OK}; },
                                      &drops, r.out()));
    EXPECT_EQ(TETHER_E_INVALID_ARGUMENT, tether_runner_on_done(r.get(), nullptr, &n, notice_drop));
    EXPECT_EQ(1, n.drops.load()) << "arg not dropped before the failing call returned";
  }
  // A released handle.
  {
    Runner r;
    ASSERT_EQ(TETHER_OK, start_runner(nullptr, [](tether_task *) { return tether_status{TETHER_OK}; },
                                      &drops, r.out()));
    const tether_runner old = r.get();
    ASSERT_EQ(TETHER_OK, r.release());
    EXPECT_EQ(TETHER_E_INVALID_HANDLE, tether_runner_on_done(old, notice_fn, &n, notice_drop));
    EXPECT_EQ(2, n.drops.load());
  }
  EXPECT_EQ(0, n.runs.load());
  EXPECT_TRUE(drops.wait_for(2, kLong));
}

// Registrations racing with completion: each runs exactly once, none is lost.
TEST(RunnerOnDone, RegistrationsRacingCompletionEachRunOnce) {
  const size_t rounds = scaled(300);
  constexpr int kPerThread = 4;
  constexpr int kThreads = 2;
  Counter drops;
  size_t lost = 0, twice = 0, rounds_run = 0;
  for (size_t round = 0; round < rounds; ++round) {
    ++rounds_run;
    Counter done;
    std::vector<std::unique_ptr<Notice>> notices;
    for (int i = 0; i < kPerThread * kThreads; ++i) {
      notices.push_back(std::make_unique<Notice>());
      notices.back()->done = &done;
    }
    Runner r;
    ASSERT_EQ(TETHER_OK, start_runner(nullptr, [](tether_task *) { return tether_status{TETHER_OK}; },
                                      &drops, r.out()));
    std::vector<std::thread> registrars;
    std::atomic<int> reg_failures{0};
    for (int th = 0; th < kThreads; ++th) {
      registrars.emplace_back([&, th] {
        for (int i = 0; i < kPerThread; ++i) {
          if (tether_runner_on_done(r.get(), notice_fn, notices[th * kPerThread + i].get(),
                                    notice_drop) != TETHER_OK) {
            reg_failures.fetch_add(1);
          }
        }
      });
    }
    for (auto &t : registrars) t.join();
    ASSERT_EQ(0, reg_failures.load());
    ASSERT_EQ(TETHER_OK, tether_runner_join_all(r.get(), kLongNs));
    const int expected = 2 * kPerThread * kThreads;
    if (!done.wait_for(expected, kLong)) ++lost;
    EXPECT_EQ(TETHER_OK, r.release());
    for (auto &n : notices) {
      if (n->runs.load() > 1 || n->drops.load() > 1) ++twice;
    }
    if (done.get() > expected) ++twice;
    if (lost != 0 || twice != 0) break;  // fail fast: each lost round costs a full wait
  }
  EXPECT_EQ(0u, lost) << "rounds where an on_done never ran";
  EXPECT_EQ(0u, twice) << "rounds where an on_done ran or dropped twice";
  EXPECT_TRUE(drops.wait_for(static_cast<int>(rounds_run), kLong));
}

}  // namespace
