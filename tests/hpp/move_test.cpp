// move_test.cpp: the owners are move-only; a moved-from owner is empty, its destructor
// does nothing, and every method on it throws tether::Error TETHER_E_INVALID_HANDLE. Also
// tether::Error itself, the duration conversion, and detail::UniqueHandle (each handle
// released exactly once).
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "support.h"

namespace {

using namespace hpp_test;
using tether::Actor;
using tether::Error;
using tether::Executor;
using tether::Future;
using tether::Runner;
using tether::StopMode;
using tether::Task;

template <class T>
constexpr bool move_only_owner = !std::is_copy_constructible_v<T> && !std::is_copy_assignable_v<T> &&
                                 std::is_nothrow_move_constructible_v<T> && std::is_nothrow_move_assignable_v<T> &&
                                 std::is_nothrow_default_constructible_v<T>;
static_assert(move_only_owner<Runner>);
static_assert(move_only_owner<Executor>);
static_assert(move_only_owner<Future<int>>);
static_assert(move_only_owner<Future<void>>);
static_assert(move_only_owner<Actor<int>>);
static_assert(move_only_owner<tether::Compiled<int, int>>);
static_assert(move_only_owner<tether::Execution<int>>);
static_assert(!std::is_copy_constructible_v<tether::Graph<int>> && !std::is_copy_assignable_v<tether::Graph<int>> &&
              std::is_nothrow_move_constructible_v<tether::Graph<int>> &&
              std::is_nothrow_move_assignable_v<tether::Graph<int>>);
static_assert(!std::is_copy_constructible_v<Task> && !std::is_move_constructible_v<Task>);
static_assert(std::is_nothrow_copy_constructible_v<Error>, "an exception type copies without throwing");
static_assert(std::is_base_of_v<std::exception, Error>);

// invalid_handle: f() throws TETHER_E_INVALID_HANDLE.
template <class F>
void expect_invalid_handle(F&& f, const char* what) {
  const Error e = thrown(std::forward<F>(f));
  EXPECT_EQ(TETHER_E_INVALID_HANDLE, e.code()) << what;
  EXPECT_STREQ("TETHER_E_INVALID_HANDLE", e.status_name()) << what;
}

TEST(Move, MovedFromRunnerIsEmpty) {
  Runner a = Runner::start({.name = "hpp-mv"}, [](Task&) { return 3; });
  Runner b = std::move(a);
  EXPECT_FALSE(a.valid());  // NOLINT(bugprone-use-after-move): the point of the test
  EXPECT_TRUE(b.valid());
  expect_invalid_handle([&] { (void)a.poll(); }, "poll");
  expect_invalid_handle([&] { a.join(); }, "join");
  expect_invalid_handle([&] { (void)a.join_for(kLong); }, "join_for");
  expect_invalid_handle([&] { (void)a.join_all_for(kLong); }, "join_all_for");
  expect_invalid_handle([&] { (void)a.take_result<int>(); }, "take_result");
  expect_invalid_handle([&] { (void)a.error(); }, "error");
  expect_invalid_handle([&] { (void)a.error_count(); }, "error_count");
  expect_invalid_handle([&] { (void)a.errors(); }, "errors");
  expect_invalid_handle([&] { (void)a.live_threads(); }, "live_threads");
  expect_invalid_handle([&] { a.cancel(); }, "cancel");
  expect_invalid_handle([&] { a.report_error(TETHER_E_TASK_FAILED, 1, "x"); }, "report_error");
  expect_invalid_handle([&] { a.on_done([] {}); }, "on_done");
  expect_invalid_handle([&] { a.release(); }, "release");
  expect_invalid_handle([&] { a.release_nowait(); }, "release_nowait");
  ASSERT_TRUE(b.join_for(kLong));
  EXPECT_EQ(3, b.join_result<int>()) << "the result type travels with the move";
  // Move assignment releases what the target owned, then takes over.
  Runner c = Runner::start([](Task&) { return std::string("c"); });
  c = std::move(b);
  EXPECT_FALSE(b.valid());  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(TETHER_E_WRONG_STATE, thrown([&] { (void)c.take_result<int>(); }).code()) << "taken already";
  c.release();
  EXPECT_FALSE(c.valid());
  expect_invalid_handle([&] { c.release(); }, "release twice");
}

TEST(Move, MovedFromExecutorIsEmpty) {
  Executor a = Executor::create({.name = "hpp-mv"});
  Executor b(std::move(a));
  EXPECT_FALSE(a.valid());  // NOLINT(bugprone-use-after-move)
  expect_invalid_handle([&] { (void)a.submit([] { return 1; }); }, "submit");
  expect_invalid_handle([&] { (void)a.submit_for(kLong, [] {}); }, "submit_for");
  expect_invalid_handle([&] { a.post([] {}); }, "post");
  expect_invalid_handle([&] { (void)a.stats(); }, "stats");
  expect_invalid_handle([&] { (void)a.errors(); }, "errors");
  expect_invalid_handle([&] { (void)a.run_for(std::chrono::milliseconds(0)); }, "run_for");
  expect_invalid_handle([&] { a.release(); }, "release");
  expect_invalid_handle([&] { a.release_nowait(); }, "release_nowait");
  Future<int> f = b.submit([] { return 2; });
  ASSERT_TRUE(f.wait_for(kLong));
  EXPECT_EQ(2, f.get());
  Executor c;
  c = std::move(b);
  Future<int> g = c.submit([] { return 4; });
  ASSERT_TRUE(g.wait_for(kLong));
  EXPECT_EQ(4, g.get());
}

TEST(Move, MovedFromFutureIsEmpty) {
  Executor e = Executor::create();
  Future<int> a = e.submit([] { return 5; });
  Future<int> b = std::move(a);
  EXPECT_FALSE(a.valid());  // NOLINT(bugprone-use-after-move)
  EXPECT_FALSE(static_cast<bool>(a));
  expect_invalid_handle([&] { (void)a.poll(); }, "poll");
  expect_invalid_handle([&] { a.wait(); }, "wait");
  expect_invalid_handle([&] { (void)a.wait_for(kLong); }, "wait_for");
  expect_invalid_handle([&] { (void)a.get(); }, "get");
  expect_invalid_handle([&] { (void)a.error(); }, "error");
  expect_invalid_handle([&] { a.cancel(); }, "cancel");
  expect_invalid_handle([&] { a.on_done([] {}); }, "on_done");
  expect_invalid_handle([&] { a.release(); }, "release");
  ASSERT_TRUE(b.wait_for(kLong));
  EXPECT_EQ(5, b.get());
  Future<void> v;
  expect_invalid_handle([&] { v.get(); }, "default-constructed Future<void>");
  v = e.submit([] {});
  ASSERT_TRUE(v.wait_for(kLong));
  v.get();
}

TEST(Move, MovedFromActorIsEmpty) {
  auto dtors = std::make_shared<Counter>();
  struct S {
    std::shared_ptr<Counter> dtors;
    ~S() { dtors->add(); }
  };
  Actor<S> a = Actor<S>::create([dtors] { return S{dtors}; });
  Actor<S> b = std::move(a);
  EXPECT_FALSE(a.valid());  // NOLINT(bugprone-use-after-move)
  expect_invalid_handle([&] { (void)a.call([](S&) {}); }, "call");
  expect_invalid_handle([&] { (void)a.call_in("io", [](S&) {}); }, "call_in");
  expect_invalid_handle([&] { (void)a.call_for(kLong, [](S&) {}); }, "call_for");
  expect_invalid_handle([&] { a.post([](S&) {}); }, "post");
  expect_invalid_handle([&] { a.post_in("io", [](S&) {}); }, "post_in");
  expect_invalid_handle([&] { (void)a.state(); }, "state");
  expect_invalid_handle([&] { (void)a.dead_cause(); }, "dead_cause");
  expect_invalid_handle([&] { (void)a.stats(); }, "stats");
  expect_invalid_handle([&] { (void)a.errors(); }, "errors");
  expect_invalid_handle([&] { a.stop(); }, "stop");
  expect_invalid_handle([&] { (void)a.stop(StopMode::Cancel, kLong); }, "stop with a timeout");
  expect_invalid_handle([&] { a.release(); }, "release");
  expect_invalid_handle([&] { a.release_nowait(); }, "release_nowait");
  {
    Actor<S> c = std::move(b);  // b's destructor, when it comes, does nothing
    Future<int> f = c.call([](S&) { return 6; });
    ASSERT_TRUE(f.wait_for(kLong));
    EXPECT_EQ(6, f.get());
    EXPECT_EQ(0, dtors->get());
  }
  EXPECT_EQ(1, dtors->get()) << "exactly one owner destroyed the state";
  // Move assignment: the target's actor is drained and destroyed first.
  Actor<S> d = Actor<S>::create([dtors] { return S{dtors}; });
  d = Actor<S>::create([dtors] { return S{dtors}; });
  EXPECT_EQ(2, dtors->get());
  d.release();
  EXPECT_EQ(3, dtors->get());
}

// FakeHandle, fake_release: a handle type for detail::UniqueHandle whose release only
// records the id, so that the test can count the releases.
struct FakeHandle {
  uint64_t id;
};
std::vector<uint64_t> g_released;  // the test's thread only
tether_status fake_release(FakeHandle h) {
  g_released.push_back(h.id);
  return TETHER_OK;
}
using FakeOwner = tether::detail::UniqueHandle<FakeHandle, &fake_release>;
static_assert(!std::is_copy_constructible_v<FakeOwner> && !std::is_copy_assignable_v<FakeOwner> &&
              std::is_nothrow_move_constructible_v<FakeOwner> && std::is_nothrow_move_assignable_v<FakeOwner>);

TEST(UniqueHandle, ReleasesEachHandleExactlyOnce) {
  g_released.clear();
  {
    FakeOwner a(FakeHandle{1});
    FakeOwner b(std::move(a));
    EXPECT_FALSE(a.valid());  // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(0u, a.get().id);
    EXPECT_EQ(1u, b.get().id);
    FakeOwner c(FakeHandle{2});
    c = std::move(b);  // releases 2, then owns 1
    EXPECT_EQ(std::vector<uint64_t>{2}, g_released);
    EXPECT_FALSE(b.valid());  // NOLINT(bugprone-use-after-move)
    FakeOwner& same = c;
    c = std::move(same);  // self-move: nothing happens
    EXPECT_EQ(1u, c.get().id);
    FakeOwner d(FakeHandle{3});
    EXPECT_EQ(3u, d.take().id) << "take hands the handle over: d never releases it";
    EXPECT_FALSE(d.valid());
    FakeOwner e(FakeHandle{4});
    e.reset();
    e.reset();
    EXPECT_FALSE(e.valid());
    FakeOwner f;
    *f.out() = FakeHandle{5};
    EXPECT_TRUE(f.valid());
    EXPECT_EQ((std::vector<uint64_t>{2, 4}), g_released);
  }  // f releases 5, c releases 1; a, b, d and e are empty
  EXPECT_EQ((std::vector<uint64_t>{2, 4, 5, 1}), g_released);
}

TEST(Move, DestructorsOfEmptyOwnersDoNothing) {
  {
    Runner r;
    Executor e;
    Future<int> f;
    Actor<int> a;
    EXPECT_FALSE(r || e || f || a);
  }
  SUCCEED();
}

TEST(ErrorType, FromAFailingCallCarriesTheLastErrorText) {
  const Error e = thrown([] { (void)Runner::start({.stack_size = 1}, [] {}); });
  EXPECT_EQ(TETHER_E_INVALID_ARGUMENT, e.code());
  EXPECT_STREQ("TETHER_E_INVALID_ARGUMENT", e.status_name());
  EXPECT_STREQ(tether_status_describe(TETHER_E_INVALID_ARGUMENT), e.description());
  EXPECT_FALSE(e.message().empty());
  EXPECT_EQ("TETHER_E_INVALID_ARGUMENT: " + e.message(), e.what());
  EXPECT_EQ(0, e.user_code());
  EXPECT_EQ("", e.thread_name());
  EXPECT_EQ("", e.type_name());
  EXPECT_EQ(nullptr, e.cause());
}

TEST(ErrorType, ConstructedDirectly) {
  const Error e(TETHER_E_TIMEOUT, "");
  EXPECT_EQ(std::string(tether_status_describe(TETHER_E_TIMEOUT)), e.message());
  const Error copy = e;  // shares the fields
  EXPECT_EQ(e.what(), copy.what());
  try {
    throw Error(TETHER_E_NOT_FOUND, "no group");
  } catch (const std::exception& x) {
    EXPECT_STREQ("TETHER_E_NOT_FOUND: no group", x.what());
  }
}

TEST(ErrorType, TaskFailOffItsThreadThrows) {
  // A Task used after its callback (or from another thread) is refused, not used.
  Executor e = Executor::create();
  Future<int32_t> f = e.submit([](Task& t) {
    int32_t code = TETHER_OK;
    std::thread other([&] {
      try {
        t.fail(1, "from another thread");
      } catch (const Error& err) {
        code = err.code();
      }
    });
    other.join();
    return code;
  });
  ASSERT_TRUE(f.wait_for(kLong));
  EXPECT_EQ(TETHER_E_INVALID_ARGUMENT, f.get());
}

TEST(Durations, ZeroNegativeAndHugeTimeouts) {
  Executor e = Executor::create();
  Gate go;
  Future<void> f = e.submit([&] { EXPECT_TRUE(go.wait_for()); });
  EXPECT_FALSE(f.wait_for(std::chrono::nanoseconds(0)));
  EXPECT_FALSE(f.wait_for(std::chrono::seconds(-5))) << "a negative duration never blocks";
  EXPECT_FALSE(f.wait_for(std::chrono::duration<double, std::milli>(0.5)));
  go.set();
  EXPECT_TRUE(f.wait_for(std::chrono::hours::max())) << "saturates instead of overflowing";
  EXPECT_TRUE(f.wait_for(std::chrono::duration<double>(1e30)));
}

}  // namespace
