// Unit tests of core/wake_preemption.h: when a serving thread switches its policy before
// it parks, and when it stops switching for good. The OS call is a fake that records what
// it was asked and answers as the test says; tests/runner's process tests check the real
// one on a real thread.
#include <gtest/gtest.h>

#include "core/wake_preemption.h"

#include <vector>

namespace core_test {
namespace {

using tether::WakePreemption;
using tether::platform::FairPolicy;
using State = WakePreemption::State;

struct Asked {
  FairPolicy from;
  FairPolicy to;
};
// The fake OS: single-threaded tests only.
std::vector<Asked> g_asked;
bool g_refuse = false;

bool fake_switch(FairPolicy from, FairPolicy to) noexcept {
  g_asked.push_back({from, to});
  return !g_refuse;
}

struct Fake {
  Fake() {
    g_asked.clear();
    g_refuse = false;
  }
  // park: before_park after `came` calls were published since the last park (a stream's
  // many by default).
  void park(bool partner_here, uint64_t came = 100) {
    published += came;
    p.before_park(partner_here, published);
  }
  WakePreemption p{&fake_switch};
  uint64_t published = 0;
};

// A thread started under SCHED_OTHER, with the setting allowing it, adapts; one started
// under any other policy, or with TETHER_BATCH_STREAMS=0, never asks the OS anything.
TEST(WakePreemption, AdaptsOnlyThreadsStartedUnderTheNormalPolicy) {
  for (const FairPolicy found : {FairPolicy::kBatch, FairPolicy::kNone, FairPolicy::kNormal}) {
    for (const bool allowed : {false, true}) {
      Fake f;
      f.p.start(found, allowed);
      const bool adapts = allowed && found == FairPolicy::kNormal;
      EXPECT_EQ(adapts ? State::kNormal : State::kOff, f.p.state());
      for (int i = 0; i < 3; ++i) f.park(/*partner_here=*/true);
      EXPECT_EQ(adapts ? 1u : 0u, g_asked.size());
      EXPECT_EQ(adapts ? State::kBatch : State::kOff, f.p.state());
    }
  }
}

// A stream's consumer (partner on its CPU, woken for fire-and-forget work) batches, with
// one system call; a waited call's wake-up, or a partner elsewhere, switch it back.
TEST(WakePreemption, BatchesForAStreamOnItsCpuAndPreemptsOtherwise) {
  Fake f;
  f.p.start(FairPolicy::kNormal, true);
  f.park(/*partner_here=*/false);
  EXPECT_TRUE(g_asked.empty()) << "no change, no system call";
  f.p.woken(/*for_waited_call=*/false);
  f.p.ran(false);
  f.park(true);
  ASSERT_EQ(1u, g_asked.size());
  EXPECT_EQ(FairPolicy::kNormal, g_asked[0].from);
  EXPECT_EQ(FairPolicy::kBatch, g_asked[0].to);
  f.park(true);
  EXPECT_EQ(1u, g_asked.size()) << "already batched";
  f.p.woken(/*for_waited_call=*/true);
  f.park(true);
  ASSERT_EQ(2u, g_asked.size());
  EXPECT_EQ(FairPolicy::kBatch, g_asked[1].from);
  EXPECT_EQ(FairPolicy::kNormal, g_asked[1].to);
  EXPECT_EQ(State::kNormal, f.p.state());
  f.p.woken(false);
  f.park(true);
  EXPECT_EQ(State::kBatch, f.p.state());
  f.park(/*partner_here=*/false);
  EXPECT_EQ(State::kNormal, f.p.state());
  EXPECT_EQ(4u, g_asked.size());
}

// A call whose waiter parked on this CPU, when it is the last work before a park, keeps
// the preemption for kPreemptParks parks; work after it that wakes nobody does not count.
TEST(WakePreemption, AWaiterWokenHereKeepsPreemptionForSomeParks) {
  Fake f;
  f.p.start(FairPolicy::kNormal, true);
  f.p.ran(true);
  f.p.ran(false);  // a call after the one that woke the waiter: a stream again
  f.park(true);
  EXPECT_EQ(State::kBatch, f.p.state());
  f.p.ran(true);
  f.park(true);
  EXPECT_EQ(State::kNormal, f.p.state());
  f.p.ran(false);
  for (uint32_t i = 1; i < WakePreemption::kPreemptParks; ++i) {
    f.park(true);
    ASSERT_EQ(State::kNormal, f.p.state()) << "park " << i;
  }
  f.park(true);
  EXPECT_EQ(State::kBatch, f.p.state());
  EXPECT_EQ(3u, g_asked.size());
}

// A switch the OS refuses, or that finds a policy the library did not set (a user's
// task changed it), stops the switching for good: the thread is left as it is.
TEST(WakePreemption, ARefusedSwitchStopsSwitchingForGood) {
  Fake f;
  f.p.start(FairPolicy::kNormal, true);
  g_refuse = true;
  f.park(true);
  EXPECT_EQ(State::kOff, f.p.state());
  g_refuse = false;
  f.p.woken(true);
  f.park(true);
  f.p.woken(false);
  f.park(true);
  EXPECT_EQ(1u, g_asked.size());
  EXPECT_EQ(State::kOff, f.p.state());
}

// A batched thread that ran at most kFewCalls calls between parks, twice in a row, was
// not streamed to: it preempts again, for kPreemptParks parks; one such park alone, or
// parks after more calls, do not count.
TEST(WakePreemption, BatchingThatMissesTwiceInARowPreemptsAgain) {
  constexpr uint64_t kFew = WakePreemption::kFewCalls;
  Fake f;
  f.p.start(FairPolicy::kNormal, true);
  f.park(true);
  ASSERT_EQ(State::kBatch, f.p.state());
  f.park(true, kFew);
  f.park(true, kFew + 1);
  f.park(true, 0);
  EXPECT_EQ(State::kBatch, f.p.state()) << "misses apart";
  f.park(true, 1);
  EXPECT_EQ(State::kNormal, f.p.state()) << "two in a row";
  for (uint32_t i = 1; i < WakePreemption::kPreemptParks; ++i) {
    f.park(true, 1);
    ASSERT_EQ(State::kNormal, f.p.state()) << "park " << i;
  }
  f.park(true, 1);
  EXPECT_EQ(State::kBatch, f.p.state()) << "tried again";
  EXPECT_EQ(3u, g_asked.size());
}

// TETHER_BATCH_STREAMS: "0" turns it off; unset or anything else leaves it on.
TEST(WakePreemption, SettingOffOnlyForZero) {
  EXPECT_FALSE(tether::batch_streams_from("0"));
  EXPECT_TRUE(tether::batch_streams_from(nullptr));
  EXPECT_TRUE(tether::batch_streams_from(""));
  EXPECT_TRUE(tether::batch_streams_from("1"));
  EXPECT_TRUE(tether::batch_streams_from("00"));
  EXPECT_TRUE(tether::batch_streams_from("no"));
}

}  // namespace
}  // namespace core_test
