// Unit tests of core/lazy_thread_group.h: the group an owner makes at need, and the
// owner's orphan() that no group may miss, whichever comes first: a group made before,
// after or while its owner orphans it ends up orphaned (else its threads would never be
// released), and racing makers share one group. The races meet at a latch; their waits
// are bounded (kLong), so a bug fails the test instead of hanging it.
#include <gtest/gtest.h>

#include <latch>
#include <memory>
#include <thread>

#include "core/lazy_thread_group.h"
#include "support/waits.h"

namespace core_test {
namespace {

using tether::LazyThreadGroup;
using tether::ThreadGroup;
using tether_test::scaled;

TEST(LazyThreadGroup, MakesOneGroupAtTheFirstGet) {
  LazyThreadGroup lazy;
  lazy.join_all();  // no group yet: nothing to join, nothing made
  std::shared_ptr<ThreadGroup> first = lazy.get();
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(lazy.get(), first);
  EXPECT_FALSE(first->orphaned());
}

TEST(LazyThreadGroup, OrphanAfterGetOrphansTheGroup) {
  LazyThreadGroup lazy;
  std::shared_ptr<ThreadGroup> group = lazy.get();
  lazy.orphan();
  EXPECT_TRUE(group->orphaned());
}

TEST(LazyThreadGroup, AGroupMadeAfterOrphanIsOrphaned) {
  LazyThreadGroup lazy;
  lazy.orphan();
  EXPECT_TRUE(lazy.get()->orphaned());
}

TEST(LazyThreadGroup, RacingGetsAndOrphanLeaveOneOrphanedGroup) {
  const size_t rounds = scaled(300);
  for (size_t round = 0; round < rounds; ++round) {
    LazyThreadGroup lazy;
    std::latch start(3);
    std::shared_ptr<ThreadGroup> a, b;
    std::thread maker_a([&] {
      start.arrive_and_wait();
      a = lazy.get();
    });
    std::thread maker_b([&] {
      start.arrive_and_wait();
      b = lazy.get();
    });
    start.arrive_and_wait();
    lazy.orphan();
    maker_a.join();
    maker_b.join();
    ASSERT_EQ(a, b) << "round " << round;
    ASSERT_TRUE(a->orphaned()) << "round " << round;
  }
}

}  // namespace
}  // namespace core_test
