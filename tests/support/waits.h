// waits.h: the bounds of the tests' waits, the test scale, and bounded polling.
//
// Every wait of every suite has a bound: kLong for what must succeed, kPrompt for what
// must happen soon. Nothing synchronizes by sleeping; wait_until polls facts that are only
// observable by polling (a thread count), always with a deadline.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <thread>

namespace tether_test {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// kLong: the bound of every wait that is expected to succeed. Long enough for valgrind on a
// loaded two-core machine, short enough that a hang fails well inside the ctest timeout.
inline constexpr std::chrono::seconds kLong{20};
inline constexpr int64_t kLongNs = INT64_C(20) * 1000 * 1000 * 1000;
// kPrompt: how soon something the contract calls "prompt" must happen. Well below kLong,
// so a call that secretly waited for a blocked thread is caught.
inline constexpr std::chrono::seconds kPrompt{5};
// kShortNs: the timeout of a wait that is expected to time out.
inline constexpr int64_t kShortNs = INT64_C(20) * 1000 * 1000;

constexpr int64_t ns_from_ms(int64_t ms) { return ms * 1000 * 1000; }

// scale: TETHER_TEST_SCALE from the environment when set, else the build's default
// (TETHER_TEST_DEFAULT_SCALE, set on tether_test_support: 4 under ASan, 10 under TSan,
// 20 under valgrind, 1 otherwise).
int scale();
// scaled(n): a stress size divided by the scale, never below 1.
size_t scaled(size_t n);
// instrumented: the build runs under a sanitizer or valgrind (timings are meaningless).
bool instrumented();

// kUnderValgrind: the build runs its tests under valgrind memcheck.
#if defined(TETHER_TEST_VALGRIND) && TETHER_TEST_VALGRIND
inline constexpr bool kUnderValgrind = true;
#else
inline constexpr bool kUnderValgrind = false;
#endif

// relax: what a spin loop does between two polls. A yield, except under valgrind, whose
// scheduler runs one thread at a time behind an unfair lock: there a spinning thread would
// starve the threads it waits for, so it sleeps a little instead.
void relax();

// wait_until: polls an observable condition with a bound. Returns pred()'s last value.
template <class Pred>
bool wait_until(Pred pred, std::chrono::nanoseconds d) {
  const auto deadline = Clock::now() + d;
  while (!pred()) {
    if (Clock::now() >= deadline) return pred();
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

// elapsed: how long f() took.
template <class F>
std::chrono::nanoseconds elapsed(F &&f) {
  const auto t0 = Clock::now();
  f();
  return Clock::now() - t0;
}

}  // namespace tether_test
