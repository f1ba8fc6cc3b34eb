// The placement library (src/store/placement, docs/placement.md) on crafted
// inputs whose answers are known: the paper's Figure 5 example among them.
#include "store/placement/affinity.hpp"
#include "store/placement/dataflow.hpp"
#include "store/placement/decision_log.hpp"
#include "store/placement/placer.hpp"
#include "store/placement/task_monitor.hpp"

#include <cove/error.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>

namespace {

using namespace cove::store::placement;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const cove::Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(PlacementMonitor, PredictsFromTheLastTwoMeasurements) {
  TaskMonitor m;
  EXPECT_FALSE(m.eet(7).has_value());
  EXPECT_EQ(m.eet_or(7, 1.5), 1.5);
  m.record(7, 2.0);
  EXPECT_DOUBLE_EQ(*m.eet(7), 2.0);  // one measurement: itself
  m.record(7, 3.0);
  EXPECT_DOUBLE_EQ(*m.eet(7), 4.0);  // 3 + (3 - 2)
  m.record(7, 2.5);
  EXPECT_DOUBLE_EQ(*m.eet(7), 2.0);  // 2.5 + (2.5 - 3)
  m.record(7, 0.5);
  EXPECT_DOUBLE_EQ(*m.eet(7), 0.0);  // 0.5 - 2 clamps at 0
  m.record(8, 1.0);
  EXPECT_DOUBLE_EQ(m.mean_latest(), 0.75);
  EXPECT_NE(error_of([&] { m.record(9, -1); }).find("object 9"), std::string::npos);
}

TEST(PlacementMonitor, ChargesTheIntervalBetweenAWorkersReadsToTheFirstRead) {
  TaskMonitor m;
  m.read_event(1, 100, 0.0);
  m.read_event(2, 200, 1.0);  // another worker: its own intervals
  m.read_event(1, 101, 2.0);  // object 100 took 2
  m.read_event(1, 100, 5.0);  // 101 took 3
  m.read_event(2, 201, 1.5);  // 200 took 0.5
  EXPECT_DOUBLE_EQ(*m.eet(100), 2.0);
  EXPECT_DOUBLE_EQ(*m.eet(101), 3.0);
  EXPECT_DOUBLE_EQ(*m.eet(200), 0.5);
  m.worker_idle(1, 9.0);  // 100 took 4 this time: 4 + (4 - 2)
  EXPECT_DOUBLE_EQ(*m.eet(100), 6.0);
  EXPECT_FALSE(m.eet(201).has_value());
  EXPECT_NE(error_of([&] { m.read_event(2, 202, 1.0); }).find("worker 2"), std::string::npos);
}

TEST(PlacementPlacer, EctIsEetPlusTheLaterOfDataAndResource) {
  TaskMonitor m;
  m.record(1, 2.0);
  Placer p({0, 0}, PlacerOptions{Policy::time});
  p.set_available(0, 5.0);
  EXPECT_DOUBLE_EQ(p.ect(1, 3.0, 0, m), 7.0);
  EXPECT_DOUBLE_EQ(p.ect(1, 3.0, 1, m), 5.0);
  EXPECT_DOUBLE_EQ(p.ect(1, 6.0, 0, m), 8.0);
  const Decision d = p.place({1, 3.0, 64}, m);
  EXPECT_EQ(d.resource, 1);
  EXPECT_DOUBLE_EQ(d.ect, 5.0);
  EXPECT_DOUBLE_EQ(d.min_ect, 5.0);
  EXPECT_DOUBLE_EQ(p.eat(1), 5.0);  // EAT follows the placement
  const Decision e = p.place({1, 0.0, 64}, m);
  EXPECT_EQ(e.resource, 0);  // EAT 5 on both: the tie goes to the lower resource
  EXPECT_DOUBLE_EQ(e.ect, 7.0);
}

// The paper's Figure 5: D1..D4 (ids 1..4) arrive at 0.5, 1, 1, 2 with EET 3,
// 1, 3, 1 onto two staging cores on two nodes; affinity pairs {D1, D3} and
// {D2, D4}. TIME and HYBRID finish at 5, DATA at 6.5.
struct Figure5 {
  TaskMonitor monitor;
  Affinity affinity{2};
  std::vector<Request> requests{{1, 0.5, 0}, {2, 1.0, 0}, {3, 1.0, 0}, {4, 2.0, 0}};
  Figure5() {
    const double eet[] = {3, 1, 3, 1};
    for (ObjectId d = 1; d <= 4; ++d) monitor.record(d, eet[d - 1]);
    affinity.assign(1, 0);
    affinity.assign(3, 0);
    affinity.assign(2, 1);
    affinity.assign(4, 1);
  }
  std::map<ObjectId, int> run(Policy policy, double* makespan) {
    Placer p({0, 1}, PlacerOptions{policy});
    p.set_affinity(affinity);
    std::map<ObjectId, int> where;
    for (const Decision& d : p.place_all(requests, monitor)) where[d.object] = d.resource;
    *makespan = std::max(p.eat(0), p.eat(1));
    return where;
  }
};

TEST(PlacementPlacer, PrioritizesLongestEetFirstWithinAWindow) {
  Figure5 f;
  Placer p({0, 1}, PlacerOptions{Policy::time});
  std::vector<ObjectId> order;
  for (const Request& r : p.prioritize(f.requests, f.monitor)) order.push_back(r.object);
  EXPECT_EQ(order, (std::vector<ObjectId>{1, 3, 2, 4}));  // D3 before D2: same arrival, longer EET

  TaskMonitor m;
  m.record(10, 1);
  m.record(11, 3);
  m.record(12, 2);
  m.record(13, 5);
  Placer w({0}, PlacerOptions{Policy::time, 1.2, 0.5});
  order.clear();
  for (const Request& r : w.prioritize({{10, 0.0}, {11, 0.1}, {12, 0.2}, {13, 1.0}}, m)) order.push_back(r.object);
  EXPECT_EQ(order, (std::vector<ObjectId>{11, 12, 10, 13}));  // window [0, 0.5), then 13
}

TEST(PlacementPlacer, TimePolicyReproducesFigure5) {
  Figure5 f;
  double makespan = 0;
  const auto where = f.run(Policy::time, &makespan);
  EXPECT_DOUBLE_EQ(makespan, 5.0);
  EXPECT_EQ(where, (std::map<ObjectId, int>{{1, 0}, {2, 0}, {3, 1}, {4, 1}}));
}

TEST(PlacementPlacer, DataPolicyReproducesFigure5) {
  Figure5 f;
  double makespan = 0;
  const auto where = f.run(Policy::data, &makespan);
  EXPECT_DOUBLE_EQ(makespan, 6.5);
  EXPECT_EQ(where, (std::map<ObjectId, int>{{1, 0}, {2, 1}, {3, 0}, {4, 1}}));
}

TEST(PlacementPlacer, HybridPolicyReproducesFigure5) {
  Figure5 f;
  double makespan = 0;
  const auto where = f.run(Policy::hybrid, &makespan);
  EXPECT_DOUBLE_EQ(makespan, 5.0);
  // D3 cannot join D1 (ECT 6.5 > 1.2 x 4); D2 goes to its group's node at
  // ECT 5 <= 1.2 x 4.5 instead of the least ECT; D4 then only fits on R0.
  EXPECT_EQ(where, (std::map<ObjectId, int>{{1, 0}, {2, 1}, {3, 1}, {4, 0}}));
}

TEST(PlacementPlacer, HybridTakesAffinityOnlyWithinTheFactor) {
  TaskMonitor m;
  m.record(5, 1.0);
  Affinity a(2);
  a.assign(5, 1);
  for (double busy : {0.1, 0.3}) {  // node 1 free at 0.1 (ECT 1.1 <= 1.2) or at 0.3 (ECT 1.3 > 1.2)
    Placer p({0, 1}, PlacerOptions{Policy::hybrid});
    p.set_affinity(a);
    p.set_available(1, busy);
    const Decision d = p.place({5, 0.0}, m);
    EXPECT_DOUBLE_EQ(d.min_ect, 1.0);
    EXPECT_EQ(d.resource, busy < 0.2 ? 1 : 0) << busy;
    EXPECT_EQ(d.candidates, busy < 0.2 ? 2 : 1);
  }
}

TEST(PlacementPlacer, HybridCountsTheFactorFromTheDataArrival) {
  // Data at 100, EET 1: least ECT 101 on node 0. Node 1, busy until 101.3,
  // gives ECT 102.3: 2.3 s after the data against 1.2 x 1 s, not a
  // candidate (although 102.3 <= 1.2 x 101). Busy until 100.1 it is one.
  TaskMonitor m;
  m.record(5, 1.0);
  Affinity a(2);
  a.assign(5, 1);
  for (double busy : {101.3, 100.1}) {
    Placer p({0, 1}, PlacerOptions{Policy::hybrid});
    p.set_affinity(a);
    p.set_available(1, busy);
    const Decision d = p.place({5, 100.0}, m);
    EXPECT_EQ(d.resource, busy > 101 ? 0 : 1) << busy;
  }
}

TEST(PlacementPlacer, RoundRobinIsStaticWhateverTheLoad) {
  TaskMonitor m;
  for (Policy policy : {Policy::rr_blocking, Policy::rr_nonblocking}) {
    Placer p({0, 0, 1}, PlacerOptions{policy});
    p.set_available(1, 100.0);
    for (ObjectId o = 0; o < 9; ++o) {
      const Decision d = p.place({o, 0.0}, m);
      EXPECT_EQ(d.resource, static_cast<int>(o % 3));
      EXPECT_EQ(d.applied, policy);
    }
  }
}

TEST(PlacementPlacer, DataAndHybridWithoutAffinityPlaceAsTimeAndSaySo) {
  TaskMonitor m;
  for (Policy policy : {Policy::data, Policy::hybrid}) {
    Placer p({0, 1}, PlacerOptions{policy, 1.2, 0, 1.0});
    p.set_available(0, 4.0);
    DecisionLog log;
    const Decision d = p.place({3, 0.0}, m);
    log.add(d);
    EXPECT_EQ(d.policy, policy);
    EXPECT_EQ(d.applied, Policy::time);
    EXPECT_EQ(d.resource, 1);
    EXPECT_DOUBLE_EQ(d.eet, 1.0);  // default before any measurement
    EXPECT_EQ(log.fallbacks(), 1u);
    EXPECT_EQ(log.total(Policy::time), 1u);
    EXPECT_NE(format_decision(d).find(std::string(policy_name(policy)) + "->time"), std::string::npos);
  }
}

TEST(PlacementPlacer, HybridWithFactorOneStillPlaces) {
  // Factor 1: only resources at exactly the least ECT qualify; rounding in
  // the limit must never leave none (0.1 + 0.2 style sums).
  TaskMonitor m;
  m.record(1, 0.2);
  Affinity a(3);
  a.assign(1, 2);
  Placer p({0, 1, 2}, PlacerOptions{Policy::hybrid, 1.0});
  p.set_affinity(a);
  p.set_available(0, 0.1);
  p.set_available(1, 0.3);
  p.set_available(2, 0.7);
  for (double dat : {0.1, 0.30000000000000004, 1e9 + 0.1}) {
    const Decision d = p.place({1, dat}, m);
    EXPECT_GE(d.resource, 0);
    EXPECT_LE(d.ect, d.min_ect * (1 + 1e-12) + 1e-12);
  }
  EXPECT_NE(error_of([&] { p.place({1, std::nan("")}, m); }).find("object 1"), std::string::npos);
}

TEST(PlacementPlacer, RejectsBadConfiguration) {
  EXPECT_NE(error_of([] { Placer({}, PlacerOptions{}); }).find("no resources"), std::string::npos);
  EXPECT_NE(error_of([] { Placer({0, -1}, PlacerOptions{}); }).find("resource 1"), std::string::npos);
  EXPECT_NE(error_of([] { Placer({0}, PlacerOptions{Policy::hybrid, 0.9}); }).find("0.9"), std::string::npos);
  EXPECT_NE(error_of([] { (void)parse_policy("fastest"); }).find("'fastest'"), std::string::npos);
  EXPECT_EQ(parse_policy("rr"), Policy::rr_nonblocking);
  EXPECT_EQ(parse_policy("rr-blocking"), Policy::rr_blocking);
  EXPECT_EQ(parse_policy("hybrid"), Policy::hybrid);
}

TEST(PlacementAffinity, MetisKeepsReductionSubtreesTogether) {
  if (!have_metis()) GTEST_SKIP() << "built without METIS";
  for (auto [blocks, k, parts] : {std::tuple{8, 2, 2}, std::tuple{16, 4, 4}, std::tuple{64, 8, 8}}) {
    const Dataflow g = kway_reduction(blocks, k, 1 << 20, 1 << 10);
    const Partition p = partition_dataflow(g, parts);
    ASSERT_TRUE(p.ok) << p.warning;
    // One part per subtree below the root: blocks i and j share a part
    // exactly when they share a subtree of blocks/parts leaves.
    const int span = blocks / parts;
    std::set<int> seen;
    for (int i = 0; i < blocks; ++i) {
      const int gi = *p.affinity.group_of(static_cast<ObjectId>(i));
      seen.insert(gi);
      for (int j = 0; j < blocks; ++j) {
        EXPECT_EQ(gi == *p.affinity.group_of(static_cast<ObjectId>(j)), i / span == j / span)
            << blocks << " blocks, k " << k << ": " << i << " " << j;
      }
    }
    EXPECT_EQ(static_cast<int>(seen.size()), parts);
    // Far less crosses parts than a random spread would move.
    std::uint64_t total = 0;
    for (const Task& t : g.tasks()) {
      for (const TaskInput& in : t.after) total += in.bytes;
    }
    EXPECT_LT(p.cut_bytes * 5, total) << p.cut_bytes << " of " << total;
  }
}

TEST(PlacementAffinity, MetisFailureLeavesNoAffinityAndPlacementGoesOnAsTime) {
  if (!have_metis()) GTEST_SKIP() << "built without METIS";
  const Dataflow g = kway_reduction(8, 2, 1024, 64);
  const Partition p = partition_dataflow(g, 2, -5);  // METIS rejects a negative imbalance
  EXPECT_FALSE(p.ok);
  EXPECT_NE(p.warning.find("METIS"), std::string::npos) << p.warning;
  EXPECT_NE(p.warning.find("placing as time"), std::string::npos) << p.warning;
  EXPECT_TRUE(p.affinity.empty());
  Placer placer({0, 1}, PlacerOptions{Policy::hybrid});
  placer.set_affinity(p.affinity);
  TaskMonitor m;
  const Decision d = placer.place({0, 0.0}, m);
  EXPECT_EQ(d.applied, Policy::time);
}

TEST(PlacementDataflow, RejectsCyclesUnknownObjectsAndUnknownTasks) {
  const std::string cycle = R"({"objects": [{"name": "b0"}],
    "tasks": [{"name": "a", "reads": ["b0"], "after": ["c"]}, {"name": "b", "after": ["a"]}, {"name": "c", "after": ["b"]}]})";
  const std::string what = error_of([&] { Dataflow::from_json(cycle, "g.json"); });
  EXPECT_NE(what.find("g.json: dataflow graph has a cycle"), std::string::npos) << what;
  EXPECT_NE(what.find("a -> b -> c -> a"), std::string::npos) << what;

  const std::string unknown = R"({"objects": [{"name": "b0"}], "tasks": [{"name": "a", "reads": ["b9"]}]})";
  EXPECT_NE(error_of([&] { Dataflow::from_json(unknown, "g.json"); }).find("task 'a' reads unknown object 'b9'"),
            std::string::npos);
  const std::string edge = R"({"tasks": [{"name": "a", "after": [{"task": "z", "bytes": 4}]}]})";
  EXPECT_NE(error_of([&] { Dataflow::from_json(edge, "g.json"); }).find("unknown task 'z'"), std::string::npos);
  EXPECT_NE(error_of([&] { Dataflow::from_json("{", "g.json"); }).find("g.json: not JSON"), std::string::npos);
  EXPECT_NE(error_of([&] { Dataflow::load("/nonexistent/g.json"); }).find("/nonexistent/g.json"), std::string::npos);
}

TEST(PlacementDataflow, ReadsJsonAndTomlFiles) {
  const std::string toml = R"(
[[objects]]
name = "b0"
var = "rho"
version = 3
start = [0, 0]
count = [8, 8]
bytes = 512
[[objects]]
name = "b1"
var = "rho"
start = [8, 0]
count = [8, 8]
bytes = 512
[[tasks]]
name = "local0"
kind = "local"
reads = ["b0"]
cost = 0.25
[[tasks]]
name = "local1"
reads = ["b1"]
[[tasks]]
name = "join"
after = [{task = "local0", bytes = 100}, {task = "local1", bytes = 200}]
)";
  const std::string path = ::testing::TempDir() + "/cove_placement_graph.toml";
  {
    std::ofstream(path) << toml;
  }
  const Dataflow g = Dataflow::load(path);
  std::remove(path.c_str());
  ASSERT_EQ(g.objects().size(), 2u);
  ASSERT_EQ(g.tasks().size(), 3u);
  EXPECT_EQ(g.objects()[0].var, "rho");
  EXPECT_EQ(g.objects()[0].version, 3u);
  EXPECT_EQ(g.objects()[1].start, (std::vector<std::uint64_t>{8, 0}));
  EXPECT_DOUBLE_EQ(g.tasks()[0].cost, 0.25);
  EXPECT_EQ(g.tasks()[2].after.size(), 2u);
  EXPECT_EQ(g.tasks()[2].after[1].bytes, 200u);
  EXPECT_EQ(g.topological_order().back(), 2);
  EXPECT_NE(error_of([] { Dataflow::from_toml("[[tasks]\n", "x.toml"); }).find("x.toml: not TOML"), std::string::npos);
}

TEST(PlacementDataflow, KwayReductionHasTheReductionShape) {
  const Dataflow g = kway_reduction(8, 2, 100, 10);
  std::map<std::string, int> kinds;
  for (const Task& t : g.tasks()) ++kinds[t.kind];
  EXPECT_EQ(kinds["local"], 8);
  EXPECT_EQ(kinds["join"], 7);               // 4 + 2 + 1
  EXPECT_EQ(kinds["correction"], 7 + 8);     // one per join on the way down, one per block
  EXPECT_EQ(kinds["output"], 8);
  EXPECT_EQ(g.objects().size(), 8u);
  EXPECT_NO_THROW(g.validate());
}

}  // namespace
