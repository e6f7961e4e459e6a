// waits.cpp: see waits.h.
#include "support/waits.h"

#include <algorithm>
#include <cstdlib>

#ifndef TETHER_TEST_DEFAULT_SCALE
#error "TETHER_TEST_DEFAULT_SCALE comes from tether_test_support (tests/support/CMakeLists.txt)"
#endif

namespace tether_test {

int scale() {
  static const int s = [] {
    if (const char *env = std::getenv("TETHER_TEST_SCALE")) {
      const int v = std::atoi(env);
      if (v > 0) return v;
    }
    return TETHER_TEST_DEFAULT_SCALE;
  }();
  return s;
}

size_t scaled(size_t n) { return std::max<size_t>(1, n / static_cast<size_t>(scale())); }

bool instrumented() { return scale() > 1 || TETHER_TEST_DEFAULT_SCALE > 1; }

void relax() {
  if (kUnderValgrind) {
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  } else {
    std::this_thread::yield();
  }
}

}  // namespace tether_test
