// Unit tests of core/event_count.h: the futex-word condition variable a scope's waiters
// (futures, joins, wait_quiet) sleep on. A lost wake-up shows as a wait that reaches its
// bound (kLong) and fails the test; nothing here sleeps to synchronize.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "core/deadline.h"
#include "core/event_count.h"
#include "support/waits.h"

namespace core_test {
namespace {

using tether::Deadline;
using tether::EventCount;
using tether_test::kLongNs;
using tether_test::kShortNs;
using tether_test::scaled;

// Two threads hand a turn back and forth, each waiting for its own turn: every round
// needs one wake-up of a thread that has (usually) parked, so a lost one stops the game.
TEST(EventCount, PingPongLosesNoWakeUp) {
  std::mutex mu;
  EventCount turns;
  uint64_t turn = 0;  // guarded by mu: even, the main thread's; odd, the partner's
  bool over = false;  // guarded by mu: the main thread is done (or failed)
  const uint64_t rounds = scaled(20000);
  std::atomic<bool> partner_timed_out{false};
  std::thread partner([&] {
    for (uint64_t r = 0; r < rounds; ++r) {
      std::unique_lock lock(mu);
      if (!turns.wait_until(lock, Deadline::after(kLongNs), [&] { return turn % 2 == 1 || over; })) {
        partner_timed_out = true;
        return;
      }
      if (over) return;
      ++turn;
      lock.unlock();
      turns.notify_all();
    }
  });
  bool timed_out = false;
  for (uint64_t r = 0; r < rounds && !timed_out; ++r) {
    std::unique_lock lock(mu);
    ++turn;
    lock.unlock();
    turns.notify_all();
    lock.lock();
    timed_out = !turns.wait_until(lock, Deadline::after(kLongNs), [&] { return turn % 2 == 0; });
  }
  {
    std::lock_guard lock(mu);
    over = true;  // lets a partner still waiting (after a failure here) leave
  }
  turns.notify_all();
  partner.join();
  EXPECT_FALSE(timed_out) << "the main thread slept through its turn";
  EXPECT_FALSE(partner_timed_out.load()) << "the partner slept through its turn";
}

// One notify wakes every waiter, promptly: each has announced itself (W2) before the
// condition changes, so none can see it without being woken.
TEST(EventCount, NotifyAllWakesEveryWaiterPromptly) {
  std::mutex mu;
  EventCount ev;
  bool open = false;  // guarded by mu
  int announced = 0;  // guarded by mu: waiters past W1 (they release mu only in W3)
  constexpr int kWaiters = 8;
  std::atomic<int> woke{0}, timed_out{0};
  std::vector<std::thread> waiters;
  for (int i = 0; i < kWaiters; ++i) {
    waiters.emplace_back([&] {
      std::unique_lock lock(mu);
      ++announced;
      (ev.wait_until(lock, Deadline::after(kLongNs), [&] { return open; }) ? woke : timed_out).fetch_add(1);
    });
  }
  ASSERT_TRUE(tether_test::wait_until([&] {
    std::lock_guard lock(mu);
    return announced == kWaiters;
  }, tether_test::kLong));
  const auto start = Deadline::Clock::now();
  {
    std::lock_guard lock(mu);
    open = true;
  }
  ev.notify_all();
  for (auto& t : waiters) t.join();
  EXPECT_LT(Deadline::Clock::now() - start, tether_test::kPrompt) << "a waiter slept until its deadline";
  EXPECT_EQ(woke.load(), kWaiters);
  EXPECT_EQ(timed_out.load(), 0);
}

// Without a notify a wait ends at its deadline (not before) with the condition false; a
// condition already true returns at once, whatever the deadline.
TEST(EventCount, WaitEndsAtItsDeadlineAndNotBefore) {
  std::mutex mu;
  EventCount ev;
  std::unique_lock lock(mu);
  const auto start = Deadline::Clock::now();
  EXPECT_FALSE(ev.wait_until(lock, Deadline::after(kShortNs), [] { return false; }));
  EXPECT_GE(Deadline::Clock::now() - start, std::chrono::nanoseconds(kShortNs));
  EXPECT_TRUE(lock.owns_lock()) << "the lock is held again after the wait";
  EXPECT_TRUE(ev.wait_until(lock, Deadline::after(-1), [] { return true; }));
  EXPECT_FALSE(ev.wait_until(lock, Deadline::after(0), [] { return false; })) << "timeout 0 never sleeps";
}

}  // namespace
}  // namespace core_test
