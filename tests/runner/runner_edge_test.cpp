// runner_edge_test.cpp: timeouts (saturation, 0 never blocks, no early return), signal masks
// of library threads, the status table and the thread-local last-error text.
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <future>
#include <set>
#include <string>
#include <thread>

#include "test_support.h"

namespace {

using namespace tt;

// A runner whose target waits for `gate` (bounded).
struct GatedRunner {
  Gate gate, started;
  Counter drops;
  Runner r;
  GatedRunner() {
    r.open_on_exit({&gate});
    EXPECT_EQ(TETHER_OK, start_runner(nullptr, [this](tether_task *) {
      started.set();
      (void)gate.wait_for(kLong);
      return tether_status{TETHER_OK};
    }, &drops, r.out()));
    EXPECT_TRUE(started.wait_for(kLong));
  }
};

// ---------------------------------------------------------------------------------------
// Timeouts.

class HugeTimeout : public ::testing::TestWithParam<int64_t> {};

// A huge timeout saturates: it neither overflows into "already expired" nor fails, and the
// wait returns OK when the runner finishes.
TEST_P(HugeTimeout, JoinWaitsAndReturnsOkWhenTheRunnerFinishes) {
  const int64_t timeout = GetParam();
  GatedRunner g;
  auto join = std::async(std::launch::async, [&] { return tether_runner_join(g.r.get(), timeout); });
  auto join_all = std::async(std::launch::async, [&] { return tether_runner_join_all(g.r.get(), timeout); });
  EXPECT_EQ(std::future_status::timeout, join.wait_for(30ms)) << "returned early (overflow?)";
  EXPECT_EQ(std::future_status::timeout, join_all.wait_for(1ms));
  g.gate.set();
  ASSERT_EQ(std::future_status::ready, join.wait_for(kLong));
  ASSERT_EQ(std::future_status::ready, join_all.wait_for(kLong));
  EXPECT_EQ(TETHER_OK, join.get());
  EXPECT_EQ(TETHER_OK, join_all.get());
  EXPECT_EQ(TETHER_SUCCEEDED, g.r.state());
  // And on a terminal runner they return at once.
  EXPECT_EQ(TETHER_OK, tether_runner_join(g.r.get(), timeout));
  EXPECT_EQ(TETHER_OK, tether_runner_join_all(g.r.get(), timeout));
}

INSTANTIATE_TEST_SUITE_P(Timeouts, HugeTimeout,
                         ::testing::Values(INT64_MAX, INT64_MAX - 1, INT64_MAX / 2,
                                           INT64_C(1) << 62, int64_t{-1}, INT64_MIN));

TEST(Timeouts, ZeroNeverBlocks) {
  GatedRunner g;
  const size_t calls = scaled(2000);
  // The gate opens only after the loop, so a timeout 0 that waited would wait for ever:
  // the loop runs on its own thread and the bounded wait for it is what fails the test.
  auto polls = std::async(std::launch::async, [&] {
    size_t not_timeout = 0;
    const auto t0 = Clock::now();
    for (size_t i = 0; i < calls; ++i) {
      if (tether_runner_join(g.r.get(), 0) != TETHER_E_TIMEOUT) ++not_timeout;
      if (tether_runner_join_all(g.r.get(), 0) != TETHER_E_TIMEOUT) ++not_timeout;
    }
    return std::make_pair(not_timeout, Clock::now() - t0);
  });
  const bool returned = polls.wait_for(kLong) == std::future_status::ready;
  if (!returned) g.gate.set();  // so that the blocked poll returns and the test ends
  ASSERT_TRUE(returned) << "timeout 0 blocked";
  const auto [not_timeout, elapsed] = polls.get();
  EXPECT_EQ(0u, not_timeout);
  if (!instrumented()) {
    // A short sleep per call would add up: 2 * calls polls take far below 1 ms each (no
    // per-call bound: one preemption on a shared machine can exceed any such bound).
    EXPECT_LT(elapsed, std::chrono::milliseconds(static_cast<int64_t>(calls)))
        << "timeout 0 waits";
  }
  g.gate.set();
  EXPECT_EQ(TETHER_OK, tether_runner_join_all(g.r.get(), kLongNs));
}

TEST(Timeouts, ShortTimeoutWaitsAtLeastItsLength) {
  GatedRunner g;
  for (int64_t ms : {1, 10, 40}) {
    const auto t0 = Clock::now();
    EXPECT_EQ(TETHER_E_TIMEOUT, tether_runner_join(g.r.get(), ns_from_ms(ms)));
    EXPECT_GE(Clock::now() - t0, std::chrono::milliseconds(ms)) << "join returned early";
    const auto t1 = Clock::now();
    EXPECT_EQ(TETHER_E_TIMEOUT, tether_runner_join_all(g.r.get(), ns_from_ms(ms)));
    EXPECT_GE(Clock::now() - t1, std::chrono::milliseconds(ms)) << "join_all returned early";
  }
  // 1 ns: a timeout, not a wait forever.
  EXPECT_EQ(TETHER_E_TIMEOUT, tether_runner_join(g.r.get(), 1));
  g.gate.set();
  EXPECT_EQ(TETHER_OK, tether_runner_join_all(g.r.get(), kLongNs));
}

// join returns at the first error; join_all still times out while a thread runs.
TEST(Timeouts, JoinAllKeepsWaitingAfterFailure) {
  Gate gate;
  Counter drops;
  Runner r;
  r.open_on_exit({&gate});
  ASSERT_EQ(TETHER_OK, start_runner(nullptr, [&](tether_task *t) {
    (void)spawn(t, "quick-fail", [](tether_task *nt) { return tether_task_fail(nt, 1, "x"); }, &drops);
    (void)gate.wait_for(kLong);
    return tether_status{TETHER_OK};
  }, &drops, r.out()));
  ASSERT_EQ(TETHER_OK, tether_runner_join(r.get(), kLongNs));
  EXPECT_EQ(TETHER_FAILED, r.state());
  EXPECT_EQ(TETHER_E_TIMEOUT, tether_runner_join_all(r.get(), 0));
  EXPECT_EQ(TETHER_E_TIMEOUT, tether_runner_join_all(r.get(), ns_from_ms(20)));
  gate.set();
  EXPECT_EQ(TETHER_OK, tether_runner_join_all(r.get(), kLongNs));
  EXPECT_EQ(0u, r.live());
}

// ---------------------------------------------------------------------------------------
// Signals.

struct MaskReport {
  std::atomic<int> checked{0};
  std::atomic<int> async_unblocked{0};  // SIGINT, SIGTERM, SIGUSR1, SIGUSR2, SIGHUP, SIGPIPE...
  std::atomic<int> sync_blocked{0};     // SIGSEGV, SIGBUS, SIGFPE, SIGILL
  std::atomic<int> on_caller{0};
};

void check_mask(MaskReport &m, std::thread::id caller) {
  sigset_t set;
  sigemptyset(&set);
  if (pthread_sigmask(SIG_BLOCK, nullptr, &set) != 0) return;
  for (int sig : {SIGINT, SIGTERM, SIGUSR1, SIGUSR2, SIGHUP, SIGQUIT}) {
    if (sigismember(&set, sig) != 1) m.async_unblocked.fetch_add(1);
  }
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) {
    if (sigismember(&set, sig) == 1) m.sync_blocked.fetch_add(1);
  }
  if (std::this_thread::get_id() == caller) m.on_caller.fetch_add(1);
  m.checked.fetch_add(1);
}

MaskReport *g_drop_mask = nullptr;
std::thread::id g_main_thread;
Counter *g_drop_count = nullptr;
void mask_checking_drop(void *) {
  check_mask(*g_drop_mask, g_main_thread);
  g_drop_count->add();
}

TEST(Signals, LibraryThreadsBlockAsyncSignalsOnly) {
  // The caller's own mask: everything deliverable.
  sigset_t none, before, after;
  sigemptyset(&none);
  ASSERT_EQ(0, pthread_sigmask(SIG_SETMASK, &none, &before));
  MaskReport target_mask, nested_mask, drop_mask;
  Counter drops, mask_drops;
  g_drop_mask = &drop_mask;
  g_drop_count = &mask_drops;
  g_main_thread = std::this_thread::get_id();
  const std::thread::id caller = std::this_thread::get_id();
  {
    Runner r;
    ASSERT_EQ(TETHER_OK, start_runner(nullptr, [&](tether_task *t) {
      check_mask(target_mask, caller);
      (void)spawn(t, "sig-nested", [&](tether_task *) {
        check_mask(nested_mask, caller);
        return tether_status{TETHER_OK};
      }, &drops);
      return tether_status{TETHER_OK};
    }, &drops, r.out()));
    ASSERT_EQ(TETHER_OK, tether_runner_join_all(r.get(), kLongNs));
    EXPECT_EQ(TETHER_SUCCEEDED, r.state());
  }
  // An arg dropped after release_nowait: whichever thread drops it, if it is one of the
  // library's, async signals are blocked there.
  {
    tether_runner h{};
    const tether_runner_options o = runner_options("sig-nowait");
    ASSERT_EQ(TETHER_OK, tether_runner_start(&o, [](tether_task *, void *) {
      return tether_status{TETHER_OK};
    }, nullptr, mask_checking_drop, &h));
    ASSERT_EQ(TETHER_OK, tether_runner_release_nowait(h));
    ASSERT_TRUE(mask_drops.wait_for(1, kLong));
    EXPECT_TRUE(threads_gone("sig-nowait", kLong));
  }
  ASSERT_EQ(0, pthread_sigmask(SIG_SETMASK, &before, &after));
  EXPECT_EQ(1, target_mask.checked.load());
  EXPECT_EQ(1, nested_mask.checked.load());
  EXPECT_EQ(0, target_mask.async_unblocked.load()) << "the target's thread leaves async signals open";
  EXPECT_EQ(0, nested_mask.async_unblocked.load()) << "a nested thread leaves async signals open";
  EXPECT_EQ(0, target_mask.sync_blocked.load()) << "synchronous signals must stay deliverable";
  EXPECT_EQ(0, nested_mask.sync_blocked.load());
  EXPECT_EQ(0, target_mask.on_caller.load());
  EXPECT_EQ(1, drop_mask.checked.load());
  if (drop_mask.on_caller.load() == 0) {
    EXPECT_EQ(0, drop_mask.async_unblocked.load()) << "the thread that dropped the arg";
  }
  // The library did not touch the caller's mask.
  for (int sig : {SIGINT, SIGTERM, SIGUSR1}) EXPECT_EQ(0, sigismember(&after, sig));
  EXPECT_TRUE(drops.wait_for(2, kLong));
}

// ---------------------------------------------------------------------------------------
// A thread's end: release returns once every thread of the scope has ended, its
// thread-local and thread-specific destructors included (it does not wait for the C
// library's teardown after them: thread_group.h).

std::atomic<int> g_tls_ends{0};
std::atomic<int> g_key_ends{0};
void take_a_while();
pthread_key_t g_end_key;

struct TlsEnd {
  bool armed = false;
  ~TlsEnd() {
    if (!armed) return;
    take_a_while();
    g_tls_ends.fetch_add(1);
  }
};
thread_local TlsEnd t_tls_end;

void arm_thread_ends() {
  t_tls_end.armed = true;
  (void)pthread_setspecific(g_end_key, &g_key_ends);  // a key made after the library's
}

// take_a_while: a destructor that works for 100 us before it counts, so a release that
// returned before it ran reads the count short, whichever CPU each thread is on.
void take_a_while() {
  const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(100);
  while (std::chrono::steady_clock::now() < end) {
  }
}

TEST(ThreadEnds, ReleaseReturnsAfterEveryThreadLocalAndKeyDestructor) {
  ASSERT_EQ(0, pthread_key_create(&g_end_key, [](void *p) {
    take_a_while();
    static_cast<std::atomic<int> *>(p)->fetch_add(1);
  }));
  const int rounds = static_cast<int>(scaled(100));
  for (int i = 0; i < rounds; ++i) {
    g_tls_ends = 0;
    g_key_ends = 0;
    Counter drops;
    tether_runner h{};
    ASSERT_EQ(TETHER_OK, start_runner(nullptr, [&](tether_task *t) {
      arm_thread_ends();
      return spawn(t, "ends-nested", [](tether_task *) {
        arm_thread_ends();
        return tether_status{TETHER_OK};
      }, &drops);
    }, &drops, &h));
    ASSERT_EQ(TETHER_OK, tether_runner_join(h, kLongNs));  // the join wakes at the bodies' end, before their destructors
    ASSERT_EQ(TETHER_OK, tether_runner_release(h));
    ASSERT_EQ(2, g_tls_ends.load()) << "round " << i << ": a thread_local destructor ran after release returned";
    ASSERT_EQ(2, g_key_ends.load()) << "round " << i << ": a pthread key destructor ran after release returned";
    ASSERT_EQ(2, drops.get());
  }
  ASSERT_EQ(0, pthread_key_delete(g_end_key));
}

// ---------------------------------------------------------------------------------------
// The status table.

TEST(Status, NamesAndDescriptionsAreDistinctAndNonEmpty) {
  std::set<std::string> names, descriptions;
  for (int32_t s = 0; s <= 19; ++s) {
    const char *name = tether_status_name(s);
    const char *describe = tether_status_describe(s);
    ASSERT_NE(nullptr, name);
    ASSERT_NE(nullptr, describe);
    EXPECT_GT(std::strlen(name), 0u);
    EXPECT_GT(std::strlen(describe), 0u);
    EXPECT_EQ(0, std::strncmp(name, "TETHER_", 7)) << name;
    EXPECT_NE(std::string("TETHER_E_UNKNOWN"), name) << s;
    EXPECT_TRUE(names.insert(name).second) << "duplicate name " << name;
    EXPECT_TRUE(descriptions.insert(describe).second) << "duplicate description " << describe;
    EXPECT_EQ(name, tether_status_name(s)) << "not static storage";
  }
  EXPECT_EQ(20u, names.size());
}

TEST(Status, TableMatchesTheHeaderMap) {
#define TETHER_TEST_CHECK_ENTRY(suffix, value, description)         \
  EXPECT_STREQ("TETHER_" #suffix, tether_status_name(value));       \
  EXPECT_STREQ(description, tether_status_describe(value));         \
  EXPECT_EQ(value, static_cast<int>(TETHER_##suffix));
  TETHER_STATUS_MAP(TETHER_TEST_CHECK_ENTRY)
#undef TETHER_TEST_CHECK_ENTRY
  EXPECT_STREQ("TETHER_E_TIMEOUT", tether_status_name(4));
  EXPECT_STREQ("TETHER_E_FORKED", tether_status_name(19));
  EXPECT_STREQ("TETHER_OK", tether_status_name(0));
}

TEST(Status, UnknownValues) {
  for (int32_t s : {-1, 20, 21, 100, 1000, INT32_MIN, INT32_MAX}) {
    EXPECT_STREQ("TETHER_E_UNKNOWN", tether_status_name(s)) << s;
    EXPECT_STREQ("unknown status code", tether_status_describe(s)) << s;
  }
}

TEST(Status, VersionMatchesHeader) {
  EXPECT_EQ(static_cast<uint32_t>(TETHER_VERSION), tether_version());
  const std::string expected = std::to_string(TETHER_VERSION_MAJOR) + "." +
                               std::to_string(TETHER_VERSION_MINOR) + "." +
                               std::to_string(TETHER_VERSION_PATCH);
  EXPECT_EQ(expected, tether_version_string());
}

// The last-error text is per thread: a failure on one thread is not seen on another.
TEST(Status, LastErrorMessageIsThreadLocal) {
  std::string other_before, other_after;
  size_t other_len = 99;
  std::thread fresh([&] {
    other_len = tether_last_error_message(nullptr, 0);
  });
  fresh.join();
  EXPECT_EQ(0u, other_len) << "a fresh thread has no last error";

  int32_t s = 0;
  ASSERT_EQ(TETHER_E_INVALID_HANDLE, tether_runner_poll(tether_runner{0x1234}, &s));
  const std::string mine = last_error_message();
  EXPECT_FALSE(mine.empty());

  std::thread other([&] {
    other_before = last_error_message();
    (void)tether_runner_poll(tether_runner{0}, nullptr);
    other_after = last_error_message();
  });
  other.join();
  EXPECT_TRUE(other_before.empty()) << other_before;
  EXPECT_FALSE(other_after.empty());
  EXPECT_EQ(mine, last_error_message()) << "another thread's failure changed this thread's text";

  // snprintf semantics: full length returned, at most cap-1 bytes plus a NUL written.
  const size_t full = tether_last_error_message(nullptr, 0);
  ASSERT_EQ(mine.size(), full);
  ASSERT_GT(full, 4u);
  char small[5];
  std::memset(small, 'x', sizeof small);
  EXPECT_EQ(full, tether_last_error_message(small, sizeof small));
  EXPECT_EQ('\0', small[4]);
  EXPECT_EQ(mine.substr(0, 4), std::string(small));

  // A successful call does not clear it.
  Counter drops;
  {
    Runner r;
    ASSERT_EQ(TETHER_OK, start_runner(nullptr, [](tether_task *) { return tether_status{TETHER_OK}; },
                                      &drops, r.out()));
    EXPECT_EQ(TETHER_OK, tether_runner_join(r.get(), kLongNs));
    EXPECT_EQ(mine, last_error_message());
  }
  EXPECT_TRUE(drops.wait_for(1, kLong));
}

}  // namespace
