// inbox_test.cpp: the Inbox (src/core/inbox.h) on its own: order within and across its
// sources, ring leases, and the claim protocol of cancellers against a draining consumer.
// Ids are producer << 32 | seq, so every check is of exact outcomes.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <thread>
#include <vector>

#include "core_support.h"

namespace core_test {
namespace {

using tether::CallRing;
using tether::kLaneRings;

uint64_t id_of(uint64_t producer, uint64_t seq) { return producer << 32 | seq; }

std::vector<uint64_t> iota_ids(uint64_t producer, size_t n) {
  std::vector<uint64_t> v;
  for (size_t i = 0; i < n; ++i) v.push_back(id_of(producer, i));
  return v;
}

// Enough calls through one ring to fill several of its blocks.
size_t calls_across_blocks() { return std::max<size_t>(3 * CallRing::kBlockEntries, scaled(20000)); }

// Threads: joins its threads on every exit path (after the test's bounded waits).
struct Threads {
  std::vector<std::thread> v;
  ~Threads() {
    for (auto& t : v) t.join();
  }
};

TEST(Inbox, MailboxKeepsOneProducersOrder) {
  Log log;
  Inbox inbox(true);
  const size_t n = 1000;
  for (size_t i = 0; i < n; ++i) inbox.push(new TestCall(nullptr, log, id_of(0, i)));
  ASSERT_TRUE(consume_until(inbox, [&] { return log.total() == n; }));
  EXPECT_EQ(iota_ids(0, n), log.ran_ids());
  EXPECT_EQ(0u, log.cancels.load());
  EXPECT_FALSE(inbox.anything_queued());
  inbox.cancel_everything();
}

TEST(Inbox, RingCallsAndMailboxPushesOfOneThreadKeepProgramOrder) {
  Log log;
  TestTarget target(nullptr, log);
  Inbox inbox(true);
  CallRing* ring = inbox.lease_ring();
  ASSERT_NE(nullptr, ring);
  // Runs of fast calls with mailbox pushes between them, across the ring's block edges:
  // only the marks order one source against the other.
  const size_t n = calls_across_blocks();
  for (size_t i = 0; i < n; ++i) {
    if (i % 7 == 3 || i % 7 == 4) {
      inbox.push(new TestCall(nullptr, log, id_of(0, i)));
    } else {
      ASSERT_TRUE(push_fast(inbox, *ring, target, id_of(0, i)));
    }
  }
  ASSERT_TRUE(consume_until(inbox, [&] { return log.total() == n; }));
  EXPECT_EQ(iota_ids(0, n), log.ran_ids());
  inbox.end_lease(*ring);
  inbox.cancel_everything();
}

// producers threads, each leasing a ring if one is free (else the mailbox alone), pushing
// `per` calls (fast through the ring, every fifth through the mailbox) while this thread
// consumes. leased: how many got a ring.
void run_producers(size_t producers, size_t per, Log& log, size_t& leased) {
  TestTarget target(nullptr, log);
  Inbox inbox(true);
  Counter have_lease, done;
  std::atomic<size_t> rings{0};
  {
    Threads threads;
    for (size_t p = 0; p < producers; ++p) {
      threads.v.emplace_back([&, p] {
        CallRing* ring = inbox.lease_ring();
        if (ring != nullptr) rings.fetch_add(1);
        // Every producer holds its lease (or its refusal) before any pushes: the extra
        // ones really find every ring taken.
        have_lease.add();
        if (have_lease.wait_for(static_cast<int>(producers))) {
          for (size_t i = 0; i < per; ++i) {
            if (ring == nullptr || i % 5 == 0) {
              inbox.push(new TestCall(nullptr, log, id_of(p, i)));
            } else if (!push_fast(inbox, *ring, target, id_of(p, i))) {
              ADD_FAILURE() << "no memory for a ring block";
            }
          }
        }
        if (ring != nullptr) inbox.end_lease(*ring);
        done.add();
      });
    }
    EXPECT_TRUE(consume_until(inbox, [&] { return log.total() == producers * per; }))
        << log.total() << " of " << producers * per;
    EXPECT_TRUE(done.wait_for(static_cast<int>(producers)));
  }
  EXPECT_FALSE(inbox.anything_queued());
  leased = rings.load();
  inbox.cancel_everything();
}

TEST(Inbox, DrainRingRunsEachTargetsCallsBackToBack) {
  Log log;
  const int a = 0, b = 0;
  TestTarget target_a(&a, log), target_b(&b, log);
  Inbox inbox(true);
  CallRing* ring = inbox.lease_ring();
  ASSERT_NE(nullptr, ring);
  // a a a b a, then 300 of a: the first drain runs a's three in one run, b's one, and a's
  // 301 in one more: past a batch (128), as nothing is queued elsewhere.
  const uint64_t first[] = {0, 0, 0, 1, 0};
  uint64_t seq = 0;
  for (uint64_t t : first) ASSERT_TRUE(push_fast(inbox, *ring, t == 0 ? target_a : target_b, id_of(0, seq++)));
  for (int i = 0; i < 300; ++i) ASSERT_TRUE(push_fast(inbox, *ring, target_a, id_of(0, seq++)));
  ASSERT_TRUE(inbox.drain_ring(test_lane()));
  EXPECT_EQ(seq, log.runs.load()) << "one drain runs on while nothing waits elsewhere";
  EXPECT_EQ(1u, target_b.runs.load());
  EXPECT_EQ(2u, target_a.runs.load()) << "a's first three in one run, the rest in another";
  EXPECT_EQ(iota_ids(0, seq), log.ran_ids());
  inbox.end_lease(*ring);
  inbox.cancel_everything();
}

TEST(Inbox, DrainRingTakesOneBatchWhileAnotherRingHasCalls) {
  Log log;
  TestTarget target(nullptr, log);
  Inbox inbox(true);
  CallRing* ring = inbox.lease_ring();
  CallRing* other = inbox.lease_ring();
  ASSERT_NE(nullptr, ring);
  ASSERT_NE(nullptr, other);
  for (uint64_t i = 0; i < 300; ++i) ASSERT_TRUE(push_fast(inbox, *ring, target, id_of(0, i)));
  ASSERT_TRUE(push_fast(inbox, *other, target, id_of(1, 0)));
  ASSERT_TRUE(inbox.drain_ring(test_lane()));
  EXPECT_EQ(128u, log.runs.load()) << "one drain runs one batch while another source has calls";
  ASSERT_TRUE(consume_until(inbox, [&] { return log.total() == 301; }));
  inbox.end_lease(*ring);
  inbox.end_lease(*other);
  inbox.cancel_everything();
}

// A mailbox call pushed after a ring's calls waits for them (its marks): once the consumer
// has seen it wait, it is no work elsewhere, and the ring's calls run past a batch; it
// runs right after the last of them.
TEST(Inbox, DrainRingRunsOnWhileTheMailboxWaitsForItsRing) {
  Log log;
  TestTarget target(nullptr, log);
  Inbox inbox(true);
  CallRing* ring = inbox.lease_ring();
  ASSERT_NE(nullptr, ring);
  for (uint64_t i = 0; i < 600; ++i) ASSERT_TRUE(push_fast(inbox, *ring, target, id_of(0, i)));
  inbox.push(new TestCall(nullptr, log, id_of(0, 600)));
  ASSERT_TRUE(inbox.drain_ring(test_lane()));
  EXPECT_EQ(128u, log.runs.load()) << "the mailbox's call is not known to wait yet";
  Inbox::Work w;
  ASSERT_TRUE(inbox.try_pop(w)) << "the mailbox's call waits: the ring's next call comes";
  EXPECT_EQ(nullptr, w.call);
  Inbox::run(w, test_lane());
  EXPECT_EQ(129u, log.runs.load());
  ASSERT_TRUE(inbox.drain_ring(test_lane()));
  EXPECT_EQ(600u, log.runs.load()) << "the rest in one drain: the mailbox waits for this ring";
  ASSERT_TRUE(consume_until(inbox, [&] { return log.total() == 601; }));
  EXPECT_EQ(iota_ids(0, 601), log.ran_ids());
  inbox.end_lease(*ring);
  inbox.cancel_everything();
}

TEST(Inbox, TryPopFindsARingMadeAfterItsWalkFoundNothing) {
  Log log;
  TestTarget target(nullptr, log);
  Inbox inbox(true);
  CallRing* first = inbox.lease_ring();
  ASSERT_NE(nullptr, first);
  ASSERT_TRUE(push_fast(inbox, *first, target, id_of(0, 0)));
  ASSERT_TRUE(consume_until(inbox, [&] { return log.total() == 1; }));
  Inbox::Work w;
  EXPECT_FALSE(inbox.try_pop(w)) << "nothing queued: the walk (over the one ring made and the mailbox) is empty";
  EXPECT_FALSE(inbox.drain_ring(test_lane())) << "its ring is empty";
  // A second ring, made after that walk: its call, then a mailbox call whose marks name it.
  CallRing* second = inbox.lease_ring();
  ASSERT_NE(nullptr, second);
  ASSERT_NE(first, second);
  ASSERT_TRUE(push_fast(inbox, *second, target, id_of(1, 0)));
  inbox.push(new TestCall(nullptr, log, id_of(1, 1)));
  EXPECT_TRUE(inbox.anything_queued());
  ASSERT_TRUE(consume_until(inbox, [&] { return log.total() == 3; }));
  EXPECT_EQ((std::vector<uint64_t>{id_of(0, 0), id_of(1, 0), id_of(1, 1)}), log.ran_ids());
  EXPECT_FALSE(inbox.anything_queued());
  inbox.end_lease(*second);
  inbox.end_lease(*first);
  inbox.cancel_everything();
}

TEST(Inbox, SeveralProducersKeepEachOnesOrder) {
  Log log;
  size_t leased = 0;
  const size_t per = scaled(20000);
  run_producers(kLaneRings, per, log, leased);
  EXPECT_EQ(kLaneRings, leased);
  EXPECT_EQ(0u, log.cancels.load());
  EXPECT_TRUE(in_order_per_producer(log.ran_ids(), kLaneRings, per));
}

TEST(Inbox, ProducersBeyondTheRingsFallBackToTheMailbox) {
  Log log;
  size_t leased = 0;
  const size_t producers = kLaneRings + 3;
  const size_t per = scaled(10000);
  run_producers(producers, per, log, leased);
  EXPECT_EQ(kLaneRings, leased) << "lease_ring gives out each ring once, then null";
  EXPECT_EQ(0u, log.cancels.load());
  EXPECT_TRUE(in_order_per_producer(log.ran_ids(), producers, per)) << "a call was lost or reordered";
}

TEST(Inbox, InboxOfSeveralConsumersLeasesNoRing) {
  Inbox inbox(false);
  EXPECT_EQ(nullptr, inbox.lease_ring());
  inbox.cancel_everything();
}

TEST(Inbox, CancelQueuedOfCancelsExactlyTheOwnersCalls) {
  Log log;
  const int a = 0, b = 0;  // two owners
  TestTarget target_a(&a, log), target_b(&b, log);
  Inbox inbox(true);
  CallRing* ring = inbox.lease_ring();
  ASSERT_NE(nullptr, ring);
  const size_t n = calls_across_blocks();
  std::vector<uint64_t> of_a, of_b;
  for (size_t i = 0; i < n; ++i) {
    const bool owner_a = i % 3 == 0;
    const uint64_t id = id_of(0, i);
    (owner_a ? of_a : of_b).push_back(id);
    if (i % 4 == 1) {
      inbox.push(new TestCall(owner_a ? &a : &b, log, id));
    } else {
      ASSERT_TRUE(push_fast(inbox, *ring, owner_a ? target_a : target_b, id));
    }
  }
  EXPECT_EQ(of_a.size(), inbox.cancel_queued_of(&a));
  std::vector<uint64_t> cancelled = log.cancelled_ids();
  std::sort(cancelled.begin(), cancelled.end());
  EXPECT_EQ(of_a, cancelled);
  EXPECT_EQ(0u, log.runs.load()) << "a cancel runs nothing";
  ASSERT_TRUE(consume_until(inbox, [&] { return log.total() == n; }));
  EXPECT_EQ(of_b, log.ran_ids()) << "the others run, in order";
  inbox.end_lease(*ring);
  inbox.cancel_everything();
}

TEST(Inbox, CancelAllQueuedCancelsEveryQueuedCall) {
  Log log;
  TestTarget target(nullptr, log);
  Inbox inbox(true);
  CallRing* ring = inbox.lease_ring();
  ASSERT_NE(nullptr, ring);
  const size_t n = calls_across_blocks();
  for (size_t i = 0; i < n; ++i) {
    if (i % 2 == 0) {
      inbox.push(new TestCall(nullptr, log, id_of(0, i)));
    } else {
      ASSERT_TRUE(push_fast(inbox, *ring, target, id_of(0, i)));
    }
  }
  EXPECT_EQ(n, inbox.cancel_all_queued());
  std::vector<uint64_t> cancelled = log.cancelled_ids();
  std::sort(cancelled.begin(), cancelled.end());
  EXPECT_EQ(iota_ids(0, n), cancelled);
  // The consumer steps over the claimed entries and runs nothing.
  EXPECT_TRUE(consume_until(inbox, [&] { return !inbox.anything_queued(); }));
  EXPECT_EQ(0u, log.runs.load());
  EXPECT_EQ(0u, inbox.cancel_all_queued());
  // The ring still works after its entries were claimed.
  ASSERT_TRUE(push_fast(inbox, *ring, target, id_of(1, 0)));
  ASSERT_TRUE(consume_until(inbox, [&] { return log.runs.load() == 1; }));
  EXPECT_EQ(std::vector<uint64_t>{id_of(1, 0)}, log.ran_ids());
  inbox.end_lease(*ring);
  inbox.cancel_everything();
}

// A canceller claims calls while the consumer drains them across the ring's block edges:
// each call is run or cancelled, exactly once.
TEST(Inbox, CancelRacingTheConsumerAcrossBlockEdgesFinishesEachCallOnce) {
  Log log;
  const int a = 0, b = 0;
  TestTarget target_a(&a, log), target_b(&b, log);
  Inbox inbox(true);
  const size_t n = 2 * calls_across_blocks();
  std::vector<std::atomic<int>> finished(n);
  std::atomic<bool> pushed{false};
  Gate consumer_done;
  size_t cancelled_by_return = 0;
  {
    Threads threads;
    threads.v.emplace_back([&] {  // the producer
      CallRing* ring = inbox.lease_ring();
      if (ring == nullptr) {
        ADD_FAILURE() << "no ring";
      } else {
        for (size_t i = 0; i < n; ++i) {
          if (i % 11 == 5) {
            inbox.push(new TestCall(i % 2 == 0 ? &a : &b, log, id_of(0, i)));
          } else if (!push_fast(inbox, *ring, i % 2 == 0 ? target_a : target_b, id_of(0, i))) {
            ADD_FAILURE() << "no memory for a ring block";
            break;
          }
        }
        inbox.end_lease(*ring);
      }
      pushed.store(true);
    });
    threads.v.emplace_back([&] {  // the canceller: owner a's calls, then everything, in turns
      size_t k = 0;
      while (!consumer_done.is_set()) {
        cancelled_by_return += (k++ % 2 == 0) ? inbox.cancel_queued_of(&a) : inbox.cancel_all_queued();
        std::this_thread::yield();
      }
    });
    EXPECT_TRUE(consume_until(inbox, [&] { return pushed.load() && log.total() == n; }))
        << log.total() << " of " << n;
    consumer_done.set();
  }
  EXPECT_EQ(log.cancels.load(), cancelled_by_return) << "cancel_* counts what it cancelled";
  for (uint64_t id : log.ran_ids()) finished[id & 0xffffffffu].fetch_add(1);
  for (uint64_t id : log.cancelled_ids()) finished[id & 0xffffffffu].fetch_add(1);
  size_t wrong = 0;
  for (auto& f : finished) wrong += f.load() == 1 ? 0 : 1;
  EXPECT_EQ(0u, wrong) << "calls run and cancelled, or neither";
  const std::vector<uint64_t> ran = log.ran_ids();
  EXPECT_TRUE(std::is_sorted(ran.begin(), ran.end())) << "what ran kept its order";
  // Claimed entries may still sit in the ring: the consumer steps over them, running none.
  EXPECT_TRUE(consume_until(inbox, [&] { return !inbox.anything_queued(); }));
  EXPECT_EQ(n, log.total());
  inbox.cancel_everything();
}

TEST(Inbox, EndedLeaseIsLeasedAgainByAnotherThread) {
  Log log;
  TestTarget target(nullptr, log);
  Inbox inbox(true);
  CallRing* first = inbox.lease_ring();
  ASSERT_NE(nullptr, first);
  const size_t n = CallRing::kBlockEntries;  // the second producer starts mid-block
  for (size_t i = 0; i < n; ++i) ASSERT_TRUE(push_fast(inbox, *first, target, id_of(0, i)));
  inbox.end_lease(*first);
  CallRing* second = nullptr;
  {
    Threads threads;
    threads.v.emplace_back([&] {
      second = inbox.lease_ring();
      if (second == nullptr) return;
      for (size_t i = 0; i < n; ++i) {
        if (i % 3 == 0) {
          inbox.push(new TestCall(nullptr, log, id_of(1, i)));
        } else if (!push_fast(inbox, *second, target, id_of(1, i))) {
          ADD_FAILURE() << "no memory for a ring block";
        }
      }
      inbox.end_lease(*second);
    });
  }
  EXPECT_EQ(first, second) << "the freed ring is leased again (no new ring made)";
  EXPECT_EQ(1u, inbox.rings_made());
  ASSERT_TRUE(consume_until(inbox, [&] { return log.total() == 2 * n; }));
  std::vector<uint64_t> want = iota_ids(0, n);
  for (uint64_t id : iota_ids(1, n)) want.push_back(id);
  EXPECT_EQ(want, log.ran_ids()) << "the lease's calls, then the next lease's, in order";
  inbox.cancel_everything();
}

// light_leases_live (pinned_lane.h's C3): a lease counts its holder in, a publication
// fenced in full counts it out and a light one back in (a change at a time, never twice),
// and the lease's end counts it out once.
TEST(Inbox, LightLeasesCountTheHoldersThatFenceLightlyNow) {
  Log log;
  TestTarget target(nullptr, log);
  Inbox inbox(true);
  EXPECT_EQ(0u, inbox.light_leases_live());
  CallRing* ring = inbox.lease_ring();
  ASSERT_NE(nullptr, ring);
  EXPECT_EQ(0u, inbox.light_leases_live()) << "a lease starts fenced in full";
  uint64_t id = 0;
  ASSERT_TRUE(push_fast(inbox, *ring, target, id_of(0, id++)));
  EXPECT_EQ(1u, inbox.light_leases_live()) << "its first light publication counts it in";
  ASSERT_TRUE(push_fast(inbox, *ring, target, id_of(0, id++), /*full=*/true));
  EXPECT_EQ(0u, inbox.light_leases_live()) << "fenced in full: counted out";
  ASSERT_TRUE(push_fast(inbox, *ring, target, id_of(0, id++), /*full=*/true));
  EXPECT_EQ(0u, inbox.light_leases_live());
  ASSERT_TRUE(push_fast(inbox, *ring, target, id_of(0, id++)));
  ASSERT_TRUE(push_fast(inbox, *ring, target, id_of(0, id++)));
  EXPECT_EQ(1u, inbox.light_leases_live()) << "light again: counted in once";
  CallRing* second = nullptr;
  std::thread other([&] {  // another producer's lease, light after its first call
    second = inbox.lease_ring();
    if (second != nullptr) (void)push_fast(inbox, *second, target, id_of(1, 0));
  });
  other.join();
  ASSERT_NE(nullptr, second);
  EXPECT_EQ(2u, inbox.light_leases_live());
  inbox.end_lease(*ring);
  EXPECT_EQ(1u, inbox.light_leases_live()) << "an ended lease counted out";
  ASSERT_TRUE(push_fast(inbox, *second, target, id_of(1, 1), /*full=*/true));
  EXPECT_EQ(0u, inbox.light_leases_live());
  inbox.end_lease(*second);
  EXPECT_EQ(0u, inbox.light_leases_live()) << "a lease that ended fencing in full is not counted out twice";
  ASSERT_TRUE(consume_until(inbox, [&] { return log.total() == id + 2; }));
  inbox.cancel_everything();
}

TEST(Inbox, CancelEverythingRunsNoCall) {
  Log log;
  TestTarget target(nullptr, log);
  Inbox inbox(true);
  CallRing* ring = inbox.lease_ring();
  ASSERT_NE(nullptr, ring);
  const size_t n = calls_across_blocks();
  for (size_t i = 0; i < n; ++i) {
    if (i % 5 == 0) {
      inbox.push(new TestCall(nullptr, log, id_of(0, i)));
    } else {
      ASSERT_TRUE(push_fast(inbox, *ring, target, id_of(0, i)));
    }
  }
  inbox.end_lease(*ring);
  inbox.cancel_everything();
  EXPECT_EQ(0u, log.runs.load());
  std::vector<uint64_t> cancelled = log.cancelled_ids();
  std::sort(cancelled.begin(), cancelled.end());
  EXPECT_EQ(iota_ids(0, n), cancelled);
}

}  // namespace
}  // namespace core_test
