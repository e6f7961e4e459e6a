// cpu_relax: the pause a spin loop makes between two looks at shared state.
#pragma once

#include <thread>

namespace tether {

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#else
  std::this_thread::yield();
#endif
}

// SpinWait: the spin phase of spin-then-park. It pauses for the first microseconds, then
// yields the CPU on every turn: when the thread it waits for shares this core (a loaded
// machine), spinning without yielding would keep that thread off the core until the
// spin ends.
class SpinWait {
 public:
  void once() noexcept {
    if (turns_ < kPauseTurns) {
      ++turns_;
      for (int i = 0; i < 32; ++i) cpu_relax();
    } else {
      std::this_thread::yield();
    }
  }

 private:
  static constexpr int kPauseTurns = 64;  // about 1-2 us of pauses
  int turns_ = 0;
};

}  // namespace tether
