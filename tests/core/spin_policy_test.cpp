// Unit tests of core/spin_policy.h: what a waiter is told about spinning for a lane's
// consumer (the presence hints), and how the adaptive budgets move. Single-threaded: the
// hints are relaxed atomics whose every value must give a sound answer on its own.
#include <gtest/gtest.h>

#include "core/spin_policy.h"

#include <tether/tether.h>

#include <atomic>
#include <vector>

#include "core/answer_spin.h"
#include "core/deadline.h"

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
  EXPECT_FALSE(lane->on_or_waking_on(0));
  EXPECT_FALSE(lane->parked());
  EXPECT_TRUE(lane->runs_elsewhere(0));
  EXPECT_EQ(lane->partner_cpu(), 0) << "the waiter is the lane's last partner";
}

TEST(SpinPolicy, ConsumerOnTheWaitersCpuIsNot) {
  Presence lane;
  lane->consumer_at(0);
  EXPECT_EQ(lane->worth_spinning(0), Spin::kNo);
  EXPECT_TRUE(lane->on_or_waking_on(0));
  EXPECT_FALSE(lane->runs_elsewhere(0));
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
  EXPECT_TRUE(lane->parked());
  EXPECT_FALSE(lane->runs_elsewhere(0)) << "parked: it runs nowhere";
}

TEST(SpinPolicy, ConsumerWokenOnAnotherCpuIsWorthAWakeSpin) {
  Presence lane;
  lane->consumer_parks(1);
  lane->consumer_woken();
  EXPECT_EQ(lane->worth_spinning(0), Spin::kWake);
  EXPECT_FALSE(lane->parked()) << "a waking consumer can still answer";
  EXPECT_FALSE(lane->on_or_waking_on(0));
  EXPECT_TRUE(lane->runs_elsewhere(0)) << "it is being woken on CPU 1";
  lane->consumer_at(1);  // it runs, where it parked
  EXPECT_EQ(lane->worth_spinning(0), Spin::kAnswer);
}

TEST(SpinPolicy, ConsumerWokenOnTheWaitersCpuIsNot) {
  Presence lane;
  lane->consumer_parks(0);
  lane->consumer_woken();
  EXPECT_EQ(lane->worth_spinning(0), Spin::kNo) << "it will most likely run on this CPU: spinning delays it";
  EXPECT_TRUE(lane->on_or_waking_on(0));
  EXPECT_EQ(lane->worth_spinning(LanePresence::kUnknown), Spin::kNo) << "an unknown CPU cannot be told apart";
}

TEST(SpinPolicy, WakingConsumerThatComesUpOnTheSpinnersCpuEndsTheSpin) {
  Presence lane;
  lane->consumer_parks(1);
  lane->consumer_woken();
  ASSERT_EQ(lane->worth_spinning(0), Spin::kWake);
  lane->consumer_at(0);  // the kernel placed it on the spinner's CPU
  EXPECT_TRUE(lane->on_or_waking_on(0));
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

TEST(SpinPolicy, ATakenWakeHereIsForgotten) {
  // Woken on this thread's CPU: its lane parks at the next idle look, once. (A migration
  // between the two reads of the CPU makes one try miss: a few tries.)
  bool seen = false;
  for (int i = 0; i < 100 && !seen; ++i) {
    tether::woke_waiter_on(tether::current_cpu());
    seen = tether::take_woke_here();
  }
  EXPECT_TRUE(seen);
  EXPECT_FALSE(tether::take_woke_here()) << "taken once";
  tether::woke_waiter_on(LanePresence::kUnknown);
  EXPECT_FALSE(tether::take_woke_here()) << "an unknown CPU is nobody's";
  tether::woke_waiter_on(1'000'000);  // no CPU this thread runs on
  EXPECT_FALSE(tether::take_woke_here());
}

// A waiter on a compiled graph's execution whose partner (the output's lane) is parked:
// it spins only while another lane of the graph (a feeder) runs, or is being woken, on
// another CPU. A spin that ran and saw nothing times out, which halves the partner's
// wait budget; a waiter that parks at once leaves it as it was.
class FedSpin : public ::testing::Test {
 protected:
  static constexpr int32_t kElsewhere = 1'000'000;  // no CPU the test runs on
  // spun: AnswerSpin::spin for an answer that never comes; whether it spun (timed out).
  bool spun(const std::vector<LanePresence*>* feeders) {
    const int64_t before = partner->wait_budget_ns();
    std::atomic<bool> settled{false};
    std::atomic<int32_t> state{TETHER_RUNNING};
    tether::AnswerSpin::spin(partner.p, nullptr, settled, state, tether::Deadline::after(-1), feeders);
    return partner->wait_budget_ns() < before;
  }
  Presence partner, feeder;
};

TEST_F(FedSpin, AParkedPartnerWithNoFeederIsNotWorthASpin) {
  partner->consumer_parks(kElsewhere);
  EXPECT_FALSE(spun(nullptr));
  const std::vector<LanePresence*> only_itself{partner.p};
  EXPECT_FALSE(spun(&only_itself)) << "the partner does not feed itself";
}

TEST_F(FedSpin, AFeederRunningElsewhereMakesItOne) {
  partner->consumer_parks(kElsewhere);
  feeder->consumer_at(kElsewhere);
  const std::vector<LanePresence*> feeders{partner.p, feeder.p};
  EXPECT_TRUE(spun(&feeders));
}

TEST_F(FedSpin, AFeederBeingWokenElsewhereToo) {
  partner->consumer_parks(kElsewhere);
  feeder->consumer_parks(kElsewhere);
  feeder->consumer_woken();
  const std::vector<LanePresence*> feeders{partner.p, feeder.p};
  EXPECT_TRUE(spun(&feeders));
}

TEST_F(FedSpin, AParkedFeederIsNot) {
  partner->consumer_parks(kElsewhere);
  feeder->consumer_parks(kElsewhere);
  const std::vector<LanePresence*> feeders{partner.p, feeder.p};
  EXPECT_FALSE(spun(&feeders));
}

TEST_F(FedSpin, APartnerOnTheWaitersCpuEndsIt) {
  // Being woken on this thread's CPU, the partner needs it: no spin, feeder or not.
  feeder->consumer_at(kElsewhere);
  const std::vector<LanePresence*> feeders{partner.p, feeder.p};
  bool parked_at_once = false;
  for (int i = 0; i < 100 && !parked_at_once; ++i) {  // a migration can make one try spin
    partner->consumer_parks(tether::current_cpu());
    partner->consumer_woken();
    parked_at_once = !spun(&feeders);
  }
  EXPECT_TRUE(parked_at_once);
}

}  // namespace
}  // namespace core_test
