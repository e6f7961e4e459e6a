#include "core/time_slice.h"

#include <algorithm>
#include <cstdlib>

#include "platform/platform.h"

namespace tether {

int64_t time_slice_from(const char* setting) noexcept {
  if (setting == nullptr || *setting == '\0') return kHalfTimeSlice;
  int64_t ns = 0;
  for (const char* c = setting; *c != '\0'; ++c) {
    if (*c < '0' || *c > '9' || ns > kMaxTimeSliceNs) return kHalfTimeSlice;  // not a number we take
    ns = ns * 10 + (*c - '0');
  }
  if (ns == 0) return 0;
  return ns >= kMinTimeSliceNs && ns <= kMaxTimeSliceNs ? ns : kHalfTimeSlice;
}

int64_t serving_time_slice(int64_t os_slice_ns) noexcept {
  return os_slice_ns > 0 ? std::max(kMinTimeSliceNs, os_slice_ns / 2) : 0;
}

void ask_for_serving_time_slice() noexcept {
  // Read once: the environment is the process's, and getenv is not safe against a setenv
  // racing it, which a user is more likely to make early than while threads start.
  static const int64_t setting = time_slice_from(std::getenv("TETHER_TIME_SLICE_NS"));
  const int64_t slice = setting == kHalfTimeSlice ? serving_time_slice(platform::current_time_slice_ns()) : setting;
  if (slice > 0) (void)platform::request_time_slice(slice);
}

}  // namespace tether
