// chaos_point: a place in a concurrency protocol where another thread's step may fall.
//
// In a chaos build (CMake option TETHER_CHAOS, test-only: never in a release package) each
// point, drawn from a per-thread generator, yields the CPU now and then and sleeps a few
// microseconds more rarely, so that interleavings which need a thread to be preempted
// between two instructions (a producer between reading a parked flag and clearing it, a
// consumer between checking for work and waiting) happen thousands of times a second
// instead of once an hour. Elsewhere it compiles to nothing.
#pragma once

#ifdef TETHER_CHAOS
#include <chrono>
#include <cstdint>
#include <thread>
#endif

namespace tether {

#ifdef TETHER_CHAOS
namespace chaos_detail {
// next: xorshift64*, one state per thread (seeded from its address: threads differ).
inline uint64_t next() noexcept {
  thread_local uint64_t state = 0;
  if (state == 0) state = reinterpret_cast<uintptr_t>(&state) * 0x9E3779B97F4A7C15ULL | 1;
  state ^= state >> 12;
  state ^= state << 25;
  state ^= state >> 27;
  return state * 0x2545F4914F6CDD1DULL;
}
}  // namespace chaos_detail

inline void chaos_point() noexcept {
  const uint64_t r = chaos_detail::next() >> 32;
  if ((r & 15) == 0) {
    std::this_thread::yield();                                      // 1 in 16
  } else if ((r & 511) == 1) {
    std::this_thread::sleep_for(std::chrono::microseconds(1 + (r >> 9) % 50));  // 1 in 512
  }
}
#else
inline void chaos_point() noexcept {}
#endif

}  // namespace tether
