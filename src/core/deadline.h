// Deadline: a point on the monotonic clock built from a contract timeout
// (< 0 forever, 0 never block). Saturates instead of overflowing.
#pragma once

#include <chrono>
#include <cstdint>

#include "platform/platform.h"

namespace tether {

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;

  // now: Clock::now(), read through the platform (platform::monotonic_ns: on the hot
  // paths, without libstdc++'s pages on the way to the clock).
  [[nodiscard]] static Clock::time_point now() noexcept {
    const std::chrono::nanoseconds since_epoch(platform::monotonic_ns());
    return Clock::time_point(std::chrono::duration_cast<Clock::duration>(since_epoch));
  }

  static Deadline after(int64_t timeout_ns) noexcept {
    Deadline d;
    if (timeout_ns < 0 || timeout_ns > kCenturyNs) return d;  // forever
    d.kind_ = timeout_ns == 0 ? Kind::kNever : Kind::kAt;
    if (d.kind_ == Kind::kNever) return d;  // never waits: no need to read the clock (a hot path)
    d.at_ = now() + std::chrono::nanoseconds(timeout_ns);
    return d;
  }

  // saturating_after: now + ns, clamped to a century ahead (ns may be up to INT64_MAX).
  static Clock::time_point saturating_after(Clock::time_point now, int64_t ns) noexcept {
    return now + std::chrono::nanoseconds(ns < 0 ? 0 : (ns > kCenturyNs ? kCenturyNs : ns));
  }

  [[nodiscard]] bool forever() const noexcept { return kind_ == Kind::kForever; }
  // never_blocks: the caller asked for a timeout of 0.
  [[nodiscard]] bool never_blocks() const noexcept { return kind_ == Kind::kNever; }
  [[nodiscard]] Clock::time_point at() const noexcept { return at_; }
  // steady_ns: at() as nanoseconds of the steady clock's epoch, -1 for forever: what
  // platform::park_while takes.
  [[nodiscard]] int64_t steady_ns() const noexcept {
    if (forever()) return -1;
    return std::chrono::duration_cast<std::chrono::nanoseconds>(at_.time_since_epoch()).count();
  }

  // wait(cv, lock, pred): waits until pred() or the deadline; returns pred().
  template <class CondVar, class Lock, class Pred>
  bool wait(CondVar& cv, Lock& lock, Pred pred) const {
    if (forever()) {
      cv.wait(lock, pred);
      return true;
    }
    return cv.wait_until(lock, at_, pred);
  }

 private:
  // A wait of more than a century is a wait forever; it also keeps every sum in range.
  static constexpr int64_t kCenturyNs = INT64_C(100) * 365 * 24 * 3600 * 1000000000;
  // kind_: one byte, not two flags: g++ 12 stored two constant flags as one 16-bit word
  // loaded from .rodata (its tuning avoids 16-bit immediates), a page the hot path
  // touched for nothing else (core/hot_path.h).
  enum class Kind : uint8_t { kForever, kNever, kAt };
  Kind kind_ = Kind::kForever;
  Clock::time_point at_{};
};

// SpinEnd: when a spin loop stops, read from the clock only once every kLooks looks. On
// these VMs a clock read (the vDSO, ~20-25 ns) costs as much as a pause (~26 ns), and a
// spin that read it on every turn saw an arriving hand-over up to two of them late: a
// compiled graph's step between actors on two CPUs spent more samples in clock_gettime
// than in its own loop (perf, 2026-12-04). The spin ends at most kLooks turns (~0.5 us)
// past `until`, against budgets of 3 us and more (core/spin_policy.h).
class SpinEnd {
 public:
  explicit SpinEnd(Deadline::Clock::time_point until) noexcept : until_(until) {}
  // passed: whether `until` has passed, as of the last clock read.
  [[nodiscard]] bool passed() noexcept {
    if (++looks_ % kLooks != 0) return false;
    return Deadline::now() >= until_;
  }
  // checked: whether the last passed() read the clock: once every kLooks looks, when a
  // spin's other slow checks are due too.
  [[nodiscard]] bool checked() const noexcept { return looks_ % kLooks == 0; }
  // long_spin: the spin has read the clock at least once (it lasted kLooks looks or more).
  [[nodiscard]] bool long_spin() const noexcept { return looks_ >= kLooks; }

 private:
  static constexpr uint32_t kLooks = 16;
  Deadline::Clock::time_point until_;
  uint32_t looks_ = 0;
};

}  // namespace tether
