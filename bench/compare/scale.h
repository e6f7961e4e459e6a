// scale.h: the many-actor rows of bench/compare (scale.cpp says what each measures).
#pragma once

#include <string>

namespace compare {

struct ScaleReport {
  std::string markdown;  // the tables
  double tether_rss_made = 0, tether_rss = 0, tether_create_ns = 0, tether_call_ns = 0;
  double park_plain_ns = 0, park_ring_ns = 0;
  double idle_one_cpu = 0, idle_1000_cpu = 0;  // CPU seconds per second, the whole process
};

// scale_report: runs every scale row reps times.
ScaleReport scale_report(int reps);

// many_child: the body of `tether_compare --many-child WHO` (tether, caf): one 100,000-actor
// sample in this new process, printed as "rss_made rss create_ns call_ns". Returns the exit status.
int many_child(const std::string& who);

}  // namespace compare
