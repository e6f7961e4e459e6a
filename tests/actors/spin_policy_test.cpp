// Spin policy (src/core/spin_policy.h): whatever a waiter and a lane's consumer decide
// from where the other runs — spin, or park at once — no call is lost and every answer
// arrives. These drive the decisions' paths: both sides on one CPU (both park at once),
// a caller that moves between CPUs while it calls (the hints go stale), several callers
// on different CPUs at once (the hints race), a lane with a ring (its parks make the
// heavy fence) answering calls with futures between fire-and-forget calls, and waited
// calls between them (each switches its ring's fence, core/inbox.h).
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include "actors_support.h"

namespace at {
namespace {

std::vector<int> usable_cpus() {
  cpu_set_t set;
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

// Pin: the calling thread on one CPU until the end of the scope.
class Pin {
 public:
  explicit Pin(int cpu) {
    ok_ = pthread_getaffinity_np(pthread_self(), sizeof saved_, &saved_) == 0;
    move_to(cpu);
  }
  ~Pin() {
    if (ok_) (void)pthread_setaffinity_np(pthread_self(), sizeof saved_, &saved_);
  }
  Pin(const Pin &) = delete;
  Pin &operator=(const Pin &) = delete;
  void move_to(int cpu) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    ok_ = ok_ && pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0;
  }
  [[nodiscard]] bool ok() const { return ok_; }

 private:
  cpu_set_t saved_{};
  bool ok_ = false;
};

tether_status add_one(tether_task *t, void *, void *arg) {
  return tether_task_set_result(t, reinterpret_cast<void *>(reinterpret_cast<intptr_t>(arg) + 1), nullptr);
}
tether_status no_state(tether_task *, void *, void **state) {
  *state = nullptr;
  return TETHER_OK;
}
tether_status count_one(tether_task *, void *, void *arg) {
  static_cast<std::atomic<int64_t> *>(arg)->fetch_add(1, std::memory_order_relaxed);
  return TETHER_OK;
}

// make_actor: an actor on a new executor pinned to cpu (-1: not pinned).
void make_actor(Executor &e, Actor &a, int cpu, int64_t idle_spin_ns) {
  tether_executor_options eo;
  tether_executor_options_init(&eo);
  eo.name = "spin-policy";
  eo.cpu = cpu;
  eo.idle_spin_ns = idle_spin_ns;
  ASSERT_EQ(tether_executor_create(&eo, e.out()), TETHER_OK) << last_error();
  tether_actor_options o;
  tether_actor_options_init(&o);
  o.executor = e.get();
  ASSERT_EQ(tether_actor_create(&o, no_state, nullptr, nullptr, nullptr, a.out()), TETHER_OK) << last_error();
}

// round_trip: one call with a future, waited for (bounded); its answer, or -1.
int64_t round_trip(tether_actor a, int64_t x) {
  Future f;
  if (tether_actor_call(a, nullptr, add_one, reinterpret_cast<void *>(static_cast<intptr_t>(x)), nullptr, f.out()) !=
      TETHER_OK) {
    return -1;
  }
  if (f.wait() != TETHER_OK) return -1;
  void *r = nullptr;
  if (tether_future_take_result(f.get(), &r) != TETHER_OK) return -1;
  return static_cast<int64_t>(reinterpret_cast<intptr_t>(r));
}

TEST(SpinPolicy, SameCpuRoundTripsAllAnswer) {
  const std::vector<int> cpus = usable_cpus();
  ASSERT_FALSE(cpus.empty());
  for (int64_t idle_spin_ns : {INT64_C(0), INT64_C(20000)}) {
    Executor e;
    Actor a;
    Pin pin(cpus[0]);
    ASSERT_TRUE(pin.ok());
    make_actor(e, a, cpus[0], idle_spin_ns);
    const int64_t n = static_cast<int64_t>(scaled(4000));
    for (int64_t x = 0; x < n; ++x) ASSERT_EQ(round_trip(a.get(), x), x + 1) << "call " << x;
  }
}

TEST(SpinPolicy, CallerMovingBetweenCpusAllAnswer) {
  const std::vector<int> cpus = usable_cpus();
  if (cpus.size() < 2) GTEST_SKIP() << "needs 2 CPUs";
  Executor e;
  Actor a;
  make_actor(e, a, cpus[0], 20000);
  Pin pin(cpus[0]);
  const int64_t n = static_cast<int64_t>(scaled(4000));
  for (int64_t x = 0; x < n; ++x) {
    if (x % 16 == 0) pin.move_to(cpus[static_cast<size_t>(x / 16) % 2]);
    ASSERT_TRUE(pin.ok());
    ASSERT_EQ(round_trip(a.get(), x), x + 1) << "call " << x;
  }
}

TEST(SpinPolicy, CallersOnEveryCpuAtOnceAllAnswer) {
  const std::vector<int> cpus = usable_cpus();
  Executor e;
  Actor a;
  make_actor(e, a, -1, 20000);
  const int64_t n = static_cast<int64_t>(scaled(2000));
  std::atomic<int64_t> wrong{0};
  std::vector<std::thread> callers;
  for (size_t i = 0; i < 2 * cpus.size(); ++i) {
    callers.emplace_back([&, cpu = cpus[i % cpus.size()]] {
      Pin pin(cpu);
      for (int64_t x = 0; x < n; ++x) {
        if (round_trip(a.get(), x) != x + 1) wrong.fetch_add(1);
      }
    });
  }
  for (auto &t : callers) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(SpinPolicy, RingLaneParksBetweenCallsLosesNothing) {
  const std::vector<int> cpus = usable_cpus();
  std::atomic<int64_t> counted{0};
  Executor e;
  Actor a;
  make_actor(e, a, cpus.size() > 1 ? cpus[1] : -1, 0);  // parks at once: every park fences
  Pin pin(cpus[0]);
  const int64_t n = static_cast<int64_t>(scaled(2000));
  for (int64_t x = 0; x < n; ++x) {
    ASSERT_EQ(tether_actor_call(a.get(), nullptr, count_one, &counted, nullptr, nullptr), TETHER_OK) << last_error();
    ASSERT_EQ(round_trip(a.get(), x), x + 1) << "call " << x;  // after the fire-and-forget call, in order
    ASSERT_EQ(counted.load(std::memory_order_relaxed), x + 1);
  }
}

// A waited call (tether_actor_call_wait, no deadline) publishes with a full fence and
// counts its ring out of the lane's light leases; the next fire-and-forget call counts it
// back in (core/inbox.h, fence_lightly / fence_fully). Two callers switching so on every
// call, the consumer on another CPU parking between calls: every call runs and every
// waiter gets its answer. A lost wake-up would leave a waiter blocked (the waited path
// has no deadline): a watchdog that sees no progress for kPrompt nudges the lane with a
// call of its own, which wakes it, and counts the nudge, so the test fails instead of
// hanging.
TEST(SpinPolicy, RingLaneParksBetweenWaitedAndFireAndForgetCallsLosesNothing) {
  const std::vector<int> cpus = usable_cpus();
  std::atomic<int64_t> counted{0}, progress{0}, wrong{0}, nudged{0};
  std::atomic<bool> done{false};
  Executor e;
  Actor a;
  make_actor(e, a, cpus.size() > 1 ? cpus[1] : -1, 0);  // parks at once
  std::thread watchdog([&] {
    int64_t seen = -1;
    auto since = tether_test::Clock::now();
    while (!done.load(std::memory_order_acquire)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));  // polls progress, synchronizes nothing
      const int64_t now_at = progress.load(std::memory_order_relaxed);
      if (now_at != seen) {
        seen = now_at;
        since = tether_test::Clock::now();
      } else if (tether_test::Clock::now() - since > kPrompt) {
        nudged.fetch_add(1);
        (void)tether_actor_call(a.get(), nullptr, count_one, &counted, nullptr, nullptr);
        since = tether_test::Clock::now();
      }
    }
  });
  const int64_t n = static_cast<int64_t>(scaled(2000));
  std::vector<std::thread> callers;
  for (int k = 0; k < 2; ++k) {
    callers.emplace_back([&] {
      Pin pin(cpus[0]);
      for (int64_t x = 0; x < n; ++x) {
        if (tether_actor_call(a.get(), nullptr, count_one, &counted, nullptr, nullptr) != TETHER_OK) {
          wrong.fetch_add(1);
        }
        void *r = nullptr;
        void *arg = reinterpret_cast<void *>(static_cast<intptr_t>(x));
        if (tether_actor_call_wait(a.get(), nullptr, add_one, arg, nullptr, -1, &r, nullptr) != TETHER_OK ||
            reinterpret_cast<intptr_t>(r) != x + 1) {
          wrong.fetch_add(1);
        }
        progress.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  for (auto &t : callers) t.join();
  done.store(true, std::memory_order_release);
  watchdog.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(nudged.load(), 0) << "a waiter made no progress for " << kPrompt.count() << " s: a lost wake-up";
  // Every fire-and-forget call ran (each before the waited call behind it).
  EXPECT_EQ(counted.load(), 2 * n + nudged.load());
}

}  // namespace
}  // namespace at
