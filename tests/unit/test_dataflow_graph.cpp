// A dataflow graph built through the public API (include/cove/dataflow.hpp):
// its checks, its file form, and its registration with an in-process
// server whose placement then groups by it.
#include <cove/client.hpp>
#include <cove/dataflow.hpp>
#include <cove/error.hpp>
#include <cove/server.hpp>

#include "staging_support.hpp"
#include "store/placement/dataflow.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace {

using cove::Box;
using cove::Client;
using cove::Code;
using cove::DataflowGraph;
using cove::Index;
using V = std::vector<Index>;

std::string error_of(const std::function<void()>& f, Code want) {
  try {
    f();
  } catch (const cove::Error& e) {
    EXPECT_EQ(e.code(), want) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

// Two blocks of rho, a local task on each and a join of both.
DataflowGraph pair_graph() {
  DataflowGraph g;
  g.add_object("b0", "rho", 0, V{0}, V{16}, 128).add_object("b1", "rho", 0, V{16}, V{16}, 128);
  g.add_task("local0", "local", {"b0"}, 0.01).add_task("local1", "local", {"b1"}, 0.02).add_task("join", "join");
  g.add_edge("local0", "join", 64).add_edge("local1", "join", 64);
  return g;
}

TEST(DataflowGraph, ItsFileFormIsWhatAGraphFileHolds) {
  const DataflowGraph g = pair_graph();
  EXPECT_EQ(g.objects(), 2u);
  EXPECT_EQ(g.tasks(), 3u);
  const auto back = cove::store::placement::Dataflow::from_json(g.to_json(), "api");
  ASSERT_EQ(back.objects().size(), 2u);
  EXPECT_EQ(back.objects()[1].var, "rho");
  EXPECT_EQ(back.objects()[1].start, (std::vector<std::uint64_t>{16}));
  EXPECT_EQ(back.objects()[1].bytes, 128u);
  ASSERT_EQ(back.tasks().size(), 3u);
  EXPECT_EQ(back.tasks()[1].cost, 0.02);
  ASSERT_EQ(back.tasks()[2].after.size(), 2u);
  EXPECT_EQ(back.tasks()[2].after[1].task, 1);
  EXPECT_EQ(back.tasks()[2].after[1].bytes, 64u);
  // save() writes the file `cove worker` and Dataflow::load read.
  const auto file =
      std::filesystem::temp_directory_path() / ("cove-dataflow-graph-" + std::to_string(::getpid()) + ".json");
  g.save(file.string());
  EXPECT_EQ(cove::store::placement::Dataflow::load(file.string()).to_json(), back.to_json());
  std::filesystem::remove(file);
  // A copy is independent.
  DataflowGraph copy = g;
  copy.add_task("extra", "output");
  EXPECT_EQ(g.tasks(), 3u);
  EXPECT_EQ(copy.tasks(), 4u);
}

TEST(DataflowGraph, BadGraphsAreRefusedNamingTheCulprit) {
  DataflowGraph g = pair_graph();
  EXPECT_NE(error_of([&] { g.add_object("b0", "rho", 1, V{0}, V{1}, 8); }, Code::InvalidArgument).find("'b0' is defined twice"),
            std::string::npos);
  EXPECT_NE(error_of([&] { g.add_object("b2", "rho", 0, V{-1}, V{1}, 8); }, Code::InvalidArgument).find("'b2' has a negative start -1"),
            std::string::npos);
  EXPECT_NE(error_of([&] { g.add_task("t", "local", {"b9"}); }, Code::InvalidArgument).find("reads unknown object 'b9'"),
            std::string::npos);
  EXPECT_NE(error_of([&] { g.add_edge("zz", "join", 1); }, Code::InvalidArgument).find("unknown task 'zz'"),
            std::string::npos);
  g.add_edge("join", "local0", 8);  // a cycle
  const std::string cycle = error_of([&] { (void)g.to_json(); }, Code::InvalidArgument);
  EXPECT_NE(cycle.find("cycle: local0 -> join -> local0"), std::string::npos) << cycle;
}

TEST(DataflowGraph, RegisteredItGroupsTheDataPolicysPlacements) {
  cove::ServerOptions o;
  o.transport = cove_test::unique_name("dataflow");
  o.worker_slots = 2;
  o.placement = "data";
  cove::Server server(o);
  Client c = Client::connect(server.address());
  c.define("rho", cove::DType(cove::DTypeKind::Float64), 1, V{32});
  const std::vector<double> block(16, 1.0);
  c.register_dataflow(pair_graph());
  // Before the consumer's first step (no task times yet): placed as time.
  c.put_placed("rho", 0, Box::from_start_count(V{0}, V{16}), block.data(), 128);
  EXPECT_EQ(c.placements(1).front().applied, "time");
  c.task_done("rho", Box::from_start_count(V{0}, V{16}), 0.01);
  c.task_done("rho", Box::from_start_count(V{16}, V{16}), 0.02);
  // Now grouped: both blocks by the data policy, in one group.
  c.put_placed("rho", 1, Box::from_start_count(V{0}, V{16}), block.data(), 128);
  c.put_placed("rho", 1, Box::from_start_count(V{16}, V{16}), block.data(), 128);
  const auto recent = c.placements(2);
  ASSERT_EQ(recent.size(), 2u);
  for (const auto& d : recent) {
    EXPECT_EQ(d.applied, "data");
    EXPECT_EQ(d.group, 0);
  }
  // A cyclic graph never leaves the client.
  DataflowGraph bad = pair_graph();
  bad.add_edge("join", "local1", 8);
  EXPECT_NE(error_of([&] { c.register_dataflow(bad); }, Code::InvalidArgument).find("cycle"), std::string::npos);
}

}  // namespace
