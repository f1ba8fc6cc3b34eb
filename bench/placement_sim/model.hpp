// The placement simulator's model (docs/placement.md, "Simulation"): an
// AMR-like mesh whose blocks refine around moving features between a
// minimum and a maximum depth, the cost of a task on a block, and the
// network. Deterministic: every number follows from the parameters and seed.
#pragma once

#include "store/placement/types.hpp"

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace cove::sim {

using store::placement::ObjectId;

struct Params {
  int producer_cores = 1024;
  int consumer_cores = 1024;   // the resources placement chooses among
  int cores_per_node = 16;     // Titan's 16-core nodes
  int min_depth = 4;
  int max_depth = 6;
  int steps = 100;
  int features = 8;
  double feature_radius = 1.0; // in block widths, at step 0
  double growth = 1.0;         // the radius grows by this fraction over the run
  double producer_cost = 0.02; // seconds for a block at min_depth; x2 per level
  double consumer_cost = 0.02;  // APP2 of the tightly coupled workflow
  double analysis_cost = 0.006;  // a local task of the loosely coupled analysis
  double analysis_growth = 1.0;  // features multiply the analysis work by 1 + this over the run
  double noise = 0.1;          // a task's cost varies by up to this fraction
  double latency = 20e-6;      // seconds per message
  double bandwidth = 2e9;      // bytes per second per link
  std::uint64_t block_bytes = 16 * 16 * 16 * 8;
  std::uint64_t summary_bytes = 4096;  // what a reduction task passes on
  double reduction_cost = 0.002;       // join, correction and output tasks
  int k = 8;
  double window = 0.0;
  std::uint64_t seed = 1;
};

struct Block {
  std::uint64_t key = 0;  // depth and integer position
  int depth = 0;
  ObjectId id = 0;        // stable across steps (first seen, first numbered)
};

class Mesh {
 public:
  explicit Mesh(const Params& params) : p_(params) {}
  // The leaf blocks at `step`, in Morton order.
  std::vector<Block> blocks(int step);
  // The key of the ancestor of `key` at `depth` (<= its own depth).
  static std::uint64_t ancestor(std::uint64_t key, int depth);
  static int depth_of(std::uint64_t key) { return static_cast<int>(key >> 60); }

 private:
  void refine(int step, int depth, std::uint32_t x, std::uint32_t y, std::uint32_t z, std::vector<Block>& out);
  const Params& p_;
  std::unordered_map<std::uint64_t, ObjectId> ids_;
};

// The seconds a task of `app` (0, 1, ...) on `block` takes at `step`.
double task_cost(const Params& p, double base, const Block& block, int step, int app);
// The seconds `bytes` take between two nodes.
inline double transfer(const Params& p, std::uint64_t bytes) {
  return p.latency + static_cast<double>(bytes) / p.bandwidth;
}

}  // namespace cove::sim
