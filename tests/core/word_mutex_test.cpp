// Unit tests of core/word_mutex.h: the one-word mutex a scope and a mailbox push lock. A
// lost wake-up leaves a locker parked for good: the waits here are bounded (kLong), and a
// test that reaches its bound fails and ends the process (a parked thread cannot be
// joined), so CI sees a failure instead of a hang. Nothing sleeps to synchronize.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "core/deadline.h"
#include "core/word_mutex.h"
#include "support/waits.h"

namespace core_test {
namespace {

using tether::Deadline;
using tether::WordMutex;
using tether_test::kLongNs;
using tether_test::scaled;

// Finished: counts threads that are done; wait_all fails the test (and ends the process)
// when they are not all done within kLong.
class Finished {
 public:
  void one() {
    {
      std::lock_guard lock(mu_);
      ++done_;
    }
    cv_.notify_all();
  }
  void wait_all(size_t n, const char* what) {
    std::unique_lock lock(mu_);
    if (!Deadline::after(kLongNs).wait(cv_, lock, [&] { return done_ == n; })) {
      ADD_FAILURE() << what << ": " << done_ << " of " << n << " threads done within the bound (a lost wake-up?)";
      std::abort();  // the rest are parked for good: joining them would hang
    }
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  size_t done_ = 0;  // guarded by mu_
};

// Four threads take the lock many times each and check, inside, that they are alone; the
// total shows no increment was lost. With more threads than CPUs, lockers are preempted
// while holding it, so others spin out (L2) and park (L4).
TEST(WordMutex, ExcludesAndLosesNoWakeUpUnderContention) {
  WordMutex mutex;
  uint64_t count = 0;            // guarded by mutex
  std::atomic<int> inside{0};
  std::atomic<bool> overlapped{false};
  const uint64_t rounds = scaled(50000);
  constexpr int kThreads = 4;
  Finished finished;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (uint64_t r = 0; r < rounds; ++r) {
        std::lock_guard lock(mutex);
        if (inside.fetch_add(1, std::memory_order_relaxed) != 0) overlapped = true;
        ++count;
        inside.fetch_sub(1, std::memory_order_relaxed);
      }
      finished.one();
    });
  }
  finished.wait_all(kThreads, "contended lockers");
  for (auto& t : threads) t.join();
  EXPECT_FALSE(overlapped.load());
  EXPECT_EQ(rounds * kThreads, count);
}

// Lockers pile up behind a holder (spinning, then parked) and must all get through once
// it lets go: each unlock that finds the word contended wakes one, and a woken locker
// that takes the lock marks it contended again for the ones still parked.
TEST(WordMutex, EveryQueuedLockerGetsThroughAfterTheHolderLetsGo) {
  const int rounds = static_cast<int>(scaled(200));
  constexpr int kLockers = 3;
  for (int round = 0; round < rounds; ++round) {
    WordMutex mutex;
    int got = 0;  // guarded by mutex
    std::atomic<int> started{0};
    Finished finished;
    mutex.lock();
    std::vector<std::thread> lockers;
    for (int i = 0; i < kLockers; ++i) {
      lockers.emplace_back([&] {
        started.fetch_add(1, std::memory_order_relaxed);
        mutex.lock();
        ++got;
        mutex.unlock();
        finished.one();
      });
    }
    const Deadline bound = Deadline::after(kLongNs);
    while (started.load(std::memory_order_relaxed) != kLockers) {
      ASSERT_LT(Deadline::Clock::now(), bound.at()) << "lockers never started";
      std::this_thread::yield();
    }
    mutex.unlock();
    finished.wait_all(kLockers, "queued lockers");
    for (auto& t : lockers) t.join();
    std::lock_guard lock(mutex);
    ASSERT_EQ(kLockers, got) << "round " << round;
  }
}

TEST(WordMutex, TryLockFailsWhileHeldAndSucceedsWhenFree) {
  WordMutex mutex;
  ASSERT_TRUE(mutex.try_lock());
  bool other_got_it = true;
  std::thread other([&] { other_got_it = mutex.try_lock(); });
  other.join();
  EXPECT_FALSE(other_got_it);
  mutex.unlock();
  std::thread again([&] {
    other_got_it = mutex.try_lock();
    if (other_got_it) mutex.unlock();
  });
  again.join();
  EXPECT_TRUE(other_got_it);
}

}  // namespace
}  // namespace core_test
