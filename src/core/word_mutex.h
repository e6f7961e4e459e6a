// WordMutex: a mutex in one 32-bit word, parked on with platform::park_while (Drepper's
// "Futexes Are Tricky", mutex 3). Why not std::mutex: a call's scope and a lane's
// mailbox push lock a mutex two or three times per call, uncontended almost always, and
// glibc's pthread_mutex_lock/unlock pair is ~55 instructions and two calls into libc
// (type checks, owner bookkeeping); here the pair is one inline atomic each way.
// Measured: bench/README.md ("What moved them", 2026-12-05). And an actor's two locks
// (its own and its ledger's) take 4 bytes each instead of 40 (actor.h's layout).
//
// Not recursive, no owner check, not fork-aware: for locks held for a few instructions
// around plain data (never across a callback), like the std::mutex it replaces.
//
// Thread safety: every member may be called from any thread; unlock only by the holder.
//
// Wait protocol (word_: 0 free, 1 held, 2 held and a thread may be parked):
//
//   locker                                         unlocker (the holder)
//   L1 CAS 0 -> 1: done (acquire)                  U1 exchange(0) (release)
//   L2 spin kSpins turns while held; CAS 0 -> 1    U2 it was 2 -> wake_one_parked(word_)
//   L3 exchange(2): it was 0 -> done (held, maybe
//      with waiters: the next unlock wakes one)
//   L4 park_while(word_ == 2); back to L3
//
// Why no wake-up is lost: a locker parks only while word_ is 2 (compared in the kernel,
// atomically with the wakes of the word), and it made word_ 2 itself in L3, after which
// every unlock sees 2 (U1) and wakes one (U2). A woken locker makes it 2 again in L3, so
// a third thread still parked is woken by the next unlock too.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/cpu_relax.h"
#include "platform/platform.h"

namespace tether {

class WordMutex {
 public:
  WordMutex() = default;
  WordMutex(const WordMutex&) = delete;
  WordMutex& operator=(const WordMutex&) = delete;

  void lock() noexcept {
    uint32_t free = 0;
    if (word_.compare_exchange_strong(free, 1, std::memory_order_acquire, std::memory_order_relaxed)) return;  // L1
    lock_contended();
  }
  [[nodiscard]] bool try_lock() noexcept {
    uint32_t free = 0;
    return word_.compare_exchange_strong(free, 1, std::memory_order_acquire, std::memory_order_relaxed);
  }
  void unlock() noexcept {
    if (word_.exchange(0, std::memory_order_release) == 2) platform::wake_one_parked(word_);  // U1, U2
  }

 private:
  // kSpins: L2's turns (one pause each, ~26 ns here). A holder keeps the word for well
  // under a microsecond, so a short spin catches most contention without a syscall; a
  // holder that was preempted is waited for parked, not spun on.
  static constexpr int kSpins = 64;

  [[gnu::noinline]] void lock_contended() noexcept {
    for (int i = 0; i < kSpins; ++i) {  // L2
      cpu_relax();
      uint32_t free = 0;
      if (word_.load(std::memory_order_relaxed) == 0 &&
          word_.compare_exchange_weak(free, 1, std::memory_order_acquire, std::memory_order_relaxed)) {
        return;
      }
    }
    while (word_.exchange(2, std::memory_order_acquire) != 0) {  // L3
      platform::park_while(word_, 2, -1);                          // L4
    }
  }

  std::atomic<uint32_t> word_{0};
};

}  // namespace tether
