// Fault sweeps: every allocation and every thread creation of each scenario fails in
// turn. Each point must give TETHER_E_NO_MEMORY / TETHER_E_THREAD_CREATE (from the call,
// or kept as the error of the object), leave the objects usable, drop every arg exactly
// once and leave no thread behind; ASan's leak check at exit sees every byte freed.
#include <gtest/gtest.h>
#include <tether/tether.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "alloc_fault.h"
#include "sweep_support.h"

namespace {

using sweep::drop_arg;
using sweep::new_arg;
using sweep::ok_or_fault;
using sweep::saw;

constexpr size_t kNested = 2;

// error_of: the first error's code and user code via the handle API (0 when none).
struct ErrorFacts {
  tether_status rc = TETHER_OK;
  int32_t code = 0;
  int64_t user_code = 0;
};
template <class Get>
ErrorFacts read_error(Get get) {
  ErrorFacts f;
  tether_error e{0};
  f.rc = get(&e);
  if (e.id != 0) {
    f.code = tether_error_code(e);
    f.user_code = tether_error_user_code(e);
    (void)tether_error_release(e);
  }
  return f;
}

void report(const char* name, const sweep::SweepCount& c) {
  std::printf("[sweep] %s: %llu points (%llu in the run without a fault), %llu reported the fault\n", name,
              static_cast<unsigned long long>(c.points), static_cast<unsigned long long>(c.counting_run),
              static_cast<unsigned long long>(c.fault_visible));
}

// ---- runner start with nested spawns and on_done -------------------------------------

tether_status leaf(tether_task*, void*) { return TETHER_OK; }

tether_status nested(tether_task* t, void*) {
  const tether_status rc = tether_task_spawn(t, "leaf", &leaf, new_arg(), &drop_arg);
  saw(rc);
  return rc;
}

tether_status target(tether_task* t, void*) {
  tether_status out = TETHER_OK;
  for (size_t i = 0; i < kNested; ++i) {
    const tether_status rc = tether_task_spawn(t, "nested", &nested, new_arg(), &drop_arg);
    saw(rc);
    if (rc != TETHER_OK) out = rc;
  }
  return out;
}

std::atomic<int> g_notified{0};
void notified(void*) { g_notified.fetch_add(1); }

struct RunnerScenario : sweep::Scenario {
  const char* name() const override { return "runner"; }
  tether_status start = -1, on_done = -1, join = -1, release = -1, retry = -1;
  int32_t state = -1;
  ErrorFacts error;
  void act() override {
    g_notified.store(0);
    tether_runner r{0};
    start = tether_runner_start(nullptr, &target, new_arg(), &drop_arg, &r);
    saw(start);
    if (start != TETHER_OK) {  // usable after a failed start: the next start works
      retry = tether_runner_start(nullptr, &leaf, new_arg(), &drop_arg, &r);
      if (retry == TETHER_OK) {
        (void)tether_runner_join_all(r, sweep::kWaitNs);
        (void)tether_runner_release(r);
      }
      return;
    }
    on_done = tether_runner_on_done(r, &notified, new_arg(), &drop_arg);
    saw(on_done);
    join = tether_runner_join_all(r, sweep::kWaitNs);
    (void)tether_runner_poll(r, &state);
    error = read_error([&](tether_error* e) { return tether_runner_error(r, e); });
    saw(error.rc);
    saw(error.code);
    saw(static_cast<tether_status>(error.user_code));
    release = tether_runner_release(r);
  }
  void check() override {
    EXPECT_TRUE(ok_or_fault(start)) << tether_status_name(start);
    if (start != TETHER_OK) {
      EXPECT_EQ(retry, TETHER_OK);
      return;
    }
    EXPECT_TRUE(ok_or_fault(on_done)) << tether_status_name(on_done);
    EXPECT_EQ(g_notified.load(), on_done == TETHER_OK ? 1 : 0);
    EXPECT_EQ(join, TETHER_OK);
    EXPECT_TRUE(ok_or_fault(error.rc));
    if (state == TETHER_FAILED && error.rc == TETHER_OK) {
      EXPECT_TRUE(sweep::fault_error(error.code, error.user_code))
          << "code " << error.code << " user code " << error.user_code;
    } else {
      EXPECT_TRUE(state == TETHER_SUCCEEDED || state == TETHER_FAILED) << state;
    }
    EXPECT_EQ(release, TETHER_OK);
  }
};

TEST(FaultSweep, RunnerAllocations) {
  RunnerScenario s;
  const auto c = sweep::sweep_allocations(s);
  report("runner allocations", c);
  EXPECT_GT(c.points, 10u);
}

TEST(FaultSweep, RunnerThreads) {
  RunnerScenario s;
  const auto c = sweep::sweep_threads(s);
  report("runner threads", c);
  EXPECT_GE(c.points, 1 + kNested + kNested);
}

// ---- executor create, calls with futures, on_done ------------------------------------

tether_status task_with_result(tether_task* t, void*) {
  const tether_status rc = tether_task_set_result(t, new_arg(), &drop_arg);
  saw(rc);
  return rc;
}
tether_status failing_task(tether_task*, void*) { return 7; }

struct ExecutorScenario : sweep::Scenario {
  const char* name() const override { return "executor"; }
  tether_status create = -1, submit = -1, wait = -1, take = -1, on_done = -1, ff = -1, failing = -1, again = -1;
  tether_status release = -1;
  int32_t failing_state = -1;
  void* result = nullptr;
  void act() override {
    g_notified.store(0);
    result = nullptr;
    tether_executor e{0};
    create = tether_executor_create(nullptr, &e);
    saw(create);
    if (create != TETHER_OK) return;
    tether_future f{0};
    submit = tether_executor_submit(e, &task_with_result, new_arg(), &drop_arg, &f);
    saw(submit);
    if (submit == TETHER_OK) {
      on_done = tether_future_on_done(f, &notified, new_arg(), &drop_arg);
      saw(on_done);
      wait = tether_future_wait(f, sweep::kWaitNs);
      take = tether_future_take_result(f, &result);
      if (take == TETHER_OK && result != nullptr) drop_arg(result);  // taken: the caller owns it now
      (void)tether_future_release(f);
    }
    ff = tether_executor_submit(e, &leaf, new_arg(), &drop_arg, nullptr);
    saw(ff);
    tether_future g{0};
    failing = tether_executor_submit(e, &failing_task, new_arg(), &drop_arg, &g);
    saw(failing);
    if (failing == TETHER_OK) {
      (void)tether_future_wait(g, sweep::kWaitNs);
      (void)tether_future_poll(g, &failing_state);
      (void)tether_future_release(g);
    }
    // Usable after whatever failed above: one more call works.
    tether_future h{0};
    again = tether_executor_submit(e, &leaf, new_arg(), &drop_arg, &h);
    if (again == TETHER_OK) {
      again = tether_future_wait(h, sweep::kWaitNs);
      (void)tether_future_release(h);
    }
    release = tether_executor_release(e);
  }
  void check() override {
    EXPECT_TRUE(ok_or_fault(create)) << tether_status_name(create);
    if (create != TETHER_OK) return;
    EXPECT_TRUE(ok_or_fault(submit)) << tether_status_name(submit);
    if (submit == TETHER_OK) {
      EXPECT_TRUE(ok_or_fault(on_done));
      EXPECT_EQ(g_notified.load(), on_done == TETHER_OK ? 1 : 0);
      EXPECT_EQ(wait, TETHER_OK);
      // The task's set_result may have met the fault: then the future FAILED.
      EXPECT_TRUE(take == TETHER_OK || take == TETHER_E_WRONG_STATE) << tether_status_name(take);
      if (take == TETHER_OK) {
        EXPECT_NE(result, nullptr);
      }
    }
    EXPECT_TRUE(ok_or_fault(ff)) << tether_status_name(ff);
    EXPECT_TRUE(ok_or_fault(failing)) << tether_status_name(failing);
    if (failing == TETHER_OK) {
      EXPECT_EQ(failing_state, TETHER_FAILED);
    }
    EXPECT_TRUE(again == TETHER_OK || again == TETHER_E_NO_MEMORY) << tether_status_name(again);
    EXPECT_EQ(release, TETHER_OK);
  }
};

TEST(FaultSweep, ExecutorAllocations) {
  ExecutorScenario s;
  report("executor allocations", sweep::sweep_allocations(s));
}

TEST(FaultSweep, ExecutorThreads) {
  ExecutorScenario s;
  const auto c = sweep::sweep_threads(s);
  report("executor threads", c);
  EXPECT_GE(c.points, 1u);
}

// ---- actor create with groups: calls to each group, fire and forget, stop --------------

std::atomic<int> g_ctor_runs{0}, g_dtor_runs{0};
tether_status ctor(tether_task*, void* arg, void** state) {
  g_ctor_runs.fetch_add(1);
  *state = arg;
  return TETHER_OK;
}
void dtor(void*) { g_dtor_runs.fetch_add(1); }
tether_status method(tether_task*, void*, void*) { return TETHER_OK; }
tether_status spawning_method(tether_task* t, void*, void*) {
  const tether_status rc = tether_task_spawn(t, "nested", &leaf, new_arg(), &drop_arg);
  saw(rc);
  return rc;
}

struct ActorScenario : sweep::Scenario {
  const char* name() const override { return "actor"; }
  tether_status create = -1, release = -1, again = -1;
  tether_status calls[4] = {-1, -1, -1, -1}, waits[4] = {-1, -1, -1, -1};
  int32_t state = -1;
  void act() override {
    g_ctor_runs.store(0);
    g_dtor_runs.store(0);
    const tether_group_spec groups[] = {{"io", 1}, {"pool", 2}};
    tether_actor_options o;
    tether_actor_options_init(&o);
    o.name = "sweep-actor";
    o.groups = groups;
    o.group_count = 2;
    tether_actor a{0};
    create = tether_actor_create(&o, &ctor, &dtor, new_arg(), &drop_arg, &a);
    saw(create);
    if (create != TETHER_OK) return;
    const char* targets[4] = {nullptr, "io", "pool", nullptr};
    tether_future fs[4] = {};
    for (int i = 0; i < 4; ++i) {
      calls[i] = tether_actor_call(a, targets[i], i == 3 ? &spawning_method : &method, new_arg(), &drop_arg, &fs[i]);
      saw(calls[i]);
    }
    (void)tether_actor_call(a, "pool", &method, new_arg(), &drop_arg, nullptr);
    for (int i = 0; i < 4; ++i) {
      if (calls[i] != TETHER_OK) continue;
      waits[i] = tether_future_wait(fs[i], sweep::kWaitNs);
      (void)tether_future_release(fs[i]);
    }
    tether_future h{0};
    again = tether_actor_call(a, "io", &method, new_arg(), &drop_arg, &h);
    if (again == TETHER_OK) {
      again = tether_future_wait(h, sweep::kWaitNs);
      (void)tether_future_release(h);
    }
    (void)tether_actor_state(a, &state, nullptr);
    release = tether_actor_release(a);
  }
  void check() override {
    SCOPED_TRACE("create " + std::to_string(create) + " again " + std::to_string(again) + " release " +
                 std::to_string(release));
    EXPECT_TRUE(ok_or_fault(create)) << tether_status_name(create);
    if (create != TETHER_OK) {
      EXPECT_EQ(g_ctor_runs.load(), 0);
      return;
    }
    EXPECT_EQ(g_ctor_runs.load(), 1);
    EXPECT_EQ(g_dtor_runs.load(), 1);
    for (int i = 0; i < 4; ++i) {
      EXPECT_TRUE(ok_or_fault(calls[i])) << i << ": " << tether_status_name(calls[i]);
      if (calls[i] == TETHER_OK) {
      EXPECT_EQ(waits[i], TETHER_OK) << i;
    }
    }
    EXPECT_TRUE(again == TETHER_OK || again == TETHER_E_NO_MEMORY) << tether_status_name(again);
    EXPECT_EQ(state, TETHER_ACTOR_ALIVE);
    EXPECT_EQ(release, TETHER_OK);
  }
};

TEST(FaultSweep, ActorAllocations) {
  ActorScenario s;
  report("actor allocations", sweep::sweep_allocations(s));
}

TEST(FaultSweep, ActorThreads) {
  ActorScenario s;
  const auto c = sweep::sweep_threads(s);
  report("actor threads", c);
  EXPECT_GE(c.points, 4u);  // default thread, io, pool x2 (a nested one too)
}

// ---- graph build, compile, execute -------------------------------------------------------

tether_status node_fn(tether_task*, void*, void*, void* const*, size_t, void** output) {
  *output = nullptr;
  return TETHER_OK;
}

struct GraphScenario : sweep::Scenario {
  const char* name() const override { return "graph"; }
  tether_status actors = -1, build = -1, first_compile = -1, compile = -1, release = -1;
  tether_status graph_error = -1;
  int32_t compile_error_code = -1;
  tether_status execs[3] = {-1, -1, -1}, waits[3] = {-1, -1, -1};
  void act() override {
    build = compile = -1;
    compile_error_code = -1;
    tether_actor a[2] = {};
    tether_actor_options o;
    tether_actor_options_init(&o);
    actors = tether_actor_create(&o, &ctor, nullptr, nullptr, nullptr, &a[0]);
    if (actors == TETHER_OK) {
      actors = tether_actor_create(&o, &ctor, nullptr, nullptr, nullptr, &a[1]);
      if (actors != TETHER_OK) (void)tether_actor_release(a[0]);
    }
    saw(actors);
    if (actors != TETHER_OK) return;
    tether_graph g{0};
    uint32_t n0 = 0, n1 = 0;
    build = tether_graph_create(&g);
    if (build == TETHER_OK) build = tether_graph_add_node(g, a[0], nullptr, &node_fn, new_arg(), &drop_arg, &n0);
    if (build == TETHER_OK) build = tether_graph_add_node(g, a[1], nullptr, &node_fn, new_arg(), &drop_arg, &n1);
    if (build == TETHER_OK) build = tether_graph_add_edge(g, TETHER_GRAPH_INPUT, n0);
    if (build == TETHER_OK) build = tether_graph_add_edge(g, n0, n1);
    if (build == TETHER_OK) build = tether_graph_set_outputs(g, &n1, 1);
    saw(build);
    if (build == TETHER_OK) {
      tether_compiled c{0};
      compile = first_compile = tether_graph_compile(g, nullptr, &c);
      saw(compile);
      if (compile != TETHER_OK) {
        tether_error e{0};
        graph_error = tether_graph_error(g, &e);
        if (graph_error == TETHER_OK && e.id != 0) {
          compile_error_code = tether_error_code(e);
          (void)tether_error_release(e);
        }
        compile = tether_graph_compile(g, nullptr, &c);  // usable: compiling again works
      }
      if (compile == TETHER_OK) {
        for (int i = 0; i < 3; ++i) {
          tether_future f{0};
          execs[i] = tether_compiled_execute(c, new_arg(), &drop_arg, &f);
          saw(execs[i]);
          if (execs[i] == TETHER_OK) {
            waits[i] = tether_future_wait(f, sweep::kWaitNs);
            (void)tether_future_release(f);
          }
        }
        (void)tether_compiled_release(c);
      }
    }
    if (g.id != 0) (void)tether_graph_release(g);
    release = tether_actor_release(a[0]);
    if (release == TETHER_OK) release = tether_actor_release(a[1]);
  }
  void check() override {
    EXPECT_TRUE(ok_or_fault(actors)) << tether_status_name(actors);
    if (actors != TETHER_OK) return;
    EXPECT_TRUE(build == TETHER_OK || build == TETHER_E_NO_MEMORY) << tether_status_name(build);
    if (build == TETHER_OK) {
      EXPECT_TRUE(ok_or_fault(first_compile)) << tether_status_name(first_compile);
      EXPECT_EQ(compile, TETHER_OK) << "a second compile after a failed one";
      if (first_compile != TETHER_OK) {  // tether_graph_error describes the failed compile
        EXPECT_EQ(graph_error, TETHER_OK);
        EXPECT_EQ(compile_error_code, first_compile);
      }
      for (int i = 0; i < 3; ++i) {
        EXPECT_TRUE(ok_or_fault(execs[i])) << tether_status_name(execs[i]);
        if (execs[i] == TETHER_OK) {
      EXPECT_EQ(waits[i], TETHER_OK);
    }
      }
    }
    EXPECT_EQ(release, TETHER_OK);
  }
};

TEST(FaultSweep, GraphAllocations) {
  GraphScenario s;
  report("graph allocations", sweep::sweep_allocations(s));
}

TEST(FaultSweep, GraphThreads) {
  GraphScenario s;
  report("graph threads", sweep::sweep_threads(s));
}

// ---- cold points: each in a fresh process --------------------------------------------

sweep::Scenario* scenario_named(const std::string& name) {
  static RunnerScenario runner;
  static ExecutorScenario executor;
  static ActorScenario actor;
  static GraphScenario graph;
  for (sweep::Scenario* s : {static_cast<sweep::Scenario*>(&runner), static_cast<sweep::Scenario*>(&executor),
                             static_cast<sweep::Scenario*>(&actor), static_cast<sweep::Scenario*>(&graph)}) {
    if (name == s->name()) return s;
  }
  return nullptr;
}

// The child of a cold sweep: runs one point when the parent selected it.
TEST(FaultSweepChild, Point) {
  const char* name = std::getenv("TETHER_SWEEP_SCENARIO");
  const char* mode = std::getenv("TETHER_SWEEP_MODE");
  const char* point = std::getenv("TETHER_SWEEP_POINT");
  if (name == nullptr || mode == nullptr || point == nullptr) GTEST_SKIP() << "run by the cold sweeps only";
  sweep::Scenario* s = scenario_named(name);
  ASSERT_NE(s, nullptr) << name;
  if (sweep::run_point(*s, mode, std::strtoull(point, nullptr, 10))) std::printf("[point delivered]\n");
  if (sweep::was_seen(TETHER_E_NO_MEMORY) || sweep::was_seen(TETHER_E_THREAD_CREATE)) std::printf("[point reported]\n");
}

class FaultSweepCold : public ::testing::TestWithParam<const char*> {};

TEST_P(FaultSweepCold, Allocations) {
  const auto c = sweep::sweep_cold(GetParam(), "alloc");
  report((std::string(GetParam()) + " allocations, cold").c_str(), c);
  EXPECT_GT(c.points, 0u);
}

TEST_P(FaultSweepCold, Threads) {
  const auto c = sweep::sweep_cold(GetParam(), "thread");
  report((std::string(GetParam()) + " threads, cold").c_str(), c);
  EXPECT_GT(c.points, 0u);
}

INSTANTIATE_TEST_SUITE_P(Scenarios, FaultSweepCold, ::testing::Values("runner", "executor", "actor", "graph"));

}  // namespace
