// handles_test.cpp: the generation-counted handle table (API.md section 2): forged, stale,
// wrong-kind and released handles; release racing a blocked join; release from the inside.
#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "test_support.h"

namespace {

using namespace tt;

// Every entry point that takes a runner handle answers INVALID_HANDLE for `r`.
::testing::AssertionResult runner_is_invalid(tether_runner r) {
  int32_t s = -1;
  size_t n = 7;
  tether_error e{};
  void *out = nullptr;
  const char *bad = nullptr;
  if (tether_runner_poll(r, &s) != TETHER_E_INVALID_HANDLE) bad = "poll";
  else if (tether_runner_join(r, 0) != TETHER_E_INVALID_HANDLE) bad = "join";
  else if (tether_runner_join_all(r, 0) != TETHER_E_INVALID_HANDLE) bad = "join_all";
  else if (tether_runner_live_threads(r, &n) != TETHER_E_INVALID_HANDLE) bad = "live_threads";
  else if (tether_runner_error(r, &e) != TETHER_E_INVALID_HANDLE) bad = "error";
  else if (tether_runner_error_at(r, 0, &e) != TETHER_E_INVALID_HANDLE) bad = "error_at";
  else if (tether_runner_error_count(r) != 0) bad = "error_count";
  else if (tether_runner_take_result(r, &out) != TETHER_E_INVALID_HANDLE) bad = "take_result";
  else if (tether_runner_cancel(r) != TETHER_E_INVALID_HANDLE) bad = "cancel";
  else if (tether_runner_report_error(r, TETHER_E_TASK_FAILED, 1, "x") != TETHER_E_INVALID_HANDLE)
    bad = "report_error";
  if (bad != nullptr) {
    if (e.id != 0) (void)tether_error_release(e);
    return ::testing::AssertionFailure() << "runner id 0x" << std::hex << r.id << ": " << bad
                                         << " did not return TETHER_E_INVALID_HANDLE";
  }
  if (e.id != 0) return ::testing::AssertionFailure() << "an error handle was handed out";
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult error_is_invalid(tether_error e) {
  char buf[8] = "xxxxxxx";
  tether_error cause{};
  if (tether_error_code(e) != 0) return ::testing::AssertionFailure() << "code";
  if (tether_error_user_code(e) != 0) return ::testing::AssertionFailure() << "user_code";
  if (tether_error_message(e, buf, sizeof buf) != 0) return ::testing::AssertionFailure() << "message";
  if (buf[0] != '\0') return ::testing::AssertionFailure() << "message buffer not emptied";
  if (tether_error_thread_name(e, nullptr, 0) != 0) return ::testing::AssertionFailure() << "thread_name";
  if (tether_error_type_name(e, nullptr, 0) != 0) return ::testing::AssertionFailure() << "type_name";
  if (tether_error_cause(e, &cause) != TETHER_E_INVALID_HANDLE) return ::testing::AssertionFailure() << "cause";
  if (cause.id != 0) return ::testing::AssertionFailure() << "cause handed out";
  return ::testing::AssertionSuccess();
}

// A failed runner's first error, for tests that need a live error handle.
struct FailedRunner {
  Counter drops;
  Runner r;
  FailedRunner() {
    EXPECT_EQ(TETHER_OK, start_runner(nullptr, [](tether_task *t) {
      return tether_task_fail(t, 11, "for handles");
    }, &drops, r.out()));
    EXPECT_EQ(TETHER_OK, tether_runner_join_all(r.get(), kLongNs));
  }
};

TEST(Handles, NullHandleIsInvalidEverywhere) {
  EXPECT_TRUE(runner_is_invalid(tether_runner{0}));
  EXPECT_EQ(TETHER_E_INVALID_HANDLE, tether_runner_release(tether_runner{0}));
  EXPECT_EQ(TETHER_E_INVALID_HANDLE, tether_runner_release_nowait(tether_runner{0}));
  EXPECT_TRUE(error_is_invalid(tether_error{0}));
  EXPECT_EQ(TETHER_E_INVALID_HANDLE, tether_error_release(tether_error{0}));
}

TEST(Handles, ForgedIdsNeverCrashAndAreInvalid) {
  const size_t n = scaled(100000);
  std::mt19937_64 rng(0x7e7e7e7e12345678ULL);
  size_t bad_runner = 0, bad_error = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t id = rng();
    int32_t s = -1;
    if (tether_runner_poll(tether_runner{id}, &s) != TETHER_E_INVALID_HANDLE) ++bad_runner;
    if (tether_runner_join(tether_runner{id}, 0) != TETHER_E_INVALID_HANDLE) ++bad_runner;
    if (tether_runner_cancel(tether_runner{id}) != TETHER_E_INVALID_HANDLE) ++bad_runner;
    if (tether_runner_release(tether_runner{id}) != TETHER_E_INVALID_HANDLE) ++bad_runner;
    if (tether_error_code(tether_error{id}) != 0) ++bad_error;
    if (tether_error_release(tether_error{id}) != TETHER_E_INVALID_HANDLE) ++bad_error;
  }
  EXPECT_EQ(0u, bad_runner);
  EXPECT_EQ(0u, bad_error);
  // A sample also through every entry point.
  for (size_t i = 0; i < std::min<size_t>(n, 1000); ++i) {
    const uint64_t id = rng();
    ASSERT_TRUE(runner_is_invalid(tether_runner{id}));
    ASSERT_TRUE(error_is_invalid(tether_error{id}));
  }
}

// Ids next to a live handle (every single-bit flip, and neighbours) are not that handle.
TEST(Handles, IdsNearALiveHandleAreInvalid) {
  Gate gate;
  Counter drops;
  Runner r;
  r.open_on_exit({&gate});
  ASSERT_EQ(TETHER_OK, start_runner(nullptr, [&](tether_task *) {
    (void)gate.wait_for(kLong);
    return tether_status{TETHER_OK};
  }, &drops, r.out()));
  const uint64_t id = r.id();
  ASSERT_NE(0u, id);
  for (int bit = 0; bit < 64; ++bit) {
    EXPECT_TRUE(runner_is_invalid(tether_runner{id ^ (uint64_t{1} << bit)})) << "bit " << bit;
  }
  for (uint64_t d = 1; d <= 64; ++d) {
    EXPECT_TRUE(runner_is_invalid(tether_runner{id + d}));
    EXPECT_TRUE(runner_is_invalid(tether_runner{id - d}));
  }
  EXPECT_EQ(TETHER_RUNNING, r.state()) << "probing neighbours disturbed the live runner";
  gate.set();
  EXPECT_EQ(TETHER_OK, tether_runner_join_all(r.get(), kLongNs));
  EXPECT_EQ(TETHER_SUCCEEDED, r.state());
}

// Release A, start B (which can reuse A's slot): A's id stays invalid, B is valid.
TEST(Handles, ReleasedIdStaysInvalidAfterSlotReuse) {
  const size_t rounds = scaled(2000);
  Counter drops;
  std::vector<uint64_t> released;
  std::unordered_set<uint64_t> seen;
  for (size_t i = 0; i < rounds; ++i) {
    tether_runner a{};
    ASSERT_EQ(TETHER_OK, start_runner(nullptr, [](tether_task *) { return tether_status{TETHER_OK}; },
                                      &drops, &a));
    ASSERT_TRUE(seen.insert(a.id).second) << "id 0x" << std::hex << a.id << " handed out twice";
    ASSERT_EQ(TETHER_OK, tether_runner_release(a));
    released.push_back(a.id);
    ASSERT_TRUE(runner_is_invalid(a));
    EXPECT_EQ(TETHER_E_INVALID_HANDLE, tether_runner_release(a)) << "double release";
    EXPECT_EQ(TETHER_E_INVALID_HANDLE, tether_runner_release_nowait(a));

    Runner b;
    ASSERT_EQ(TETHER_OK, start_runner(nullptr, [](tether_task *) { return tether_status{TETHER_OK}; },
                                      &drops, b.out()));
    ASSERT_NE(a.id, b.id());
    ASSERT_TRUE(seen.insert(b.id()).second) << "id 0x" << std::hex << b.id() << " handed out twice";
    ASSERT_TRUE(runner_is_invalid(a)) << "a stale id reached the runner that reused its slot";
    ASSERT_EQ(TETHER_OK, tether_runner_join(b.get(), kLongNs));
    ASSERT_EQ(TETHER_SUCCEEDED, b.state());
    released.push_back(b.id());
  }
  for (uint64_t id : released) ASSERT_TRUE(runner_is_invalid(tether_runner{id}));
  EXPECT_TRUE(drops.wait_for(static_cast<int>(2 * rounds), kLong));
  EXPECT_EQ(static_cast<int>(2 * rounds), drops.get());
}

// Error handles are cheap: churn one slot far past a 16-bit generation and check that the
// very first id never comes back to life.
TEST(Handles, GenerationDoesNotWrapQuickly) {
  FailedRunner fr;
  const size_t rounds = scaled(200000);
  tether_error first{};
  ASSERT_EQ(TETHER_OK, tether_runner_error(fr.r.get(), &first));
  ASSERT_NE(0u, first.id);
  ASSERT_EQ(TETHER_OK, tether_error_release(first));
  size_t revived = 0, collisions = 0;
  uint64_t prev = first.id;
  for (size_t i = 0; i < rounds; ++i) {
    tether_error e{};
    ASSERT_EQ(TETHER_OK, tether_runner_error(fr.r.get(), &e));
    if (e.id == first.id || e.id == prev) ++collisions;
    if (tether_error_code(first) != 0) ++revived;
    prev = e.id;
    ASSERT_EQ(TETHER_OK, tether_error_release(e));
  }
  EXPECT_EQ(0u, collisions) << "a released error id was handed out again";
  EXPECT_EQ(0u, revived) << "a released error id became readable again";
}

TEST(Handles, WrongKindIsInvalidAndDisturbsNothing) {
  FailedRunner fr;
  Error e = first_error(fr.r.get());
  ASSERT_FALSE(e.null());
  // An error's id used as a runner.
  EXPECT_TRUE(runner_is_invalid(tether_runner{e.get().id}));
  EXPECT_EQ(TETHER_E_INVALID_HANDLE, tether_runner_release(tether_runner{e.get().id}));
  EXPECT_EQ(TETHER_E_INVALID_HANDLE, tether_runner_release_nowait(tether_runner{e.get().id}));
  EXPECT_EQ(TETHER_E_TASK_FAILED, e.code()) << "the error was disturbed";
  // A runner's id used as an error.
  EXPECT_TRUE(error_is_invalid(tether_error{fr.r.id()}));
  EXPECT_EQ(TETHER_E_INVALID_HANDLE, tether_error_release(tether_error{fr.r.id()}));
  EXPECT_EQ(TETHER_FAILED, fr.r.state()) << "error_release on a runner id released the runner";
  EXPECT_EQ(1u, tether_runner_error_count(fr.r.get()));
}

TEST(Handles, ErrorHandlesAreIndependentAndOutliveTheRunner) {
  auto fr = std::make_unique<FailedRunner>();
  Error a = first_error(fr->r.get());
  Error b = first_error(fr->r.get());
  Error c = error_at(fr->r.get(), 0);
  ASSERT_FALSE(a.null());
  ASSERT_FALSE(b.null());
  ASSERT_FALSE(c.null());
  EXPECT_NE(a.get().id, b.get().id) << "each call hands out a new handle";
  EXPECT_EQ(TETHER_OK, fr->r.release());
  const tether_error a_id = a.get();
  a.reset();
  EXPECT_TRUE(error_is_invalid(a_id));
  EXPECT_EQ(TETHER_E_INVALID_HANDLE, tether_error_release(a_id)) << "double release";
  // b and c still read the shared error after a's release and the runner's.
  EXPECT_EQ(TETHER_E_TASK_FAILED, b.code());
  EXPECT_EQ(11, b.user_code());
  EXPECT_EQ("for handles", b.message());
  EXPECT_EQ("for handles", c.message());
  fr.reset();
  EXPECT_EQ("for handles", b.message());
}

// ---------------------------------------------------------------------------------------
// Release racing a blocked join.

class ReleaseWakesWaiter : public ::testing::TestWithParam<bool> {};

TEST_P(ReleaseWakesWaiter, BlockedJoinReturnsInvalidHandlePromptly) {
  const bool join_all = GetParam();
  Gate gate, started;
  Counter drops;
  Runner r;
  r.open_on_exit({&gate});
  // The target ignores the stop request: only the release can wake the join.
  ASSERT_EQ(TETHER_OK, start_runner(nullptr, [&](tether_task *) {
    started.set();
    (void)gate.wait_for(kLong);
    return tether_status{TETHER_OK};
  }, &drops, r.out()));
  ASSERT_TRUE(started.wait_for(kLong));
  const tether_runner h = r.get();
  Gate joiner_ready;
  auto joiner = std::async(std::launch::async, [&] {
    joiner_ready.set();
    return join_all ? tether_runner_join_all(h, kLongNs) : tether_runner_join(h, kLongNs);
  });
  ASSERT_TRUE(joiner_ready.wait_for(kLong));
  ASSERT_EQ(std::future_status::timeout, joiner.wait_for(30ms));

  auto releaser = std::async(std::launch::async, [&] { return tether_runner_release(h); });
  r.forget();
  const bool prompt = joiner.wait_for(kPrompt) == std::future_status::ready;
  const bool target_still_blocked = !gate.is_set();
  gate.set();  // in every case, let the target and the release finish
  ASSERT_EQ(std::future_status::ready, releaser.wait_for(kLong));
  EXPECT_EQ(TETHER_OK, releaser.get());
  ASSERT_EQ(std::future_status::ready, joiner.wait_for(kLong));
  const tether_status joined = joiner.get();
  EXPECT_TRUE(prompt && target_still_blocked)
      << "the blocked join did not return while the release was waiting for the target";
  EXPECT_EQ(TETHER_E_INVALID_HANDLE, joined) << tether_status_name(joined);
  EXPECT_TRUE(runner_is_invalid(h));
  EXPECT_TRUE(drops.wait_for(1, kLong));
  EXPECT_EQ(1, drops.get());
}

INSTANTIATE_TEST_SUITE_P(Waits, ReleaseWakesWaiter, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool> &i) {
                           return i.param ? std::string("JoinAll") : std::string("Join");
                         });

// The target releases its own runner through the borrowed handle: OK at once, and the
// library finishes the job: the nested thread still runs to its end, every thread ends, each
// arg is dropped once.
TEST(Handles, ReleaseFromInsideReturnsOkAndEverythingIsJoined) {
  Gate nested_gate, nested_started, target_done;
  Counter drops;
  std::atomic<int> release_status{-1}, nested_stop{-1}, join_status{-1};
  std::atomic<uint64_t> borrowed_id{0};
  tether_runner h{};
  const tether_runner_options o = runner_options("selfrel");
  ASSERT_EQ(TETHER_OK, start_runner(&o, [&](tether_task *t) {
    (void)spawn(t, "selfrel-n", [&](tether_task *nt) {
      nested_started.set();
      (void)nested_gate.wait_for(kLong);
      nested_stop = tether_task_stop_requested(nt);
      return tether_status{TETHER_OK};
    }, &drops);
    (void)nested_started.wait_for(kLong);
    tether_runner self{};
    if (tether_task_runner(t, &self) == TETHER_OK) {
      borrowed_id = self.id;
      // From the inside a wait that would have to wait is DEADLOCK; timeout 0 is TIMEOUT.
      join_status = tether_runner_join(self, kLongNs);
      if (tether_runner_join(self, 0) != TETHER_E_TIMEOUT) join_status = -2;
      release_status = tether_runner_release(self);
    }
    target_done.set();
    return tether_status{TETHER_OK};
  }, &drops, &h));
  ASSERT_TRUE(target_done.wait_for(kLong));
  EXPECT_EQ(h.id, borrowed_id.load()) << "tether_task_runner must give the runner's handle";
  EXPECT_EQ(TETHER_E_DEADLOCK, join_status.load());
  EXPECT_EQ(TETHER_OK, release_status.load());
  int32_t s = -1;
  EXPECT_EQ(TETHER_E_INVALID_HANDLE, tether_runner_poll(h, &s)) << "the handle ended at once";
  EXPECT_EQ(TETHER_E_INVALID_HANDLE, tether_runner_release(h));
  // The target's arg is dropped once it has returned; the nested thread's not yet.
  EXPECT_TRUE(drops.wait_for(1, kLong));
  EXPECT_EQ(1, drops.get()) << "the nested thread's arg was dropped while it still runs";
  nested_gate.set();
  // Process-wide quiescence: both args dropped, both threads gone.
  ASSERT_TRUE(drops.wait_for(2, kLong));
  EXPECT_NE(0, nested_stop.load()) << "release cancels the scope";
  EXPECT_TRUE(threads_gone("selfrel", kLong)) << "the target's thread never ended";
  EXPECT_TRUE(threads_gone("selfrel-n", kLong)) << "the nested thread never ended";
  EXPECT_EQ(2, drops.get());
}

// A nested thread may release the runner too.
TEST(Handles, ReleaseFromNestedThreadReturnsOk) {
  Gate target_gate;
  Counter drops;
  std::atomic<int> release_status{-1};
  Gate released;
  tether_runner h{};
  const tether_runner_options o = runner_options("nested-rel");
  ASSERT_EQ(TETHER_OK, start_runner(&o, [&](tether_task *t) {
    (void)spawn(t, "nested-rel", [&](tether_task *nt) {
      tether_runner self{};
      if (tether_task_runner(nt, &self) == TETHER_OK) release_status = tether_runner_release(self);
      released.set();
      return tether_status{TETHER_OK};
    }, &drops);
    (void)target_gate.wait_for(kLong);
    return tether_status{TETHER_OK};
  }, &drops, &h));
  const bool ok = released.wait_for(kLong);
  target_gate.set();
  ASSERT_TRUE(ok);
  EXPECT_EQ(TETHER_OK, release_status.load());
  EXPECT_TRUE(runner_is_invalid(h));
  ASSERT_TRUE(drops.wait_for(2, kLong));
  EXPECT_EQ(2, drops.get());
  EXPECT_TRUE(threads_gone("nested-rel", kLong));
}

}  // namespace
