// core_support.h: what the unit tests of core classes share (tests/core/), on top of
// tests/support. Written against src/core's headers, not the C API.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "core/inbox.h"
#include "core/lane.h"
#include "support/sync.h"
#include "support/threads.h"
#include "support/waits.h"

namespace core_test {

using namespace tether_test;
using tether::Call;
using tether::FastCall;
using tether::FastTarget;
using tether::Inbox;
using tether::Lane;

// test_lane: the Lane& that Inbox::run and drain_ring hand to what they run. A manual lane
// (no threads) the doubles below never touch; the only place the tests depend on how a
// Lane is made.
Lane& test_lane();

// Log: what ran and what was cancelled, by call id, in the order it happened.
struct Log {
  void ran(uint64_t id);
  void cancelled(uint64_t id);
  [[nodiscard]] std::vector<uint64_t> ran_ids() const;
  [[nodiscard]] std::vector<uint64_t> cancelled_ids() const;
  [[nodiscard]] size_t total() const { return runs.load() + cancels.load(); }

  std::atomic<size_t> runs{0};
  std::atomic<size_t> cancels{0};

 private:
  mutable std::mutex mu_;
  std::vector<uint64_t> ran_;        // guarded by mu_
  std::vector<uint64_t> cancelled_;  // guarded by mu_
};

// TestCall: a mailbox call that logs its id when run or cancelled.
class TestCall final : public Call {
 public:
  TestCall(const void* owner, Log& log, uint64_t id) : Call(owner), log_(log), id_(id) {}
  void run(Lane&) noexcept override { log_.ran(id_); }
  void cancel() noexcept override { log_.cancelled(id_); }

 private:
  Log& log_;
  uint64_t id_;
};

// TestTarget: the target of fast calls whose arg is their id; logs like TestCall.
class TestTarget final : public FastTarget {
 public:
  TestTarget(const void* owner, Log& log) : owner_(owner), log_(log) {}
  void run_fast(Lane&, const FastCall& first, tether::FastRun& more) noexcept override {
    ++runs;
    FastCall call = first;
    do {
      log_.ran(id_of(call));
    } while (more.next(call));
  }
  void cancel_fast(const FastCall& call) noexcept override { log_.cancelled(id_of(call)); }
  [[nodiscard]] const void* fast_owner() const noexcept override { return owner_; }

  // call: a fast call carrying id (the method is never called: the target runs it).
  static FastCall call(uint64_t id);

  // runs: how many times the consumer called run_fast (each a run of calls back to back).
  std::atomic<size_t> runs{0};

 private:
  static uint64_t id_of(const FastCall& c) { return reinterpret_cast<uintptr_t>(c.arg); }
  const void* owner_;
  Log& log_;
};

// push_fast: reserves room and appends a fast call through a leased ring, fenced lightly
// or (full) in full; false without memory.
bool push_fast(Inbox& inbox, tether::CallRing& ring, TestTarget& target, uint64_t id, bool full = false);

// consume_until: the consumer's loop (drain_ring, else try_pop and run) until done() holds;
// false when the bound passed first.
template <class Done>
bool consume_until(Inbox& inbox, Done done, std::chrono::nanoseconds d = kLong) {
  const auto deadline = Clock::now() + d;
  while (!done()) {
    if (Clock::now() >= deadline) return done();
    if (inbox.drain_ring(test_lane())) continue;
    Inbox::Work w;
    if (inbox.try_pop(w)) {
      Inbox::run(w, test_lane());
      continue;
    }
    relax();
  }
  return true;
}

// in_order_per_producer: the ids (producer << 32 | seq) of each producer appear in
// increasing seq order, each of 0..per-1 exactly once.
bool in_order_per_producer(const std::vector<uint64_t>& ids, size_t producers, size_t per);

}  // namespace core_test
