// Stress, scale and soak (issue 12, parts 3 and 6). Sizes come from the environment so
// the same tests run short in CI and at full size by hand (tests/reliability/README.md):
// TETHER_STRESS_RUNNERS, TETHER_STRESS_CALLS (per actor), TETHER_STRESS_CYCLES, each
// divided by TETHER_TEST_SCALE (4 ASan, 10 TSan, 20 valgrind); TETHER_SOAK_SECONDS.
#include <gtest/gtest.h>
#include <tether/tether.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kWaitNs = INT64_C(60) * 1000 * 1000 * 1000;

size_t env_size(const char* name, size_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::strtoull(v, nullptr, 10) : fallback;
}
size_t scale() {
  const size_t s = env_size("TETHER_TEST_SCALE", TETHER_TEST_DEFAULT_SCALE);
  return s == 0 ? 1 : s;
}
size_t sized(const char* name, size_t ci_default) { return std::max<size_t>(1, env_size(name, ci_default) / scale()); }

// Gate: threads wait (bounded) until the test opens it, so they really are concurrent.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  void release() {
    {
      std::lock_guard lock(mu);
      open = true;
    }
    cv.notify_all();
  }
  bool wait() {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(60), [&] { return open; });
  }
};

bool settle_threads() {
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (tether_debug_unjoined_threads() != 0) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// Process figures for the soak: resident set (kB) and OS thread count.
long status_field(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::string key = std::string(field) + ":";
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) return std::strtol(line.c_str() + key.size(), nullptr, 10);
  }
  return -1;
}

// os_threads_back_to: the OS thread count once it is at most `base` (bounded: 10 s),
// else the last count read. The library's threads have ended once settle_threads()
// returned (their work and destructors done), but the kernel lists a thread until its
// teardown is over (the library does not wait for that: thread_group.h).
long os_threads_back_to(long base) {
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  long n = status_field("Threads");
  while (n > base && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    n = status_field("Threads");
  }
  return n;
}

std::atomic<long> g_drops{0};
void count_drop(void*) { g_drops.fetch_add(1); }

// ---- runners with nested threads, all live at once ----------------------------------

struct RunnerWork {
  Gate* gate;
  std::atomic<long>* ran;
};

tether_status nested_wait(tether_task*, void* arg) {
  auto* w = static_cast<RunnerWork*>(arg);
  w->ran->fetch_add(1);
  return w->gate->wait() ? TETHER_OK : TETHER_E_TIMEOUT;
}

tether_status runner_target(tether_task* t, void* arg) {
  auto* w = static_cast<RunnerWork*>(arg);
  for (int i = 0; i < 2; ++i) {
    const tether_status rc = tether_task_spawn(t, "nested", &nested_wait, w, nullptr);
    if (rc != TETHER_OK) return rc;  // THREAD_CREATE: the machine's limit, failed cleanly
  }
  return nested_wait(t, arg);
}

// run_concurrent_runners: n runners x 3 threads live at once; returns how many started.
// Each either succeeds or fails with THREAD_CREATE/NO_MEMORY; nothing is left behind.
size_t run_concurrent_runners(size_t n, bool quiet = false) {
  Gate gate;
  std::atomic<long> ran{0};
  RunnerWork work{&gate, &ran};
  tether_runner_options o;
  tether_runner_options_init(&o);
  o.stack_size = 128 * 1024;
  std::vector<tether_runner> runners;
  size_t refused = 0;
  for (size_t i = 0; i < n; ++i) {
    tether_runner r{0};
    const tether_status rc = tether_runner_start(&o, &runner_target, &work, nullptr, &r);
    if (rc == TETHER_OK) {
      runners.push_back(r);
    } else {
      EXPECT_TRUE(rc == TETHER_E_THREAD_CREATE || rc == TETHER_E_NO_MEMORY) << tether_status_name(rc);
      ++refused;
    }
  }
  gate.release();
  for (tether_runner r : runners) {
    EXPECT_EQ(tether_runner_join_all(r, kWaitNs), TETHER_OK);
    int32_t state = 0;
    EXPECT_EQ(tether_runner_poll(r, &state), TETHER_OK);
    if (state == TETHER_FAILED) {
      tether_error e{0};
      EXPECT_EQ(tether_runner_error(r, &e), TETHER_OK);
      const int64_t why = tether_error_user_code(e);
      EXPECT_TRUE(why == TETHER_E_THREAD_CREATE || why == TETHER_E_NO_MEMORY) << why;
      (void)tether_error_release(e);
    } else {
      EXPECT_EQ(state, TETHER_SUCCEEDED);
    }
    EXPECT_EQ(tether_runner_release(r), TETHER_OK);
  }
  EXPECT_TRUE(settle_threads());
  if (!quiet) std::printf("[stress] %zu runners: %zu started, %zu refused, %ld threads ran\n", n, runners.size(), refused,
              ran.load());
  return runners.size();
}

TEST(Stress, ConcurrentRunnersWithNestedThreads) {
  EXPECT_GT(run_concurrent_runners(sized("TETHER_STRESS_RUNNERS", 1000)), 0u);
}

TEST(Scale, TwoThousandRunnersWithNestedThreads) {
  EXPECT_GT(run_concurrent_runners(std::max<size_t>(1, 2000 / scale())), 0u);
}

// ---- actors over executors, exactly-once counters -------------------------------------

tether_status ctor(tether_task*, void* arg, void** state) {
  *state = arg;
  return TETHER_OK;
}
tether_status bump(tether_task*, void* state, void*) {
  static_cast<std::atomic<long>*>(state)->fetch_add(1, std::memory_order_relaxed);
  return TETHER_OK;
}

void actors_over_executors(size_t actors, size_t executors, size_t calls_per_actor, size_t producers,
                           bool quiet = false) {
  std::vector<tether_executor> execs(executors);
  for (auto& e : execs) ASSERT_EQ(tether_executor_create(nullptr, &e), TETHER_OK);
  std::vector<std::atomic<long>> counts(actors);
  std::vector<tether_actor> handles(actors);
  for (size_t i = 0; i < actors; ++i) {
    tether_actor_options o;
    tether_actor_options_init(&o);
    o.executor = execs[i % executors];
    ASSERT_EQ(tether_actor_create(&o, &ctor, nullptr, &counts[i], nullptr, &handles[i]), TETHER_OK) << i;
  }
  g_drops.store(0);
  std::vector<std::thread> threads;
  for (size_t p = 0; p < producers; ++p) {
    threads.emplace_back([&, p] {
      for (size_t c = p; c < calls_per_actor; c += producers) {
        for (size_t i = 0; i < actors; ++i) {
          const tether_status rc = tether_actor_call(handles[i], nullptr, &bump, nullptr, &count_drop, nullptr);
          if (rc != TETHER_OK) ADD_FAILURE() << tether_status_name(rc);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  for (tether_actor a : handles) EXPECT_EQ(tether_actor_release(a), TETHER_OK);  // drains
  for (size_t i = 0; i < actors; ++i) EXPECT_EQ(counts[i].load(), static_cast<long>(calls_per_actor)) << i;
  EXPECT_EQ(g_drops.load(), static_cast<long>(actors * calls_per_actor));
  for (tether_executor e : execs) EXPECT_EQ(tether_executor_release(e), TETHER_OK);
  EXPECT_TRUE(settle_threads());
  if (!quiet) std::printf("[stress] %zu actors on %zu executors, %zu calls each from %zu producers: exactly once\n", actors,
              executors, calls_per_actor, producers);
}

TEST(Stress, ActorsOverExecutorsExactlyOnce) {
  actors_over_executors(std::max<size_t>(1, 1000 / scale()), 16, sized("TETHER_STRESS_CALLS", 200), 4);
}

TEST(Scale, TenThousandActorsOnTwoExecutors) {
  actors_over_executors(std::max<size_t>(1, 10000 / scale()), 2, 3, 2);
}

// ---- create/release cycles racing calls from other threads ----------------------------

tether_status quick(tether_task*, void*) { return TETHER_OK; }
tether_status quick_method(tether_task*, void*, void*) { return TETHER_OK; }

bool racing_outcome(tether_status rc) {
  return rc == TETHER_OK || rc == TETHER_E_INVALID_HANDLE || rc == TETHER_E_SHUTDOWN;
}

TEST(Stress, CreateReleaseCyclesRacingCalls) {
  const size_t cycles = sized("TETHER_STRESS_CYCLES", 400);
  std::atomic<uint64_t> current_exec{0}, current_actor{0}, current_runner{0};
  std::atomic<bool> done{false};
  std::atomic<long> bad{0}, calls{0};
  g_drops.store(0);
  std::vector<std::thread> callers;
  for (int t = 0; t < 2; ++t) {
    callers.emplace_back([&] {
      while (!done.load()) {
        tether_status rc = tether_executor_submit({current_exec.load()}, &quick, nullptr, &count_drop, nullptr);
        if (!racing_outcome(rc)) bad.fetch_add(1);
        rc = tether_actor_call({current_actor.load()}, nullptr, &quick_method, nullptr, &count_drop, nullptr);
        if (!racing_outcome(rc)) bad.fetch_add(1);
        int32_t state = 0;
        rc = tether_runner_poll({current_runner.load()}, &state);
        if (!racing_outcome(rc)) bad.fetch_add(1);
        calls.fetch_add(2);
      }
    });
  }
  for (size_t i = 0; i < cycles; ++i) {
    tether_executor e{0};
    ASSERT_EQ(tether_executor_create(nullptr, &e), TETHER_OK);
    current_exec.store(e.id);
    tether_actor a{0};
    ASSERT_EQ(tether_actor_create(nullptr, &ctor, nullptr, nullptr, nullptr, &a), TETHER_OK);
    current_actor.store(a.id);
    tether_runner r{0};
    ASSERT_EQ(tether_runner_start(nullptr, &quick, nullptr, nullptr, &r), TETHER_OK);
    current_runner.store(r.id);
    EXPECT_EQ(i % 2 ? tether_executor_release(e) : tether_executor_release_nowait(e), TETHER_OK);
    EXPECT_EQ(i % 2 ? tether_actor_release(a) : tether_actor_release_nowait(a), TETHER_OK);
    EXPECT_EQ(i % 2 ? tether_runner_release(r) : tether_runner_release_nowait(r), TETHER_OK);
  }
  done.store(true);
  for (auto& t : callers) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_TRUE(settle_threads());
  // Every call that was accepted ran or was cancelled: its arg dropped once. Refused ones
  // were dropped before the call returned. So drops == calls made.
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (g_drops.load() != calls.load() && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(g_drops.load(), calls.load());
  std::printf("[stress] %zu create/release cycles of each kind, %ld racing calls\n", cycles, calls.load());
}

// ---- soak: everything above mixed, for TETHER_SOAK_SECONDS ----------------------------

TEST(Soak, MixedWorkReturnsToBaseline) {
  const size_t seconds = env_size("TETHER_SOAK_SECONDS", 5);
  auto round = [] {
    (void)run_concurrent_runners(20, true);
    actors_over_executors(50, 4, 50, 2, true);
  };
  round();  // warm-up: pools, caches and the control thread exist from here on
  const long base_rss = status_field("VmRSS"), base_threads = status_field("Threads");
  long peak_rss = base_rss, peak_threads = base_threads;
  std::atomic<bool> stop{false};
  std::thread sampler([&] {
    while (!stop.load()) {
      peak_rss = std::max(peak_rss, status_field("VmRSS"));
      peak_threads = std::max(peak_threads, status_field("Threads"));
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  const auto end = Clock::now() + std::chrono::seconds(seconds);
  size_t rounds = 0;
  auto next_report = Clock::now();
  while (Clock::now() < end && !::testing::Test::HasFailure()) {
    round();
    ++rounds;
    if (Clock::now() >= next_report) {
      std::printf("[soak] t=%llds rss=%ldkB threads=%ld\n",
                  static_cast<long long>(seconds - std::chrono::duration_cast<std::chrono::seconds>(end - Clock::now()).count()),
                  status_field("VmRSS"), status_field("Threads"));
      next_report += std::chrono::seconds(10);
    }
  }
  stop.store(true);
  sampler.join();
  EXPECT_TRUE(settle_threads());
  const long end_threads = os_threads_back_to(base_threads), end_rss = status_field("VmRSS");
  std::printf("[soak] %zu s, %zu rounds: rss start %ld kB, peak %ld kB, end %ld kB; threads start %ld, peak %ld, end %ld\n",
              seconds, rounds, base_rss, peak_rss, end_rss, base_threads, peak_threads, end_threads);
  EXPECT_LE(end_threads, base_threads);  // the base may count a thread of the warm-up still in its teardown
#if defined(__SANITIZE_ADDRESS__) || (defined(TETHER_TEST_VALGRIND) && TETHER_TEST_VALGRIND)
  // ASan keeps freed memory in its quarantine (256 MB), memcheck in its freed-blocks
  // queue (20 MB): RSS says nothing here, and both check at exit that nothing leaked.
#else
  // Back to baseline: within 16 MB of the warm start (allocator caches, not growth).
  EXPECT_LT(end_rss, base_rss + 16 * 1024);
#endif
}

}  // namespace
