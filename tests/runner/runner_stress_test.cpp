// runner_stress_test.cpp: races at scale. Sizes are divided by TETHER_TEST_SCALE.
//   - Ray #57249: a failing runner must never be seen SUCCEEDED, nor terminal without an
//     error, by a poller polling it in a tight loop while it runs;
//   - runners started, joined and released from several threads at once;
//   - release_nowait in bulk: every arg dropped exactly once.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "test_support.h"

namespace {

using namespace tt;

// The ways a scope fails, mixed so the poller meets each transition many times.
enum class FailMode { kTargetFails, kNestedFailsTargetReturnsOk, kTargetThrows, kNestedThrowsLate };

tether_status failing_target(FailMode mode, Counter &drops, tether_task *t) {
  switch (mode) {
    case FailMode::kTargetFails:
      return tether_task_fail(t, 1, "target fails");
    case FailMode::kNestedFailsTargetReturnsOk:
      // The Ray race: the target returns OK at about the time the nested thread fails.
      (void)spawn(t, "s-nested", [](tether_task *nt) { return tether_task_fail(nt, 2, "nested fails"); },
                  &drops);
      return TETHER_OK;
    case FailMode::kTargetThrows:
      throw std::runtime_error("target throws");
    case FailMode::kNestedThrowsLate:
      (void)spawn(t, "s-nested", [](tether_task *) -> tether_status {
        std::this_thread::sleep_for(std::chrono::microseconds(1));
        throw std::runtime_error("nested throws");
      }, &drops);
      return TETHER_OK;
  }
  return TETHER_OK;
}

TEST(RunnerStress, FailingRunnersNeverLookSucceededToAConcurrentPoller) {
  const size_t n = scaled(10000);
  Counter drops;
  std::atomic<uint64_t> current{0};
  std::atomic<uint64_t> terminal_seen{0};
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> polls{0}, polls_running{0};
  std::atomic<uint64_t> seen_succeeded{0}, seen_cancelled{0}, seen_pending{0}, seen_bad_state{0};
  std::atomic<uint64_t> terminal_without_error{0}, error_without_code{0};

  std::thread poller([&] {
    while (!stop.load(std::memory_order_acquire)) {
      const uint64_t id = current.load(std::memory_order_acquire);
      if (id == 0 || terminal_seen.load(std::memory_order_acquire) == id) {
        relax();
        continue;
      }
      const tether_runner r{id};
      int32_t s = -1;
      if (tether_runner_poll(r, &s) != TETHER_OK) {  // released meanwhile
        relax();
        continue;
      }
      polls.fetch_add(1, std::memory_order_relaxed);
      switch (s) {
        case TETHER_RUNNING:
          polls_running.fetch_add(1, std::memory_order_relaxed);
          if (kUnderValgrind) relax();  // elsewhere: no pause at all, the tightest loop
          continue;
        case TETHER_FAILED: break;
        case TETHER_SUCCEEDED: seen_succeeded.fetch_add(1); break;
        case TETHER_CANCELLED: seen_cancelled.fetch_add(1); break;
        case TETHER_PENDING: seen_pending.fetch_add(1); continue;
        default: seen_bad_state.fetch_add(1); break;
      }
      // Terminal: the first error must already be visible.
      tether_error e{};
      const tether_status st = tether_runner_error(r, &e);
      if (st == TETHER_OK && e.id == 0) terminal_without_error.fetch_add(1);
      if (e.id != 0) {
        if (tether_error_code(e) == 0) error_without_code.fetch_add(1);
        (void)tether_error_release(e);
      }
      if (st == TETHER_OK) terminal_seen.store(id, std::memory_order_release);
    }
  });

  size_t join_failures = 0, not_failed = 0, unseen = 0, started = 0;
  for (size_t i = 0; i < n; ++i) {
    const FailMode mode = static_cast<FailMode>(i % 4);
    tether_runner r{};
    const tether_status st = start_runner(nullptr, [mode, &drops](tether_task *t) {
      return failing_target(mode, drops, t);
    }, &drops, &r);
    if (st != TETHER_OK) {
      ADD_FAILURE() << "start failed at " << i << ": " << tether_status_name(st);
      break;
    }
    ++started;
    current.store(r.id, std::memory_order_release);
    if (tether_runner_join(r, kLongNs) != TETHER_OK) ++join_failures;
    int32_t s = -1;
    if (tether_runner_poll(r, &s) != TETHER_OK || s != TETHER_FAILED) ++not_failed;
    // Let the poller see the terminal state of this runner before it goes.
    if (!wait_until([&] { return terminal_seen.load(std::memory_order_acquire) == r.id; }, kLong)) ++unseen;
    current.store(0, std::memory_order_release);
    EXPECT_EQ(TETHER_OK, tether_runner_release(r));
    if (join_failures != 0 || unseen != 0) break;  // each of these cost a full wait: stop
  }
  stop.store(true, std::memory_order_release);
  poller.join();

  EXPECT_EQ(0u, join_failures);
  EXPECT_EQ(0u, not_failed);
  EXPECT_EQ(0u, unseen);
  EXPECT_EQ(0u, seen_succeeded.load()) << "a failing scope was seen SUCCEEDED (Ray #57249)";
  EXPECT_EQ(0u, seen_cancelled.load());
  EXPECT_EQ(0u, seen_pending.load()) << "poll reported PENDING for a started runner";
  EXPECT_EQ(0u, seen_bad_state.load());
  EXPECT_EQ(0u, terminal_without_error.load()) << "terminal with a null first error (Ray #57249)";
  EXPECT_EQ(0u, error_without_code.load());
  EXPECT_GT(polls.load(), 0u);
  // Every target's arg, plus the nested threads' of the two nested modes (i % 4 == 1, 3).
  int expected = 0;
  for (size_t i = 0; i < started; ++i) expected += (i % 4 == 1 || i % 4 == 3) ? 2 : 1;
  EXPECT_TRUE(drops.wait_for(expected, kLong));
  EXPECT_EQ(expected, drops.get());
  std::printf("polls: %llu (%llu while running)\n", static_cast<unsigned long long>(polls.load()),
              static_cast<unsigned long long>(polls_running.load()));
}

// Several threads start, join and release runners at once; some scopes fail, some succeed.
TEST(RunnerStress, ConcurrentStartJoinReleaseFromManyThreads) {
  constexpr int kThreads = 4;
  const size_t per_thread = scaled(1000);
  Counter drops;
  std::atomic<size_t> wrong{0};
  std::vector<std::thread> threads;
  for (int th = 0; th < kThreads; ++th) {
    threads.emplace_back([&, th] {
      for (size_t i = 0; i < per_thread; ++i) {
        const bool fail = (i + static_cast<size_t>(th)) % 3 == 0;
        tether_runner r{};
        if (start_runner(nullptr, [fail, &drops](tether_task *t) -> tether_status {
              if (fail) {
                (void)spawn(t, "cs-nested", [](tether_task *nt) { return tether_task_fail(nt, 3, "x"); }, &drops);
              }
              return TETHER_OK;
            }, &drops, &r) != TETHER_OK) {
          wrong.fetch_add(1);
          continue;
        }
        if (tether_runner_join_all(r, kLongNs) != TETHER_OK) wrong.fetch_add(1);
        int32_t s = -1;
        if (tether_runner_poll(r, &s) != TETHER_OK) wrong.fetch_add(1);
        if (s != (fail ? TETHER_FAILED : TETHER_SUCCEEDED)) wrong.fetch_add(1);
        if (tether_runner_error_count(r) != (fail ? 1u : 0u)) wrong.fetch_add(1);
        if (tether_runner_release(r) != TETHER_OK) wrong.fetch_add(1);
      }
    });
  }
  for (auto &t : threads) t.join();
  EXPECT_EQ(0u, wrong.load());
  size_t expected = 0;
  for (int th = 0; th < kThreads; ++th) {
    for (size_t i = 0; i < per_thread; ++i) expected += ((i + static_cast<size_t>(th)) % 3 == 0) ? 2 : 1;
  }
  EXPECT_TRUE(drops.wait_for(static_cast<int>(expected), kLong));
  EXPECT_EQ(static_cast<int>(expected), drops.get());
}

// release_nowait in bulk, while the targets still run: the control thread finishes each;
// every arg is dropped exactly once.
TEST(RunnerStress, ReleaseNowaitInBulkDropsEveryArgOnce) {
  const size_t n = scaled(2000);
  Counter drops;
  Gate gate;
  std::atomic<size_t> failures{0};
  const tether_runner_options o = runner_options("bulk-nowait");
  for (size_t i = 0; i < n; ++i) {
    tether_runner r{};
    const bool wait_gate = i % 2 == 0;
    if (start_runner(&o, [wait_gate, &gate](tether_task *t) {
          if (wait_gate) {
            // Cooperative: stop once asked (release_nowait cancels) or when the gate opens.
            while (!tether_task_stop_requested(t) && !gate.wait_for(1ms)) {
            }
          }
          return tether_status{TETHER_OK};
        }, &drops, &r) != TETHER_OK) {
      failures.fetch_add(1);
      continue;
    }
    if (tether_runner_release_nowait(r) != TETHER_OK) failures.fetch_add(1);
    if (tether_runner_release_nowait(r) != TETHER_E_INVALID_HANDLE) failures.fetch_add(1);
  }
  gate.set();
  EXPECT_EQ(0u, failures.load());
  EXPECT_TRUE(drops.wait_for(static_cast<int>(n), kLong)) << drops.get() << " of " << n;
  EXPECT_EQ(static_cast<int>(n), drops.get());
  EXPECT_TRUE(threads_gone("bulk-nowait", kLong));
}

}  // namespace
