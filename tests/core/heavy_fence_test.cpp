// Where the library makes heavy fences (core/asymmetric_fence.h: a membarrier system call,
// which interrupts every running thread of the process), and where it no longer does:
//   - an actor's stop (core/actor.h): only when a fast sender was ever opened. An actor
//     no thread called twice in a row ends without one (100,000 actors, a call with a
//     future to each, released together, made 100,000 of them); one that a thread calls
//     again and again (its calls then go through that thread's ring, with a future or
//     not) ends with one;
//   - a pinned lane about to park (core/pinned_lane.h, C3): only while one of its rings is
//     leased by a holder that publishes with a light fence (not whenever a ring was ever
//     made, nor while its holder's last call was a waited one or one with a future to the
//     sleeping lane, which fence in full).
#include <gtest/gtest.h>
#include <tether/tether.h>

#include <cstdint>
#include <thread>
#include <vector>

#include "core/asymmetric_fence.h"
#include "support/sync.h"
#include "support/waits.h"

namespace core_test {
namespace {

using tether_test::kLongNs;

tether_status NoState(tether_task*, void*, void** state) {
  *state = nullptr;
  return TETHER_OK;
}
tether_status Nothing(tether_task*, void*, void*) { return TETHER_OK; }
tether_status Open(tether_task*, void*, void* gate) {
  static_cast<tether_test::Gate*>(gate)->set();
  return TETHER_OK;
}

// from_new_threads: f() on n threads made one after another, each calling once: no
// thread's cache keeps the actor (a call's first lookup only notes it), so no call takes
// a ring.
template <class F>
void from_new_threads(int n, F f) {
  for (int i = 0; i < n; ++i) std::thread(f).join();
}

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

TEST(StopFence, AnActorCalledWithFuturesOnceFromEachThreadEndsWithoutAHeavyFence) {
  ActorOnSharedExecutor s;
  from_new_threads(3, [&] { s.call_and_wait(); });
  const uint64_t before = tether::heavy_fences_made();
  ASSERT_EQ(tether_actor_release(s.actor), TETHER_OK);  // waits for the destructor
  EXPECT_EQ(tether::heavy_fences_made(), before);
}

TEST(StopFence, AnActorOneThreadCallsAgainAndAgainWithFuturesEndsWithAHeavyFence) {
  // The calls after the second go through the thread's ring (actor_ring_future.cpp),
  // which a sender leased: the stop fences for them.
  ActorOnSharedExecutor s;
  for (int i = 0; i < 3; ++i) s.call_and_wait();
  const uint64_t before = tether::heavy_fences_made();
  ASSERT_EQ(tether_actor_release(s.actor), TETHER_OK);
  EXPECT_GT(tether::heavy_fences_made(), before);
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
  // round_trips: n calls with a future, each waited for: through this thread's ring once
  // it has one, fenced in full when the lane sleeps.
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
  // fire_and_forget: n fire-and-forget calls through this thread's sender (it leases one
  // of the lane's rings, kept while this thread caches the actor, and publishes with a
  // light fence), each waited for by a gate its method opens, not through the ring.
  void fire_and_forget(int n = 1) const {
    for (int i = 0; i < n; ++i) {
      tether_test::Gate ran;
      ASSERT_EQ(tether_actor_call(actor, nullptr, Open, &ran, nullptr, nullptr), TETHER_OK);
      ASSERT_TRUE(ran.wait_for(tether_test::kLong));
    }
  }
  // until_heavy_fence: f() again and again (bounded) until a heavy fence was made; true
  // then. On a loaded machine the executor may find the next call queued before it parks.
  template <class F>
  static bool until_heavy_fence(F f) {
    const uint64_t before = tether::heavy_fences_made();
    const auto deadline = tether_test::Clock::now() + tether_test::kLong;
    do {
      f();
    } while (tether::heavy_fences_made() == before && tether_test::Clock::now() < deadline);
    return tether::heavy_fences_made() > before;
  }
  // until_quiet: f() again and again (bounded) until one run of it made no heavy fence.
  template <class F>
  static bool until_quiet(F f) {
    const auto deadline = tether_test::Clock::now() + tether_test::kLong;
    for (;;) {
      const uint64_t at = tether::heavy_fences_made();
      f();
      if (tether::heavy_fences_made() == at) return true;
      if (tether_test::Clock::now() >= deadline) return false;
    }
  }
};

TEST(ParkFence, ALaneParksWithAHeavyFenceOnlyWhileOneOfItsRingsIsLeased) {
  LaneWithRing s;
  // Another thread makes the lane's ring and leases it; its exit ends the lease.
  std::thread other([&] { s.fire_and_forget(); });
  other.join();
  const uint64_t before = tether::heavy_fences_made();
  // Each call ends with the executor parked: no lease, no heavy fence.
  from_new_threads(20, [&] { s.round_trips(1); });
  EXPECT_EQ(tether::heavy_fences_made(), before);

  // This thread leases a ring and keeps it, fencing lightly: the same parks, with a
  // lease live, make a heavy fence each.
  EXPECT_TRUE(LaneWithRing::until_heavy_fence([&] { s.fire_and_forget(10); }));
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
  // Each ends with the executor parked, the lease live.
  EXPECT_TRUE(LaneWithRing::until_quiet([&] { s.waited_calls(50); }))
      << "every run of fifty waited calls made a heavy fence";
  // Counted back in by the next fire-and-forget call.
  EXPECT_TRUE(LaneWithRing::until_heavy_fence([&] { s.fire_and_forget(10); }));
}

// Calls with a future through the ring (actor_ring_future.cpp) fence as waited calls do.
TEST(ParkFence, CallsWithAFutureToASleepingLaneKeepItsParksLight) {
  LaneWithRing s;
  s.fire_and_forget();  // this thread leases a ring and keeps it, fencing lightly
  EXPECT_TRUE(LaneWithRing::until_quiet([&] { s.round_trips(50); }))
      << "every run of fifty calls with a future made a heavy fence";
  EXPECT_TRUE(LaneWithRing::until_heavy_fence([&] { s.fire_and_forget(10); }));
}

}  // namespace
}  // namespace core_test
