// Where the library makes heavy fences (core/asymmetric_fence.h: a membarrier system call,
// which interrupts every running thread of the process), and where it no longer does:
//   - an actor's stop (core/actor.h): only when a fast sender was ever opened. An actor
//     called only with futures ends without one (100,000 such actors released together
//     made 100,000 of them);
//   - a pinned lane about to park (core/pinned_lane.h, C3): only while one of its rings is
//     leased by a holder that publishes with a light fence (not whenever a ring was ever
//     made, nor while its holder's last call was a waited one, which fences in full).
#include <gtest/gtest.h>
#include <tether/tether.h>

#include <cstdint>
#include <thread>

#include "core/asymmetric_fence.h"
#include "support/waits.h"

namespace core_test {
namespace {

using tether_test::kLongNs;

tether_status NoState(tether_task*, void*, void** state) {
  *state = nullptr;
  return TETHER_OK;
}
tether_status Nothing(tether_task*, void*, void*) { return TETHER_OK; }

// ActorOnSharedExecutor: an actor on an executor of its own making (not dedicated), so
// the executor's lane outlives the actor's release.
struct ActorOnSharedExecutor {
  tether_executor executor{0};
  tether_actor actor{0};
  ActorOnSharedExecutor() {
    EXPECT_EQ(tether_executor_create(nullptr, &executor), TETHER_OK);
    tether_actor_options o;
    tether_actor_options_init(&o);
    o.executor = executor;
    EXPECT_EQ(tether_actor_create(&o, NoState, nullptr, nullptr, nullptr, &actor), TETHER_OK);
  }
  ~ActorOnSharedExecutor() { EXPECT_EQ(tether_executor_release(executor), TETHER_OK); }
  void call_and_wait() const {
    tether_future f{0};
    ASSERT_EQ(tether_actor_call(actor, nullptr, Nothing, nullptr, nullptr, &f), TETHER_OK);
    EXPECT_EQ(tether_future_wait(f, kLongNs), TETHER_OK);
    EXPECT_EQ(tether_future_release(f), TETHER_OK);
  }
};

TEST(StopFence, AnActorCalledOnlyWithFuturesEndsWithoutAHeavyFence) {
  ActorOnSharedExecutor s;
  for (int i = 0; i < 3; ++i) s.call_and_wait();
  const uint64_t before = tether::heavy_fences_made();
  ASSERT_EQ(tether_actor_release(s.actor), TETHER_OK);  // waits for the destructor
  EXPECT_EQ(tether::heavy_fences_made(), before);
}

TEST(StopFence, AStopCancelOfAnActorCalledOnlyWithFuturesMakesNoHeavyFenceEither) {
  ActorOnSharedExecutor s;
  s.call_and_wait();
  const uint64_t before = tether::heavy_fences_made();
  ASSERT_EQ(tether_actor_stop(s.actor, TETHER_STOP_CANCEL, kLongNs), TETHER_OK);
  EXPECT_EQ(tether::heavy_fences_made(), before);
  EXPECT_EQ(tether_actor_release(s.actor), TETHER_OK);
}

TEST(StopFence, AFireAndForgetCallAfterTheStopIsRefusedWithoutASender) {
  // The sender is opened after the stop began: open_sender sees stopped_ and gives none,
  // so the call takes the general path, which refuses it.
  ActorOnSharedExecutor s;
  ASSERT_EQ(tether_actor_stop(s.actor, TETHER_STOP_DRAIN, kLongNs), TETHER_OK);
  EXPECT_EQ(tether_actor_call(s.actor, nullptr, Nothing, nullptr, nullptr, nullptr), TETHER_E_SHUTDOWN);
  EXPECT_EQ(tether_actor_release(s.actor), TETHER_OK);
}

// LaneWithRing: an actor on an executor that parks as soon as it is idle (idle_spin_ns 0),
// so every call it answers ends with a park.
struct LaneWithRing {
  tether_executor executor{0};
  tether_actor actor{0};
  LaneWithRing() {
    tether_executor_options eo;
    tether_executor_options_init(&eo);
    eo.idle_spin_ns = 0;
    EXPECT_EQ(tether_executor_create(&eo, &executor), TETHER_OK);
    tether_actor_options o;
    tether_actor_options_init(&o);
    o.executor = executor;
    EXPECT_EQ(tether_actor_create(&o, NoState, nullptr, nullptr, nullptr, &actor), TETHER_OK);
  }
  ~LaneWithRing() {
    EXPECT_EQ(tether_actor_release(actor), TETHER_OK);
    EXPECT_EQ(tether_executor_release(executor), TETHER_OK);
  }
  void round_trips(int n) const {
    for (int i = 0; i < n; ++i) {
      tether_future f{0};
      ASSERT_EQ(tether_actor_call(actor, nullptr, Nothing, nullptr, nullptr, &f), TETHER_OK);
      ASSERT_EQ(tether_future_wait(f, kLongNs), TETHER_OK);
      ASSERT_EQ(tether_future_release(f), TETHER_OK);
    }
  }
  // waited_calls: n calls by tether_actor_call_wait with no deadline: through this
  // thread's ring once it has one (the waited path), each fenced in full.
  void waited_calls(int n) const {
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(tether_actor_call_wait(actor, nullptr, Nothing, nullptr, nullptr, -1, nullptr, nullptr), TETHER_OK);
    }
  }
  // fire_and_forget: a call through this thread's sender (it leases one of the lane's
  // rings, kept while this thread caches the actor), then a round trip: it has run.
  void fire_and_forget() const {
    ASSERT_EQ(tether_actor_call(actor, nullptr, Nothing, nullptr, nullptr, nullptr), TETHER_OK);
    round_trips(1);
  }
};

TEST(ParkFence, ALaneParksWithAHeavyFenceOnlyWhileOneOfItsRingsIsLeased) {
  LaneWithRing s;
  // Another thread makes the lane's ring and leases it; its exit ends the lease.
  std::thread other([&] { s.fire_and_forget(); });
  other.join();
  uint64_t before = tether::heavy_fences_made();
  s.round_trips(50);  // each ends with the executor parked: no lease, no heavy fence
  EXPECT_EQ(tether::heavy_fences_made(), before);

  s.fire_and_forget();  // this thread leases a ring and keeps it
  before = tether::heavy_fences_made();
  // The same parks, with a lease live: a heavy fence each. On a loaded machine the
  // executor may find the next call queued before it parks, so round trips go on (with
  // a bound) until one has parked.
  const auto deadline = tether_test::Clock::now() + tether_test::kLong;
  do {
    s.round_trips(50);
  } while (tether::heavy_fences_made() == before && tether_test::Clock::now() < deadline);
  EXPECT_GT(tether::heavy_fences_made(), before);
}

// A waited call to a consumer that announced it may sleep counts its ring out of the
// light leases (it fences in full: Inbox::push_fast, Actor::post_now_as): the parks after
// it make no heavy fence while the ring is still leased, until the holder's next
// fire-and-forget call counts it back in. (A waited call that finds the consumer awake
// stays light: waited calls go on, with a bound, until one has found it asleep; from
// then on fifty in a row make no heavy fence.)
TEST(ParkFence, AWaitedCallsRingParksItsLaneWithoutAHeavyFenceUntilTheNextFireAndForgetCall) {
  LaneWithRing s;
  s.fire_and_forget();  // this thread leases a ring and keeps it, fencing lightly
  auto deadline = tether_test::Clock::now() + tether_test::kLong;
  bool quiet = false;
  do {
    const uint64_t at = tether::heavy_fences_made();
    s.waited_calls(50);  // each ends with the executor parked, the lease live
    quiet = tether::heavy_fences_made() == at;
  } while (!quiet && tether_test::Clock::now() < deadline);
  EXPECT_TRUE(quiet) << "every run of fifty waited calls made a heavy fence";

  s.fire_and_forget();  // counted back in
  const uint64_t before = tether::heavy_fences_made();
  deadline = tether_test::Clock::now() + tether_test::kLong;
  do {
    s.round_trips(50);
  } while (tether::heavy_fences_made() == before && tether_test::Clock::now() < deadline);
  EXPECT_GT(tether::heavy_fences_made(), before);
}

}  // namespace
}  // namespace core_test
