// exceptions_test.cpp: C++ exceptions thrown by user callbacks are caught at the task
// boundary (API.md section 4): TETHER_E_EXCEPTION with what() and the demangled type, or
// TETHER_E_UNKNOWN_EXCEPTION; nothing crosses the C boundary.
#include <gtest/gtest.h>

#include <new>
#include <stdexcept>
#include <string>

#include "test_support.h"

namespace tether_test::errors {
// A custom std::exception in a namespace: its demangled name must be recorded.
class DiskFull : public std::runtime_error {
 public:
  DiskFull() : std::runtime_error("disk is full") {}
};
// Not a std::exception.
struct Plain {
  int value = 1;
};
}  // namespace tether_test::errors

namespace {

using namespace tt;

// Plain function pointers with the tether_fn signature that throw: exactly what C++ user
// code handing a callback to the C API looks like.
tether_status throw_runtime_error(tether_task *, void *) { throw std::runtime_error("boom"); }
tether_status throw_custom(tether_task *, void *) { throw tether_test::errors::DiskFull(); }
tether_status throw_int(tether_task *, void *) { throw 42; }
tether_status throw_plain(tether_task *, void *) { throw tether_test::errors::Plain{}; }
tether_status throw_bad_alloc(tether_task *, void *) { throw std::bad_alloc(); }

struct Outcome {
  int32_t state = -1;
  int32_t code = -1;
  std::string message, type_name, thread_name;
  size_t error_count = 0;
};

// run_to_end: starts fn with a counted arg, joins, reads the first error, releases.
Outcome run_to_end(tether_fn fn, Counter &drops, const char *name = "thrower") {
  Outcome out;
  Runner r;
  const tether_runner_options o = runner_options(name);
  EXPECT_EQ(TETHER_OK, tether_runner_start(&o, fn, &drops, count_drop, r.out()));
  if (r.id() == 0) return out;
  EXPECT_EQ(TETHER_OK, tether_runner_join_all(r.get(), kLongNs));
  out.state = r.state();
  out.error_count = tether_runner_error_count(r.get());
  Error e = first_error(r.get());
  if (!e.null()) {
    out.code = e.code();
    out.message = e.message();
    out.type_name = e.type_name();
    out.thread_name = e.thread_name();
  }
  return out;
}

TEST(Exceptions, StdRuntimeErrorBecomesExceptionWithWhatAndType) {
  Counter drops;
  const Outcome o = run_to_end(throw_runtime_error, drops);
  EXPECT_EQ(TETHER_FAILED, o.state);
  EXPECT_EQ(TETHER_E_EXCEPTION, o.code);
  EXPECT_EQ("boom", o.message);
  EXPECT_EQ("std::runtime_error", o.type_name);
  EXPECT_EQ("thrower", o.thread_name);
  EXPECT_EQ(1u, o.error_count);
  EXPECT_TRUE(drops.wait_for(1, kLong));
  EXPECT_EQ(1, drops.get()) << "arg of a throwing target must be dropped once";
}

TEST(Exceptions, CustomExceptionInNamespaceGivesDemangledTypeName) {
  Counter drops;
  const Outcome o = run_to_end(throw_custom, drops);
  EXPECT_EQ(TETHER_FAILED, o.state);
  EXPECT_EQ(TETHER_E_EXCEPTION, o.code);
  EXPECT_EQ("disk is full", o.message);
  EXPECT_EQ("tether_test::errors::DiskFull", o.type_name);
  EXPECT_TRUE(drops.wait_for(1, kLong));
  EXPECT_EQ(1, drops.get());
}

TEST(Exceptions, ThrowIntBecomesUnknownExceptionOfTypeInt) {
  Counter drops;
  const Outcome o = run_to_end(throw_int, drops);
  EXPECT_EQ(TETHER_FAILED, o.state);
  EXPECT_EQ(TETHER_E_UNKNOWN_EXCEPTION, o.code);
  EXPECT_EQ("int", o.type_name);
  EXPECT_TRUE(drops.wait_for(1, kLong));
  EXPECT_EQ(1, drops.get());
}

TEST(Exceptions, NonStdClassBecomesUnknownExceptionWithItsTypeName) {
  Counter drops;
  const Outcome o = run_to_end(throw_plain, drops);
  EXPECT_EQ(TETHER_FAILED, o.state);
  EXPECT_EQ(TETHER_E_UNKNOWN_EXCEPTION, o.code);
  EXPECT_EQ("tether_test::errors::Plain", o.type_name);
  EXPECT_TRUE(drops.wait_for(1, kLong));
}

// User code throwing std::bad_alloc is user code throwing a std::exception: the library's
// own out-of-memory status is for the library's allocations.
TEST(Exceptions, UserBadAllocIsAnException) {
  Counter drops;
  const Outcome o = run_to_end(throw_bad_alloc, drops);
  EXPECT_EQ(TETHER_FAILED, o.state);
  EXPECT_EQ(TETHER_E_EXCEPTION, o.code);
  EXPECT_EQ("std::bad_alloc", o.type_name);
  EXPECT_TRUE(drops.wait_for(1, kLong));
}

// A nested thread that throws fails the scope like any failure: while the target runs, with
// the nested thread's name, and the arg of both dropped once.
TEST(Exceptions, NestedThreadThrowFailsScope) {
  Gate gate, started;
  Counter drops;
  std::atomic<int> target_stop{-1};
  {
    Runner r;
    r.open_on_exit({&gate});
    ASSERT_EQ(TETHER_OK, start_runner(nullptr, [&](tether_task *t) {
      (void)tether_task_spawn(t, "nested-throw", throw_custom, &drops, count_drop);
      started.set();
      (void)gate.wait_for(kLong);
      target_stop = tether_task_stop_requested(t);
      return tether_status{TETHER_OK};
    }, &drops, r.out()));
    ASSERT_TRUE(started.wait_for(kLong));
    ASSERT_EQ(TETHER_OK, tether_runner_join(r.get(), kLongNs));
    EXPECT_EQ(TETHER_FAILED, r.state());
    {
      Error e = first_error(r.get());
      ASSERT_FALSE(e.null());
      EXPECT_EQ(TETHER_E_EXCEPTION, e.code());
      EXPECT_EQ("tether_test::errors::DiskFull", e.type_name());
      EXPECT_EQ("nested-throw", e.thread_name());
    }
    gate.set();
    ASSERT_EQ(TETHER_OK, tether_runner_join_all(r.get(), kLongNs));
    EXPECT_NE(0, target_stop.load());
  }
  EXPECT_TRUE(drops.wait_for(2, kLong));
  EXPECT_EQ(2, drops.get());
}

// A result set before the throw is dropped once (the outcome is not SUCCEEDED).
TEST(Exceptions, ResultSetBeforeThrowIsDroppedOnce) {
  Counter drops, result_drops;
  {
    Runner r;
    ASSERT_EQ(TETHER_OK, start_runner(nullptr, [&](tether_task *t) -> tether_status {
      (void)tether_task_set_result(t, &result_drops, count_drop);
      throw std::logic_error("after result");
    }, &drops, r.out()));
    ASSERT_EQ(TETHER_OK, tether_runner_join_all(r.get(), kLongNs));
    EXPECT_EQ(TETHER_FAILED, r.state());
    Error e = first_error(r.get());
    ASSERT_FALSE(e.null());
    EXPECT_EQ(TETHER_E_EXCEPTION, e.code());
    EXPECT_EQ("after result", e.message());
    EXPECT_EQ("std::logic_error", e.type_name());
    void *out = nullptr;
    EXPECT_EQ(TETHER_E_WRONG_STATE, tether_runner_take_result(r.get(), &out));
  }
  EXPECT_TRUE(result_drops.wait_for(1, kLong));
  EXPECT_EQ(1, result_drops.get());
  EXPECT_TRUE(drops.wait_for(1, kLong));
  EXPECT_EQ(1, drops.get());
}

// Many throwing nested threads at once: every exception caught and recorded, the process
// survives, nothing leaks (valgrind/ASan builds check the latter).
TEST(Exceptions, ManyConcurrentThrowsAllRecorded) {
  constexpr int kThreads = 8;
  Counter drops;
  {
    Runner r;
    ASSERT_EQ(TETHER_OK, start_runner(nullptr, [&](tether_task *t) {
      for (int i = 0; i < kThreads; ++i) {
        (void)tether_task_spawn(t, "thrower", throw_runtime_error, &drops, count_drop);
      }
      return tether_status{TETHER_OK};
    }, &drops, r.out()));
    ASSERT_EQ(TETHER_OK, tether_runner_join_all(r.get(), kLongNs));
    EXPECT_EQ(TETHER_FAILED, r.state());
    ASSERT_EQ(static_cast<size_t>(kThreads), tether_runner_error_count(r.get()));
    for (size_t i = 0; i < kThreads; ++i) {
      Error e = error_at(r.get(), i);
      ASSERT_FALSE(e.null());
      EXPECT_EQ(TETHER_E_EXCEPTION, e.code());
      EXPECT_EQ("boom", e.message());
    }
  }
  EXPECT_TRUE(drops.wait_for(kThreads + 1, kLong));
  EXPECT_EQ(kThreads + 1, drops.get());
}

}  // namespace
