// Unit tests of the lane kinds (core/lane.h, pinned_lane.h, shared_lane.h) and of the
// thread-role record (core/thread_role.h) that their "am I inside?" answers come from.
#include <gtest/gtest.h>

#include <memory>
#include <thread>

#include "core/pinned_lane.h"
#include "core/shared_lane.h"
#include "core/thread_group.h"
#include "core/thread_role.h"
#include "core_support.h"

namespace core_test {
namespace {

using tether::PinnedLane;
using tether::ServingAs;
using tether::SharedLane;
using tether::ThreadGroup;
using tether::this_thread_role;

// InsideCall: records whether its thread counted as inside its lane while it ran.
class InsideCall final : public Call {
 public:
  InsideCall(Log& log, uint64_t id, std::atomic<int>& inside) : Call(nullptr), log_(log), id_(id), inside_(inside) {}
  void run(Lane& lane) noexcept override {
    if (lane.is_inside()) inside_.fetch_add(1);
    log_.ran(id_);
  }
  void cancel() noexcept override { log_.cancelled(id_); }

 private:
  Log& log_;
  uint64_t id_;
  std::atomic<int>& inside_;
};

TEST(LaneKinds, MakePicksThePinnedKindForOneConsumerAndTheSharedKindForSeveral) {
  for (size_t threads : {size_t{0}, size_t{1}}) {
    auto lane = Lane::make(Lane::Options{.name = "one", .threads = threads});
    EXPECT_NE(dynamic_cast<PinnedLane*>(lane.get()), nullptr) << threads;
    EXPECT_NE(lane->presence(), nullptr) << "a pinned lane publishes where its consumer runs";
  }
  auto lane = Lane::make(Lane::Options{.name = "three", .threads = 3});
  EXPECT_NE(dynamic_cast<SharedLane*>(lane.get()), nullptr);
  EXPECT_EQ(lane->presence(), nullptr) << "several consumers: no single place to publish";
}

// Both kinds: every pushed call runs once on a lane thread that counts as inside, through
// bursts that let the consumers park in between; close() then lets the threads exit.
void runs_every_call_inside(size_t threads, int64_t idle_spin_ns) {
  auto lane = Lane::make(Lane::Options{.name = "kind", .threads = threads, .idle_spin_ns = idle_spin_ns});
  auto group = std::make_shared<ThreadGroup>();  // shared: its threads hold it
  lane->start(*group, nullptr);
  Log log;
  std::atomic<int> inside{0};
  const size_t bursts = 20, per = scaled(500);
  for (size_t b = 0; b < bursts; ++b) {
    for (size_t i = 0; i < per; ++i) lane->push(new InsideCall(log, b * per + i, inside));
    ASSERT_TRUE(wait_until([&] { return log.runs.load() == (b + 1) * per; }, kLong)) << "burst " << b;
  }
  EXPECT_EQ(log.cancels.load(), 0u);
  EXPECT_EQ(inside.load(), static_cast<int>(bursts * per));
  EXPECT_FALSE(lane->is_inside()) << "the test's thread serves no lane";
  lane->close();
  group->join_all();
}

TEST(LaneKinds, PinnedLaneRunsEveryCallThroughParkedBursts) { runs_every_call_inside(1, 0); }
TEST(LaneKinds, SharedLaneRunsEveryCallThroughParkedBursts) { runs_every_call_inside(3, 0); }
TEST(LaneKinds, SharedLaneWithItsIdleSpinRunsEveryCall) { runs_every_call_inside(3, 20000); }

TEST(LaneKinds, ClosedManualLaneCancelsWhatReachesIt) {
  auto lane = Lane::make(Lane::Options{.name = "manual", .threads = 0});
  Log log;
  lane->close();
  lane->push(new TestCall(nullptr, log, 7));
  EXPECT_EQ(log.cancelled_ids(), std::vector<uint64_t>{7}) << "nobody will run a closed manual lane";
  EXPECT_EQ(log.runs.load(), 0u);
}

TEST(ThreadRole, ServingAsNestsAndRestores) {
  int a = 0, b = 0;
  const tether::ThreadRole& role = this_thread_role();
  EXPECT_EQ(role.serving, nullptr);
  EXPECT_FALSE(role.serves(nullptr)) << "serving nothing is not serving null";
  {
    ServingAs outer(&a);
    EXPECT_TRUE(role.serves(&a));
    {
      ServingAs inner(&b);
      EXPECT_TRUE(role.serves(&b));
      EXPECT_FALSE(role.serves(&a));
    }
    EXPECT_TRUE(role.serves(&a));
  }
  EXPECT_EQ(role.serving, nullptr);
}

TEST(ThreadRole, ManualLaneIdCountsOutsideServingAndIsPerThread) {
  int lane = 0;
  tether::ThreadRole& role = this_thread_role();
  const uint64_t before = role.manual_lane;
  role.manual_lane = 42;
  EXPECT_TRUE(role.serves_lane(&lane, 42)) << "the driver of a manual lane is inside it for good";
  EXPECT_FALSE(role.serves_lane(&lane, 43));
  EXPECT_FALSE(role.serves_lane(&lane, 0)) << "id 0 is no lane";
  bool other_sees = true;
  std::thread([&] { other_sees = this_thread_role().serves_lane(&lane, 42); }).join();
  EXPECT_FALSE(other_sees) << "another thread's record is its own";
  role.manual_lane = before;
}

}  // namespace
}  // namespace core_test
