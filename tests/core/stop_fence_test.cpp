// The heavy fence of an actor's stop (core/actor.h): made only when a fast sender was ever
// opened. An actor called only with futures ends without a membarrier system call (which
// would interrupt every running thread of the process: 100,000 such actors released
// together made 100,000 of them).
#include <gtest/gtest.h>
#include <tether/tether.h>

#include <cstdint>

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

}  // namespace
}  // namespace core_test
