// graph_test.cpp: tether::Graph / Compiled / Execution — typed values in order, nodes on
// their actors' threads, fan-in with inputs in order, failures as tether::Error, busy
// threads, values destroyed exactly once, teardown while a node is blocked.
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "support.h"

namespace {

using namespace hpp_test;
using tether::Actor;
using tether::Compiled;
using tether::Error;
using tether::Graph;
using tether::State;
using tether::Task;

thread_local int tl_mark = 0;

// Worker: a pipeline stage's state; its constructor marks its thread.
struct Worker {
  explicit Worker(int id) : id(id), tid(tether_test::tid()) { tl_mark = 100 + id; }
  int id;
  uint64_t tid;
  std::vector<std::string> log;  // touched only on the worker's thread
  // check: the node runs where the constructor ran, and sees its thread-local.
  void check() const {
    if (tether_test::tid() != tid || tl_mark != 100 + id) throw std::logic_error("node off its constructor's thread");
  }
};

Actor<Worker> make_worker(const std::string& name, int id) {
  return Actor<Worker>::create({.name = name}, [id] { return Worker(id); });
}

// Tracked: a value that counts how many of its kind are alive.
struct Tracked {
  explicit Tracked(std::shared_ptr<std::atomic<int>> live, long v) : live(std::move(live)), v(v) { ++*this->live; }
  Tracked(Tracked&& o) noexcept : live(o.live), v(o.v) { ++*live; }
  Tracked(const Tracked&) = delete;
  ~Tracked() { --*live; }
  std::shared_ptr<std::atomic<int>> live;
  long v;
};

TEST(Graph, PipelineRunsInOrderOnThePinnedThreads) {
  auto w0 = make_worker("hpp-w0", 0);
  auto w1 = make_worker("hpp-w1", 1);
  Graph<long> g;
  auto fwd0 = g.add(w0, [](Worker& w, const long& x) { w.check(); w.log.push_back("fwd:" + std::to_string(x)); return x * 2; }, g.input());
  auto fwd1 = g.add(w1, [](Worker& w, const long& x) { w.check(); w.log.push_back("fwd:" + std::to_string(x)); return x + 3; }, fwd0);
  auto bwd1 = g.add(w1, [](Worker& w, const long& x) { w.check(); w.log.push_back("bwd:" + std::to_string(x)); return std::to_string(x * 5); }, fwd1);
  auto bwd0 = g.add(w0, [](Worker& w, const std::string& s, Task& t) {
    w.check();
    EXPECT_EQ("hpp-w0", t.thread_name());
    w.log.push_back("bwd:" + s);
    return std::stol(s) - 1;
  }, bwd1);
  Compiled<long, long, std::string> c = g.compile({.channel_capacity = 4}, bwd0, bwd1);
  std::vector<tether::Execution<long, std::string>> runs;
  for (long b = 0; b < 3; ++b) runs.push_back(c.execute_for(kLong, b));
  for (long b = 0; b < 3; ++b) {
    auto [out, text] = runs[static_cast<size_t>(b)].get();
    EXPECT_EQ(((b * 2) + 3) * 5 - 1, out);
    EXPECT_EQ(std::to_string(((b * 2) + 3) * 5), text);
    EXPECT_THROW((void)runs[static_cast<size_t>(b)].get(), Error);  // outputs go once
  }
  // An ordinary call to worker 0 answers with the graph still compiled.
  auto log0 = w0.call([](Worker& w) { return w.log; }).get();
  ASSERT_EQ(6u, log0.size());
  std::vector<std::string> fwd, bwd;
  for (const std::string& e : log0) (e.rfind("fwd", 0) == 0 ? fwd : bwd).push_back(e);
  EXPECT_EQ((std::vector<std::string>{"fwd:0", "fwd:1", "fwd:2"}), fwd);
  EXPECT_EQ((std::vector<std::string>{"bwd:15", "bwd:25", "bwd:35"}), bwd);
}

TEST(Graph, FanInTakesInputsInEdgeOrder) {
  auto w0 = make_worker("hpp-fan0", 0);
  auto w1 = make_worker("hpp-fan1", 1);
  Graph<int> g;
  auto a = g.add(w0, [](Worker&, const int& x) { return std::string(static_cast<size_t>(x), 'a'); }, g.input());
  auto b = g.add(w1, [](Worker&, const int& x) { return x * 10; }, g.input());
  auto c = g.add(w0, [](Worker&, const std::string& s, const int& n) { return s + ":" + std::to_string(n); }, a, b);
  auto compiled = g.compile({}, c, b);
  auto [text, n] = compiled.execute(3).get();
  EXPECT_EQ("aaa:30", text);
  EXPECT_EQ(30, n);
}

TEST(Graph, NodeExceptionFailsOnlyItsExecution) {
  auto w = make_worker("hpp-fail", 0);
  Graph<int> g;
  auto n = g.add(w, [](Worker&, const int& x) {
    if (x == 1) throw std::runtime_error("bad batch");
    return x;
  }, g.input());
  auto c = g.compile({}, n);
  auto e0 = c.execute(0);
  auto e1 = c.execute(1);
  auto e2 = c.execute(2);
  EXPECT_EQ(0, std::get<0>(e0.get()));
  try {
    (void)e1.get();
    FAIL() << "the execution should have failed";
  } catch (const Error& e) {
    EXPECT_EQ(TETHER_E_EXCEPTION, e.code());
    EXPECT_EQ("bad batch", e.message());
    EXPECT_EQ("std::runtime_error", e.type_name());
    EXPECT_EQ("hpp-fail", e.thread_name());
  }
  EXPECT_EQ(State::Failed, e1.poll());
  EXPECT_EQ(2, std::get<0>(e2.get()));
}

TEST(Graph, BusyThreadIsRefusedUntilReleased) {
  auto w = make_worker("hpp-busy", 0);
  Graph<int> g1, g2;
  auto n1 = g1.add(w, [](Worker&, const int& x) { return x; }, g1.input());
  auto n2 = g2.add(w, [](Worker&, const int& x) { return x + 1; }, g2.input());
  auto c1 = g1.compile({}, n1);
  try {
    (void)g2.compile({}, n2);
    FAIL() << "a second graph on a busy thread should be refused";
  } catch (const Error& e) {
    EXPECT_EQ(TETHER_E_THREAD_BUSY, e.code());
  }
  ASSERT_TRUE(g2.error().has_value());
  EXPECT_NE(std::string::npos, g2.error()->message().find("hpp-busy"));
  c1.release();
  auto c2 = g2.compile({}, n2);
  EXPECT_EQ(6, std::get<0>(c2.execute(5).get()));
  EXPECT_FALSE(g2.error().has_value());
}

TEST(Graph, EveryValueIsDestroyedOnce) {
  auto live = std::make_shared<std::atomic<int>>(0);
  {
    auto w = make_worker("hpp-values", 0);
    Graph<Tracked> g;
    auto a = g.add(w, [live](Worker&, const Tracked& in) { return Tracked(live, in.v + 1); }, g.input());
    auto b = g.add(w, [live](Worker&, const Tracked& in) { return Tracked(live, in.v * 2); }, a);
    auto c = g.compile({.channel_capacity = 2}, b);
    for (long i = 0; i < 20; ++i) {
      auto [out] = c.execute_for(kLong, Tracked(live, i)).get();
      EXPECT_EQ((i + 1) * 2, out.v);
    }
    auto untaken = c.execute_for(kLong, Tracked(live, 7));
    untaken.wait();
  }  // the untaken output goes with its Execution; the rest with the executions
  EXPECT_EQ(0, live->load());
}

TEST(Graph, ReleaseWhileANodeIsBlockedDoesNotWait) {
  auto w = make_worker("hpp-teardown", 0);
  auto entered = std::make_shared<Gate>();
  auto gate = std::make_shared<Gate>();
  auto saw_stop = std::make_shared<std::atomic<bool>>(false);
  Graph<int> g;
  auto n = g.add(w, [=](Worker&, const int& x, Task& t) {
    entered->set();
    EXPECT_TRUE(gate->wait_for());
    *saw_stop = t.stop_requested();
    return x;
  }, g.input());
  auto c = g.compile({}, n);
  auto e = c.execute(1);
  ASSERT_TRUE(entered->wait_for());
  c.release();  // returns with the node still blocked
  EXPECT_TRUE(e.wait_for(kLong));
  EXPECT_EQ(State::Cancelled, e.poll());
  EXPECT_THROW((void)e.get(), Error);
  gate->set();
  // The thread is free once the node returned: an ordinary call then runs.
  EXPECT_EQ(0, w.call([](Worker& s) { return s.id; }).get());
  EXPECT_TRUE(saw_stop->load());
}

TEST(Graph, EmptyOwnersThrowInvalidHandle) {
  Compiled<int, int> c;
  EXPECT_FALSE(c.valid());
  try {
    (void)c.execute(1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(TETHER_E_INVALID_HANDLE, e.code());
  }
  Graph<int> g;
  Graph<int> moved = std::move(g);
  EXPECT_THROW((void)g.error(), Error);  // NOLINT(bugprone-use-after-move): the point
  Actor<Worker> none;
  EXPECT_THROW((void)moved.add(none, [](Worker&, const int& x) { return x; }, moved.input()), Error);
}

}  // namespace
