// Concurrency groups: a port of Ray's python/ray/tests/test_concurrency_group.py to the C
// API (issue 3, acceptance 1), and of what Ray's threaded actors get wrong
// (ray-project/ray#46336, #51016, #54639): thread-local state set in a constructor must be
// there in every method, and a blocked group must never stall another group or the
// control plane.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "actors_support.h"

using namespace at;

namespace {

// tl_value: per OS thread. Every actor here has threads of its own, so a thread starts
// with 0 and only this actor's code writes it.
thread_local int tl_value = 0;

tether_status record_tid(std::atomic<uint64_t> *slot) {
  slot->store(tid());
  return TETHER_OK;
}

}  // namespace

// Ray: test_basic — methods of different groups run on different threads, and the
// default group on a thread of its own (the one that ran the constructor).
TEST(ConcurrencyGroup, GroupsRunOnSeparateThreads) {
  const tether_group_spec groups[] = {{"io", 1}, {"compute", 1}};
  const tether_actor_options o = actor_options("cg-sep", groups, 2);
  Counter ctor_drops;
  ActorState st;
  std::atomic<uint64_t> ctor_tid{0}, def_tid{0}, io_tid{0}, compute_tid{0};
  std::string def_name, io_name, compute_name;
  Actor a;
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st, &ctor_tid), &ctor_drops, a.out()));

  Future fd, fi, fc;
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [&](tether_task *t, void *) {
              def_name = tether_task_thread_name(t);
              return record_tid(&def_tid);
            }, nullptr, fd.out()));
  ASSERT_EQ(TETHER_OK, call(a.get(), "io", [&](tether_task *t, void *) {
              io_name = tether_task_thread_name(t);
              return record_tid(&io_tid);
            }, nullptr, fi.out()));
  ASSERT_EQ(TETHER_OK, call(a.get(), "compute", [&](tether_task *t, void *) {
              compute_name = tether_task_thread_name(t);
              return record_tid(&compute_tid);
            }, nullptr, fc.out()));
  ASSERT_EQ(TETHER_SUCCEEDED, fd.outcome());
  ASSERT_EQ(TETHER_SUCCEEDED, fi.outcome());
  ASSERT_EQ(TETHER_SUCCEEDED, fc.outcome());

  const std::set<uint64_t> tids{def_tid.load(), io_tid.load(), compute_tid.load(), tid()};
  EXPECT_EQ(4u, tids.size()) << "default, io, compute and the test thread must be four OS threads";
  EXPECT_EQ(ctor_tid.load(), def_tid.load()) << "the default group is the constructor's thread";
  EXPECT_EQ(def_tid.load(), actor_stats(a.get()).os_thread_id);
  // "names its threads ("name", "name/io")"
  EXPECT_EQ("cg-sep", def_name);
  EXPECT_EQ("cg-sep/io", io_name);
  EXPECT_EQ("cg-sep/compute", compute_name);

  EXPECT_EQ(TETHER_OK, a.release());
  EXPECT_EQ(1, st.dtors.get());
  EXPECT_EQ(def_tid.load(), st.dtor_tid.load());
  EXPECT_EQ(1, ctor_drops.get());
}

// Ray: a default-group method blocked forever does not stop another group from answering.
TEST(ConcurrencyGroup, BlockedDefaultGroupDoesNotBlockAnotherGroup) {
  const tether_group_spec groups[] = {{"io", 1}};
  const tether_actor_options o = actor_options("cg-blockdef", groups, 1);
  Gate unblock, entered;
  ActorState st;
  Counter io_runs, queued_runs;
  Actor a;
  a.open_on_exit({&unblock});
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));

  Future blocked;
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [&](tether_task *, void *) -> tether_status {
              entered.set();
              return unblock.wait_for(kLong) ? TETHER_OK : 1;
            }, nullptr, blocked.out()));
  ASSERT_TRUE(entered.wait_for(kLong));
  // A default-group call queued behind the blocked one.
  Future behind;
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [&](tether_task *, void *) {
              queued_runs.add();
              return TETHER_OK;
            }, nullptr, behind.out()));

  const int n = 5;
  for (int i = 0; i < n; ++i) {
    Future f;
    const auto took = elapsed([&] {
      ASSERT_EQ(TETHER_OK, call(a.get(), "io", [&](tether_task *, void *) {
                  io_runs.add();
                  return TETHER_OK;
                }, nullptr, f.out()));
      ASSERT_EQ(TETHER_SUCCEEDED, f.outcome());
    });
    EXPECT_LT(took, kPrompt) << "the io group waited on the blocked default thread";
  }
  EXPECT_EQ(n, io_runs.get());
  EXPECT_EQ(TETHER_RUNNING, blocked.state());
  EXPECT_EQ(TETHER_PENDING, behind.state()) << "ordering is per group: it is behind the blocked call";
  EXPECT_EQ(0, queued_runs.get());

  unblock.set();
  EXPECT_EQ(TETHER_SUCCEEDED, blocked.outcome());
  EXPECT_EQ(TETHER_SUCCEEDED, behind.outcome());
  EXPECT_EQ(1, queued_runs.get());
  EXPECT_EQ(TETHER_OK, a.release());
  EXPECT_EQ(1, st.dtors.get());
}

// Ray: a blocked named group does not stop a third group (nor the default one).
TEST(ConcurrencyGroup, BlockedGroupDoesNotBlockAThirdGroup) {
  const tether_group_spec groups[] = {{"io", 1}, {"compute", 1}};
  const tether_actor_options o = actor_options("cg-block3", groups, 2);
  Gate unblock, entered;
  ActorState st;
  Actor a;
  a.open_on_exit({&unblock});
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));

  Future blocked;
  ASSERT_EQ(TETHER_OK, call(a.get(), "io", [&](tether_task *, void *) -> tether_status {
              entered.set();
              return unblock.wait_for(kLong) ? TETHER_OK : 1;
            }, nullptr, blocked.out()));
  ASSERT_TRUE(entered.wait_for(kLong));
  Future io_behind;
  ASSERT_EQ(TETHER_OK, call(a.get(), "io", [](tether_task *, void *) { return TETHER_OK; }, nullptr, io_behind.out()));

  for (const char *group : {"compute", static_cast<const char *>(nullptr), "compute"}) {
    Future f;
    const auto took = elapsed([&] {
      ASSERT_EQ(TETHER_OK, call(a.get(), group, [](tether_task *, void *) { return TETHER_OK; }, nullptr, f.out()));
      ASSERT_EQ(TETHER_SUCCEEDED, f.outcome());
    });
    EXPECT_LT(took, kPrompt) << (group ? group : "default") << " waited on the blocked io group";
  }
  EXPECT_EQ(TETHER_RUNNING, blocked.state());
  EXPECT_EQ(TETHER_PENDING, io_behind.state());

  unblock.set();
  EXPECT_EQ(TETHER_SUCCEEDED, blocked.outcome());
  EXPECT_EQ(TETHER_SUCCEEDED, io_behind.outcome());
  EXPECT_EQ(TETHER_OK, a.release());
  EXPECT_EQ(1, st.dtors.get());
}

// Ray: the "system" concurrency group — control calls answer while EVERY execution thread
// of the actor is blocked in user code: state, stats, calls to every group (they queue at
// once) and stop(CANCEL) with a short timeout, which cancels the queued calls at once.
TEST(ConcurrencyGroup, ControlPlaneAnswersWhileEveryThreadIsBlocked) {
  const tether_group_spec groups[] = {{"io", 2}, {"compute", 1}};
  const tether_actor_options o = actor_options("cg-system", groups, 2);
  Gate unblock;
  Counter entered, saw_stop, queued_drops, queued_runs;
  ActorState st;
  std::atomic<uint64_t> ctor_tid{0};
  Actor a;
  a.open_on_exit({&unblock});
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st, &ctor_tid), nullptr, a.out()));

  // Block all four execution threads: default, io (both threads), compute.
  auto blocker = [&](tether_task *t, void *) -> tether_status {
    entered.add();
    const bool opened = unblock.wait_for(kLong);
    if (tether_task_stop_requested(t)) saw_stop.add();
    return opened ? TETHER_OK : 1;
  };
  std::vector<Future> blocked(4);
  const char *blocked_groups[] = {nullptr, "io", "io", "compute"};
  for (size_t i = 0; i < 4; ++i) {
    ASSERT_EQ(TETHER_OK, call(a.get(), blocked_groups[i], blocker, nullptr, blocked[i].out()));
  }
  ASSERT_TRUE(entered.wait_for(4, kLong)) << "all four execution threads should be blocked";

  const auto took = elapsed([&] {
    int32_t s = -1;
    Err cause;
    EXPECT_EQ(TETHER_OK, tether_actor_state(a.get(), &s, cause.out()));
    EXPECT_EQ(TETHER_ACTOR_ALIVE, s);
    EXPECT_TRUE(cause.null());

    tether_actor_stats stats{};
    stats.struct_size = sizeof stats;
    EXPECT_EQ(TETHER_OK, tether_actor_get_stats(a.get(), &stats));
    EXPECT_EQ(ctor_tid.load(), stats.os_thread_id);
    EXPECT_EQ(0u, stats.queued);
  });
  EXPECT_LT(took, kPrompt) << "state/stats waited on a blocked execution thread";

  // Calls to every group are accepted at once and stay queued.
  std::vector<Future> queued(3);
  const char *queued_groups[] = {nullptr, "io", "compute"};
  const auto took_calls = elapsed([&] {
    for (size_t i = 0; i < 3; ++i) {
      ASSERT_EQ(TETHER_OK, call(a.get(), queued_groups[i], [&](tether_task *, void *) {
                  queued_runs.add();
                  return TETHER_OK;
                }, &queued_drops, queued[i].out()));
    }
  });
  EXPECT_LT(took_calls, kPrompt);
  for (Future &f : queued) EXPECT_EQ(TETHER_PENDING, f.state());
  EXPECT_EQ(3u, actor_stats(a.get()).queued);

  // stop(CANCEL) with a short timeout: cancels the queued calls before it returns, asks the
  // running ones to stop, and times out (they are blocked in user code).
  tether_status stop_rc = TETHER_OK;
  const auto took_stop = elapsed([&] { stop_rc = tether_actor_stop(a.get(), TETHER_STOP_CANCEL, ns_from_ms(50)); });
  EXPECT_EQ(TETHER_E_TIMEOUT, stop_rc);
  EXPECT_LT(took_stop, kPrompt);
  for (Future &f : queued) {
    EXPECT_EQ(TETHER_CANCELLED, f.state());
    EXPECT_EQ(TETHER_E_CANCELLED, f.error().code());
  }
  EXPECT_EQ(3, queued_drops.get()) << "every cancelled call's arg is dropped before stop returns";
  EXPECT_EQ(TETHER_ACTOR_STOPPED, a.state());
  EXPECT_EQ(0, st.dtors.get()) << "the destructor waits for the running methods";

  Counter late_drops;
  Future late;
  EXPECT_EQ(TETHER_E_SHUTDOWN, call(a.get(), "io", [](tether_task *, void *) { return TETHER_OK; }, &late_drops, late.out()));
  EXPECT_TRUE(late.null());
  EXPECT_EQ(1, late_drops.get());

  unblock.set();
  for (Future &f : blocked) {
    EXPECT_EQ(TETHER_CANCELLED, f.outcome()) << "a method asked to stop that returns OK ends CANCELLED";
  }
  EXPECT_EQ(4, saw_stop.get()) << "every running method saw stop_requested";
  EXPECT_EQ(TETHER_OK, tether_actor_stop(a.get(), TETHER_STOP_CANCEL, kLongNs));
  EXPECT_EQ(1, st.dtors.get());
  EXPECT_EQ(ctor_tid.load(), st.dtor_tid.load());
  EXPECT_EQ(0, queued_runs.get());
  EXPECT_EQ(3, queued_drops.get());
  EXPECT_EQ(TETHER_OK, a.release());
}

// Ray #46336: thread-local state set by the constructor is visible in every default-group
// method (1 + 42 = 43), because they run on the same OS thread.
TEST(ConcurrencyGroup, ThreadLocalOnDefaultGroup) {
  ActorState st;
  const tether_actor_options o = actor_options("cg-tls-def");
  Actor a;
  ASSERT_EQ(TETHER_OK, create_actor(&o, [&](tether_task *, void **out) {
              tl_value = 42;
              *out = &st;
              return TETHER_OK;
            }, nullptr, a.out()));
  for (int i = 0; i < 3; ++i) {
    int seen = -1;
    Future f;
    ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [&](tether_task *, void *) {
                seen = 1 + tl_value;
                return TETHER_OK;
              }, nullptr, f.out()));
    ASSERT_EQ(TETHER_SUCCEEDED, f.outcome());
    EXPECT_EQ(43, seen);
  }
  EXPECT_EQ(TETHER_OK, a.release());
}

// Thread-local data on a named group: set by one group method, read by a later one; the
// default thread's value (from the constructor) is not the group's.
TEST(ConcurrencyGroup, ThreadLocalOnNamedGroup) {
  const tether_group_spec groups[] = {{"io", 1}};
  const tether_actor_options o = actor_options("cg-tls-io", groups, 1);
  ActorState st;
  Actor a;
  ASSERT_EQ(TETHER_OK, create_actor(&o, [&](tether_task *, void **out) {
              tl_value = 42;
              *out = &st;
              return TETHER_OK;
            }, nullptr, a.out()));
  int before = -1, after = -1, on_default = -1;
  Future set, get, def;
  ASSERT_EQ(TETHER_OK, call(a.get(), "io", [&](tether_task *, void *) {
              before = tl_value;
              tl_value = 7;
              return TETHER_OK;
            }, nullptr, set.out()));
  ASSERT_EQ(TETHER_SUCCEEDED, set.outcome());
  ASSERT_EQ(TETHER_OK, call(a.get(), "io", [&](tether_task *, void *) {
              after = tl_value;
              return TETHER_OK;
            }, nullptr, get.out()));
  ASSERT_EQ(TETHER_SUCCEEDED, get.outcome());
  ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [&](tether_task *, void *) {
              on_default = tl_value;
              return TETHER_OK;
            }, nullptr, def.out()));
  ASSERT_EQ(TETHER_SUCCEEDED, def.outcome());
  EXPECT_EQ(0, before) << "the io thread is not the constructor's thread";
  EXPECT_EQ(7, after);
  EXPECT_EQ(42, on_default);
  EXPECT_EQ(TETHER_OK, a.release());
}

// Thread-local data is kept separately per group: two groups, two values, and the
// default thread's own.
TEST(ConcurrencyGroup, ThreadLocalKeptSeparatelyPerGroup) {
  const tether_group_spec groups[] = {{"a", 1}, {"b", 1}};
  const tether_actor_options o = actor_options("cg-tls-ab", groups, 2);
  ActorState st;
  Actor a;
  ASSERT_EQ(TETHER_OK, create_actor(&o, [&](tether_task *, void **out) {
              tl_value = 42;
              *out = &st;
              return TETHER_OK;
            }, nullptr, a.out()));
  auto set_to = [&](const char *group, int v) {
    Future f;
    ASSERT_EQ(TETHER_OK, call(a.get(), group, [v](tether_task *, void *) {
                tl_value = v;
                return TETHER_OK;
              }, nullptr, f.out()));
    ASSERT_EQ(TETHER_SUCCEEDED, f.outcome());
  };
  auto read = [&](const char *group) {
    int seen = -1;
    Future f;
    EXPECT_EQ(TETHER_OK, call(a.get(), group, [&](tether_task *, void *) {
                seen = tl_value;
                return TETHER_OK;
              }, nullptr, f.out()));
    EXPECT_EQ(TETHER_SUCCEEDED, f.outcome());
    return seen;
  };
  set_to("a", 1);
  set_to("b", 2);
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(1, read("a"));
    EXPECT_EQ(2, read("b"));
    EXPECT_EQ(42, read(nullptr));
  }
  EXPECT_EQ(TETHER_OK, a.release());
}

// A 5-thread group: 5 calls provably run at once (each waits, with a bound, on a barrier
// of 5 that only the 5 together can pass), on 5 distinct threads; and each thread keeps
// its own thread-local value across later calls.
TEST(ConcurrencyGroup, FiveThreadGroupRunsFiveCallsAtOnceAndKeepsPerThreadState) {
  constexpr int kThreads = 5;
  const tether_group_spec groups[] = {{"pool", kThreads}};
  const tether_actor_options o = actor_options("cg-pool", groups, 1);
  ActorState st;
  Actor a;
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));

  std::mutex mu;
  std::map<uint64_t, int> value_of_tid;  // guarded by mu: what round 0 set on each thread

  // Round 0 sets tl_value = i + 1 on whichever thread runs call i; later rounds read it.
  for (int round = 0; round < 3; ++round) {
    Counter barrier;
    std::vector<std::pair<uint64_t, int>> seen(kThreads);  // slot i written by call i only
    std::vector<Future> fs(kThreads);
    for (int i = 0; i < kThreads; ++i) {
      ASSERT_EQ(TETHER_OK, call(a.get(), "pool", [&, i, round](tether_task *, void *) -> tether_status {
                  if (round == 0) tl_value = i + 1;
                  seen[i] = {tid(), tl_value};
                  barrier.add();
                  // Only passes once all 5 calls are running at the same time.
                  return barrier.wait_for(kThreads, kLong) ? TETHER_OK : 1;
                }, nullptr, fs[i].out()));
    }
    for (int i = 0; i < kThreads; ++i) {
      ASSERT_EQ(TETHER_SUCCEEDED, fs[i].outcome()) << "round " << round << " call " << i
                                                   << ": the 5 calls did not run at once";
    }
    std::set<uint64_t> tids;
    for (auto &[t, v] : seen) tids.insert(t);
    EXPECT_EQ(static_cast<size_t>(kThreads), tids.size()) << "5 calls at once need 5 threads";
    std::lock_guard<std::mutex> lk(mu);
    for (auto &[t, v] : seen) {
      if (round == 0) {
        value_of_tid[t] = v;
      } else {
        ASSERT_EQ(1u, value_of_tid.count(t)) << "round " << round << " ran on a thread round 0 did not use";
        EXPECT_EQ(value_of_tid[t], v) << "thread " << t << " lost its thread-local value";
      }
    }
  }
  std::set<int> values;
  for (auto &[t, v] : value_of_tid) values.insert(v);
  EXPECT_EQ((std::set<int>{1, 2, 3, 4, 5}), values);
  EXPECT_EQ(TETHER_OK, a.release());
}

// A group of 0 threads, a duplicate, empty or NULL group name, and groups NULL with a
// count: TETHER_E_INVALID_ARGUMENT at create, the constructor's arg dropped once, no
// constructor run, no handle.
TEST(ConcurrencyGroup, BadGroupSpecsAreInvalidArgumentAtCreate) {
  const tether_group_spec zero[] = {{"io", 1}, {"compute", 0}};
  const tether_group_spec dup[] = {{"io", 1}, {"compute", 2}, {"io", 3}};
  const tether_group_spec empty[] = {{"", 1}};
  const tether_group_spec null_name[] = {{nullptr, 1}};
  struct Case {
    const char *what;
    const tether_group_spec *groups;
    size_t count;
  } cases[] = {
      {"a group of 0 threads", zero, 2},
      {"a duplicate group name", dup, 3},
      {"an empty group name", empty, 1},
      {"a NULL group name", null_name, 1},
      {"groups NULL with group_count 1", nullptr, 1},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.what);
    const tether_actor_options o = actor_options("cg-bad", c.groups, c.count);
    Counter drops, ctors;
    ActorState st;
    Actor a;
    EXPECT_EQ(TETHER_E_INVALID_ARGUMENT, create_actor(&o, [&](tether_task *, void **out) {
                ctors.add();
                *out = &st;
                return TETHER_OK;
              }, &drops, a.out()));
    EXPECT_EQ(0u, a.get().id);
    EXPECT_EQ(1, drops.get());
    EXPECT_EQ(0, ctors.get());
    EXPECT_EQ(0, st.dtors.get());
  }
}

// An unknown group at call time: TETHER_E_NOT_FOUND, the arg dropped once before the call
// returns, no future, the method never runs; the actor is unharmed.
TEST(ConcurrencyGroup, UnknownGroupIsNotFoundAtCall) {
  const tether_group_spec groups[] = {{"io", 1}};
  const tether_actor_options o = actor_options("cg-unknown", groups, 1);
  ActorState st;
  Counter runs;
  Actor a;
  ASSERT_EQ(TETHER_OK, create_actor(&o, ctor_with_state(&st), nullptr, a.out()));
  for (const char *group : {"compute", "IO", "", "io/"}) {
    SCOPED_TRACE(group);
    Counter drops;
    Future f;
    EXPECT_EQ(TETHER_E_NOT_FOUND, call(a.get(), group, [&](tether_task *, void *) {
                runs.add();
                return TETHER_OK;
              }, &drops, f.out()));
    EXPECT_TRUE(f.null());
    EXPECT_EQ(1, drops.get());
    Counter ff_drops;
    EXPECT_EQ(TETHER_E_NOT_FOUND, call(a.get(), group, [&](tether_task *, void *) {
                runs.add();
                return TETHER_OK;
              }, &ff_drops, nullptr));
    EXPECT_EQ(1, ff_drops.get());
  }
  Future ok;
  ASSERT_EQ(TETHER_OK, call(a.get(), "io", [](tether_task *, void *) { return TETHER_OK; }, nullptr, ok.out()));
  EXPECT_EQ(TETHER_SUCCEEDED, ok.outcome());
  EXPECT_EQ(0, runs.get());
  EXPECT_EQ(TETHER_ACTOR_ALIVE, a.state());
  EXPECT_EQ(TETHER_OK, a.release());
}
