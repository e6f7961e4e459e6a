// executor_test.cpp: tether::Executor and tether::Future<R> — submit, post, Future<void>,
// exceptions, cancel, on_done, wait_any, bounded queues, manual executors, self-waits.
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "support.h"

namespace {

using namespace hpp_test;
using tether::Error;
using tether::Executor;
using tether::Future;
using tether::State;
using tether::Task;

TEST(Executor, SubmitReturnsAFutureOfTheValueOnTheExecutorThread) {
  Executor e = Executor::create({.name = "hpp-exec"});
  Future<uint64_t> tid = e.submit([](Task& t) {
    EXPECT_EQ("hpp-exec", t.thread_name());
    return tether_test::tid();
  });
  ASSERT_TRUE(tid.wait_for(kLong));
  EXPECT_EQ(State::Succeeded, tid.poll());
  const uint64_t id = tid.get();
  EXPECT_NE(tether_test::tid(), id);
  EXPECT_EQ(id, e.stats().os_thread_id);
  EXPECT_EQ(TETHER_E_WRONG_STATE, thrown([&] { (void)tid.get(); }).code()) << "a result is taken once";
}

TEST(Executor, PostRunsInOrderOnOneThreadAndKeepsThreadLocals) {
  Executor e = Executor::create({.name = "hpp-order"});
  static thread_local int tl = 0;
  auto seen = std::make_shared<std::vector<int>>();
  for (int i = 0; i < 100; ++i) {
    e.post([seen, i] {
      tl += 1;
      seen->push_back(i);
    });
  }
  Future<int> last = e.submit([] { return tl; });
  ASSERT_TRUE(last.wait_for(kLong));
  EXPECT_EQ(100, last.get()) << "thread-local state persists between tasks";
  ASSERT_EQ(100u, seen->size());
  for (int i = 0; i < 100; ++i) EXPECT_EQ(i, (*seen)[static_cast<size_t>(i)]);
  EXPECT_EQ(101u, e.stats().completed);
}

TEST(Executor, FutureOfVoid) {
  Executor e = Executor::create();
  Counter ran;
  Future<void> f = e.submit([&ran] { ran.add(); });
  static_assert(std::is_same_v<decltype(f.get()), void>);
  ASSERT_TRUE(f.wait_for(kLong));
  f.get();
  f.get();  // Future<void>: no result to take, the outcome is checked again
  EXPECT_EQ(1, ran.get());
  EXPECT_FALSE(f.error().has_value());
}

TEST(Executor, ExceptionInASubmittedLambdaIsThrownByGet) {
  Executor e = Executor::create({.name = "hpp-throw"});
  Future<int> f = e.submit([]() -> int { throw std::runtime_error("submitted boom"); });
  ASSERT_TRUE(f.wait_for(kLong));
  EXPECT_EQ(State::Failed, f.poll());
  const Error err = thrown([&] { (void)f.get(); });
  EXPECT_EQ(TETHER_E_EXCEPTION, err.code());
  EXPECT_EQ("submitted boom", err.message());
  EXPECT_EQ("std::runtime_error", err.type_name());
  EXPECT_EQ("hpp-throw", err.thread_name());
  ASSERT_TRUE(f.error().has_value());
  EXPECT_EQ(TETHER_E_EXCEPTION, f.error()->code());
}

TEST(Executor, TaskFailIsTheFuturesError) {
  Executor e = Executor::create();
  Future<std::string> f = e.submit([](Task& t) {
    t.fail(12, "no such file");
    return std::string("dropped");  // a failed task's result is dropped
  });
  ASSERT_TRUE(f.wait_for(kLong));
  const Error err = thrown([&] { (void)f.get(); });
  EXPECT_EQ(TETHER_E_TASK_FAILED, err.code());
  EXPECT_EQ(12, err.user_code());
  EXPECT_EQ("no such file", err.message());
}

TEST(Executor, FailedPostsAreCountedAndKept) {
  Executor e = Executor::create({.name = "hpp-ff"});
  e.post([] { throw std::logic_error("fire and forget"); });
  e.post([](Task& t) { t.fail(4, "four"); });
  Future<void> sync = e.submit([] {});
  ASSERT_TRUE(sync.wait_for(kLong));
  EXPECT_EQ(2u, e.stats().failed);
  const std::vector<Error> errs = e.errors();
  ASSERT_EQ(2u, errs.size());
  EXPECT_EQ(TETHER_E_EXCEPTION, errs[0].code());
  EXPECT_EQ("std::logic_error", errs[0].type_name());
  EXPECT_EQ("fire and forget", errs[0].message());
  EXPECT_EQ(TETHER_E_TASK_FAILED, errs[1].code());
  EXPECT_EQ(4, errs[1].user_code());
}

TEST(Executor, CancelPendingWorkNeverRunsAndDropsItsClosureAtOnce) {
  Executor e = Executor::create({.name = "hpp-cancel"});
  Gate started, go;
  Future<void> blocker = e.submit([&] {
    started.set();
    EXPECT_TRUE(go.wait_for());
  });
  ASSERT_TRUE(started.wait_for());
  auto drops = std::make_shared<Counter>();
  std::atomic<bool> ran{false};
  Future<int> pending = e.submit([&ran, token = Token(drops)] {
    ran = true;
    return 1;
  });
  EXPECT_EQ(State::Pending, pending.poll());
  EXPECT_FALSE(pending.error().has_value()) << "no error while pending";
  pending.cancel();
  EXPECT_EQ(State::Cancelled, pending.poll());
  EXPECT_EQ(1, drops->get()) << "a cancelled pending task's closure is dropped before cancel returns";
  const Error err = thrown([&] { (void)pending.get(); });
  EXPECT_EQ(TETHER_E_CANCELLED, err.code());
  go.set();
  ASSERT_TRUE(blocker.wait_for(kLong));
  blocker.get();
  Future<void> sync = e.submit([] {});
  ASSERT_TRUE(sync.wait_for(kLong));
  EXPECT_FALSE(ran.load());
  EXPECT_EQ(1, drops->get());
}

TEST(Executor, CancelRunningWorkRequestsStop) {
  Executor e = Executor::create();
  Gate started;
  Future<int> f = e.submit([&](Task& t) {
    started.set();
    EXPECT_TRUE(until([&] { return t.stop_requested(); }));
    return 5;  // returning normally after a cancel: CANCELLED, the value dropped
  });
  ASSERT_TRUE(started.wait_for());
  EXPECT_EQ(State::Running, f.poll());
  f.cancel();
  ASSERT_TRUE(f.wait_for(kLong));
  EXPECT_EQ(State::Cancelled, f.poll());
  EXPECT_EQ(TETHER_E_CANCELLED, thrown([&] { (void)f.get(); }).code());
}

TEST(Executor, OnDoneRunsOnceWhenTerminal) {
  Executor e = Executor::create();
  Gate go;
  Counter notified;
  auto drops = std::make_shared<Counter>();
  Future<int> f = e.submit([&] {
    EXPECT_TRUE(go.wait_for());
    return 3;
  });
  f.on_done([&notified, token = Token(drops)] { notified.add(); });
  EXPECT_EQ(0, notified.get());
  go.set();
  ASSERT_TRUE(notified.wait_for(1));
  ASSERT_TRUE(drops->wait_for(1));
  EXPECT_EQ(3, f.get());
  EXPECT_EQ(1, notified.get());
}

TEST(Executor, OnDoneStillRunsAfterTheFutureIsReleased) {
  Executor e = Executor::create();
  Gate go;
  Counter notified;
  Future<int> f = e.submit([&] {
    EXPECT_TRUE(go.wait_for());
    return 3;
  });
  f.on_done([&notified] { notified.add(); });
  f.release();
  EXPECT_FALSE(f.valid());
  go.set();
  EXPECT_TRUE(notified.wait_for(1));
}

TEST(Executor, WaitAnyGivesTheLowestTerminalIndex) {
  Executor slow = Executor::create({.name = "hpp-slow"});
  Executor fast = Executor::create({.name = "hpp-fast"});
  Gate go;
  std::vector<Future<int>> fs;
  fs.push_back(slow.submit([&] {
    EXPECT_TRUE(go.wait_for());
    return 0;
  }));
  fs.push_back(fast.submit([] { return 1; }));
  const std::optional<size_t> i = tether::wait_any_for(fs, kLong);
  ASSERT_TRUE(i.has_value());
  EXPECT_EQ(1u, *i);
  EXPECT_EQ(1, fs[1].get());
  EXPECT_EQ(TETHER_E_INVALID_HANDLE, thrown([] { (void)tether::wait_any(std::vector<Future<int>>(1)); }).code())
      << "an empty Future in the range";
  go.set();
  ASSERT_TRUE(fs[0].wait_for(kLong));
  EXPECT_EQ(0u, tether::wait_any(fs));
  EXPECT_EQ(TETHER_E_INVALID_ARGUMENT, thrown([] { (void)tether::wait_any(std::vector<Future<int>>()); }).code());
}

TEST(Executor, WaitAnyTimesOut) {
  Executor e = Executor::create();
  Gate go;
  std::vector<Future<void>> fs;
  fs.push_back(e.submit([&] { EXPECT_TRUE(go.wait_for()); }));
  EXPECT_FALSE(tether::wait_any_for(fs, std::chrono::milliseconds(1)).has_value());
  go.set();
  EXPECT_EQ(0u, tether::wait_any_for(fs, kLong).value());
}

TEST(Executor, BoundedQueueRefusesWhenFull) {
  Executor e = Executor::create({.name = "hpp-bounded", .queue_capacity = 1});
  Gate started, go;
  Future<void> blocker = e.submit([&] {
    started.set();
    EXPECT_TRUE(go.wait_for());
  });
  ASSERT_TRUE(started.wait_for());
  Future<int> queued = e.submit([] { return 2; });
  auto drops = std::make_shared<Counter>();
  const Error full = thrown([&] { (void)e.submit([token = Token(drops)] { return 3; }); });
  EXPECT_EQ(TETHER_E_QUEUE_FULL, full.code());
  EXPECT_EQ(1, drops->get()) << "a rejected closure is dropped before submit returns";
  const Error timed_out = thrown([&] { (void)e.submit_for(std::chrono::milliseconds(5), [] { return 4; }); });
  EXPECT_EQ(TETHER_E_TIMEOUT, timed_out.code());
  EXPECT_EQ(TETHER_E_QUEUE_FULL, thrown([&] { e.post([] {}); }).code());
  EXPECT_GE(e.stats().rejected, 2u);
  go.set();
  ASSERT_TRUE(queued.wait_for(kLong));
  EXPECT_EQ(2, queued.get());
  Future<int> roomy = e.submit_for(kLong, [] { return 5; });
  ASSERT_TRUE(roomy.wait_for(kLong));
  EXPECT_EQ(5, roomy.get());
}

TEST(Executor, WaitingOnYourselfIsDeadlock) {
  Executor e = Executor::create({.name = "hpp-self"});
  Future<int32_t> f = e.submit([&e] {
    Future<int> inner = e.submit([] { return 1; });
    try {
      (void)inner.get();  // queued behind this very task, on this very thread
    } catch (const Error& err) {
      return err.code();
    }
    return int32_t{TETHER_OK};
  });
  ASSERT_TRUE(f.wait_for(kLong));
  EXPECT_EQ(TETHER_E_DEADLOCK, f.get());
}

TEST(Executor, ATetherErrorEscapingALambdaIsAnException) {
  Executor e = Executor::create();
  Future<void> f = e.submit([] { throw Error(TETHER_E_NOT_FOUND, "inner"); });
  ASSERT_TRUE(f.wait_for(kLong));
  const Error err = thrown([&] { f.get(); });
  EXPECT_EQ(TETHER_E_EXCEPTION, err.code());
  EXPECT_EQ("tether::Error", err.type_name());
  EXPECT_EQ("TETHER_E_NOT_FOUND: inner", err.message());
}

// The manual executor tests drive it from a thread of their own, which ends with the
// test: the library keeps "this thread drives manual lane L" in a thread-local it never
// clears, so on a long-lived thread (gtest's main thread, when the binary runs every test
// in one process) a later executor or actor whose lane reuses L's address would see that
// thread as its own (a false TETHER_E_DEADLOCK; releases that do not wait). Library bug,
// reported; see the suite's note.
template <class Body>
void on_own_thread(Body&& body) {
  std::thread t(std::forward<Body>(body));
  t.join();
}

TEST(Executor, ManualExecutorRunsOnTheCallingThread) {
  on_own_thread([] {
    Executor e = Executor::create({.name = "hpp-manual", .manual = true});
    Future<uint64_t> f = e.submit([] { return tether_test::tid(); });
    EXPECT_EQ(0u, e.stats().os_thread_id);
    EXPECT_TRUE(e.run_for(std::chrono::milliseconds(1)));  // runs what is queued, then the timeout passes
    ASSERT_TRUE(f.wait_for(std::chrono::milliseconds(0)));
    EXPECT_EQ(tether_test::tid(), f.get());
    EXPECT_EQ(tether_test::tid(), e.stats().os_thread_id);
    // Another thread may not drive it.
    std::optional<int32_t> code;
    std::thread other([&] {
      try {
        (void)e.run_for(std::chrono::milliseconds(0));
      } catch (const Error& err) {
        code = err.code();
      }
    });
    other.join();
    EXPECT_EQ(TETHER_E_WRONG_STATE, code.value_or(TETHER_OK));
    // Released from the owner thread outside run(), what is queued runs right here.
    Counter ran;
    e.post([&ran] { ran.add(); });
    e.release();
    EXPECT_EQ(1, ran.get());
  });
}

TEST(Executor, RunReturnsWhenReleasedFromAnotherThread) {
  on_own_thread([] {
    Executor e = Executor::create({.manual = true});
    const tether_executor handle = e.c_handle();  // to check afterwards that it ended
    Gate running;
    e.post([&running] { running.set(); });
    std::thread releaser([&] {
      EXPECT_TRUE(running.wait_for());
      e.release_nowait();
    });
    e.run();  // returns once released
    releaser.join();
    EXPECT_FALSE(e.valid());
    EXPECT_EQ(TETHER_E_INVALID_HANDLE, tether_executor_release(handle));
  });
}

TEST(Executor, DestructorRunsWhatIsQueued) {
  Counter ran;
  {
    Executor e = Executor::create();
    for (int i = 0; i < 10; ++i) e.post([&ran] { ran.add(); });
  }
  EXPECT_EQ(10, ran.get());
}

TEST(Executor, BadOptionsThrowInvalidArgument) {
  const Error e = thrown([] { (void)Executor::create({.cpu = -5}); });
  EXPECT_EQ(TETHER_E_INVALID_ARGUMENT, e.code());
  EXPECT_FALSE(e.message().empty());
  EXPECT_EQ("", e.thread_name());
  EXPECT_EQ(TETHER_E_INVALID_ARGUMENT,
            thrown([] { (void)Executor::create({.idle_spin = std::chrono::nanoseconds(-1)}); }).code());
}

}  // namespace
