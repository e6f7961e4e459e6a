#include "core/answer_spin.h"

#include <algorithm>
#include <chrono>

#include "core/cpu_relax.h"
#include "core/hot_path.h"
#include "core/hot_tls.h"
#include "tether/tether.h"

namespace tether {

namespace {

// fed_elsewhere: the partner is parked (nobody woke it yet) while a feeder (another lane of
// the same compiled graph) runs, or is being woken, on a CPU other than me: its step will
// wake the partner.
bool fed_elsewhere(const LanePresence& partner, const std::vector<LanePresence*>* feeders, int32_t me) noexcept {
  if (feeders == nullptr || !partner.parked()) return false;
  for (const LanePresence* f : *feeders) {
    if (f != &partner && f->runs_elsewhere(me)) return true;
  }
  return false;
}

// cannot_help: while spinning: the partner needs this CPU (runs or is being woken on it),
// or is parked with nothing on its way to wake it.
bool cannot_help(const LanePresence& partner, const std::vector<LanePresence*>* feeders, int32_t me) noexcept {
  if (partner.on_or_waking_on(me)) return true;
  return partner.parked() && !fed_elsewhere(partner, feeders, me);
}

// spin_until: the spin of AnswerSpin::spin, until answered() (read on every look) or,
// at a clock read, ended() (a slower look: the answer may be there without its flag).
template <class Answered, class Ended>
void spin_until(LanePresence* partner, std::atomic<bool>* waiter_spins, Answered answered, Ended ended,
                const Deadline& deadline, const std::vector<LanePresence*>* feeders) noexcept {
  const int32_t me = partner != nullptr ? current_cpu() : LanePresence::kUnknown;
  LanePresence::Spin kind = partner != nullptr ? partner->worth_spinning(me) : LanePresence::Spin::kAnswer;
  if (kind == LanePresence::Spin::kNo && partner != nullptr && fed_elsewhere(*partner, feeders, me)) {
    kind = LanePresence::Spin::kAnswer;  // spin through the feeder's step and the partner's wake-up
  }
  if (kind == LanePresence::Spin::kNo) return;  // parked, or on this CPU: park at once
  TETHER_HOT_TLS thread_local uint32_t waits = 0;  // this thread's, for the probes
  std::chrono::nanoseconds budget{kWaitSpinMaxNs};  // without a partner
  if (partner != nullptr && kind == LanePresence::Spin::kWake) {
    budget = std::chrono::nanoseconds(AdaptiveBudget::probe(waits) ? kWakeSpinMaxNs : partner->wake_budget_ns());
  } else if (partner != nullptr && !AdaptiveBudget::probe(waits)) {
    budget = std::chrono::nanoseconds(partner->wait_budget_ns());
  }
  const auto start = Deadline::now();
  const auto spin_until = std::min(start + budget, deadline.forever() ? Deadline::Clock::time_point::max() : deadline.at());
  SpinWait spin;
  SpinEnd end(spin_until);
  if (waiter_spins != nullptr) waiter_spins->store(true, std::memory_order_relaxed);  // S1 (announced)
  while (!answered()) {  // S2
    const bool timed_out = end.passed();
    if (end.checked() && ended()) break;
    if (timed_out) {
      if (partner == nullptr) return;
      if (kind == LanePresence::Spin::kWake) {
        partner->wake_spin_timed_out();
      } else {
        partner->wait_spin_timed_out();
      }
      return;
    }
    if (partner == nullptr) {
      spin.once();
    } else if (cannot_help(*partner, feeders, me)) {
      return;
    } else {
      // The consumer runs on another CPU (or is waking there): yielding would not help
      // it, and on a loaded machine would hand this CPU to another process for a whole
      // time slice. One pause a look (cpu_relax.h: SpinWait).
      cpu_relax();
    }
  }
  if (partner == nullptr) return;
  if (kind == LanePresence::Spin::kWake) {
    const auto took = std::chrono::duration_cast<std::chrono::nanoseconds>(Deadline::now() - start);
    partner->wake_spin_succeeded(took.count());
  } else {
    partner->wait_spin_succeeded();
  }
}

}  // namespace

void AnswerSpin::spin(LanePresence* partner, std::atomic<bool>* waiter_spins, const std::atomic<bool>& settled,
                      const std::atomic<int32_t>& state, const Deadline& deadline,
                      const std::vector<LanePresence*>* feeders) noexcept {
  spin_until(
      partner, waiter_spins, [&] { return settled.load(std::memory_order_acquire); },
      [&] { return state.load(std::memory_order_acquire) >= TETHER_SUCCEEDED; }, deadline, feeders);
}

TETHER_HOT_PATH
void AnswerSpin::spin_for_word(LanePresence* partner, const std::atomic<uint32_t>& word, uint32_t answered) noexcept {
  auto done = [&] { return word.load(std::memory_order_acquire) == answered; };
  spin_until(partner, nullptr, done, done, Deadline::after(-1), nullptr);
}

}  // namespace tether
