// Control plane under load (issue 12, part 5): p50/p99 of tether_actor_state,
// tether_actor_get_stats, tether_actor_stop(CANCEL) and a call to an idle group, while
// every execution thread of the actor is blocked in user code and another executor is
// kept saturated by a producer. Each benchmark times every call and reports p50_ns and
// p99_ns as counters (Google Benchmark's own time is the mean).
#include <benchmark/benchmark.h>
#include <tether/tether.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "check.h"

namespace {

using Clock = std::chrono::steady_clock;

// Blocker: methods park on it until the benchmark ends (bounded, so nothing hangs).
struct Blocker {
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
};

tether_status block_method(tether_task*, void*, void* arg) {
  auto* b = static_cast<Blocker*>(arg);
  std::unique_lock lock(b->mu);
  b->cv.wait_for(lock, std::chrono::seconds(120), [&] { return b->open; });
  return TETHER_OK;
}
tether_status idle_method(tether_task*, void*, void*) { return TETHER_OK; }
tether_status ctor(tether_task*, void*, void** state) {
  *state = nullptr;
  return TETHER_OK;
}
tether_status spin_task(tether_task*, void*) {
  const auto end = Clock::now() + std::chrono::microseconds(50);
  while (Clock::now() < end) {
  }
  return TETHER_OK;
}

// Load: an actor whose default thread and "pool" group are blocked, with an idle "idle"
// group; and an executor a producer keeps saturated.
struct Load {
  Blocker blocker;
  tether_actor actor{0};
  tether_executor busy{0};
  std::atomic<bool> stop{false};
  std::thread producer;

  Load() {
    const tether_group_spec groups[] = {{"pool", 2}, {"idle", 1}};
    tether_actor_options o;
    tether_actor_options_init(&o);
    o.groups = groups;
    o.group_count = 2;
    tether_bench::Check(tether_actor_create(&o, &ctor, nullptr, nullptr, nullptr, &actor), TETHER_OK, "actor_create");
    block(actor);
    tether_executor_options eo;
    tether_executor_options_init(&eo);
    eo.queue_capacity = 64;
    tether_bench::Check(tether_executor_create(&eo, &busy), TETHER_OK, "executor_create");
    producer = std::thread([this] {
      while (!stop.load()) (void)tether_executor_submit(busy, &spin_task, nullptr, nullptr, nullptr);  // QUEUE_FULL: full
    });
  }
  void block(tether_actor a) {
    for (const char* g : {static_cast<const char*>(nullptr), "pool", "pool"}) {
      tether_bench::Check(tether_actor_call(a, g, &block_method, &blocker, nullptr, nullptr), TETHER_OK, "blocking call");
    }
  }
  ~Load() {
    stop.store(true);
    producer.join();
    blocker.release();
    (void)tether_actor_release(actor);
    (void)tether_executor_release(busy);
  }
};

void report(benchmark::State& state, std::vector<int64_t>& ns) {
  if (ns.empty()) return;
  std::sort(ns.begin(), ns.end());
  state.counters["p50_ns"] = static_cast<double>(ns[ns.size() / 2]);
  state.counters["p99_ns"] = static_cast<double>(ns[ns.size() * 99 / 100]);
}

template <class Op>
void timed(benchmark::State& state, Op op) {
  std::vector<int64_t> ns;
  ns.reserve(1 << 20);
  for (auto _ : state) {
    const auto t0 = Clock::now();
    op();
    ns.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
  }
  report(state, ns);
}

void BM_StateUnderLoad(benchmark::State& state) {
  Load load;
  timed(state, [&] {
    int32_t s = 0;
    tether_bench::Check(tether_actor_state(load.actor, &s, nullptr), TETHER_OK, "state");
  });
}

void BM_StatsUnderLoad(benchmark::State& state) {
  Load load;
  timed(state, [&] {
    tether_actor_stats s{};
    s.struct_size = sizeof s;
    tether_bench::Check(tether_actor_get_stats(load.actor, &s), TETHER_OK, "stats");
  });
}

void BM_IdleGroupCallUnderLoad(benchmark::State& state) {
  Load load;
  timed(state, [&] {
    tether_future f{0};
    tether_bench::Check(tether_actor_call(load.actor, "idle", &idle_method, nullptr, nullptr, &f), TETHER_OK, "call");
    tether_bench::Check(tether_future_wait(f, INT64_C(10) * 1000 * 1000 * 1000), TETHER_OK, "wait");
    tether_bench::Check(tether_future_release(f), TETHER_OK, "release");
  });
}

// stop(CANCEL, timeout 0) on an actor whose threads are all blocked: the call returns at
// once (TIMEOUT: the destructor waits for the blocked methods). A fresh actor each time,
// made outside the timing.
void BM_StopCancelUnderLoad(benchmark::State& state) {
  Load load;
  std::vector<int64_t> ns;
  std::vector<tether_actor> stopped;
  for (auto _ : state) {
    state.PauseTiming();
    const tether_group_spec groups[] = {{"pool", 2}, {"idle", 1}};
    tether_actor_options o;
    tether_actor_options_init(&o);
    o.groups = groups;
    o.group_count = 2;
    tether_actor a{0};
    tether_bench::Check(tether_actor_create(&o, &ctor, nullptr, nullptr, nullptr, &a), TETHER_OK, "actor_create");
    load.block(a);
    state.ResumeTiming();
    const auto t0 = Clock::now();
    const tether_status rc = tether_actor_stop(a, TETHER_STOP_CANCEL, 0);
    ns.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
    if (rc != TETHER_OK) tether_bench::Check(rc, TETHER_E_TIMEOUT, "stop");
    stopped.push_back(a);
  }
  report(state, ns);
  load.blocker.release();
  for (tether_actor a : stopped) (void)tether_actor_release(a);
}

BENCHMARK(BM_StateUnderLoad)->UseRealTime();
BENCHMARK(BM_StatsUnderLoad)->UseRealTime();
BENCHMARK(BM_IdleGroupCallUnderLoad)->UseRealTime();
BENCHMARK(BM_StopCancelUnderLoad)->UseRealTime()->Iterations(100);

}  // namespace

BENCHMARK_MAIN();
