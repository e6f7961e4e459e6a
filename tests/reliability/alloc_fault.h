// alloc_fault: the allocation-failure seam of the reliability tests. The test executable
// replaces the global operator new (and, outside sanitizer builds, malloc and friends, so
// that allocations glibc makes for the library — TLS destructor lists, thread stacks'
// bookkeeping — count too). Nothing of it is in libtether.
//
// Which allocations count: while armed, every allocation of every thread except those
// made inside an Exempt section. A sweep arms it around API calls only, and its callbacks
// do not allocate (or are Exempt), so what is counted is exactly the library's own.
//
// Thread safety: arm/disarm/counted from any thread; the counters are atomics.
#pragma once

#include <cstdint>

namespace fault {

// arm: counting starts at 0; the `fail_at`-th counted allocation (1-based) fails once
// (nullptr from malloc, std::bad_alloc from operator new). fail_at 0: count only.
void arm(uint64_t fail_at);
// disarm: stops counting; returns how many allocations were counted since arm.
uint64_t disarm();
// failed: whether the armed failure was delivered since arm.
bool failed();
// counts_malloc: the malloc family is hooked too (not under ASan/TSan, which own malloc).
bool counts_malloc();

// Exempt: allocations of this thread are not counted while one is alive (test code run
// inside an armed window: gtest assertions, containers of the test).
class Exempt {
 public:
  Exempt();
  ~Exempt();
  Exempt(const Exempt&) = delete;
  Exempt& operator=(const Exempt&) = delete;
};

}  // namespace fault
