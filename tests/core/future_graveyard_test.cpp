// future_graveyard_test.cpp: FutureGraveyard (core/future_graveyard.h): after a wait that
// found its future pending, the drop of a quiet future waits for the thread's next drain;
// any other is dropped at once, and so is every drop after a wait that found its future
// settled; a full graveyard drains first; a thread's end drains it; a forked child never
// drops the parent's entries.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>
#include <thread>
#include <vector>

#include "core/future.h"
#include "core/future_graveyard.h"

namespace core_test {
namespace {

using tether::Deadline;
using tether::ErrorPtr;
using tether::Future;
using tether::FutureGraveyard;
using tether::UserArg;

// FakeFuture: a future that only says whether its drop would be quiet.
class FakeFuture final : public Future {
 public:
  explicit FakeFuture(bool quiet) : quiet_(quiet) {}
  [[nodiscard]] int32_t state() const noexcept override { return TETHER_SUCCEEDED; }
  [[nodiscard]] bool waits_for_nothing() const noexcept override { return true; }
  [[nodiscard]] int32_t wait_done(Deadline) override { return TETHER_OK; }
  [[nodiscard]] ErrorPtr first_error() const override { return nullptr; }
  [[nodiscard]] int32_t try_take_result(void**, NoResult* why) noexcept override {
    *why = NoResult::kTaken;
    return TETHER_E_WRONG_STATE;
  }
  void copy_outputs(void**, size_t) override {}
  void request_cancel() override {}
  void on_done(tether_notify_fn, UserArg) override {}
  [[nodiscard]] uint64_t add_notice(tether_notify_fn, UserArg) override { return 0; }
  void remove_notice(uint64_t) noexcept override {}
  [[nodiscard]] bool is_inside() const noexcept override { return false; }
  void end_future_handle() override {}
  [[nodiscard]] bool quiet_to_drop() const noexcept override { return quiet_; }

 private:
  const bool quiet_;
};

std::shared_ptr<Future> make(bool quiet, std::weak_ptr<Future>& watch) {
  auto f = std::make_shared<FakeFuture>(quiet);
  watch = f;
  return f;
}

TEST(FutureGraveyard, AQuietDropWaitsForTheNextDrain) {
  FutureGraveyard::waited(/*pending=*/true);
  std::weak_ptr<Future> watch;
  FutureGraveyard::defer(make(/*quiet=*/true, watch));
  EXPECT_FALSE(watch.expired()) << "put off";
  FutureGraveyard::waited(/*pending=*/true);
  EXPECT_TRUE(watch.expired()) << "a pending wait drains it first";
}

TEST(FutureGraveyard, AfterAWaitThatFoundItsFutureSettledEveryDropIsAtOnce) {
  FutureGraveyard::waited(/*pending=*/true);
  std::weak_ptr<Future> put_off;
  FutureGraveyard::defer(make(/*quiet=*/true, put_off));
  FutureGraveyard::waited(/*pending=*/false);
  EXPECT_FALSE(put_off.expired()) << "a settled wait does not drain";
  std::weak_ptr<Future> watch;
  FutureGraveyard::defer(make(/*quiet=*/true, watch));
  EXPECT_TRUE(watch.expired()) << "no wait to hide the drop in: dropped now";
  FutureGraveyard::drain();
  EXPECT_TRUE(put_off.expired());
}

TEST(FutureGraveyard, AnyOtherDropIsAtOnce) {
  FutureGraveyard::waited(/*pending=*/true);
  std::weak_ptr<Future> watch;
  FutureGraveyard::defer(make(/*quiet=*/false, watch));
  EXPECT_TRUE(watch.expired()) << "its drop may run user code: never put off";
  FutureGraveyard::defer(nullptr);  // nothing to drop: no effect
  FutureGraveyard::drain();
}

TEST(FutureGraveyard, AReferenceThatIsNotTheLastOnlyLetsGo) {
  std::weak_ptr<Future> watch;
  std::shared_ptr<Future> kept = make(/*quiet=*/true, watch);
  FutureGraveyard::waited(/*pending=*/true);
  FutureGraveyard::defer(std::shared_ptr<Future>(kept));
  EXPECT_EQ(2, kept.use_count());
  FutureGraveyard::drain();
  EXPECT_EQ(1, kept.use_count());
  kept.reset();
  EXPECT_TRUE(watch.expired());
}

TEST(FutureGraveyard, AFullGraveyardDrainsFirst) {
  FutureGraveyard::waited(/*pending=*/true);
  std::vector<std::weak_ptr<Future>> watches(FutureGraveyard::kEntries + 1);
  for (size_t i = 0; i < FutureGraveyard::kEntries; ++i) FutureGraveyard::defer(make(true, watches[i]));
  for (size_t i = 0; i < FutureGraveyard::kEntries; ++i) EXPECT_FALSE(watches[i].expired()) << i;
  FutureGraveyard::defer(make(true, watches.back()));
  for (size_t i = 0; i < FutureGraveyard::kEntries; ++i) EXPECT_TRUE(watches[i].expired()) << i;
  EXPECT_FALSE(watches.back().expired()) << "bounded: the newest waits, the rest went";
  FutureGraveyard::drain();
  EXPECT_TRUE(watches.back().expired());
}

TEST(FutureGraveyard, AThreadsEndDrainsIt) {
  std::weak_ptr<Future> watch;
  std::thread t([&] {
    FutureGraveyard::waited(/*pending=*/true);
    FutureGraveyard::defer(make(/*quiet=*/true, watch));
  });
  t.join();
  EXPECT_TRUE(watch.expired()) << "the thread's cleanup dropped it";
}

TEST(FutureGraveyard, AForkedChildNeverDropsTheParentsEntries) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "ThreadSanitizer does not support fork() in a multithreaded process";
#endif
  FutureGraveyard::waited(/*pending=*/true);
  std::weak_ptr<Future> watch;
  FutureGraveyard::defer(make(/*quiet=*/true, watch));
  ASSERT_FALSE(watch.expired());
  const pid_t pid = fork();
  ASSERT_NE(-1, pid);
  if (pid == 0) {
    // The library's child handler ran: the entry is abandoned, and a drain drops nothing.
    FutureGraveyard::drain();
    _exit(watch.expired() ? 1 : 0);
  }
  int status = 0;
  ASSERT_EQ(pid, waitpid(pid, &status, 0));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(0, WEXITSTATUS(status)) << "the child dropped a parent's future";
  EXPECT_FALSE(watch.expired());
  FutureGraveyard::drain();
  EXPECT_TRUE(watch.expired());
}

}  // namespace
}  // namespace core_test
