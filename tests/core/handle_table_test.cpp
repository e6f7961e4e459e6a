// Unit tests of core/handle_table.h: ids for the C API's objects, looked up under a lock
// of their slot alone. What each bad id gets (INVALID_HANDLE, and why), that the table
// grows past one chunk of slots, and that a lookup racing a release sees the id's own
// object or INVALID_HANDLE, never another object that reused the slot.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/handle_table.h"
#include "core/status_error.h"
#include "support/waits.h"
#include "tether/tether.h"

namespace core_test {
namespace {

using tether::HandleTable;
using tether::Kind;
using tether::StatusError;
using tether_test::scaled;

std::shared_ptr<void> object(int64_t value) { return std::make_shared<int64_t>(value); }
int64_t value_of(const std::shared_ptr<int64_t>& p) { return *p; }

// refusal: the code and message a lookup of id as kind is refused with ("" when it is not).
std::pair<int32_t, std::string> refusal(Kind kind, uint64_t id) {
  try {
    (void)HandleTable::instance().get<int64_t>(kind, id);
  } catch (const StatusError& e) {
    return {e.code(), e.what()};
  }
  return {TETHER_OK, ""};
}

TEST(HandleTable, GrowsPastOneChunkAndFindsEveryObject) {
  HandleTable& table = HandleTable::instance();
  const int64_t n = 10'000;  // more than two chunks of 4,096 slots
  std::vector<uint64_t> ids;
  for (int64_t i = 0; i < n; ++i) ids.push_back(table.insert(Kind::Error, object(i)));
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(value_of(table.get<int64_t>(Kind::Error, ids[static_cast<size_t>(i)])), i);
  }
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(value_of(table.take<int64_t>(Kind::Error, ids[static_cast<size_t>(i)])), i);
  }
  // Released ids stay refused, also once their slots hold new objects.
  std::vector<uint64_t> again;
  for (int64_t i = 0; i < n; ++i) again.push_back(table.insert(Kind::Error, object(-i)));
  for (uint64_t id : ids) {
    const auto [code, message] = refusal(Kind::Error, id);
    ASSERT_EQ(code, TETHER_E_INVALID_HANDLE);
    ASSERT_NE(message.find("was released"), std::string::npos) << message;
  }
  for (uint64_t id : again) (void)table.take<int64_t>(Kind::Error, id);
}

TEST(HandleTable, BadIdsAreRefusedWithTheirReason) {
  HandleTable& table = HandleTable::instance();
  const uint64_t id = table.insert(Kind::Error, object(7));
  EXPECT_EQ(refusal(Kind::Error, id).first, TETHER_OK);

  auto [code, message] = refusal(Kind::Error, 0);
  EXPECT_EQ(code, TETHER_E_INVALID_HANDLE);
  EXPECT_NE(message.find("handle is null"), std::string::npos) << message;

  std::tie(code, message) = refusal(Kind::Future, id);  // an error's id used as a future's
  EXPECT_EQ(code, TETHER_E_INVALID_HANDLE);
  EXPECT_NE(message.find("got a error handle"), std::string::npos) << message;

  const uint64_t past_every_slot = (id & ~((uint64_t{1} << 24) - 1)) | ((uint64_t{1} << 24) - 1);
  std::tie(code, message) = refusal(Kind::Error, past_every_slot);
  EXPECT_EQ(code, TETHER_E_INVALID_HANDLE);
  EXPECT_NE(message.find("not one the library gave out"), std::string::npos) << message;

  std::tie(code, message) = refusal(Kind::Error, uint64_t{0x7f} << 56);  // no such kind
  EXPECT_EQ(code, TETHER_E_INVALID_HANDLE);
  EXPECT_NE(message.find("not one the library gave out"), std::string::npos) << message;

  const uint64_t other_generation = id + (uint64_t{1} << 24);
  EXPECT_EQ(refusal(Kind::Error, other_generation).first, TETHER_E_INVALID_HANDLE);

  (void)table.take<int64_t>(Kind::Error, id);
  try {
    (void)table.take<int64_t>(Kind::Error, id);  // a second release
    ADD_FAILURE() << "a second take of one id succeeded";
  } catch (const StatusError& e) {
    EXPECT_EQ(e.code(), TETHER_E_INVALID_HANDLE);
  }
}

// visit runs f on the id's object under the slot's lock without a reference of its own
// (the object's count is the slot's alone while f runs), returns f's result, and refuses
// a released or mistyped id like get, without running f.
TEST(HandleTable, VisitReadsTheObjectWithoutAReference) {
  HandleTable& table = HandleTable::instance();
  const uint64_t id = table.insert(Kind::Error, object(41));
  long count_inside = 0;
  const int64_t seen = table.visit<int64_t>(Kind::Error, id, [&](int64_t& v, const std::shared_ptr<void>& owner) {
    count_inside = owner.use_count();
    return ++v;
  });
  EXPECT_EQ(42, seen);
  EXPECT_EQ(1, count_inside) << "visit took a reference";
  EXPECT_EQ(42, value_of(table.get<int64_t>(Kind::Error, id))) << "f worked on the object itself";

  bool ran = false;
  auto refused = [&](Kind kind, uint64_t bad) {
    try {
      (void)table.visit<int64_t>(kind, bad, [&](int64_t&, const std::shared_ptr<void>&) { return ran = true; });
    } catch (const StatusError& e) {
      return e.code();
    }
    return int32_t{TETHER_OK};
  };
  EXPECT_EQ(TETHER_E_INVALID_HANDLE, refused(Kind::Future, id));
  (void)table.take<int64_t>(Kind::Error, id);
  EXPECT_EQ(TETHER_E_INVALID_HANDLE, refused(Kind::Error, id));
  EXPECT_FALSE(ran) << "f ran for an id the table refuses";
}

// Readers look up the id of the current round while the writer releases it and makes the
// next round's object, which usually reuses the slot: a reader must see its round's value
// or INVALID_HANDLE. Under TSan this is also the race detector's test of the slot lock.
TEST(HandleTable, LookupsRacingReleasesSeeTheirObjectOrNothing) {
  if (tether_test::kUnderValgrind) {
    // valgrind runs one thread at a time: a reader then sees a whole round or none, and
    // the test measures its scheduler. The race is TSan's and the plain builds' to find.
    GTEST_SKIP() << "a race between threads on two CPUs: run by the plain, ASan and TSan builds";
  }
  HandleTable& table = HandleTable::instance();
  const int64_t rounds = static_cast<int64_t>(scaled(20'000));
  std::atomic<uint64_t> current_id{table.insert(Kind::Error, object(0))};
  std::atomic<int64_t> current_value{0};
  std::atomic<bool> done{false};
  std::atomic<int64_t> wrong{0}, seen{0};
  std::atomic<int> started{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&] {
      started.fetch_add(1, std::memory_order_acq_rel);
      while (!done.load(std::memory_order_acquire)) {
        const int64_t value = current_value.load(std::memory_order_acquire);
        const uint64_t id = current_id.load(std::memory_order_acquire);
        if (value < 0 || current_value.load(std::memory_order_acquire) != value) continue;  // between rounds, or torn
        try {
          if (value_of(table.get<int64_t>(Kind::Error, id)) != value) wrong.fetch_add(1);
          seen.fetch_add(1, std::memory_order_relaxed);
        } catch (const StatusError& e) {
          if (e.code() != TETHER_E_INVALID_HANDLE) wrong.fetch_add(1);
        }
        std::this_thread::yield();  // leave the writer its turns when all share one CPU
      }
    });
  }
  // Until both readers run, then for `rounds` rounds and at least kSeen successful
  // lookups (on a loaded machine the readers may get little time), within kLong.
  constexpr int64_t kSeen = 100;
  const auto give_up = std::chrono::steady_clock::now() + tether_test::kLong;
  while (started.load(std::memory_order_acquire) < 2 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::yield();
  }
  for (int64_t v = 1; v <= rounds || (seen.load(std::memory_order_relaxed) < kSeen && std::chrono::steady_clock::now() < give_up);
       ++v) {
    const uint64_t old = current_id.load(std::memory_order_relaxed);
    // The value first, then the id: a reader that reads value, id, value unchanged holds
    // a pair from one round (the id may be released by now: then it must be refused).
    current_value.store(-v, std::memory_order_release);  // no round: readers skip it
    (void)table.take<int64_t>(Kind::Error, old);
    const uint64_t next = table.insert(Kind::Error, object(v));
    current_id.store(next, std::memory_order_release);
    current_value.store(v, std::memory_order_release);
  }
  done.store(true, std::memory_order_release);
  for (std::thread& t : readers) t.join();
  (void)table.take<int64_t>(Kind::Error, current_id.load());
  EXPECT_EQ(wrong.load(), 0) << "a lookup saw another round's object, or an unexpected refusal";
  EXPECT_GE(seen.load(), kSeen) << "too few lookups succeeded: the test tested little";
}

}  // namespace
}  // namespace core_test
