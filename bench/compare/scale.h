// scale.h: the many-actor rows of bench/compare (scale.cpp says what each measures).
#pragma once

#include <string>

namespace compare {

// PhaseStats: a phase's time per actor over a run's samples: the median of those whose phase
// ran with the VM in its fast state, and that of the others (0 when there were none).
struct PhaseStats {
  double fast_ns = 0, slow_ns = 0;
  int fast = 0, slow = 0;
  [[nodiscard]] std::string cell() const;  // for the table
};

struct ScaleReport {
  std::string markdown;  // the tables
  double tether_rss_made = 0, tether_rss = 0;  // after the 1,024-in-flight calls
  double tether_rss_all_in_flight = 0;         // after 100,000 calls in flight at once
  PhaseStats tether_create, tether_call, tether_call_all_in_flight;
  double park_plain_ns = 0, park_ring_ns = 0;
  double idle_one_cpu = 0, idle_1000_cpu = 0;  // CPU seconds per second, the whole process
};

// scale_report: runs every scale row reps times.
ScaleReport scale_report(int reps);

// many_child: the body of `tether_compare --many-child WHO` (tether, caf): one 100,000-actor
// sample in this new process, printed as "rss_made rss_called rss_all_in_flight" and then, for
// each phase (create, call, call_all_in_flight), "ns floor_before floor_after". Returns the
// exit status.
int many_child(const std::string& who);

}  // namespace compare
