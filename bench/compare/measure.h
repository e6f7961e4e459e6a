// measure.h: one sample of one workload on a freshly built peer, with its CPU cost.
#pragma once

#include <cstdint>
#include <vector>

#include "peer.h"
#include "placement.h"

namespace compare {

// Sample: the time per operation and the CPU each side burnt per second of wall time
// (caller: the measuring thread; other: every other thread of the process, which while a
// sample runs are the peer's).
struct Sample {
  double ns_per_op = 0;
  double caller_cpu = 0;
  double other_cpu = 0;
  int one_cpu = -1;  // unpinned samples: ran_on_one_cpu (placement.h); else -1
};

// measure: builds kind's peer in placement p, warms it up, and measures workload w for
// about sample_ms (the after-idle workload: idle_calls calls, each after 1 ms idle).
// Aborts if the peer computed a wrong answer or lost an increment.
Sample measure(const PeerKind& kind, Workload w, Placement p, int sample_ms, int idle_calls);

double median(std::vector<double> v);

// Clocks.
int64_t now_ns();
int64_t thread_cpu_ns();
int64_t process_cpu_ns();

}  // namespace compare
