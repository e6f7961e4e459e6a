// runner_bench.cpp — what a tether ThreadRunner costs next to the hand-written equivalent.
//
// Each tether benchmark has a baseline twin that does the same work with std::thread,
// std::exception_ptr, a mutex and a condition_variable: the "scope" a C++ programmer would
// write by hand. The goal is tether within 1.2x of the baseline on both pairs.
//
//   BM_*_StartJoinEmpty        start one thread that runs an empty target, wait for the
//                              scope to end, join the thread. Real time per iteration.
//   BM_StdThread_CreateJoin    target 9's yardstick: a bare std::thread made and joined.
//   BM_*_NestedFailureToJoin   latency from a NESTED thread's failure to the return of a
//                              join that was already blocked. Manual time: only the window
//                              from the failure's timestamp to join's return is measured;
//                              thread creation and teardown stay outside it.
//   BM_Floor_FutexWakeToReturn the kernel's floor under NestedFailureToJoin: the same
//                              window around nothing but a raw futex word: a thread
//                              asleep in FUTEX_WAIT, another stores the word, stamps and
//                              calls FUTEX_WAKE. No scope can report a failure to a
//                              joiner asleep in the kernel faster than this.
//
// bench/README.md explains how to run them and holds the measured figures.

#include <tether/tether.h>

#include "check.h"

#include <benchmark/benchmark.h>

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;  // CLOCK_MONOTONIC; the same clock on every thread

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

using tether_bench::Check;

// ---------------------------------------------------------------------------------------
// BaselineScope: the hand-written scope the baselines use. One mutex guards everything;
// the first failure is kept as an exception_ptr, asks the scope to stop, and wakes the
// joiner through the condition_variable. This is the smallest thing that gives the
// ThreadRunner's semantics (first error wins, nested threads belong to the scope, join
// returns at the first error, every thread joined before the scope is gone).
//
// Thread safety: start/join/cancel from the owning thread; spawn and Fail from the scope's
// own threads.
class BaselineScope {
 public:
  using Fn = std::function<void(BaselineScope &)>;

  BaselineScope() = default;
  BaselineScope(const BaselineScope &) = delete;
  BaselineScope &operator=(const BaselineScope &) = delete;

  // ~BaselineScope: like tether_runner_release, cancel then join every thread.
  ~BaselineScope() {
    cancel();
    std::vector<std::thread> threads;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return live_ == 0; });
      threads.swap(threads_);  // no scope thread is left to spawn another
    }
    for (auto &t : threads) t.join();
  }

  // start runs `target` on a new thread of the scope.
  void start(Fn target) { spawn(std::move(target)); }

  // spawn runs `fn` on a new (nested) thread of the scope.
  void spawn(Fn fn) {
    std::lock_guard<std::mutex> lock(mu_);
    ++live_;
    threads_.emplace_back([this, fn = std::move(fn)] { Run(fn); });
  }

  // Fail records `e` (the first one wins), asks the scope to stop, wakes the joiner.
  void Fail(std::exception_ptr e) {
    stop_.store(true, std::memory_order_release);  // published before the failure
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!first_error_) first_error_ = std::move(e);
      failed_ = true;
    }
    cv_.notify_all();
  }

  // join waits until the scope is terminal: failed, or every thread returned.
  void join() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return failed_ || live_ == 0; });
  }

  void cancel() { stop_.store(true, std::memory_order_release); }
  bool stop_requested() const { return stop_.load(std::memory_order_acquire); }

  bool failed() {
    std::lock_guard<std::mutex> lock(mu_);
    return failed_;
  }

  // wait_live waits until exactly `n` threads of the scope are still running.
  void wait_live(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this, n] { return live_ == n; });
  }

 private:
  void Run(const Fn &fn) {
    try {
      fn(*this);
    } catch (...) {
      Fail(std::current_exception());
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      --live_;
    }
    cv_.notify_all();
  }

  std::mutex mu_;
  std::condition_variable cv_;
  int live_ = 0;                        // guarded by mu_
  bool failed_ = false;                 // guarded by mu_
  std::exception_ptr first_error_;      // guarded by mu_
  std::vector<std::thread> threads_;    // guarded by mu_
  std::atomic<bool> stop_{false};
};

// ---------------------------------------------------------------------------------------
// StartJoinEmpty

tether_status EmptyTarget(tether_task *, void *) { return TETHER_OK; }

void BM_Tether_StartJoinEmpty(benchmark::State &state) {
  for (auto _ : state) {
    tether_runner r;
    Check(tether_runner_start(nullptr, EmptyTarget, nullptr, nullptr, &r), TETHER_OK,
          "tether_runner_start");
    Check(tether_runner_join(r, -1), TETHER_OK, "tether_runner_join");
    // The release belongs in the measured loop: join returns once the scope is terminal,
    // but only release waits for the thread to end and joins it. Without it the OS thread
    // would outlive the iteration and the figure would leave out the join the baseline
    // pays for (std::thread::join).
    Check(tether_runner_release(r), TETHER_OK, "tether_runner_release");
  }
}
BENCHMARK(BM_Tether_StartJoinEmpty)->UseRealTime();

void BM_Baseline_StartJoinEmpty(benchmark::State &state) {
  for (auto _ : state) {
    BaselineScope scope;
    scope.start([](BaselineScope &) {});
    scope.join();
  }  // ~BaselineScope joins the thread
}
BENCHMARK(BM_Baseline_StartJoinEmpty)->UseRealTime();

// The issue's own yardstick for target 9: a bare std::thread made and joined, no scope.
void BM_StdThread_CreateJoin(benchmark::State &state) {
  for (auto _ : state) {
    std::thread t([] {});
    t.join();
  }
}
BENCHMARK(BM_StdThread_CreateJoin)->UseRealTime();

// ---------------------------------------------------------------------------------------
// NestedFailureToJoin
//
// Per iteration (setup outside the measured window):
//   1. start the scope; its target spawns a nested thread and returns;
//   2. the benchmark thread waits until the nested thread is parked on the go-signal and
//      the target's OS thread has exited (so neither its exit nor its joining by tether's
//      control thread falls into the window);
//   3. the benchmark thread sends go and blocks in join;
//   4. the nested thread waits until the benchmark thread is really asleep in the kernel
//      (BlockedInKernel below), takes t0 and fails;
//   5. join returns, the benchmark thread takes t1; the iteration's time is t1 - t0;
//   6. cancel and release (not measured).

// BlockedInKernel: whether thread `tid` of this process is sleeping (state 'S' in
// /proc/self/task/TID/stat), i.e. parked on a futex inside join and not still on its way
// there. Without this check the failure could land before join blocks and the benchmark
// would measure join's fast path instead of a wake-up.
bool BlockedInKernel(pid_t tid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/task/%d/stat", static_cast<int>(tid));
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return true;  // no /proc: fall back on the bounded wait in WaitBlocked
  char buf[512];
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return true;
  buf[n] = '\0';
  const char *paren = std::strrchr(buf, ')');  // the name may itself contain ')'
  return paren != nullptr && paren[1] == ' ' && paren[2] == 'S';
}

// WaitBlocked: waits (bounded: 20 ms) until `tid` sleeps in the kernel; false if it did
// not within the bound. It naps between two looks rather than spinning: on a 2-core machine
// a spinning poller (each look is 3 syscalls) takes the CPU the joiner needs to get there.
bool WaitBlocked(pid_t tid) {
  const int64_t deadline = NowNs() + 20'000'000;
  while (!BlockedInKernel(tid)) {
    if (NowNs() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  return true;
}

// WaitThreadGone: waits (bounded: 20 ms) until thread `tid` of this process has exited,
// then lets whatever its exit woke up (a joiner) settle for a moment.
void WaitThreadGone(pid_t tid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/task/%d", static_cast<int>(tid));
  const int64_t deadline = NowNs() + 20'000'000;
  while (::access(path, F_OK) == 0 && NowNs() < deadline) {
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  std::this_thread::sleep_for(std::chrono::microseconds(50));
}

// FailureRendezvous: what the benchmark thread and the nested thread share per iteration.
struct FailureRendezvous {
  std::mutex mu;
  std::condition_variable cv;
  bool ready = false;  // guarded by mu: the nested thread is parked on `go`
  bool go = false;     // guarded by mu
  pid_t joiner_tid = 0;
  std::atomic<pid_t> target_tid{0};
  bool joiner_parked = false;     // written before t0_ns, read after join returns
  std::atomic<int64_t> t0_ns{0};  // the failure's timestamp

  void SignalReady() {
    {
      std::lock_guard<std::mutex> lock(mu);
      ready = true;
    }
    cv.notify_all();
  }
  void WaitReady() {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [this] { return ready; });
  }
  void SignalGo() {
    {
      std::lock_guard<std::mutex> lock(mu);
      go = true;
    }
    cv.notify_all();
  }
  // WaitGoThenStamp: the nested thread's part up to the failure.
  void WaitGoThenStamp() {
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [this] { return go; });
    }
    joiner_parked = WaitBlocked(joiner_tid);
    t0_ns.store(NowNs(), std::memory_order_release);
  }
};

// LatencyRecorder: keeps every iteration's latency so the report can show the median and
// the 99th percentile next to the mean Google Benchmark prints.
class LatencyRecorder {
 public:
  explicit LatencyRecorder(benchmark::State &state) : state_(state) {
    samples_.reserve(static_cast<size_t>(state.max_iterations));
  }
  void Record(const FailureRendezvous &rv) {
    const int64_t ns = NowNs() - rv.t0_ns.load(std::memory_order_acquire);
    samples_.push_back(static_cast<double>(ns));
    state_.SetIterationTime(static_cast<double>(ns) * 1e-9);
    if (!rv.joiner_parked) ++unparked_;
  }
  ~LatencyRecorder() {
    if (samples_.empty()) return;
    std::sort(samples_.begin(), samples_.end());
    auto at = [this](double q) {
      size_t i = static_cast<size_t>(q * static_cast<double>(samples_.size() - 1));
      return samples_[i] * 1e-3;
    };
    state_.counters["p50_us"] = at(0.50);
    state_.counters["p99_us"] = at(0.99);
    // Iterations where the failure came before join was seen asleep (should stay 0).
    if (unparked_ > 0) state_.counters["unparked"] = static_cast<double>(unparked_);
  }
  LatencyRecorder(const LatencyRecorder &) = delete;
  LatencyRecorder &operator=(const LatencyRecorder &) = delete;

 private:
  benchmark::State &state_;
  std::vector<double> samples_;
  int64_t unparked_ = 0;
};

// kFailureIterations: fixed, because Google Benchmark sizes a run by its MEASURED time:
// with a few microseconds of manual time per iteration against ~1 ms of setup, the default
// 0.5 s of manual time would mean minutes per run. 2000 samples keep a stable median and a
// meaningful p99 at a few seconds per run.
constexpr benchmark::IterationCount kFailureIterations = 2000;

tether_status FailingUpload(tether_task *t, void *arg) {
  auto *rv = static_cast<FailureRendezvous *>(arg);
  rv->SignalReady();
  rv->WaitGoThenStamp();
  return tether_task_fail(t, 7, "checkpoint upload failed");
}

tether_status SpawningTarget(tether_task *t, void *arg) {
  static_cast<FailureRendezvous *>(arg)->target_tid.store(::gettid());
  return tether_task_spawn(t, "upload-1", FailingUpload, arg, nullptr);
}

void BM_Tether_NestedFailureToJoin(benchmark::State &state) {
  const pid_t self = ::gettid();
  LatencyRecorder latencies(state);
  for (auto _ : state) {
    FailureRendezvous rv;
    rv.joiner_tid = self;
    tether_runner r;
    Check(tether_runner_start(nullptr, SpawningTarget, &rv, nullptr, &r), TETHER_OK,
          "tether_runner_start");
    rv.WaitReady();
    // Let the target finish so only the nested thread is live in the window.
    for (;;) {
      size_t live = 0;
      Check(tether_runner_live_threads(r, &live), TETHER_OK, "tether_runner_live_threads");
      if (live <= 1) break;
      std::this_thread::yield();
    }
    WaitThreadGone(rv.target_tid.load());

    rv.SignalGo();
    Check(tether_runner_join(r, -1), TETHER_OK, "tether_runner_join");
    latencies.Record(rv);  // t1 - t0, t1 taken first thing

    int32_t st = TETHER_RUNNING;
    Check(tether_runner_poll(r, &st), TETHER_OK, "tether_runner_poll");
    if (st != TETHER_FAILED) {
      state.SkipWithError("the scope did not fail");
      tether_runner_release(r);
      break;
    }
    Check(tether_runner_cancel(r), TETHER_OK, "tether_runner_cancel");
    Check(tether_runner_release(r), TETHER_OK, "tether_runner_release");
  }
}
BENCHMARK(BM_Tether_NestedFailureToJoin)->UseManualTime()->Iterations(kFailureIterations);

void BM_Baseline_NestedFailureToJoin(benchmark::State &state) {
  const pid_t self = ::gettid();
  LatencyRecorder latencies(state);
  for (auto _ : state) {
    FailureRendezvous rv;
    rv.joiner_tid = self;
    {
      BaselineScope scope;
      scope.start([&rv](BaselineScope &s) {
        rv.target_tid.store(::gettid());
        s.spawn([&rv](BaselineScope &nested) {
          rv.SignalReady();
          rv.WaitGoThenStamp();
          // Store the failure and notify: the equivalent of tether_task_fail + return.
          nested.Fail(std::make_exception_ptr(std::runtime_error("checkpoint upload failed")));
        });
      });
      rv.WaitReady();
      scope.wait_live(1);  // the target has returned; only the nested thread is live
      WaitThreadGone(rv.target_tid.load());

      rv.SignalGo();
      scope.join();
      latencies.Record(rv);  // t1 - t0, t1 taken first thing

      if (!scope.failed()) {
        state.SkipWithError("the baseline scope did not fail");
        break;
      }
      scope.cancel();
    }  // ~BaselineScope joins both threads
  }
}
BENCHMARK(BM_Baseline_NestedFailureToJoin)->UseManualTime()->Iterations(kFailureIterations);

long Futex(std::atomic<uint32_t> *word, int op, uint32_t value) {
  return ::syscall(SYS_futex, reinterpret_cast<uint32_t *>(word), op | FUTEX_PRIVATE_FLAG, value, nullptr,
                   nullptr, 0);
}

void BM_Floor_FutexWakeToReturn(benchmark::State &state) {
  const pid_t self = ::gettid();
  LatencyRecorder latencies(state);
  for (auto _ : state) {
    FailureRendezvous rv;
    rv.joiner_tid = self;
    std::atomic<uint32_t> word{0};
    std::thread waker([&] {
      rv.SignalReady();
      rv.WaitGoThenStamp();
      word.store(1, std::memory_order_release);
      Futex(&word, FUTEX_WAKE, 1);
    });
    rv.WaitReady();
    rv.SignalGo();
    while (word.load(std::memory_order_acquire) == 0) Futex(&word, FUTEX_WAIT, 0);
    latencies.Record(rv);  // t1 - t0, t1 taken first thing
    waker.join();
  }
}
BENCHMARK(BM_Floor_FutexWakeToReturn)->UseManualTime()->Iterations(kFailureIterations);

}  // namespace

BENCHMARK_MAIN();
