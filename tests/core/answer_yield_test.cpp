// The consumer that answers a waited call yields the CPU at once when the caller shares
// it and has not parked (core/pinned_lane.h, PinnedLane::answered_waiter): the caller,
// preempted by the consumer it woke, takes its answer before the consumer's bookkeeping.
// A parked caller is woken instead (WaitedCall::end says which), and a caller on another
// CPU needs no yield at all.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <tether/tether.h>

#include <cstdint>
#include <future>
#include <thread>
#include <vector>

#include "core/pinned_lane.h"
#include "core/waited_call.h"
#include "support/waits.h"

namespace core_test {
namespace {

using tether_test::Clock;
using tether_test::kLong;
using tether::answer_yields_made;
using tether::forget_yields_handed_away;
using tether::WaitedCall;

std::vector<int> usable_cpus() {
  cpu_set_t set;
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

// PinHere: the calling thread on one CPU for the scope.
class PinHere {
 public:
  explicit PinHere(int cpu) {
    ok_ = pthread_getaffinity_np(pthread_self(), sizeof saved_, &saved_) == 0;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    ok_ = ok_ && pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0;
  }
  ~PinHere() { (void)pthread_setaffinity_np(pthread_self(), sizeof saved_, &saved_); }
  PinHere(const PinHere&) = delete;
  PinHere& operator=(const PinHere&) = delete;
  [[nodiscard]] bool ok() const { return ok_; }

 private:
  cpu_set_t saved_{};
  bool ok_ = false;
};

tether_status NoState(tether_task*, void*, void** state) {
  *state = nullptr;
  return TETHER_OK;
}
tether_status AddOne(tether_task* t, void*, void* arg) {
  return tether_task_set_result(t, reinterpret_cast<void*>(reinterpret_cast<intptr_t>(arg) + 1), nullptr);
}

// ActorOn: an actor on an executor of its own, pinned to cpu.
struct ActorOn {
  tether_executor executor{0};
  tether_actor actor{0};
  explicit ActorOn(int cpu) {
    tether_executor_options eo;
    tether_executor_options_init(&eo);
    eo.cpu = cpu;
    EXPECT_EQ(tether_executor_create(&eo, &executor), TETHER_OK);
    tether_actor_options o;
    tether_actor_options_init(&o);
    o.executor = executor;
    EXPECT_EQ(tether_actor_create(&o, NoState, nullptr, nullptr, nullptr, &actor), TETHER_OK);
  }
  ~ActorOn() {
    EXPECT_EQ(tether_actor_release(actor), TETHER_OK);
    EXPECT_EQ(tether_executor_release(executor), TETHER_OK);
  }
  ActorOn(const ActorOn&) = delete;
  ActorOn& operator=(const ActorOn&) = delete;
  // waited_call: tether_actor_call_wait with no deadline (the waited call's path).
  [[nodiscard]] bool waited_call(intptr_t x) const {
    void* result = nullptr;
    return tether_actor_call_wait(actor, nullptr, AddOne, reinterpret_cast<void*>(x), nullptr, -1, &result,
                                  nullptr) == TETHER_OK &&
           reinterpret_cast<intptr_t>(result) == x + 1;
  }
};

// end() tells its caller whether the waiter had parked: the lane yields only when not.
TEST(WaitedCallEnd, SaysWhetherItWokeAParkedWaiter) {
  WaitedCall* mine = WaitedCall::of_this_thread();
  ASSERT_NE(mine, nullptr);
  mine->arm(nullptr, nullptr, nullptr);
  EXPECT_FALSE(mine->end(TETHER_SUCCEEDED, nullptr));  // no waiter yet: nobody to wake
  EXPECT_EQ(mine->wait(), TETHER_SUCCEEDED);            // and the wait sees the end at once

  std::promise<WaitedCall*> armed;
  std::promise<int32_t> waited;
  std::thread waiter([&] {
    WaitedCall* w = WaitedCall::of_this_thread();
    if (w != nullptr) w->arm(nullptr, nullptr, nullptr);  // no partner: parks at once
    armed.set_value(w);
    if (w != nullptr) waited.set_value(w->wait());
  });
  WaitedCall* other = armed.get_future().get();
  ASSERT_NE(other, nullptr);
  const auto deadline = Clock::now() + kLong;
  while (!other->waiter_parked() && Clock::now() < deadline) std::this_thread::yield();
  ASSERT_TRUE(other->waiter_parked()) << "the waiter never parked";
  EXPECT_TRUE(other->end(TETHER_SUCCEEDED, nullptr));  // it woke the parked waiter
  std::future<int32_t> outcome = waited.get_future();
  ASSERT_EQ(outcome.wait_for(kLong), std::future_status::ready) << "the parked waiter was not woken";
  EXPECT_EQ(outcome.get(), TETHER_SUCCEEDED);
  waiter.join();
}

// Caller and actor on one CPU: a waited call to the parked actor wakes it, the woken
// thread preempts the caller before it parks, and the answer comes with a yield. Calls go
// on (with a bound) until one has; every answer is right. Skipped under sanitizers and
// valgrind, whose schedulers decide who runs after a wake-up differently.
TEST(AnswerYield, AWaiterPreemptedOnTheConsumersCpuGetsTheCpuRightAfterItsAnswer) {
  if (tether_test::instrumented()) GTEST_SKIP() << "scheduling differs under instrumentation";
  const std::vector<int> cpus = usable_cpus();
  ASSERT_FALSE(cpus.empty());
  PinHere pin(cpus[0]);
  ASSERT_TRUE(pin.ok());
  ActorOn a(cpus[0]);
  const uint64_t before = answer_yields_made();
  const auto deadline = Clock::now() + kLong;
  intptr_t x = 0;
  while (answer_yields_made() == before && Clock::now() < deadline) {
    forget_yields_handed_away();  // a loaded machine's yields would stop them for 10 s
    ASSERT_TRUE(a.waited_call(++x)) << "call " << x;
  }
  EXPECT_GT(answer_yields_made(), before) << "no answer of " << x << " calls came with a yield";
}

// WaitUntilParked: the method of a call whose caller's WaitedCall is arg: returns (its
// result 1) once that caller has parked, or (0) after kLong.
tether_status WaitUntilParked(tether_task* t, void*, void* arg) {
  const auto* caller = static_cast<const WaitedCall*>(arg);
  const auto deadline = Clock::now() + kLong;
  while (!caller->waiter_parked() && Clock::now() < deadline) std::this_thread::yield();  // lets it run here
  return tether_task_set_result(t, reinterpret_cast<void*>(intptr_t{caller->waiter_parked() ? 1 : 0}), nullptr);
}

// Caller and actor on one CPU, the caller parked before its answer (the method waits for
// it): the answer wakes it, and no yield follows (the kernel gives a woken thread its
// turn; a yield here would cost the back-to-back round trip a system call).
TEST(AnswerYield, AParkedWaiterIsWokenNotYieldedTo) {
  const std::vector<int> cpus = usable_cpus();
  ASSERT_FALSE(cpus.empty());
  PinHere pin(cpus[0]);
  ASSERT_TRUE(pin.ok());
  ActorOn a(cpus[0]);
  WaitedCall* mine = WaitedCall::of_this_thread();  // the one tether_actor_call_wait uses
  ASSERT_NE(mine, nullptr);
  const uint64_t before = answer_yields_made();
  for (int i = 0; i < 20; ++i) {
    void* parked = nullptr;
    ASSERT_EQ(tether_actor_call_wait(a.actor, nullptr, WaitUntilParked, mine, nullptr, -1, &parked, nullptr),
              TETHER_OK);
    ASSERT_EQ(parked, reinterpret_cast<void*>(intptr_t{1})) << "call " << i << ": the caller never parked";
  }
  EXPECT_EQ(answer_yields_made(), before);
}

// Caller and actor on different CPUs: no answer comes with a yield.
TEST(AnswerYield, AWaiterOnAnotherCpuNeverMakesItsConsumerYield) {
  const std::vector<int> cpus = usable_cpus();
  if (cpus.size() < 2) GTEST_SKIP() << "needs 2 CPUs";
  PinHere pin(cpus[0]);
  ASSERT_TRUE(pin.ok());
  ActorOn a(cpus[1]);
  ASSERT_TRUE(a.waited_call(0));  // the caller is the lane's partner from here on
  const uint64_t before = answer_yields_made();
  for (intptr_t x = 1; x <= 200; ++x) ASSERT_TRUE(a.waited_call(x)) << "call " << x;
  EXPECT_EQ(answer_yields_made(), before);
}

}  // namespace
}  // namespace core_test
