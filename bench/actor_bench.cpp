// actor_bench.cpp — what a call into a tether actor (or executor) costs next to the
// single-thread executor a C++ programmer would write by hand, and next to Boost.Asio.
//
// Every tether benchmark has its baselines in this binary:
//   BM_Baseline_*  BaselineExecutor below: one std::thread, a std::deque of
//                  std::function<void()>, one std::mutex, one std::condition_variable,
//                  and a std::promise / std::future per call that needs an answer.
//   BM_Asio_*      boost::asio::io_context run by one std::thread, boost::asio::post, and
//                  a std::promise per call that needs an answer. Built only when the Boost
//                  headers are found (TETHER_BENCH_HAVE_ASIO, set by bench/CMakeLists.txt).
//
//   BM_*_RoundTrip/0           one call on an idle actor / executor, waited for: latency.
//   BM_*_RoundTrip/1           the same with the caller pinned to one CPU and the executing
//                              thread to another (PinnedCpus), so the scheduler cannot put
//                              both on one CPU: a controlled comparison.
//   BM_*_FireAndForget/P       1M calls without an answer, from P producer threads (1, 2),
//                              timed until the last one has run: throughput.
//   BM_*_FuturePerCall         kFutureBatch calls, each with a future (promise), then wait
//                              for every one and release it: throughput.
//   BM_Tether_ManyActorsTwoExecutors/P  kManyActors actors on two executors made, called
//                              once each and released; P: where the executor threads are.
//
// The goals of issue 3: round trip at most 1.0x the hand-written baseline and at most 1.5x
// Asio; fire-and-forget throughput at least 3x the hand-written baseline.
// bench/README.md explains how to run them and holds the measured figures.

#include <tether/tether.h>

#include "baseline_executor.h"
#include "call_each.h"
#include "check.h"

#include <benchmark/benchmark.h>

#ifdef TETHER_BENCH_HAVE_ASIO
#include "asio_executor.h"
using tether_bench::AsioExecutor;
#endif

#include <pthread.h>
#include <sched.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace {

using tether_bench::BaselineExecutor;
using tether_bench::CallEach;
using tether_bench::Check;
using tether_bench::MakeActor;
using tether_bench::PinThread;

constexpr int64_t kFireAndForgetCalls = 1'000'000;  // per iteration, split between producers
constexpr int64_t kFutureBatch = 10'000;            // calls with a future per iteration
constexpr int64_t kWaitForever = -1;

// RunProducers runs produce(count) on `producers` threads at once, `total / producers`
// calls each: the benchmark thread is one of them, the others are std::threads made for
// the iteration (a thread start costs ~50 us against the ~100 ms of 1M calls).
template <class Produce>
void RunProducers(int producers, int64_t total, Produce &&produce) {
  const int64_t each = total / producers;
  std::vector<std::thread> others;
  others.reserve(static_cast<size_t>(producers - 1));
  for (int i = 1; i < producers; ++i) others.emplace_back([&produce, each] { produce(each); });
  produce(each);
  for (auto &t : others) t.join();
}

// PinnedCpus: for the /1 round trips, the executing thread on the second CPU this thread
// may use (worker_cpu(), given to the executor when it is made) and then, by PinCaller(),
// the benchmark thread on the first. PinCaller comes after the executor exists: tether
// checks an executor's cpu against the CREATING thread's affinity. The destructor restores
// the caller's affinity. ok() is false with fewer than 2 usable CPUs.
class PinnedCpus {
 public:
  explicit PinnedCpus(bool pin) {
    if (!pin || pthread_getaffinity_np(pthread_self(), sizeof saved_, &saved_) != 0) return;
    int found = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE && found < 2; ++cpu) {
      if (CPU_ISSET(cpu, &saved_)) (found++ == 0 ? caller_cpu_ : worker_cpu_) = cpu;
    }
    usable_ = found == 2;
  }
  ~PinnedCpus() {
    if (caller_pinned_) pthread_setaffinity_np(pthread_self(), sizeof saved_, &saved_);
  }
  PinnedCpus(const PinnedCpus &) = delete;
  PinnedCpus &operator=(const PinnedCpus &) = delete;

  bool ok(bool pin) const { return !pin || usable_; }
  int worker_cpu() const { return usable_ ? worker_cpu_ : -1; }  // -1: no affinity
  int caller_cpu() const { return usable_ ? caller_cpu_ : -1; }  // where PinCaller puts this thread
  void PinCaller() {
    if (!usable_) return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(caller_cpu_, &one);
    if (pthread_setaffinity_np(pthread_self(), sizeof one, &one) != 0) {
      std::fprintf(stderr, "actor_bench: cannot pin the benchmark thread to CPU %d\n", caller_cpu_);
      std::abort();
    }
    caller_pinned_ = true;
  }

 private:
  cpu_set_t saved_{};
  int caller_cpu_ = -1, worker_cpu_ = -1;
  bool usable_ = false;
  bool caller_pinned_ = false;
};

// NewExecutor: a tether executor whose thread is pinned to `cpu` (-1: not pinned), with
// `idle_spin_ns` (-1: the default).
tether_executor NewExecutor(const char *name, int cpu, int64_t idle_spin_ns) {
  tether_executor_options eo;
  tether_executor_options_init(&eo);
  eo.name = name;
  eo.cpu = cpu;
  if (idle_spin_ns >= 0) eo.idle_spin_ns = idle_spin_ns;
  tether_executor e;
  Check(tether_executor_create(&eo, &e), TETHER_OK, "tether_executor_create");
  return e;
}

// ---------------------------------------------------------------------------------------
// The tether actor used by every actor benchmark: its state is a counter that only the
// actor's own thread touches (the point of an actor: no lock in the methods).

struct CounterState {
  int64_t count = 0;
};

tether_status CounterCtor(tether_task *, void *, void **state_out) {
  *state_out = new CounterState();
  return TETHER_OK;
}
void CounterDtor(void *state) { delete static_cast<CounterState *>(state); }

// Increment: the method of the throughput benchmarks.
tether_status Increment(tether_task *, void *state, void *) {
  ++static_cast<CounterState *>(state)->count;
  return TETHER_OK;
}

// Answer: the method of the round trip: returns the state pointer as its result.
tether_status Answer(tether_task *t, void *state, void *) {
  ++static_cast<CounterState *>(state)->count;
  return tether_task_set_result(t, state, nullptr);
}

// ReadCount: returns the counter as the result (the final call of a throughput run).
tether_status ReadCount(tether_task *t, void *state, void *) {
  auto *s = static_cast<CounterState *>(state);
  return tether_task_set_result(t, reinterpret_cast<void *>(static_cast<intptr_t>(s->count)), nullptr);
}

// TetherActor: an actor on a dedicated thread (the default options), or on an executor
// the caller made.
class TetherActor {
 public:
  explicit TetherActor(tether_executor on = tether_executor{0}) {
    tether_actor_options o;
    tether_actor_options_init(&o);
    o.name = "bench-actor";
    o.executor = on;
    Check(tether_actor_create(&o, CounterCtor, CounterDtor, nullptr, nullptr, &actor_), TETHER_OK,
          "tether_actor_create");
    (void)Call(ReadCount);  // the constructor has run: the first timed call finds it idle
  }
  ~TetherActor() { Check(tether_actor_release(actor_), TETHER_OK, "tether_actor_release"); }
  TetherActor(const TetherActor &) = delete;
  TetherActor &operator=(const TetherActor &) = delete;

  // Call: m with a future, waited for; its result.
  void *Call(tether_method_fn m) {
    tether_future f;
    Check(tether_actor_call(actor_, nullptr, m, nullptr, nullptr, &f), TETHER_OK, "tether_actor_call");
    Check(tether_future_wait(f, kWaitForever), TETHER_OK, "tether_future_wait");
    void *result = nullptr;
    Check(tether_future_take_result(f, &result), TETHER_OK, "tether_future_take_result");
    Check(tether_future_release(f), TETHER_OK, "tether_future_release");
    return result;
  }
  int64_t Count() { return static_cast<int64_t>(reinterpret_cast<intptr_t>(Call(ReadCount))); }
  tether_actor handle() const { return actor_; }

 private:
  tether_actor actor_{0};
};

// ---------------------------------------------------------------------------------------
// Round trip: one call on an idle actor, waited for. What a caller waits from submit to
// the result in hand, including the wake-ups on both sides.

// ActorRoundTrip: the loop of every tether actor round trip.
void ActorRoundTrip(benchmark::State &state, tether_actor a) {
  for (auto _ : state) {
    tether_future f;
    Check(tether_actor_call(a, nullptr, Answer, nullptr, nullptr, &f), TETHER_OK, "tether_actor_call");
    Check(tether_future_wait(f, kWaitForever), TETHER_OK, "tether_future_wait");
    void *result = nullptr;
    Check(tether_future_take_result(f, &result), TETHER_OK, "tether_future_take_result");
    benchmark::DoNotOptimize(result);
    Check(tether_future_release(f), TETHER_OK, "tether_future_release");
  }
  state.SetItemsProcessed(state.iterations());
}

// The actor on a thread of its own (the default options); /1: that thread pinned, which
// takes an executor (tether_actor_options has no cpu field): the actor is its only user.
void BM_Tether_ActorRoundTrip(benchmark::State &state) {
  const bool pin = state.range(0) != 0;
  PinnedCpus cpus(pin);
  if (!cpus.ok(pin)) return state.SkipWithError("fewer than 2 usable CPUs");
  if (!pin) {
    TetherActor actor;
    ActorRoundTrip(state, actor.handle());
    return;
  }
  tether_executor e = NewExecutor("bench-actor", cpus.worker_cpu(), -1);
  {
    TetherActor actor(e);
    cpus.PinCaller();
    ActorRoundTrip(state, actor.handle());
  }
  Check(tether_executor_release(e), TETHER_OK, "tether_executor_release");
}
BENCHMARK(BM_Tether_ActorRoundTrip)->Arg(0)->Arg(1)->UseRealTime()->MeasureProcessCPUTime();

// The same with an actor whose thread parks at once when idle (an executor with
// idle_spin_ns = 0): every call then pays the wake-up the baselines pay.
void BM_Tether_ActorRoundTripNoSpin(benchmark::State &state) {
  const bool pin = state.range(0) != 0;
  PinnedCpus cpus(pin);
  if (!cpus.ok(pin)) return state.SkipWithError("fewer than 2 usable CPUs");
  tether_executor e = NewExecutor("bench-nospin", cpus.worker_cpu(), 0);
  {
    TetherActor actor(e);
    cpus.PinCaller();
    ActorRoundTrip(state, actor.handle());
  }
  Check(tether_executor_release(e), TETHER_OK, "tether_executor_release");
}
BENCHMARK(BM_Tether_ActorRoundTripNoSpin)->Arg(0)->Arg(1)->UseRealTime()->MeasureProcessCPUTime();

tether_status ExecutorAnswer(tether_task *t, void *arg) { return tether_task_set_result(t, arg, nullptr); }

void BM_Tether_ExecutorRoundTrip(benchmark::State &state) {
  const bool pin = state.range(0) != 0;
  PinnedCpus cpus(pin);
  if (!cpus.ok(pin)) return state.SkipWithError("fewer than 2 usable CPUs");
  tether_executor e = NewExecutor("bench-exec", cpus.worker_cpu(), -1);
  cpus.PinCaller();
  int token = 0;
  for (auto _ : state) {
    tether_future f;
    Check(tether_executor_submit(e, ExecutorAnswer, &token, nullptr, &f), TETHER_OK, "tether_executor_submit");
    Check(tether_future_wait(f, kWaitForever), TETHER_OK, "tether_future_wait");
    void *result = nullptr;
    Check(tether_future_take_result(f, &result), TETHER_OK, "tether_future_take_result");
    benchmark::DoNotOptimize(result);
    Check(tether_future_release(f), TETHER_OK, "tether_future_release");
  }
  Check(tether_executor_release(e), TETHER_OK, "tether_executor_release");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Tether_ExecutorRoundTrip)->Arg(0)->Arg(1)->UseRealTime()->MeasureProcessCPUTime();

// Baseline round trip: the promise lives on the caller's stack (the caller waits for it,
// so no shared ownership is needed): the cheapest correct form, one allocation (the
// promise's shared state) per call.
void BM_Baseline_RoundTrip(benchmark::State &state) {
  const bool pin = state.range(0) != 0;
  PinnedCpus cpus(pin);
  if (!cpus.ok(pin)) return state.SkipWithError("fewer than 2 usable CPUs");
  BaselineExecutor ex(cpus.worker_cpu());
  cpus.PinCaller();
  CounterState counter;
  for (auto _ : state) {
    std::promise<void *> p;
    std::future<void *> f = p.get_future();
    ex.post([&p, &counter] {
      ++counter.count;
      p.set_value(&counter);
    });
    benchmark::DoNotOptimize(f.get());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Baseline_RoundTrip)->Arg(0)->Arg(1)->UseRealTime()->MeasureProcessCPUTime();

#ifdef TETHER_BENCH_HAVE_ASIO
void BM_Asio_RoundTrip(benchmark::State &state) {
  const bool pin = state.range(0) != 0;
  PinnedCpus cpus(pin);
  if (!cpus.ok(pin)) return state.SkipWithError("fewer than 2 usable CPUs");
  AsioExecutor ex(cpus.worker_cpu());
  cpus.PinCaller();
  CounterState counter;
  for (auto _ : state) {
    std::promise<void *> p;
    std::future<void *> f = p.get_future();
    boost::asio::post(ex.io(), [&p, &counter] {
      ++counter.count;
      p.set_value(&counter);
    });
    benchmark::DoNotOptimize(f.get());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Asio_RoundTrip)->Arg(0)->Arg(1)->UseRealTime()->MeasureProcessCPUTime();
#endif

// ---------------------------------------------------------------------------------------
// Fire and forget: 1M calls per iteration from state.range(0) producers; the iteration
// ends when the last call has run. The final call (with a future / promise) is queued
// after every producer has finished, so in FIFO order it runs after all of them; its
// answer is the counter, checked against the number of calls.

void BM_Tether_FireAndForget(benchmark::State &state) {
  const int producers = static_cast<int>(state.range(0));
  TetherActor actor;
  const tether_actor a = actor.handle();
  int64_t expected = actor.Count();
  for (auto _ : state) {
    RunProducers(producers, kFireAndForgetCalls, [a](int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        Check(tether_actor_call(a, nullptr, Increment, nullptr, nullptr, nullptr), TETHER_OK, "tether_actor_call");
      }
    });
    expected += kFireAndForgetCalls;
    if (actor.Count() != expected) {
      state.SkipWithError("the actor did not run every call");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * kFireAndForgetCalls);
}
BENCHMARK(BM_Tether_FireAndForget)->Arg(1)->Arg(2)->UseRealTime()->MeasureProcessCPUTime();

void BM_Baseline_FireAndForget(benchmark::State &state) {
  const int producers = static_cast<int>(state.range(0));
  BaselineExecutor ex;
  CounterState counter;  // touched only by the executor's thread
  int64_t expected = 0;
  for (auto _ : state) {
    RunProducers(producers, kFireAndForgetCalls, [&ex, &counter](int64_t n) {
      for (int64_t i = 0; i < n; ++i) ex.post([&counter] { ++counter.count; });
    });
    expected += kFireAndForgetCalls;
    if (ex.submit([&counter] { return counter.count; }).get() != expected) {
      state.SkipWithError("the baseline did not run every call");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * kFireAndForgetCalls);
}
BENCHMARK(BM_Baseline_FireAndForget)->Arg(1)->Arg(2)->UseRealTime()->MeasureProcessCPUTime();

#ifdef TETHER_BENCH_HAVE_ASIO
void BM_Asio_FireAndForget(benchmark::State &state) {
  const int producers = static_cast<int>(state.range(0));
  AsioExecutor ex;
  CounterState counter;  // touched only by the io_context's thread
  int64_t expected = 0;
  for (auto _ : state) {
    RunProducers(producers, kFireAndForgetCalls, [&ex, &counter](int64_t n) {
      for (int64_t i = 0; i < n; ++i) boost::asio::post(ex.io(), [&counter] { ++counter.count; });
    });
    expected += kFireAndForgetCalls;
    std::promise<int64_t> p;
    std::future<int64_t> f = p.get_future();
    boost::asio::post(ex.io(), [&p, &counter] { p.set_value(counter.count); });
    if (f.get() != expected) {
      state.SkipWithError("asio did not run every call");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * kFireAndForgetCalls);
}
BENCHMARK(BM_Asio_FireAndForget)->Arg(1)->Arg(2)->UseRealTime()->MeasureProcessCPUTime();
#endif

// ---------------------------------------------------------------------------------------
// A future per call: kFutureBatch calls, each with its own future, then wait for each
// one in order and release it (tether) / get() it (baseline).

void BM_Tether_FuturePerCall(benchmark::State &state) {
  TetherActor actor;
  const tether_actor a = actor.handle();
  std::vector<tether_future> futures(static_cast<size_t>(kFutureBatch));
  for (auto _ : state) {
    for (auto &f : futures) {
      Check(tether_actor_call(a, nullptr, Increment, nullptr, nullptr, &f), TETHER_OK, "tether_actor_call");
    }
    for (auto &f : futures) {
      Check(tether_future_wait(f, kWaitForever), TETHER_OK, "tether_future_wait");
      Check(tether_future_release(f), TETHER_OK, "tether_future_release");
    }
  }
  state.SetItemsProcessed(state.iterations() * kFutureBatch);
}
BENCHMARK(BM_Tether_FuturePerCall)->UseRealTime()->MeasureProcessCPUTime();

void BM_Baseline_FuturePerCall(benchmark::State &state) {
  BaselineExecutor ex;
  CounterState counter;
  std::vector<std::future<int64_t>> futures;
  futures.reserve(static_cast<size_t>(kFutureBatch));
  for (auto _ : state) {
    for (int64_t i = 0; i < kFutureBatch; ++i) {
      futures.push_back(ex.submit([&counter] { return ++counter.count; }));
    }
    for (auto &f : futures) benchmark::DoNotOptimize(f.get());
    futures.clear();
  }
  state.SetItemsProcessed(state.iterations() * kFutureBatch);
}
BENCHMARK(BM_Baseline_FuturePerCall)->UseRealTime()->MeasureProcessCPUTime();

// ---------------------------------------------------------------------------------------
// ManyActorsTwoExecutors/P: kManyActors actors on two executors (alternately) made, then
// one call with a future to each, kManyWindow in flight, then released (not timed);
// create_ns and call_ns are per actor. P = 0: both executor threads on the second CPU and
// the caller alone on the first (the placement bench/compare's scale rows mostly get);
// P = 1: one executor thread beside the caller. The second read 2.5-3x slower when found:
// the caller wakes the executor thread beside it for one constructor or call at a time,
// and the woken thread preempts it (bench/README.md, "What the third session of
// 2026-12-07 measured and changed"); since then such a thread switches itself to
// SCHED_BATCH while streamed to (src/core/wake_preemption.h). P = 2: as 1, with both
// executor threads switched to SCHED_BATCH for good by a task of their own (Linux; the
// library then leaves their policy alone): static batching, for comparison.
// A yardstick for that placement, not one of the targets.

constexpr int kManyActors = 10'000;
constexpr size_t kManyWindow = 1'024;

// RunAsBatch: the calling thread becomes SCHED_BATCH (nice kept): a thread woken on a
// busy CPU then waits for the running one's time slice instead of preempting it.
tether_status RunAsBatch(tether_task *, void *) {
  const sched_param none{};
  return sched_setscheduler(0, SCHED_BATCH, &none) == 0 ? TETHER_OK : TETHER_E_INVALID_ARGUMENT;
}

void BM_Tether_ManyActorsTwoExecutors(benchmark::State &state) {
  const bool beside_caller = state.range(0) != 0;
  const bool batch = state.range(0) == 2;
  PinnedCpus cpus(true);
  if (!cpus.ok(true)) return state.SkipWithError("fewer than 2 usable CPUs");
  const tether_executor e[2] = {NewExecutor("many-0", beside_caller ? cpus.caller_cpu() : cpus.worker_cpu(), -1),
                                NewExecutor("many-1", cpus.worker_cpu(), -1)};
  if (batch) {
    for (tether_executor x : e) {
      tether_future f;
      Check(tether_executor_submit(x, RunAsBatch, nullptr, nullptr, &f), TETHER_OK, "tether_executor_submit");
      Check(tether_future_wait(f, kWaitForever), TETHER_OK, "tether_future_wait");
      int32_t outcome = 0;
      Check(tether_future_poll(f, &outcome), TETHER_OK, "tether_future_poll");
      Check(tether_future_release(f), TETHER_OK, "tether_future_release");
      if (outcome != TETHER_SUCCEEDED) {
        for (tether_executor y : e) Check(tether_executor_release(y), TETHER_OK, "tether_executor_release");
        return state.SkipWithError("SCHED_BATCH refused");
      }
    }
  }
  cpus.PinCaller();
  std::vector<tether_actor> actors(kManyActors);
  using Clock = std::chrono::steady_clock;
  Clock::duration create{}, call{};
  for (auto _ : state) {
    const auto t0 = Clock::now();
    for (size_t i = 0; i < actors.size(); ++i) actors[i] = MakeActor(e[i % 2]);
    const auto t1 = Clock::now();
    CallEach(actors, kManyWindow);
    const auto t2 = Clock::now();
    create += t1 - t0;
    call += t2 - t1;
    state.PauseTiming();
    for (tether_actor a : actors) Check(tether_actor_release(a), TETHER_OK, "tether_actor_release");
    state.ResumeTiming();
  }
  auto per_actor = [](Clock::duration d) {
    return benchmark::Counter(static_cast<double>(std::chrono::nanoseconds(d).count()) / kManyActors,
                              benchmark::Counter::kAvgIterations);
  };
  state.counters["create_ns"] = per_actor(create);
  state.counters["call_ns"] = per_actor(call);
  state.SetItemsProcessed(state.iterations() * kManyActors);
  for (tether_executor x : e) Check(tether_executor_release(x), TETHER_OK, "tether_executor_release");
}
BENCHMARK(BM_Tether_ManyActorsTwoExecutors)->Arg(0)->Arg(1)->Arg(2)->UseRealTime()->MeasureProcessCPUTime();

#ifdef TETHER_BENCH_HAVE_ASIO
void BM_Asio_FuturePerCall(benchmark::State &state) {
  AsioExecutor ex;
  CounterState counter;
  std::vector<std::future<int64_t>> futures;
  futures.reserve(static_cast<size_t>(kFutureBatch));
  for (auto _ : state) {
    for (int64_t i = 0; i < kFutureBatch; ++i) {
      // Asio handlers may be move-only: the promise moves into the handler.
      std::promise<int64_t> p;
      futures.push_back(p.get_future());
      boost::asio::post(ex.io(), [p = std::move(p), &counter]() mutable { p.set_value(++counter.count); });
    }
    for (auto &f : futures) benchmark::DoNotOptimize(f.get());
    futures.clear();
  }
  state.SetItemsProcessed(state.iterations() * kFutureBatch);
}
BENCHMARK(BM_Asio_FuturePerCall)->UseRealTime()->MeasureProcessCPUTime();
#endif

}  // namespace

BENCHMARK_MAIN();
