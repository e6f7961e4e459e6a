#include "core/wake_preemption.h"

#include <cstdlib>

namespace tether {

bool batch_streams_from(const char* setting) noexcept {
  return setting == nullptr || setting[0] != '0' || setting[1] != '\0';
}

void WakePreemption::start_serving() noexcept {
  // Read once, as TETHER_TIME_SLICE_NS is (time_slice.cpp says why).
  static const bool allowed = batch_streams_from(std::getenv("TETHER_BATCH_STREAMS"));
  start(allowed ? platform::current_fair_policy() : platform::FairPolicy::kNone, allowed);
}

void WakePreemption::switch_policy(bool batch) noexcept {
  using platform::FairPolicy;
  const FairPolicy from = batch ? FairPolicy::kNormal : FairPolicy::kBatch;
  if (!switch_(from, batch ? FairPolicy::kBatch : FairPolicy::kNormal)) {
    state_ = State::kOff;  // refused, or the user set a policy of their own: theirs from now on
    return;
  }
  state_ = batch ? State::kBatch : State::kNormal;
}

}  // namespace tether
