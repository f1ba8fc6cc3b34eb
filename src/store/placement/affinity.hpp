// Internal: data affinity from the consumer's dataflow graph (seeds/001,
// section II-C2 and III-B).
//
// The graph's tasks are partitioned with METIS into one part per staging
// node, minimising the bytes that cross parts while balancing the bytes the
// tasks read from staging. The objects read by the tasks of one part form an
// affinity group, homed on that part's node. This is done once, after the
// consumer's first step.
//
// Thread-safety: none. No I/O.
#pragma once

#include "store/placement/dataflow.hpp"
#include "store/placement/types.hpp"

#include <optional>
#include <string>
#include <unordered_map>

namespace cove::store::placement {

class Affinity {
 public:
  Affinity() = default;
  explicit Affinity(int groups) : groups_(groups) {}
  // Throws Error(InvalidArgument) for a group outside 0..groups-1.
  void assign(ObjectId object, int group);
  std::optional<int> group_of(ObjectId object) const;
  int groups() const noexcept { return groups_; }
  bool empty() const noexcept { return group_.empty(); }
  std::size_t size() const noexcept { return group_.size(); }

 private:
  int groups_ = 0;
  std::unordered_map<ObjectId, int> group_;
};

struct Partition {
  bool ok = false;               // false: METIS failed or is missing; affinity is empty
  std::string warning;           // why not ok, for the log ("placing as time")
  Affinity affinity;             // object -> part
  std::vector<int> task_part;    // per task of the graph
  std::uint64_t cut_bytes = 0;   // bytes on edges between parts
};

// Partitions `graph` (validated) into `parts` parts (>= 1). `imbalance` is
// METIS's ufactor (allowed part imbalance in 1/1000, default 30), passed on
// as configured. A METIS error (e.g. a bad imbalance) is returned as
// ok = false with the warning, never thrown: the caller places as time.
// Throws Error(InvalidArgument) only for parts < 1.
Partition partition_dataflow(const Dataflow& graph, int parts, int imbalance = 30);

// Whether this build has METIS (COVE_HAVE_METIS).
bool have_metis() noexcept;

}  // namespace cove::store::placement
