// Unit tests of core/call_ledger.h: the counts an executor or actor keeps of its calls.
// The fast calls' producers each admit through a tally of their own, listed in the ledger
// while they call: every tally's admissions count, and a removed tally's stay counted,
// whichever tally of the list goes. A ledger's fire-and-forget errors: the first 64 kept
// (in order), the rest counted as dropped. A bounded ledger's refusals are counted.
#include <gtest/gtest.h>

#include <string>

#include "core/call_ledger.h"
#include "core/deadline.h"
#include "core/error.h"
#include "tether/tether.h"

namespace core_test {
namespace {

using tether::CallLedger;
using tether::Deadline;

TEST(CallLedger, EveryTallyCountsAndARemovedOnesAdmissionsStay) {
  CallLedger ledger(/*capacity=*/0);
  CallLedger::Tally first, middle, last;
  for (CallLedger::Tally* t : {&first, &middle, &last}) ledger.add_tally(t);
  first.add(1);
  middle.add(10);
  last.add(100);
  EXPECT_EQ(ledger.fast_admitted(), 111u);
  ledger.remove_tally(&middle);  // inside the list
  middle.add(1000);              // no longer listed: not counted
  EXPECT_EQ(ledger.fast_admitted(), 111u);
  ledger.remove_tally(&last);  // the list's head (the last added)
  ledger.remove_tally(&first);
  EXPECT_EQ(ledger.fast_admitted(), 111u);
  ledger.add_tally(&middle);  // listed again: its count now, on top of what it retired
  EXPECT_EQ(ledger.fast_admitted(), 111u + 1010u);
  ledger.fast_left();
  ledger.fast_succeeded();
  const tether::CallStats s = ledger.stats();
  EXPECT_EQ(s.queued, 111u + 1010u - 1u);
  EXPECT_EQ(s.completed, 1u);
  ledger.remove_tally(&middle);
}

TEST(CallLedger, KeepsTheFirst64ErrorsAndCountsTheRest) {
  CallLedger ledger(/*capacity=*/0);
  for (int i = 0; i < 70; ++i) {
    std::string message = "e";  // (not "e" + ...: g++ 12 warns of an overlap that is not there)
    message += std::to_string(i);
    ledger.fire_and_forget_failed(tether::make_error(TETHER_E_INVALID_ARGUMENT, 0, message, "t"));
  }
  const tether::CallStats s = ledger.stats();
  EXPECT_EQ(s.failed, 70u);
  EXPECT_EQ(s.errors_dropped, 6u);
  ASSERT_NE(ledger.kept_error(63), nullptr);
  EXPECT_EQ(ledger.kept_error(63)->message, "e63");
  EXPECT_EQ(ledger.kept_error(64), nullptr);
}

TEST(CallLedger, ABoundedLedgerCountsItsRefusals) {
  CallLedger ledger(/*capacity=*/1);
  EXPECT_EQ(ledger.admit(Deadline::after(0)), TETHER_OK);
  EXPECT_EQ(ledger.admit(Deadline::after(0)), TETHER_E_QUEUE_FULL);
  EXPECT_EQ(ledger.admit(Deadline::after(1'000'000)), TETHER_E_TIMEOUT);  // 1 ms, nobody leaves
  ledger.leave();
  EXPECT_EQ(ledger.admit(Deadline::after(0)), TETHER_OK);
  const tether::CallStats s = ledger.stats();
  EXPECT_EQ(s.rejected, 2u);
  EXPECT_EQ(s.queued, 1u);
}

}  // namespace
}  // namespace core_test
