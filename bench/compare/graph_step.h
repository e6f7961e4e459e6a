// graph_step.h: the compiled-graph rows of bench/compare (graph_step.cpp says what each
// measures): a step between two actors next to the SPSC ring floor and to chained calls.
#pragma once

#include <string>

namespace compare {

struct GraphStepReport {
  std::string markdown;  // the table
  double spsc_round_trip_ns = 0;  // different CPUs
  double step_apart_ns = 0;       // one more node of a chain (graph_step.cpp), the actors on different CPUs
  double pair_same_ns = 0;        // a two-node execution, everything on one CPU
  double chained_same_ns = 0;     // the same two passes as chained calls, on one CPU
  // The targets' ratios, each the median of paired ratios (a step's sample taken right
  // beside an SPSC sample; a two-node execution's beside two chained calls'): 0 when not
  // measured.
  double step_to_spsc = 0;
  double pair_to_chained = 0;
};

// graph_step_report: every case sampled reps times (sample_ms each), in one random order;
// the two cases of each target side by side (as bench/compare pairs tether with a floor).
GraphStepReport graph_step_report(int reps, int sample_ms, unsigned seed);

}  // namespace compare
