// ring_block_depot_test.cpp: the blocks a ring gives up wait in the process-wide depot
// (src/core/ring_block_depot.h) for the next ring that grows, up to kMaxBlocks.
#include <gtest/gtest.h>

#include "core/ring_block_depot.h"
#include "core_support.h"

namespace core_test {
namespace {

using tether::CallRing;
using tether::RingBlockDepot;

// grow_and_drain: `blocks` blocks' worth of fast calls through a ring of a new inbox, all
// queued before any runs, then every one run; the inbox (and its ring) then ends.
void grow_and_drain(size_t blocks) {
  Log log;
  TestTarget target(nullptr, log);
  Inbox inbox(true);
  CallRing* ring = inbox.lease_ring();
  ASSERT_NE(nullptr, ring);
  const size_t n = blocks * CallRing::kBlockEntries;
  for (size_t i = 0; i < n; ++i) ASSERT_TRUE(push_fast(inbox, *ring, target, i));
  ASSERT_TRUE(consume_until(inbox, [&] { return log.total() == n; }));
  inbox.end_lease(*ring);
  inbox.cancel_everything();
}

TEST(RingBlockDepot, AnEndedRingsBlocksServeTheNextRing) {
  const size_t before = RingBlockDepot::blocks_kept();
  grow_and_drain(40);
  const size_t kept = RingBlockDepot::blocks_kept();
  EXPECT_GE(kept, before + 40);  // every block the ring made, once it ended
  grow_and_drain(10);
  // The second ring took its blocks from the depot and gave them back: none was made.
  EXPECT_EQ(kept, RingBlockDepot::blocks_kept());
}

TEST(RingBlockDepot, KeepsAtMostItsBound) {
  grow_and_drain(RingBlockDepot::kMaxBlocks + 20);
  EXPECT_EQ(RingBlockDepot::kMaxBlocks, RingBlockDepot::blocks_kept());
  CallRing::Block* b = RingBlockDepot::take();
  ASSERT_NE(nullptr, b);
  EXPECT_EQ(RingBlockDepot::kMaxBlocks - 1, RingBlockDepot::blocks_kept());
  EXPECT_TRUE(RingBlockDepot::give(b));
  auto* extra = new CallRing::Block;
  EXPECT_FALSE(RingBlockDepot::give(extra));  // full: it stays the caller's
  delete extra;
}

}  // namespace
}  // namespace core_test
