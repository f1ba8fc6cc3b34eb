// The placement simulator's two workflows (docs/placement.md): both place
// with the library in src/store/placement, the code the servers run.
#pragma once

#include "model.hpp"
#include "store/placement/placer.hpp"

#include <vector>

namespace cove::sim {

using store::placement::Policy;

// Decision cost samples (microseconds of Placer::place, wall clock).
struct DecisionTimes {
  std::vector<double> us;
  double median() const;
};

// The tightly coupled workflow of the paper's Figures 8 and 9: APP1 and APP2
// exchange every block both ways each step through staging; the policy
// places each side's input on the other side's cores.
struct TightResult {
  std::vector<double> step_end;  // when step t's APP2 tasks had all finished
  double end = 0;                // the end-to-end time
  std::uint64_t tasks = 0;
  std::uint64_t max_blocks = 0;
};
TightResult run_tight(const Params& p, Policy policy, DecisionTimes* times = nullptr);

// The loosely coupled workflow of Figures 10 and 11: the AMR runs `steps`
// steps on its cores; a k-way reduction analysis on the consumer cores
// analyses a step whenever it is free, reading its blocks where they were
// placed. data and hybrid use a METIS partition of the first analysed
// step's graph.
struct AnalysisStep {
  int step = 0;
  double start = 0;          // first task of the step started
  double end = 0;            // last output written
  std::uint64_t bytes_moved = 0;  // between nodes, by the reduction's edges
};
struct LooseResult {
  std::vector<double> amr_step_end;
  std::vector<AnalysisStep> analysed;  // completed before the AMR's end
  double end = 0;                      // the AMR's end
  std::string partition_warning;
};
LooseResult run_loose(const Params& p, Policy policy, DecisionTimes* times = nullptr);

}  // namespace cove::sim
