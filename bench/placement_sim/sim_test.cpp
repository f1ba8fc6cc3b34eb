// The placement simulator on small configurations: answers worked out by
// hand, every task run, and the same result on every run.
#include "sim.hpp"

#include <gtest/gtest.h>

namespace {

using namespace cove::sim;

// 8 blocks (depth 1, no refinement), cost 1 s each, 2 cores a side, 2 steps.
Params tiny() {
  Params p;
  p.min_depth = p.max_depth = 1;
  p.features = 0;
  p.noise = 0;
  p.steps = 2;
  p.producer_cores = p.consumer_cores = 2;
  p.cores_per_node = 1;
  p.producer_cost = p.consumer_cost = 1.0;
  return p;
}

TEST(PlacementSim, TightBlockingRoundRobinByHand) {
  const Params p = tiny();
  const double w = transfer(p, p.block_bytes);
  // Four phases, each 4 tasks per core of 1 s plus a synchronous write, one after another.
  const TightResult r = run_tight(p, Policy::rr_blocking);
  EXPECT_EQ(r.tasks, 32u);
  ASSERT_EQ(r.step_end.size(), 2u);
  EXPECT_NEAR(r.step_end[0], 8 * (1 + w), 1e-9);
  EXPECT_NEAR(r.end, 16 * (1 + w), 1e-9);
}

TEST(PlacementSim, TightNonBlockingPipelinesByHand) {
  const Params p = tiny();
  const double w = transfer(p, p.block_bytes);
  // Each APP1 core finishes a block a second (1..4); its output reaches APP2
  // w later, whose cores finish at 2+w..5+w. The second step's APP1 blocks
  // are there from 2+2w but the cores are busy until 4: 5..8; APP2, busy
  // until 5+w, takes them at 5+w..8+w and ends at 9+w.
  for (Policy policy : {Policy::rr_nonblocking, Policy::time}) {
    const TightResult r = run_tight(p, policy);
    EXPECT_EQ(r.tasks, 32u);
    EXPECT_NEAR(r.step_end[0], 5 + w, 1e-9) << policy_name(policy);
    EXPECT_NEAR(r.end, 9 + w, 1e-9) << policy_name(policy);
  }
}

Params small() {
  Params p;
  p.min_depth = 2;
  p.max_depth = 4;
  p.features = 2;
  p.steps = 8;
  p.producer_cores = 32;
  p.consumer_cores = 32;
  p.cores_per_node = 8;
  return p;
}

TEST(PlacementSim, EveryTaskRunsAndRunsRepeat) {
  const Params p = small();
  Mesh mesh(p);
  std::uint64_t blocks = 0;
  for (int s = 0; s < p.steps; ++s) blocks += mesh.blocks(s).size();
  for (Policy policy : {Policy::rr_blocking, Policy::rr_nonblocking, Policy::time}) {
    const TightResult a = run_tight(p, policy);
    const TightResult b = run_tight(p, policy);
    EXPECT_EQ(a.tasks, 2 * blocks) << policy_name(policy);
    EXPECT_EQ(a.step_end, b.step_end) << policy_name(policy);
    for (int s = 1; s < p.steps; ++s) EXPECT_GT(a.step_end[s], a.step_end[s - 1]);
  }
  for (Policy policy : {Policy::rr_blocking, Policy::time, Policy::data, Policy::hybrid}) {
    const LooseResult a = run_loose(p, policy);
    const LooseResult b = run_loose(p, policy);
    ASSERT_EQ(a.analysed.size(), b.analysed.size()) << policy_name(policy);
    EXPECT_GE(a.analysed.size(), 1u);
    EXPECT_LE(a.analysed.size(), static_cast<std::size_t>(p.steps));
    EXPECT_TRUE(a.partition_warning.empty()) << a.partition_warning;
    for (std::size_t i = 0; i < a.analysed.size(); ++i) {
      EXPECT_EQ(a.analysed[i].step, b.analysed[i].step);
      EXPECT_EQ(a.analysed[i].end, b.analysed[i].end);
      EXPECT_EQ(a.analysed[i].bytes_moved, b.analysed[i].bytes_moved);
      EXPECT_LE(a.analysed[i].start, a.analysed[i].end);
      if (i > 0) {
        EXPECT_GT(a.analysed[i].step, a.analysed[i - 1].step);
      }
    }
  }
}

TEST(PlacementSim, OneNodeMovesNothingBetweenNodes) {
  Params p = small();
  p.cores_per_node = p.consumer_cores;
  for (Policy policy : {Policy::time, Policy::hybrid}) {
    for (const AnalysisStep& s : run_loose(p, policy).analysed) EXPECT_EQ(s.bytes_moved, 0u);
  }
}

}  // namespace
