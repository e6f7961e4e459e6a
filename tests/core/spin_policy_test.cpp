// Unit tests of core/spin_policy.h: what a waiter is told about spinning for a lane's
// consumer (the presence hints), and how the adaptive budgets move. Single-threaded: the
// hints are relaxed atomics whose every value must give a sound answer on its own.
#include <gtest/gtest.h>

#include "core/spin_policy.h"

namespace core_test {
namespace {

using tether::AdaptiveBudget;
using tether::kWaitSpinMaxNs;
using tether::kWaitSpinMinNs;
using tether::kWakeSpinMaxNs;
using tether::kWakeSpinMinNs;
using tether::LanePresence;
using Spin = LanePresence::Spin;

// A presence from the process-wide free list, given back at the end of the test.
struct Presence {
  LanePresence* p = LanePresence::acquire();
  ~Presence() { LanePresence::release(p); }
  LanePresence* operator->() const { return p; }
};

TEST(SpinPolicy, RunningConsumerOnAnotherCpuIsWorthASpin) {
  Presence lane;
  lane->consumer_at(1);
  EXPECT_EQ(lane->worth_spinning(0), Spin::kAnswer);
  EXPECT_FALSE(lane->consumer_parked_or_on(0));
  EXPECT_EQ(lane->partner_cpu(), 0) << "the waiter is the lane's last partner";
}

TEST(SpinPolicy, ConsumerOnTheWaitersCpuIsNot) {
  Presence lane;
  lane->consumer_at(0);
  EXPECT_EQ(lane->worth_spinning(0), Spin::kNo);
  EXPECT_TRUE(lane->consumer_parked_or_on(0));
}

TEST(SpinPolicy, UnknownCpusStillSpinForARunningConsumer) {
  Presence lane;  // a new presence: the consumer's CPU is unknown
  EXPECT_EQ(lane->worth_spinning(LanePresence::kUnknown), Spin::kAnswer);
  lane->consumer_at(3);
  EXPECT_EQ(lane->worth_spinning(LanePresence::kUnknown), Spin::kAnswer);
}

TEST(SpinPolicy, ParkedConsumerNobodyWokeIsNotWorthASpin) {
  Presence lane;
  lane->consumer_parks(1);
  EXPECT_EQ(lane->worth_spinning(0), Spin::kNo);
  EXPECT_TRUE(lane->consumer_parked_or_on(0));
}

TEST(SpinPolicy, ConsumerWokenOnAnotherCpuIsWorthAWakeSpin) {
  Presence lane;
  lane->consumer_parks(1);
  lane->consumer_woken();
  EXPECT_EQ(lane->worth_spinning(0), Spin::kWake);
  EXPECT_FALSE(lane->consumer_parked_or_on(0)) << "a waking consumer can still answer";
  lane->consumer_at(1);  // it runs, where it parked
  EXPECT_EQ(lane->worth_spinning(0), Spin::kAnswer);
}

TEST(SpinPolicy, ConsumerWokenOnTheWaitersCpuIsNot) {
  Presence lane;
  lane->consumer_parks(0);
  lane->consumer_woken();
  EXPECT_EQ(lane->worth_spinning(0), Spin::kNo) << "it will most likely run on this CPU: spinning delays it";
  EXPECT_EQ(lane->worth_spinning(LanePresence::kUnknown), Spin::kNo) << "an unknown CPU cannot be told apart";
}

TEST(SpinPolicy, WakingConsumerThatComesUpOnTheSpinnersCpuEndsTheSpin) {
  Presence lane;
  lane->consumer_parks(1);
  lane->consumer_woken();
  ASSERT_EQ(lane->worth_spinning(0), Spin::kWake);
  lane->consumer_at(0);  // the kernel placed it on the spinner's CPU
  EXPECT_TRUE(lane->consumer_parked_or_on(0));
}

TEST(SpinPolicy, OnlyAParkedConsumerBecomesWaking) {
  Presence lane;
  lane->consumer_at(1);
  lane->consumer_woken();  // a producer's stale view: the consumer already runs
  EXPECT_EQ(lane->worth_spinning(0), Spin::kAnswer);
  lane->consumer_at(0);
  lane->consumer_woken();
  EXPECT_EQ(lane->worth_spinning(0), Spin::kNo) << "still on the waiter's CPU, not waking";
}

TEST(SpinPolicy, AReusedPresenceForgetsItsLastLane) {
  LanePresence* first = LanePresence::acquire();
  first->consumer_parks(1);
  first->consumer_woken();
  first->wake_spin_timed_out();
  first->wait_spin_timed_out();
  LanePresence::release(first);
  Presence again;  // the free list hands back the most recently released one
  ASSERT_EQ(again.p, first);
  EXPECT_EQ(again->worth_spinning(0), Spin::kAnswer) << "unknown consumer, as a new one";
  EXPECT_EQ(again->wait_budget_ns(), kWaitSpinMaxNs);
  EXPECT_EQ(again->wake_budget_ns(), kWakeSpinMaxNs);
}

TEST(SpinPolicy, WaitBudgetHalvesOnTimeoutsAndDoublesOnSuccessWithinItsBounds) {
  Presence lane;
  EXPECT_EQ(lane->wait_budget_ns(), kWaitSpinMaxNs);
  for (int i = 0; i < 10; ++i) lane->wait_spin_timed_out();
  EXPECT_EQ(lane->wait_budget_ns(), kWaitSpinMinNs);
  lane->wait_spin_succeeded();
  EXPECT_EQ(lane->wait_budget_ns(), 2 * kWaitSpinMinNs);
  for (int i = 0; i < 10; ++i) lane->wait_spin_succeeded();
  EXPECT_EQ(lane->wait_budget_ns(), kWaitSpinMaxNs);
}

TEST(SpinPolicy, WakeBudgetJumpsToTwiceWhatASuccessfulSpinTook) {
  Presence lane;
  for (int i = 0; i < 20; ++i) lane->wake_spin_timed_out();
  EXPECT_EQ(lane->wake_budget_ns(), kWakeSpinMinNs);
  lane->wake_spin_succeeded(40'000);  // a probe saw a wake-up of 40 us
  EXPECT_EQ(lane->wake_budget_ns(), 80'000);
  lane->wake_spin_succeeded(1'000);  // a quick one does not shrink it
  EXPECT_EQ(lane->wake_budget_ns(), kWakeSpinMaxNs);
  lane->wake_spin_succeeded(kWakeSpinMaxNs);
  EXPECT_EQ(lane->wake_budget_ns(), kWakeSpinMaxNs) << "never past the bound";
}

TEST(SpinPolicy, AdaptiveBudgetArithmeticDoesNotOverflow) {
  constexpr int64_t kMax = INT64_MAX;
  EXPECT_EQ(AdaptiveBudget::grown(kMax - 1, kMax), kMax);
  EXPECT_EQ(AdaptiveBudget::after_success(10, kMax - 1, kMax), kMax);
  EXPECT_EQ(AdaptiveBudget::shrunk(1, 0), 0);
  uint32_t counter = 0;
  int probes = 0;
  for (uint32_t i = 0; i < 16 * tether::kProbeEvery; ++i) probes += AdaptiveBudget::probe(counter) ? 1 : 0;
  EXPECT_EQ(probes, 16);
}

}  // namespace
}  // namespace core_test
