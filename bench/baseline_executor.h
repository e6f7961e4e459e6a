// baseline_executor.h: the single-thread executor a C++ programmer would write by hand,
// the baseline of tether_bench_actor and one of bench/compare's peers.
#pragma once

#include <pthread.h>
#include <sched.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

namespace tether_bench {

// PinThread: pins std::thread t to `cpu` (-1: leaves it alone).
inline void PinThread(std::thread &t, int cpu) {
  if (cpu < 0) return;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (pthread_setaffinity_np(t.native_handle(), sizeof one, &one) != 0) {
    std::fprintf(stderr, "bench: cannot pin a thread to CPU %d\n", cpu);
    std::abort();
  }
}

// BaselineExecutor: the single-thread executor a user would write, written well:
//   - post() locks, appends, unlocks, then notifies (after the unlock, so the woken worker
//     does not block on the mutex the poster still holds); notify_one costs no syscall
//     when the worker is not waiting (glibc checks for waiters in user space);
//   - the worker takes the WHOLE queue in one swap under the lock and runs it unlocked,
//     so producers and the worker meet on the mutex once per batch, not once per task;
//   - std::function keeps small lambdas (a pointer or two) inline: no allocation per
//     post for the fire-and-forget case.
// Thread safety: post() from any thread; the destructor from the owner, once.
class BaselineExecutor {
 public:
  explicit BaselineExecutor(int cpu = -1) : thread_([this] { Run(); }) { PinThread(thread_, cpu); }
  ~BaselineExecutor() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }
  BaselineExecutor(const BaselineExecutor &) = delete;
  BaselineExecutor &operator=(const BaselineExecutor &) = delete;

  // post: fire and forget.
  void post(std::function<void()> fn) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.push_back(std::move(fn));
    }
    cv_.notify_one();
  }

  // submit: fn's result through a std::future, the usual way (the promise is shared with
  // the queued task because std::function must be copyable).
  template <class F>
  auto submit(F fn) -> std::future<decltype(fn())> {
    using R = decltype(fn());
    auto promise = std::make_shared<std::promise<R>>();
    std::future<R> future = promise->get_future();
    post([promise, fn = std::move(fn)]() mutable { promise->set_value(fn()); });
    return future;
  }

 private:
  void Run() {
    std::deque<std::function<void()>> batch;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stop_ and nothing left
        batch.swap(queue_);
      }
      for (auto &fn : batch) fn();
      batch.clear();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;  // guarded by mu_
  bool stop_ = false;                        // guarded by mu_
  std::thread thread_;                       // last: starts once the rest is built
};

}  // namespace tether_bench
