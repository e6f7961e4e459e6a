// runner_test.cpp: tether::Runner — results, nested failures as tether::Error, exceptions
// out of lambdas, cancellation, the owner's release.
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "support.h"

namespace hpp_test {
// A std::exception in a namespace: its demangled name must come through.
class DiskFull : public std::runtime_error {
 public:
  DiskFull() : std::runtime_error("disk is full") {}
};
}  // namespace hpp_test

namespace {

using namespace hpp_test;
using tether::Error;
using tether::Runner;
using tether::State;
using tether::Task;

TEST(Runner, ReturnedValueIsTheResultTakenOnce) {
  auto drops = std::make_shared<Counter>();
  Runner r = Runner::start({.name = "hpp-result"}, [token = Token(drops)](Task& t) {
    EXPECT_EQ("hpp-result", t.thread_name());
    return std::string("forty-two");
  });
  ASSERT_TRUE(r.join_for(kLong));
  EXPECT_EQ(State::Succeeded, r.poll());
  EXPECT_EQ("forty-two", r.take_result<std::string>());
  const Error again = thrown([&] { (void)r.take_result<std::string>(); });
  EXPECT_EQ(TETHER_E_WRONG_STATE, again.code());
  EXPECT_STREQ("TETHER_E_WRONG_STATE", again.status_name());
  ASSERT_TRUE(r.join_all_for(kLong));
  EXPECT_TRUE(drops->wait_for(1));
  EXPECT_EQ(1, drops->get()) << "the target's closure is dropped exactly once";
}

TEST(Runner, JoinResultOfAVoidTarget) {
  Counter ran;
  Runner r = Runner::start([&ran] { ran.add(); });  // a target need not take the Task
  ASSERT_TRUE(r.join_for(kLong));
  r.join_result<void>();
  EXPECT_EQ(1, ran.get());
  EXPECT_FALSE(r.error().has_value());
  EXPECT_EQ(0u, r.error_count());
}

TEST(Runner, JoinResultReturnsTheValue) {
  Runner r = Runner::start({.name = "hpp-jr"}, [](Task&) { return 7 * 6; });
  ASSERT_TRUE(r.join_for(kLong));
  EXPECT_EQ(42, r.join_result<int>());
}

TEST(Runner, NestedFailureIsAnErrorWithTheThreadName) {
  Runner r = Runner::start({.name = "hpp-parent"}, [](Task& t) {
    t.spawn("hpp-child", [](Task& c) {
      EXPECT_EQ("hpp-child", c.thread_name());
      c.fail(7, "disk full");
      EXPECT_TRUE(c.failed());
    });
    return 1;
  });
  ASSERT_TRUE(r.join_for(kLong));
  EXPECT_EQ(State::Failed, r.poll());
  const std::optional<Error> first = r.error();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(TETHER_E_TASK_FAILED, first->code());
  EXPECT_EQ(7, first->user_code());
  EXPECT_EQ("disk full", first->message());
  EXPECT_EQ("hpp-child", first->thread_name());
  EXPECT_EQ("", first->type_name());
  EXPECT_EQ(nullptr, first->cause());

  const Error e = thrown([&] { (void)r.join_result<int>(); });
  EXPECT_EQ(TETHER_E_TASK_FAILED, e.code());
  EXPECT_EQ(7, e.user_code());
  EXPECT_EQ("hpp-child", e.thread_name());
  EXPECT_STREQ("TETHER_E_TASK_FAILED: disk full (thread 'hpp-child', user code 7)", e.what());
  // A failed scope has no result to take.
  EXPECT_EQ(TETHER_E_WRONG_STATE, thrown([&] { (void)r.take_result<int>(); }).code());
}

TEST(Runner, ExceptionInTheTargetIsExceptionWithWhatAndType) {
  Runner r = Runner::start({.name = "hpp-thrower"}, [](Task&) -> int { throw std::runtime_error("boom"); });
  ASSERT_TRUE(r.join_for(kLong));
  EXPECT_EQ(State::Failed, r.poll());
  const Error e = thrown([&] { (void)r.join_result<int>(); });
  EXPECT_EQ(TETHER_E_EXCEPTION, e.code());
  EXPECT_EQ("boom", e.message());
  EXPECT_EQ("std::runtime_error", e.type_name());
  EXPECT_EQ("hpp-thrower", e.thread_name());
  EXPECT_STREQ("TETHER_E_EXCEPTION: boom (type std::runtime_error, thread 'hpp-thrower')", e.what());
}

TEST(Runner, ExceptionInANestedThreadHasItsDemangledType) {
  Runner r = Runner::start({.name = "hpp-parent"}, [](Task& t) { t.spawn("hpp-nested", [] { throw DiskFull(); }); });
  ASSERT_TRUE(r.join_all_for(kLong));
  const Error e = thrown([&] { r.join_result(); });
  EXPECT_EQ(TETHER_E_EXCEPTION, e.code());
  EXPECT_EQ("disk is full", e.message());
  EXPECT_EQ("hpp_test::DiskFull", e.type_name());
  EXPECT_EQ("hpp-nested", e.thread_name());
}

TEST(Runner, NonStdExceptionIsUnknownException) {
  Runner r = Runner::start({.name = "hpp-int"}, [](Task&) { throw 42; });
  ASSERT_TRUE(r.join_for(kLong));
  const Error e = thrown([&] { r.join_result(); });
  EXPECT_EQ(TETHER_E_UNKNOWN_EXCEPTION, e.code());
  EXPECT_EQ("int", e.type_name());
  EXPECT_EQ("hpp-int", e.thread_name());
}

TEST(Runner, TakeResultOfTheWrongTypeThrowsAndKeepsTheResult) {
  Runner r = Runner::start([](Task&) { return 5; });
  ASSERT_TRUE(r.join_for(kLong));
  EXPECT_EQ(TETHER_E_INVALID_ARGUMENT, thrown([&] { (void)r.take_result<long>(); }).code());
  EXPECT_EQ(TETHER_E_INVALID_ARGUMENT, thrown([&] { r.take_result<void>(); }).code());
  EXPECT_EQ(5, r.take_result<int>());
}

TEST(Runner, CancelEndsACooperativeScopeCancelled) {
  Gate started;
  Runner r = Runner::start({.name = "hpp-cancel"}, [&](Task& t) {
    started.set();
    EXPECT_TRUE(until([&] { return t.stop_requested(); }));
  });
  ASSERT_TRUE(started.wait_for());
  EXPECT_FALSE(r.join_for(std::chrono::milliseconds(0)));
  EXPECT_EQ(State::Running, r.poll());
  r.cancel();
  ASSERT_TRUE(r.join_for(kLong));
  EXPECT_EQ(State::Cancelled, r.poll());
  const Error e = thrown([&] { r.join_result(); });
  EXPECT_EQ(TETHER_E_CANCELLED, e.code());
}

TEST(Runner, SiblingFailureRequestsStop) {
  Runner r = Runner::start({.name = "hpp-stop"}, [](Task& t) {
    t.spawn([](Task& c) { c.fail(3, "sibling"); });
    EXPECT_TRUE(until([&] { return t.stop_requested(); }));
  });
  ASSERT_TRUE(r.join_all_for(kLong));
  EXPECT_EQ(State::Failed, r.poll());
  EXPECT_EQ(3, r.error()->user_code());
  EXPECT_EQ(0u, r.live_threads());
}

TEST(Runner, EveryErrorIsKeptWithoutStopOnError) {
  Runner r = Runner::start({.name = "hpp-many", .stop_on_error = false}, [](Task& t) {
    t.spawn("hpp-a", [](Task& c) { c.fail(1, "a"); });
    t.spawn("hpp-b", [](Task& c) { c.fail_with(TETHER_E_PANIC, 2, "b"); });
  });
  ASSERT_TRUE(r.join_all_for(kLong));
  EXPECT_EQ(2u, r.error_count());
  const std::vector<Error> all = r.errors();
  ASSERT_EQ(2u, all.size());
  int64_t sum = 0;
  for (const Error& e : all) {
    sum += e.user_code();
    if (e.user_code() == 2) {
      EXPECT_EQ(TETHER_E_PANIC, e.code());
      EXPECT_EQ("hpp-b", e.thread_name());
    }
  }
  EXPECT_EQ(3, sum);
}

TEST(Runner, ReportErrorFromAForeignThread) {
  Gate reported;
  Runner r = Runner::start({.name = "hpp-foreign"}, [&](Task&) { EXPECT_TRUE(reported.wait_for()); });
  std::thread foreign([&] { r.report_error(TETHER_E_TASK_FAILED, 9, "from a foreign thread"); });
  foreign.join();
  ASSERT_TRUE(r.join_for(kLong));
  EXPECT_EQ(State::Failed, r.poll());
  EXPECT_EQ(9, r.error()->user_code());
  EXPECT_EQ("from a foreign thread", r.error()->message());
  reported.set();
  ASSERT_TRUE(r.join_all_for(kLong));
  // A terminal scope that succeeded or was cancelled refuses reports; a failed one keeps them.
  Runner ok = Runner::start([] {});
  ASSERT_TRUE(ok.join_for(kLong));
  EXPECT_EQ(TETHER_E_WRONG_STATE, thrown([&] { ok.report_error(TETHER_E_TASK_FAILED, 1, "late"); }).code());
}

TEST(Runner, OnDoneRunsOnceAndIsDropped) {
  Gate go;
  Counter notified;
  auto drops = std::make_shared<Counter>();
  Runner r = Runner::start({.name = "hpp-ondone"}, [&](Task&) { EXPECT_TRUE(go.wait_for()); });
  r.on_done([&notified, token = Token(drops)] { notified.add(); });
  EXPECT_EQ(0, notified.get());
  go.set();
  ASSERT_TRUE(notified.wait_for(1));
  ASSERT_TRUE(drops->wait_for(1));
  r.on_done([&notified] { notified.add(); });  // already terminal: runs now, on this thread
  EXPECT_EQ(2, notified.get());
  EXPECT_EQ(1, drops->get());
}

TEST(Runner, MoveOnlyCallable) {
  auto p = std::make_unique<int>(11);
  Runner r = Runner::start([p = std::move(p)](Task&) { return *p + 1; });
  ASSERT_TRUE(r.join_for(kLong));
  EXPECT_EQ(12, r.join_result<int>());
}

TEST(Runner, DestructorCancelsAndWaitsForEveryThread) {
  auto drops = std::make_shared<Counter>();
  Gate started;
  std::atomic<bool> child_ended{false};
  {
    Runner r = Runner::start({.name = "hpp-dtor"}, [&, token = Token(drops)](Task& t) {
      t.spawn("hpp-dtor-kid", [&](Task& c) {
        EXPECT_TRUE(until([&] { return c.stop_requested(); }));
        child_ended = true;
      });
      started.set();
    });
    ASSERT_TRUE(started.wait_for());
  }  // ~Runner: cancel, then wait for the target and the child
  EXPECT_TRUE(child_ended.load());
  EXPECT_EQ(1, drops->get());
}

TEST(Runner, FailedStartThrowsAndDropsTheClosureOnce) {
  auto drops = std::make_shared<Counter>();
  const Error e = thrown([&] {
    Runner r = Runner::start({.stack_size = 1}, [token = Token(drops)](Task&) {});
  });
  EXPECT_EQ(TETHER_E_INVALID_ARGUMENT, e.code());
  EXPECT_FALSE(e.message().empty());
  EXPECT_EQ(1, drops->get()) << "dropped before start returned";
}

}  // namespace
