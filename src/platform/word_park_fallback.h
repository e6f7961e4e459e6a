// word_park_fallback.h: park_while and the wakes (platform.h) where the OS has no
// futex (Windows here, kept to kernel32; other POSIX systems), from the C++ standard
// library alone: a fixed table of mutex + condition variable stripes, picked by address.
//
// No wake-up is lost: a waiter compares the word under its stripe's mutex and waits on
// the stripe's condition variable (which releases the mutex atomically); a waker changes
// the word first, then takes and drops the same mutex, then notifies. So the waker's lock
// comes either before the waiter's compare (which then sees the change) or after the
// waiter is waiting (which then gets the notify). A stripe may hold waiters of several
// words: every waiter is notified (wake_all serves wake_one_parked too) and each re-checks
// its own.
// The table is never destroyed: threads may park while static destructors run.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace tether::platform::word_park_fallback {

struct Stripe {
  std::mutex mutex;
  std::condition_variable cv;
};

inline Stripe& stripe_for(const void* word) noexcept {
  constexpr std::uintptr_t kStripes = 64;
  static Stripe* const stripes = new Stripe[kStripes];  // never freed, on purpose (above)
  return stripes[(reinterpret_cast<std::uintptr_t>(word) >> 6) % kStripes];
}

inline void park_while(const std::atomic<std::uint32_t>& word, std::uint32_t expected,
                       std::int64_t deadline_ns) noexcept {
  Stripe& s = stripe_for(&word);
  std::unique_lock lock(s.mutex);
  if (word.load(std::memory_order_seq_cst) != expected) return;
  if (deadline_ns < 0) {
    s.cv.wait(lock);
  } else {
    using Clock = std::chrono::steady_clock;
    (void)s.cv.wait_until(lock, Clock::time_point(std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::nanoseconds(deadline_ns))));
  }
}

inline void wake_all(const std::atomic<std::uint32_t>& word) noexcept {
  Stripe& s = stripe_for(&word);
  { std::lock_guard lock(s.mutex); }  // a waiter is waiting, or has yet to compare
  s.cv.notify_all();
}

}  // namespace tether::platform::word_park_fallback
