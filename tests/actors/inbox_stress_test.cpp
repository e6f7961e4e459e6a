// Stress of the call queues' protocols (lane, call_ring, source_marks, actor_cache,
// asymmetric_fence): a stop CANCEL racing a drain across ring-block boundaries, more
// producers than rings, handles released while other threads have them cached, and calls
// made from thread-local destructors. What must hold every time: each call a producer was
// told OK either runs or is cancelled, exactly once, and its arg is dropped exactly once;
// each refused call gets SHUTDOWN or INVALID_HANDLE and its arg dropped once too. The
// chaos preset and TETHER_NO_MEMBARRIER=1 runs make the rare interleavings common.
#include <gtest/gtest.h>

#include <thread>

#include "actors_support.h"

using namespace at;

namespace {

constexpr size_t kProducers = 6;  // more than a lane's rings (4): two go to the mailbox

// Outcome: what one producer saw of its calls.
struct Outcome {
  size_t ok = 0;
  size_t refused = 0;
  size_t other = 0;  // any other status: a defect
};

// produce: fire-and-forget calls until told to stop or `limit` calls, counting outcomes.
Outcome produce(tether_actor a, size_t limit, const std::atomic<bool>& stop, Counter& runs, Counter& drops) {
  Outcome out;
  for (size_t i = 0; i < limit && !stop.load(std::memory_order_relaxed); ++i) {
    const tether_status st = call(a, nullptr, [&runs](tether_task*, void*) {
      runs.add();
      return static_cast<tether_status>(TETHER_OK);
    }, &drops, nullptr);
    if (st == TETHER_OK) {
      ++out.ok;
    } else if (st == TETHER_E_SHUTDOWN || st == TETHER_E_INVALID_HANDLE) {
      ++out.refused;
    } else {
      ++out.other;
    }
  }
  return out;
}

}  // namespace

// A stop CANCEL lands while six producers stream calls in bursts well past a ring block
// (511 entries): every accepted call ran or was cancelled, once.
TEST(InboxStress, StopCancelRacesDrainAcrossRingBlocks) {
  const size_t actors = scaled(40);
  const size_t per_producer = 3000;  // about six ring blocks each
  for (size_t k = 0; k < actors; ++k) {
    ActorState st;
    Counter runs, drops;
    std::atomic<bool> stop{false};
    const tether_actor_options o = actor_options("cancel-race");
    Actor a;
    ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));
    std::vector<Outcome> outcomes(kProducers);
    std::vector<std::thread> producers;
    Gate go;
    for (size_t i = 0; i < kProducers; ++i) {
      producers.emplace_back([&, i] {
        if (!go.wait_for(kLong)) return;
        outcomes[i] = produce(a.get(), per_producer, stop, runs, drops);
      });
    }
    go.set();
    // The stop falls at a different point each round: after a run of calls of its own.
    Counter own_runs, own_drops;
    size_t own_ok = 0;
    for (size_t j = 0; j < (k * 97) % 2000; ++j) {
      own_ok += call(a.get(), nullptr, [&own_runs](tether_task*, void*) {
        own_runs.add();
        return static_cast<tether_status>(TETHER_OK);
      }, &own_drops, nullptr) == TETHER_OK;
    }
    EXPECT_EQ(TETHER_OK, tether_actor_stop(a.get(), TETHER_STOP_CANCEL, kLongNs));
    stop.store(true);
    for (std::thread& p : producers) p.join();
    size_t ok = 0, refused = 0, other = 0;
    for (const Outcome& out : outcomes) {
      ok += out.ok;
      refused += out.refused;
      other += out.other;
    }
    EXPECT_EQ(0u, other);
    const tether_actor_stats s = actor_stats(a.get());
    EXPECT_EQ(static_cast<int>(ok + refused), drops.get()) << "round " << k;
    EXPECT_EQ(static_cast<int>(own_ok), own_drops.get()) << "round " << k;
    // Each accepted call ran or was cancelled, never both, never neither.
    EXPECT_EQ(ok + own_ok, static_cast<size_t>(runs.get() + own_runs.get()) + s.cancelled) << "round " << k << " failed " << s.failed << " completed " << s.completed << " runs " << runs.get() + own_runs.get();
    EXPECT_EQ(0u, s.queued);
    int32_t state = 0;
    EXPECT_EQ(TETHER_OK, tether_actor_state(a.get(), &state, nullptr));
    EXPECT_EQ(TETHER_ACTOR_STOPPED, state);
    EXPECT_EQ(TETHER_OK, a.release());
    // The destructor ran once if the constructor did (a CANCEL may cancel it too).
    EXPECT_GE(1, st.dtors.get());
    if (::testing::Test::HasFailure()) return;
  }
}

// Producers keep calling while the handle is released under them (they have it cached on
// the fast path): each call is OK or INVALID_HANDLE/SHUTDOWN, and the OK ones all ran
// (a release drains) with every arg dropped once.
TEST(InboxStress, HandleReleasedWhileCachedOnProducers) {
  const size_t rounds = scaled(20);
  for (size_t k = 0; k < rounds; ++k) {
    ActorState st;
    Counter runs, drops;
    std::atomic<bool> stop{false};
    const tether_actor_options o = actor_options("release-race");
    Actor a;
    ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));
    const tether_actor handle = a.get();
    std::vector<Outcome> outcomes(kProducers);
    std::vector<std::thread> producers;
    Counter started;
    for (size_t i = 0; i < kProducers; ++i) {
      producers.emplace_back([&, i] {
        outcomes[i] = produce(handle, 200, stop, runs, drops);  // caches the actor
        started.add();
        const Outcome first = outcomes[i];
        outcomes[i] = produce(handle, 20000, stop, runs, drops);
        outcomes[i].ok += first.ok;
        outcomes[i].refused += first.refused;
        outcomes[i].other += first.other;
      });
    }
    ASSERT_TRUE(wait_until([&] { return started.get() == static_cast<int>(kProducers); }, std::chrono::seconds(30)));
    EXPECT_EQ(TETHER_OK, a.release());  // DRAIN: every accepted call runs first
    // Every producer must now see the release: let them try a few more calls each.
    for (size_t i = 0; i < 1000 && drops.get() < runs.get(); ++i) std::this_thread::yield();
    stop.store(true);
    for (std::thread& p : producers) p.join();
    size_t ok = 0, refused = 0, other = 0;
    for (const Outcome& out : outcomes) {
      ok += out.ok;
      refused += out.refused;
      other += out.other;
    }
    EXPECT_EQ(0u, other);
    EXPECT_EQ(static_cast<int>(ok), runs.get()) << "round " << k;
    EXPECT_EQ(static_cast<int>(ok + refused), drops.get()) << "round " << k;
    EXPECT_EQ(1, st.dtors.get());
    if (::testing::Test::HasFailure()) return;
  }
}

namespace {

// CallsAtExit: a thread-local whose destructor calls an actor (after the thread's fast
// path cache may already be gone).
struct CallsAtExit {
  tether_actor actor{0};
  Counter* runs = nullptr;
  tether_status* status = nullptr;
  ~CallsAtExit() {
    if (actor.id == 0) return;
    *status = call(actor, nullptr, [r = runs](tether_task*, void*) {
      r->add();
      return static_cast<tether_status>(TETHER_OK);
    }, nullptr, nullptr);
  }
};
thread_local CallsAtExit t_calls_at_exit;

}  // namespace

// Calls made from thread-local destructors, before and after the fast path's own
// thread-local cache is destroyed, are queued and run.
TEST(InboxStress, CallsFromThreadLocalDestructors) {
  ActorState st;
  Counter runs;
  const tether_actor_options o = actor_options("tls-exit");
  Actor a;
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));
  const size_t threads = scaled(50);
  std::vector<tether_status> statuses(threads, TETHER_E_INTERNAL);
  for (size_t i = 0; i < threads; ++i) {
    std::thread th([&, i] {
      // A call first, so the thread caches the actor; then the destructor's call.
      (void)call(a.get(), nullptr, [&](tether_task*, void*) {
        runs.add();
        return static_cast<tether_status>(TETHER_OK);
      }, nullptr, nullptr);
      t_calls_at_exit.actor = a.get();
      t_calls_at_exit.runs = &runs;
      t_calls_at_exit.status = &statuses[i];
    });
    th.join();
  }
  for (tether_status s : statuses) EXPECT_EQ(TETHER_OK, s);
  EXPECT_EQ(TETHER_OK, a.release());
  EXPECT_EQ(static_cast<int>(2 * threads), runs.get());
}
