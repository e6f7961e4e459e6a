// actor_test.cpp: tether::Actor<S> — the state built, used and destroyed on the pinned
// thread, concurrency groups, states that cannot move, constructor and method failures,
// stop CANCEL / DRAIN, shared executors, nested threads, bounded mailboxes, the blocking
// call (call_wait).
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "support.h"

namespace {

using namespace hpp_test;
using tether::Actor;
using tether::ActorState;
using tether::Error;
using tether::Executor;
using tether::Future;
using tether::State;
using tether::StopMode;
using tether::Task;

thread_local int tl_value = 0;

// Probe: a state that records where it was built and destroyed.
struct Probe {
  explicit Probe(std::shared_ptr<Counter> dtors, std::shared_ptr<std::atomic<uint64_t>> dtor_tid)
      : ctor_tid(tether_test::tid()), dtors_(std::move(dtors)), dtor_tid_(std::move(dtor_tid)) {}
  Probe(Probe&&) = default;
  ~Probe() {
    if (dtors_) {
      *dtor_tid_ = tether_test::tid();
      dtors_->add();
    }
  }
  uint64_t ctor_tid;
  int calls = 0;

 private:
  std::shared_ptr<Counter> dtors_;
  std::shared_ptr<std::atomic<uint64_t>> dtor_tid_;
};

struct Observed {
  std::shared_ptr<Counter> dtors = std::make_shared<Counter>();
  std::shared_ptr<std::atomic<uint64_t>> dtor_tid = std::make_shared<std::atomic<uint64_t>>(0);
  [[nodiscard]] Probe make() const { return Probe(dtors, dtor_tid); }
};

TEST(Actor, StateIsBuiltOnThePinnedThreadAndThreadLocalsPersist) {
  Observed seen;
  uint64_t pinned = 0;
  {
    auto actor = Actor<Probe>::create({.name = "hpp-tl"}, [&seen](Task& t) {
      EXPECT_EQ("hpp-tl", t.thread_name());
      tl_value = 42;
      return seen.make();
    });
    Future<std::pair<int, uint64_t>> f =
        actor.call([](Probe& p, Task&) { return std::make_pair(1 + tl_value, p.ctor_tid); });
    ASSERT_TRUE(f.wait_for(kLong));
    const auto [sum, ctor_tid] = f.get();
    EXPECT_EQ(43, sum) << "the constructor's thread-local value is visible to the method";
    Future<uint64_t> method_tid = actor.call([](Probe&) { return tether_test::tid(); });
    ASSERT_TRUE(method_tid.wait_for(kLong));
    pinned = method_tid.get();
    EXPECT_EQ(ctor_tid, pinned);
    EXPECT_NE(tether_test::tid(), pinned);
    EXPECT_EQ(pinned, actor.stats().os_thread_id);
    EXPECT_EQ(ActorState::Alive, actor.state());
    EXPECT_EQ(0, seen.dtors->get());
  }  // ~Actor: drain, then the state's destructor on the pinned thread
  EXPECT_EQ(1, seen.dtors->get());
  EXPECT_EQ(pinned, seen.dtor_tid->load());
}

TEST(Actor, CallInRunsOnTheGroupsOwnThread) {
  auto actor = Actor<Probe>::create({.name = "hpp-grp", .groups = {{"io", 1}}}, [](Task&) {
    tl_value = 42;
    return Observed().make();
  });
  Future<std::pair<std::string, uint64_t>> io =
      actor.call_in("io", [](Probe&, Task& t) { return std::make_pair(std::string(t.thread_name()), tether_test::tid()); });
  Future<uint64_t> def = actor.call([](Probe&) { return tether_test::tid(); });
  ASSERT_TRUE(io.wait_for(kLong));
  ASSERT_TRUE(def.wait_for(kLong));
  const auto [name, io_tid] = io.get();
  EXPECT_EQ("hpp-grp/io", name);
  EXPECT_NE(def.get(), io_tid);
  // The group's thread keeps its own thread-local value, apart from the default thread's.
  Future<int> io_tl = actor.call_in("io", [](Probe&) { return tl_value += 5; });
  Future<int> io_tl2 = actor.call_in("io", [](Probe&) { return tl_value; });
  Future<int> def_tl = actor.call([](Probe&) { return tl_value; });
  ASSERT_TRUE(io_tl2.wait_for(kLong));
  ASSERT_TRUE(def_tl.wait_for(kLong));
  EXPECT_EQ(5, io_tl.get());
  EXPECT_EQ(5, io_tl2.get());
  EXPECT_EQ(42, def_tl.get());
}

TEST(Actor, ABlockedDefaultGroupNeverStallsAnotherGroupOrTheControlPlane) {
  auto actor = Actor<Probe>::create({.name = "hpp-blk", .groups = {{"io", 1}}}, [] { return Observed().make(); });
  Gate started, go;
  Future<void> blocked = actor.call([&](Probe&) {
    started.set();
    EXPECT_TRUE(go.wait_for());
  });
  ASSERT_TRUE(started.wait_for());
  Future<int> io = actor.call_in("io", [](Probe&) { return 7; });
  ASSERT_TRUE(io.wait_for(kLong)) << "the io group answers while the default thread is blocked";
  EXPECT_EQ(7, io.get());
  EXPECT_EQ(ActorState::Alive, actor.state());
  EXPECT_EQ(State::Running, blocked.poll());
  (void)actor.stats();
  go.set();
  ASSERT_TRUE(blocked.wait_for(kLong));
  blocked.get();
}

TEST(Actor, UnknownGroupIsNotFoundAndTheClosureIsDroppedOnce) {
  auto actor = Actor<Probe>::create([] { return Observed().make(); });
  auto drops = std::make_shared<Counter>();
  const Error e = thrown([&] { (void)actor.call_in("nope", [token = Token(drops)](Probe&) {}); });
  EXPECT_EQ(TETHER_E_NOT_FOUND, e.code());
  EXPECT_EQ(1, drops->get());
  EXPECT_EQ(TETHER_E_NOT_FOUND, thrown([&] { actor.post_in("nope", [](Probe&) {}); }).code());
}

TEST(Actor, BadGroupsFailCreate) {
  auto drops = std::make_shared<Counter>();
  EXPECT_EQ(TETHER_E_INVALID_ARGUMENT, thrown([&] {
              (void)Actor<Probe>::create({.groups = {{"io", 0}}},
                                         [token = Token(drops)] { return Observed().make(); });
            }).code());
  EXPECT_EQ(1, drops->get()) << "the constructor's closure is dropped when create fails";
  EXPECT_EQ(TETHER_E_INVALID_ARGUMENT, thrown([] {
              (void)Actor<Probe>::create({.groups = {{"io", 1}, {"io", 2}}}, [] { return Observed().make(); });
            }).code());
}

// Pinned: neither copyable nor movable; built in place from the constructor's prvalue.
class Pinned {
 public:
  explicit Pinned(int v) : value_(v), self_(this) {}
  Pinned(const Pinned&) = delete;
  Pinned& operator=(const Pinned&) = delete;
  Pinned(Pinned&&) = delete;
  Pinned& operator=(Pinned&&) = delete;

  int bump() {
    std::lock_guard lock(mutex_);
    return ++value_;
  }
  [[nodiscard]] bool in_place() const { return self_ == this; }

 private:
  std::mutex mutex_;
  int value_;
  const Pinned* self_;
};

TEST(Actor, NonCopyableNonMovableStateIsConstructedInPlace) {
  auto actor = Actor<Pinned>::create({.name = "hpp-pinned"}, [](Task&) { return Pinned(10); });
  Future<bool> in_place = actor.call([](Pinned& p) { return p.in_place(); });
  Future<int> a = actor.call([](Pinned& p, Task&) { return p.bump(); });
  Future<int> b = actor.call([](Pinned& p) { return p.bump(); });
  ASSERT_TRUE(b.wait_for(kLong));
  EXPECT_TRUE(in_place.get());
  EXPECT_EQ(11, a.get());
  EXPECT_EQ(12, b.get());
}

TEST(Actor, ConstructorMayReturnAUniquePtr) {
  Observed seen;
  {
    auto actor = Actor<Probe>::create([&seen](Task&) { return std::make_unique<Probe>(seen.make()); });
    Future<int> f = actor.call([](Probe& p) { return ++p.calls; });
    ASSERT_TRUE(f.wait_for(kLong));
    EXPECT_EQ(1, f.get());
  }
  EXPECT_EQ(1, seen.dtors->get());
}

TEST(Actor, ANullUniquePtrMakesTheActorDead) {
  Gate queued;  // the constructor fails only once the call is queued behind it
  auto actor = Actor<Probe>::create([&queued](Task&) {
    EXPECT_TRUE(queued.wait_for());
    return std::unique_ptr<Probe>();
  });
  Future<void> f = actor.call([](Probe&) {});
  queued.set();
  ASSERT_TRUE(f.wait_for(kLong));
  const Error e = thrown([&] { f.get(); });
  EXPECT_EQ(TETHER_E_ACTOR_DEAD, e.code());
  ASSERT_NE(nullptr, e.cause());
  EXPECT_EQ(TETHER_E_TASK_FAILED, e.cause()->code());
  EXPECT_EQ(ActorState::Dead, actor.state());
}

TEST(Actor, ConstructorExceptionMakesTheActorDeadWithTheCause) {
  Gate go;  // the constructor throws only once a call is queued behind it
  auto actor = Actor<Probe>::create({.name = "hpp-dead"}, [&go](Task&) -> Probe {
    EXPECT_TRUE(go.wait_for());
    throw std::runtime_error("ctor boom");
  });
  Future<int> queued = actor.call([](Probe&) { return 1; });
  go.set();
  ASSERT_TRUE(queued.wait_for(kLong));
  EXPECT_EQ(State::Failed, queued.poll());
  const Error e = thrown([&] { (void)queued.get(); });
  EXPECT_EQ(TETHER_E_ACTOR_DEAD, e.code());
  ASSERT_NE(nullptr, e.cause());
  EXPECT_EQ(TETHER_E_EXCEPTION, e.cause()->code());
  EXPECT_EQ("ctor boom", e.cause()->message());
  EXPECT_EQ("std::runtime_error", e.cause()->type_name());
  EXPECT_EQ("hpp-dead", e.cause()->thread_name());
  EXPECT_NE(std::string(e.what()).find("caused by: TETHER_E_EXCEPTION: ctor boom"), std::string::npos) << e.what();

  EXPECT_EQ(ActorState::Dead, actor.state());
  const std::optional<Error> cause = actor.dead_cause();
  ASSERT_TRUE(cause.has_value());
  EXPECT_EQ("ctor boom", cause->message());

  auto drops = std::make_shared<Counter>();
  EXPECT_EQ(TETHER_E_ACTOR_DEAD, thrown([&] { (void)actor.call([token = Token(drops)](Probe&) {}); }).code());
  EXPECT_EQ(1, drops->get());
}

TEST(Actor, ConstructorThatRecordsAFailureDestroysWhatItReturnedOnThePinnedThread) {
  Observed seen;
  auto ctor_tid = std::make_shared<std::atomic<uint64_t>>(0);
  Gate go;
  auto actor = Actor<Probe>::create([&seen, &go, ctor_tid](Task& t) {
    EXPECT_TRUE(go.wait_for());
    *ctor_tid = tether_test::tid();
    t.fail(5, "not today");
    return seen.make();  // built, but the actor is DEAD: it must not leak
  });
  Future<void> f = actor.call([](Probe&) {});
  go.set();
  ASSERT_TRUE(f.wait_for(kLong));
  const Error e = thrown([&] { f.get(); });
  EXPECT_EQ(TETHER_E_ACTOR_DEAD, e.code());
  ASSERT_NE(nullptr, e.cause());
  EXPECT_EQ(5, e.cause()->user_code());
  EXPECT_EQ("not today", e.cause()->message());
  EXPECT_EQ(1, seen.dtors->get());
  EXPECT_EQ(ctor_tid->load(), seen.dtor_tid->load());
}

TEST(Actor, AFailingMethodFailsOnlyItsFuture) {
  auto actor = Actor<Probe>::create([] { return Observed().make(); });
  Future<int> bad = actor.call([](Probe&) -> int { throw std::out_of_range("index 9"); });
  Future<int> good = actor.call([](Probe& p) { return ++p.calls; });
  ASSERT_TRUE(good.wait_for(kLong));
  const Error e = thrown([&] { (void)bad.get(); });
  EXPECT_EQ(TETHER_E_EXCEPTION, e.code());
  EXPECT_EQ("std::out_of_range", e.type_name());
  EXPECT_EQ(1, good.get());
  EXPECT_EQ(ActorState::Alive, actor.state());
}

TEST(Actor, StopCancelWhileAMethodIsBlocked) {
  Observed seen;
  auto actor = Actor<Probe>::create({.name = "hpp-stopc"}, [&seen] { return seen.make(); });
  Gate started;
  Future<int> running = actor.call([&](Probe&, Task& t) {
    started.set();
    EXPECT_TRUE(until([&] { return t.stop_requested(); }));
    return 1;
  });
  ASSERT_TRUE(started.wait_for());
  auto drops = std::make_shared<Counter>();
  std::atomic<bool> queued_ran{false};
  Future<void> queued = actor.call([&queued_ran, token = Token(drops)](Probe&) { queued_ran = true; });
  EXPECT_TRUE(actor.stop(StopMode::Cancel, kLong));
  EXPECT_EQ(State::Cancelled, queued.poll());
  EXPECT_EQ(1, drops->get());
  EXPECT_FALSE(queued_ran.load());
  ASSERT_TRUE(running.wait_for(kLong));
  EXPECT_EQ(State::Cancelled, running.poll()) << "it returned normally after the stop request";
  EXPECT_EQ(1, seen.dtors->get()) << "the state was destroyed before stop returned";
  EXPECT_EQ(ActorState::Stopped, actor.state());
  EXPECT_EQ(TETHER_E_SHUTDOWN, thrown([&] { (void)actor.call([](Probe&) {}); }).code());
  EXPECT_EQ(TETHER_E_SHUTDOWN, thrown([&] { actor.post([](Probe&) {}); }).code());
}

TEST(Actor, StopDrainRunsWhatIsQueuedThenTheDestructor) {
  auto order = std::make_shared<std::vector<std::string>>();  // touched only on the pinned thread
  struct Logger {
    std::shared_ptr<std::vector<std::string>> order;
    uint64_t tid = tether_test::tid();
    std::shared_ptr<std::atomic<uint64_t>> dtor_tid;
    ~Logger() {
      if (order) {
        order->push_back("dtor");
        *dtor_tid = tether_test::tid();
      }
    }
  };
  auto dtor_tid = std::make_shared<std::atomic<uint64_t>>(0);
  auto actor = Actor<Logger>::create([&] { return Logger{order, tether_test::tid(), dtor_tid}; });
  Gate started, go;
  actor.post([&](Logger& l) {
    started.set();
    EXPECT_TRUE(go.wait_for());
    l.order->push_back("first");
  });
  ASSERT_TRUE(started.wait_for());
  for (int i = 0; i < 5; ++i) actor.post([i](Logger& l) { l.order->push_back(std::to_string(i)); });
  EXPECT_FALSE(actor.stop(StopMode::Drain, std::chrono::milliseconds(0))) << "the method still runs";
  go.set();
  EXPECT_TRUE(actor.stop(StopMode::Drain, kLong));
  const std::vector<std::string> expected{"first", "0", "1", "2", "3", "4", "dtor"};
  EXPECT_EQ(expected, *order);
  EXPECT_EQ(ActorState::Stopped, actor.state());
  EXPECT_NE(0u, dtor_tid->load());
  EXPECT_NE(tether_test::tid(), dtor_tid->load());
}

TEST(Actor, StopFromInsideIsDeadlockAfterStartingTheStop) {
  auto actor = Actor<Probe>::create([] { return Observed().make(); });
  Future<int32_t> f = actor.call([&actor](Probe&) {
    try {
      (void)actor.stop(StopMode::Drain, std::chrono::seconds(1));
    } catch (const Error& e) {
      return e.code();
    }
    return int32_t{TETHER_OK};
  });
  ASSERT_TRUE(f.wait_for(kLong));
  EXPECT_EQ(TETHER_E_DEADLOCK, f.get());
  EXPECT_TRUE(actor.stop(StopMode::Drain, kLong));
  EXPECT_EQ(ActorState::Stopped, actor.state());
}

TEST(Actor, FailedPostsAreCountedAndKept) {
  auto actor = Actor<Probe>::create({.name = "hpp-apost"}, [] { return Observed().make(); });
  actor.post([](Probe&) { throw std::invalid_argument("bad post"); });
  Future<void> sync = actor.call([](Probe&) {});
  ASSERT_TRUE(sync.wait_for(kLong));
  EXPECT_EQ(1u, actor.stats().failed);
  const std::vector<Error> errs = actor.errors();
  ASSERT_EQ(1u, errs.size());
  EXPECT_EQ("std::invalid_argument", errs[0].type_name());
  EXPECT_EQ("hpp-apost", errs[0].thread_name());
}

TEST(Actor, ActorsOnOneExecutorShareItsThread) {
  Executor e = Executor::create({.name = "hpp-shared"});
  auto a = Actor<Probe>::create({.executor = &e}, [] { return Observed().make(); });
  auto b = Actor<Probe>::create({.executor = &e}, [] { return Observed().make(); });
  Future<uint64_t> ta = a.call([](Probe& p) { return p.ctor_tid; });
  Future<uint64_t> tb = b.call([](Probe&) { return tether_test::tid(); });
  ASSERT_TRUE(ta.wait_for(kLong));
  ASSERT_TRUE(tb.wait_for(kLong));
  const uint64_t exec_tid = e.stats().os_thread_id;
  EXPECT_EQ(exec_tid, ta.get());
  EXPECT_EQ(exec_tid, tb.get());
  const Executor empty;
  EXPECT_EQ(TETHER_E_INVALID_HANDLE,
            thrown([&] { (void)Actor<Probe>::create({.executor = &empty}, [] { return Observed().make(); }); }).code());
}

TEST(Actor, NestedThreadsInAMethodBelongToItsFuture) {
  auto actor = Actor<Probe>::create({.name = "hpp-nest"}, [] { return Observed().make(); });
  Gate go;
  std::atomic<bool> nested_done{false};
  Future<int> ok = actor.call([&](Probe&, Task& t) {
    t.spawn("hpp-nest-kid", [&] {
      EXPECT_TRUE(go.wait_for());
      nested_done = true;
    });
    return 1;
  });
  EXPECT_FALSE(ok.wait_for(std::chrono::milliseconds(0)));
  go.set();
  ASSERT_TRUE(ok.wait_for(kLong));
  EXPECT_TRUE(nested_done.load()) << "the future completes after its nested thread";
  EXPECT_EQ(1, ok.get());

  Future<int> bad = actor.call([](Probe&, Task& t) {
    t.spawn("hpp-nest-bad", [] { throw std::runtime_error("nested boom"); });
    return 2;
  });
  ASSERT_TRUE(bad.wait_for(kLong));
  const Error e = thrown([&] { (void)bad.get(); });
  EXPECT_EQ(TETHER_E_EXCEPTION, e.code());
  EXPECT_EQ("hpp-nest-bad", e.thread_name());
}

TEST(Actor, BoundedMailbox) {
  auto actor = Actor<Probe>::create({.mailbox_capacity = 1}, [] { return Observed().make(); });
  Gate started, go;
  Future<void> blocked = actor.call([&](Probe&) {
    started.set();
    EXPECT_TRUE(go.wait_for());
  });
  ASSERT_TRUE(started.wait_for());
  Future<int> queued = actor.call([](Probe&) { return 1; });
  EXPECT_EQ(TETHER_E_QUEUE_FULL, thrown([&] { (void)actor.call([](Probe&) { return 2; }); }).code());
  EXPECT_EQ(TETHER_E_TIMEOUT,
            thrown([&] { (void)actor.call_for(std::chrono::milliseconds(5), [](Probe&) { return 3; }); }).code());
  go.set();
  ASSERT_TRUE(queued.wait_for(kLong));
  EXPECT_EQ(1, queued.get());
  Future<int> later = actor.call_for(kLong, [](Probe&) { return 4; });
  ASSERT_TRUE(later.wait_for(kLong));
  EXPECT_EQ(4, later.get());
  blocked.get();
}

TEST(Actor, GroupCallWithATimeout) {
  auto actor = Actor<Probe>::create({.groups = {{"io", 2}}}, [] { return Observed().make(); });
  Future<std::string> f = actor.call_in_for("io", kLong, [](Probe&, Task& t) { return std::string(t.thread_name()); });
  ASSERT_TRUE(f.wait_for(kLong));
  EXPECT_EQ(0u, f.get().find("tether-actor/io"));
}

TEST(Actor, CallWaitReturnsTheResultOrThrowsTheCallsError) {
  auto actor = Actor<Probe>::create({.groups = {{"io", 1}}}, [] { return Observed().make(); });
  EXPECT_EQ(1, actor.call_wait([](Probe& p) { return ++p.calls; }));
  EXPECT_EQ(2, actor.call_wait_for(kLong, [](Probe& p) { return ++p.calls; }));
  actor.call_wait([](Probe& p) { p.calls += 10; });  // void
  EXPECT_EQ(std::string("tether-actor/io"),
            actor.call_in_wait("io", [](Probe&, Task& t) { return std::string(t.thread_name()); }));
  const Error e = thrown([&] { (void)actor.call_wait([](Probe&) -> int { throw std::out_of_range("index 9"); }); });
  EXPECT_EQ(TETHER_E_EXCEPTION, e.code());
  EXPECT_EQ("std::out_of_range", e.type_name());
  EXPECT_EQ(TETHER_E_NOT_FOUND, thrown([&] { (void)actor.call_in_wait("db", [](Probe&) { return 0; }); }).code());
  // From the actor's own thread: a deadlock, and the call never runs.
  const int before = actor.call_wait([](Probe& p) { return p.calls; });
  EXPECT_EQ(TETHER_E_DEADLOCK, actor.call_wait([&actor](Probe&) {
    try {
      actor.call_wait([](Probe& p) { ++p.calls; });
    } catch (const Error& inner) {
      return inner.code();
    }
    return int32_t{TETHER_OK};
  }));
  EXPECT_EQ(before, actor.call_wait([](Probe& p) { return p.calls; }));
}

TEST(Actor, CallWaitForCancelsACallThatIsNotAnsweredInTime) {
  auto actor = Actor<Probe>::create([] { return Observed().make(); });
  Gate started, go;
  Future<void> blocked = actor.call([&](Probe&) {
    started.set();
    EXPECT_TRUE(go.wait_for());
  });
  ASSERT_TRUE(started.wait_for());
  auto ran = std::make_shared<Counter>();
  EXPECT_EQ(TETHER_E_TIMEOUT,
            thrown([&] { actor.call_wait_for(std::chrono::milliseconds(5), [ran](Probe&) { ran->add(); }); }).code());
  go.set();
  blocked.get();
  actor.call_wait([](Probe&) {});  // everything queued before it has run or been cancelled
  EXPECT_EQ(0, ran->get());
}

}  // namespace
