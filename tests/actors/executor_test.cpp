// Pinned executors (contract section 6): FIFO on one thread for life, thread-local state,
// fire-and-forget errors kept, bounded queues, stats, shared use by actors, CPU affinity.
#include <gtest/gtest.h>
#include <sched.h>

#include <future>

#include "actors_support.h"

using namespace at;

namespace {

thread_local int tl_exec = 0;

// TlsProbe: a thread_local with a destructor, to see an executor's thread-local
// destructors run when its thread ends.
Counter g_tls_destroyed;
struct TlsProbe {
  bool armed = false;
  ~TlsProbe() {
    if (armed) g_tls_destroyed.add();
  }
};
thread_local TlsProbe tl_probe;

tether_executor_options exec_options(const char *name) {
  tether_executor_options o;
  tether_executor_options_init(&o);
  o.name = name;
  return o;
}

}  // namespace

// Everything submitted runs on the executor's one thread, in submission order.
TEST(Executor, RunsTasksInSubmissionOrderOnOneThread) {
  const size_t n = scaled(10000);
  std::vector<uint32_t> seen;  // touched only by tasks until the last future is waited on
  seen.reserve(n);
  uint64_t first_tid = 0;
  size_t other_threads = 0;
  Counter drops;
  Executor e;
  const tether_executor_options o = exec_options("fifo");
  ASSERT_EQ(TETHER_OK, tether_executor_create(&o, e.out()));
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(TETHER_OK, submit(e.get(), [&, i](tether_task *) {
                if (first_tid == 0) first_tid = tid();
                other_threads += tid() != first_tid;
                seen.push_back(static_cast<uint32_t>(i));
                return TETHER_OK;
              }, &drops, nullptr));
  }
  Future last;
  ASSERT_EQ(TETHER_OK, submit(e.get(), [](tether_task *) { return TETHER_OK; }, nullptr, last.out()));
  ASSERT_EQ(TETHER_SUCCEEDED, last.outcome());
  ASSERT_EQ(n, seen.size());
  size_t out_of_order = 0;
  for (size_t i = 0; i < n; ++i) out_of_order += seen[i] != i;
  EXPECT_EQ(0u, out_of_order);
  EXPECT_EQ(0u, other_threads);
  EXPECT_NE(tid(), first_tid);
  EXPECT_EQ(first_tid, executor_stats(e.get()).os_thread_id);
  EXPECT_EQ(static_cast<int>(n), drops.get());
  const tether_executor_stats s = executor_stats(e.get());
  EXPECT_EQ(n + 1, s.completed);
  EXPECT_EQ(0u, s.queued);
  EXPECT_EQ(TETHER_OK, e.release());
}

// Thread-local state persists between tasks; the thread-local destructors run when the
// executor's thread ends.
TEST(Executor, ThreadLocalStatePersistsAndIsDestroyedAtTheEnd) {
  const int destroyed_before = g_tls_destroyed.get();
  Executor e;
  const tether_executor_options o = exec_options("tls");
  ASSERT_EQ(TETHER_OK, tether_executor_create(&o, e.out()));
  int before = -1;
  std::vector<int> later;
  Future f0;
  ASSERT_EQ(TETHER_OK, submit(e.get(), [&](tether_task *) {
              before = tl_exec;
              tl_exec = 99;
              tl_probe.armed = true;
              return TETHER_OK;
            }, nullptr, f0.out()));
  ASSERT_EQ(TETHER_SUCCEEDED, f0.outcome());
  for (int i = 0; i < 5; ++i) {
    Future f;
    ASSERT_EQ(TETHER_OK, submit(e.get(), [&](tether_task *) {
                later.push_back(tl_exec++);
                return TETHER_OK;
              }, nullptr, f.out()));
    ASSERT_EQ(TETHER_SUCCEEDED, f.outcome());
  }
  EXPECT_EQ(0, before);
  EXPECT_EQ((std::vector<int>{99, 100, 101, 102, 103}), later);
  EXPECT_EQ(destroyed_before, g_tls_destroyed.get());
  EXPECT_EQ(TETHER_OK, e.release());  // runs what is queued, then joins the thread
  EXPECT_EQ(destroyed_before + 1, g_tls_destroyed.get()) << "release joined the thread: its destructors ran";
}

// Fire-and-forget failures are counted in stats.failed and the first 64 kept in order;
// past 64 they are counted in errors_dropped.
TEST(Executor, FireAndForgetFailuresAreCountedAndKept) {
  Executor e;
  const tether_executor_options o = exec_options("ff-errors");
  ASSERT_EQ(TETHER_OK, tether_executor_create(&o, e.out()));
  Counter drops;
  for (int i = 0; i < 70; ++i) {
    ASSERT_EQ(TETHER_OK, submit(e.get(), [i](tether_task *t) {
                return tether_task_fail(t, i, ("failure " + std::to_string(i)).c_str());
              }, &drops, nullptr));
  }
  ASSERT_EQ(TETHER_OK, submit(e.get(), [](tether_task *) { return TETHER_OK; }, &drops, nullptr));
  Future last;
  ASSERT_EQ(TETHER_OK, submit(e.get(), [](tether_task *) { return TETHER_OK; }, nullptr, last.out()));
  ASSERT_EQ(TETHER_SUCCEEDED, last.outcome());
  const tether_executor_stats s = executor_stats(e.get());
  EXPECT_EQ(70u, s.failed);
  EXPECT_EQ(2u, s.completed);
  EXPECT_EQ(6u, s.errors_dropped);
  EXPECT_EQ(71, drops.get());
  for (size_t i = 0; i < 64; ++i) {
    Err err;
    ASSERT_EQ(TETHER_OK, tether_executor_error(e.get(), i, err.out())) << i;
    EXPECT_EQ(TETHER_E_TASK_FAILED, err.code());
    EXPECT_EQ(static_cast<int64_t>(i), err.user_code());
    EXPECT_EQ("failure " + std::to_string(i), err.message());
    EXPECT_EQ("ff-errors", err.thread_name());
  }
  Err past;
  EXPECT_EQ(TETHER_E_INVALID_ARGUMENT, tether_executor_error(e.get(), 64, past.out()));
  EXPECT_TRUE(past.null());
  EXPECT_EQ(TETHER_E_INVALID_ARGUMENT, tether_executor_error(e.get(), 0, nullptr));
  EXPECT_EQ(TETHER_OK, e.release());
}

// A bounded queue: submit fails at once with TETHER_E_QUEUE_FULL, submit_timeout waits up
// to its timeout (TETHER_E_TIMEOUT), args of refused tasks are dropped once before the
// call returns, and a waiting submit_timeout gets in once room is made.
TEST(Executor, BoundedQueue) {
  Gate gate, entered;
  Counter drops, runs;
  Executor e;
  e.open_on_exit({&gate});
  tether_executor_options o = exec_options("bounded");
  o.queue_capacity = 2;
  ASSERT_EQ(TETHER_OK, tether_executor_create(&o, e.out()));
  Future blocker;
  ASSERT_EQ(TETHER_OK, submit(e.get(), [&](tether_task *) -> tether_status {
              entered.set();
              return gate.wait_for(kLong) ? TETHER_OK : 1;
            }, nullptr, blocker.out()));
  ASSERT_TRUE(entered.wait_for(kLong));
  auto task = [&](tether_task *) {
    runs.add();
    return TETHER_OK;
  };
  Future q1, q2;
  ASSERT_EQ(TETHER_OK, submit(e.get(), task, &drops, q1.out()));
  ASSERT_EQ(TETHER_OK, submit(e.get(), task, &drops, nullptr));
  EXPECT_EQ(2u, executor_stats(e.get()).queued);

  Counter refused;
  Future full;
  EXPECT_EQ(TETHER_E_QUEUE_FULL, submit(e.get(), task, &refused, full.out()));
  EXPECT_TRUE(full.null());
  EXPECT_EQ(1, refused.get());
  tether_status rc = -1;
  const auto took = elapsed([&] { rc = submit_timeout(e.get(), task, &refused, nullptr, ns_from_ms(50)); });
  EXPECT_EQ(TETHER_E_TIMEOUT, rc);
  EXPECT_GE(took, 50ms);
  EXPECT_EQ(2, refused.get());
  EXPECT_EQ(TETHER_E_QUEUE_FULL, submit_timeout(e.get(), task, &refused, nullptr, 0));
  EXPECT_EQ(3, refused.get());
  const tether_executor_stats s = executor_stats(e.get());
  EXPECT_EQ(2u, s.queued) << "the queue never grows past its capacity";
  EXPECT_EQ(3u, s.rejected);

  auto producer = std::async(std::launch::async, [&] {
    Future f;
    const tether_status st = submit_timeout(e.get(), task, &drops, f.out(), kLongNs);
    const int32_t outcome = st == TETHER_OK ? f.outcome() : -1;
    return std::make_pair(st, outcome);
  });
  gate.set();
  ASSERT_EQ(std::future_status::ready, producer.wait_for(kLong));
  const auto [st, outcome] = producer.get();
  EXPECT_EQ(TETHER_OK, st);
  EXPECT_EQ(TETHER_SUCCEEDED, outcome);
  EXPECT_EQ(TETHER_SUCCEEDED, blocker.outcome());
  EXPECT_EQ(TETHER_SUCCEEDED, q1.outcome());
  EXPECT_EQ(TETHER_OK, e.release());
  EXPECT_EQ(3, runs.get());
  EXPECT_EQ(3, drops.get());
  EXPECT_EQ(3, refused.get());
}

// Stats: a struct_size this library does not know (too small, too large) is
// TETHER_E_INVALID_ARGUMENT, for executors and actors alike; NULL out too.
TEST(Executor, StatsStructSizeIsChecked) {
  Executor e;
  ASSERT_EQ(TETHER_OK, tether_executor_create(nullptr, e.out()));
  ActorState st;
  const tether_actor_options ao = actor_options("stats-actor");
  Actor a;
  ASSERT_EQ(TETHER_OK, create_actor(&ao, ctor_with_state(&st), nullptr, a.out()));
  for (uint32_t size : {0u, 4u, static_cast<uint32_t>(sizeof(tether_executor_stats) - 1),
                        static_cast<uint32_t>(sizeof(tether_executor_stats) + 8)}) {
    SCOPED_TRACE(size);
    tether_executor_stats s{};
    s.struct_size = size;
    EXPECT_EQ(TETHER_E_INVALID_ARGUMENT, tether_executor_get_stats(e.get(), &s));
    tether_actor_stats as{};
    as.struct_size = size;
    EXPECT_EQ(TETHER_E_INVALID_ARGUMENT, tether_actor_get_stats(a.get(), &as));
  }
  EXPECT_EQ(TETHER_E_INVALID_ARGUMENT, tether_executor_get_stats(e.get(), nullptr));
  EXPECT_EQ(TETHER_E_INVALID_ARGUMENT, tether_actor_get_stats(a.get(), nullptr));
  tether_executor_stats s{};
  s.struct_size = sizeof s;
  EXPECT_EQ(TETHER_OK, tether_executor_get_stats(e.get(), &s));
  EXPECT_EQ(sizeof s, s.struct_size);
  tether_actor_stats as{};
  as.struct_size = sizeof as;
  EXPECT_EQ(TETHER_OK, tether_actor_get_stats(a.get(), &as));
  EXPECT_EQ(TETHER_OK, a.release());
  EXPECT_EQ(TETHER_OK, e.release());
}

// Releasing the executor's handle while an actor lives on it: the handle ends at once,
// the actor still works on the same thread, and the thread ends after the actor.
TEST(Executor, ReleasingTheHandleKeepsTheThreadForItsActors) {
  const int destroyed_before = g_tls_destroyed.get();
  Executor owner;
  const tether_executor_options o = exec_options("kept-alive");
  ASSERT_EQ(TETHER_OK, tether_executor_create(&o, owner.out()));
  const tether_executor e = owner.get();
  uint64_t exec_tid = 0;
  {
    Future f;
    ASSERT_EQ(TETHER_OK, submit(e, [&](tether_task *) {
                exec_tid = tid();
                tl_probe.armed = true;
                return TETHER_OK;
              }, nullptr, f.out()));
    ASSERT_EQ(TETHER_SUCCEEDED, f.outcome());
  }
  ActorState st;
  tether_actor_options ao = actor_options("on-kept");
  ao.executor = e;
  Actor a;
  ASSERT_EQ(TETHER_OK, create_actor(&ao, ctor_with_state(&st), nullptr, a.out()));
  const auto took = elapsed([&] { EXPECT_EQ(TETHER_OK, owner.release()); });
  EXPECT_LT(took, kPrompt);
  EXPECT_EQ(TETHER_E_INVALID_HANDLE, submit(e, [](tether_task *) { return TETHER_OK; }, nullptr, nullptr));

  for (int i = 0; i < 3; ++i) {
    uint64_t method_tid = 0;
    Future f;
    ASSERT_EQ(TETHER_OK, call(a.get(), nullptr, [&](tether_task *, void *) {
                method_tid = tid();
                return TETHER_OK;
              }, nullptr, f.out()));
    ASSERT_EQ(TETHER_SUCCEEDED, f.outcome());
    EXPECT_EQ(exec_tid, method_tid);
  }
  EXPECT_EQ(destroyed_before, g_tls_destroyed.get()) << "the thread must live while its actor does";
  EXPECT_EQ(exec_tid, actor_stats(a.get()).os_thread_id);
  EXPECT_EQ(TETHER_OK, a.release());
  EXPECT_EQ(1, st.dtors.get());
  EXPECT_EQ(exec_tid, st.dtor_tid.load());
  EXPECT_TRUE(g_tls_destroyed.wait_for(destroyed_before + 1, kLong)) << "the thread ends after its last actor";
  EXPECT_TRUE(wait_until([] { return threads_named("kept-alive") == 0; }, kLong));
}

// cpu = 0 pins the thread to CPU 0; a CPU the process may not use is
// TETHER_E_INVALID_ARGUMENT, as is cpu < -1.
TEST(Executor, CpuAffinity) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(0, sched_getaffinity(0, sizeof allowed, &allowed));
  {
    tether_executor_options o = exec_options("cpu-bad");
    tether_executor e{1};
    o.cpu = 100000;
    EXPECT_EQ(TETHER_E_INVALID_ARGUMENT, tether_executor_create(&o, &e));
    EXPECT_EQ(0u, e.id);
    o.cpu = -2;
    EXPECT_EQ(TETHER_E_INVALID_ARGUMENT, tether_executor_create(&o, &e));
    EXPECT_EQ(0u, threads_named("cpu-bad"));
  }
  if (!CPU_ISSET(0, &allowed)) GTEST_SKIP() << "this process may not run on CPU 0";
  Executor e;
  tether_executor_options o = exec_options("cpu0");
  o.cpu = 0;
  ASSERT_EQ(TETHER_OK, tether_executor_create(&o, e.out()));
  std::vector<int> cpus;
  for (int i = 0; i < 20; ++i) {
    Future f;
    ASSERT_EQ(TETHER_OK, submit(e.get(), [&](tether_task *) {
                cpus.push_back(sched_getcpu());
                return TETHER_OK;
              }, nullptr, f.out()));
    ASSERT_EQ(TETHER_SUCCEEDED, f.outcome());
  }
  for (int c : cpus) EXPECT_EQ(0, c);
  EXPECT_EQ(TETHER_OK, e.release());
}

// release runs what is queued, then joins the thread: every task queued before the release
// has run when it returns.
TEST(Executor, ReleaseRunsWhatIsQueued) {
  const int n = static_cast<int>(scaled(2000));
  Gate gate, entered;
  Counter runs, drops;
  Executor e;
  e.open_on_exit({&gate});
  const tether_executor_options o = exec_options("release-runs");
  ASSERT_EQ(TETHER_OK, tether_executor_create(&o, e.out()));
  ASSERT_EQ(TETHER_OK, submit(e.get(), [&](tether_task *) -> tether_status {
              entered.set();
              return gate.wait_for(kLong) ? TETHER_OK : 1;
            }, nullptr, nullptr));
  ASSERT_TRUE(entered.wait_for(kLong));
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(TETHER_OK, submit(e.get(), [&](tether_task *) {
                runs.add();
                return TETHER_OK;
              }, &drops, nullptr));
  }
  EXPECT_EQ(0, runs.get());
  gate.set();
  EXPECT_EQ(TETHER_OK, e.release());
  EXPECT_EQ(n, runs.get()) << "release returned before the queued tasks ran";
  EXPECT_EQ(n, drops.get());
  EXPECT_TRUE(threads_gone("release-runs")) << "release joined the thread";
}
