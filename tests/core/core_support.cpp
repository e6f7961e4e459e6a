// core_support.cpp: see core_support.h.
#include "core_support.h"

#include <memory>

namespace core_test {

Lane& test_lane() {
  static const std::shared_ptr<Lane> lane = Lane::make(Lane::Options{.name = "core-test", .threads = 0});
  return *lane;
}

void Log::ran(uint64_t id) {
  std::lock_guard<std::mutex> lk(mu_);
  ran_.push_back(id);
  runs.fetch_add(1);
}

void Log::cancelled(uint64_t id) {
  std::lock_guard<std::mutex> lk(mu_);
  cancelled_.push_back(id);
  cancels.fetch_add(1);
}

std::vector<uint64_t> Log::ran_ids() const {
  std::lock_guard<std::mutex> lk(mu_);
  return ran_;
}

std::vector<uint64_t> Log::cancelled_ids() const {
  std::lock_guard<std::mutex> lk(mu_);
  return cancelled_;
}

namespace {
// never_called: a non-null method (a ring entry's word0 of 0 means "claimed").
tether_status never_called(tether_task*, void*, void*) { return TETHER_OK; }
}  // namespace

FastCall TestTarget::call(uint64_t id) {
  return FastCall{never_called, reinterpret_cast<void*>(static_cast<uintptr_t>(id)), nullptr};
}

bool push_fast(Inbox& inbox, tether::CallRing& ring, TestTarget& target, uint64_t id, bool full) {
  if (!ring.try_reserve(2)) return false;
  inbox.push_fast(ring, TestTarget::call(id), target, /*flags=*/0, full);
  return true;
}

bool in_order_per_producer(const std::vector<uint64_t>& ids, size_t producers, size_t per) {
  std::vector<uint64_t> next(producers, 0);
  for (uint64_t id : ids) {
    const uint64_t p = id >> 32;
    if (p >= producers || (id & 0xffffffffu) != next[p]) return false;
    ++next[p];
  }
  for (uint64_t n : next) {
    if (n != per) return false;
  }
  return true;
}

}  // namespace core_test
