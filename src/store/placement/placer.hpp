// Internal: where a staged object goes, the placement component of the
// in-staging placement paper (seeds/001, sections II-B..II-D).
//
// Resources are the staging cores (consumer worker slots), each on a node.
// For an object d and a resource r:
//   ECT(d, r) = EET(d) + max(DAT(d), EAT(r))
// with EET from the TaskMonitor, DAT the time d is available in staging and
// EAT(r) the time r is expected to be free. Placing d on r sets EAT(r) to
// ECT(d, r). The policies:
//   rr-blocking, rr-nonblocking  static: object id modulo the resources (the
//                                two differ in how consumers read, not here)
//   time     least ECT (ties: least EAT, then lowest resource)
//   data     the node of d's affinity group (its METIS part), then least
//            ECT there; a node other than the group's own (hybrid, when the
//            own is not within the factor) by the most of the group placed
//            there this step
//   hybrid   the resources whose ECT is within hybrid_factor x the least
//            ECT, then as data among them; ECTs are counted from DAT(d)
//            (ECT - DAT <= factor x (least ECT - DAT)): d's task completes
//            at most factor times later than it could, counted from its
//            data's arrival, early or late in a run
// data and hybrid without affinity (before the first step is partitioned,
// for an object outside the partitioned graph, or after METIS failed) place
// as time, and the decision says so.
//
// Requests arriving within `window` seconds of the first one not yet placed
// (or at the same time as it) are placed longest EET first (place_all).
//
// Cost: O(log R + nodes) per decision (per-node ordered EAT sets), so that a
// decision stays in microseconds at thousands of resources.
//
// Thread-safety: none; callers serialise access. No I/O.
#pragma once

#include "store/placement/affinity.hpp"
#include "store/placement/task_monitor.hpp"
#include "store/placement/types.hpp"

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace cove::store::placement {

struct Request {
  ObjectId object = 0;
  double dat = 0;            // data available time (seconds)
  std::uint64_t bytes = 0;   // the object's size, recorded with the decision
};

struct Decision {
  std::uint64_t sequence = 0;    // 0, 1, ... per placer
  ObjectId object = 0;
  Policy policy = Policy::time;  // configured
  Policy applied = Policy::time; // after the fallback to time when there is no affinity
  int resource = 0;
  int node = 0;
  double eet = 0;
  double dat = 0;
  double eat_before = 0;         // EAT of the chosen resource before this decision
  double ect = 0;                // ECT on the chosen resource
  double min_ect = 0;            // least ECT over all resources
  int group = -1;                // affinity group (METIS part), -1 without
  int affinity = 0;              // affinity score of the chosen node: 2^24 on the group's own node, + members there
  int candidates = 0;            // data, hybrid: nodes considered (hybrid: with a resource within the factor)
  std::uint64_t bytes = 0;
};

struct PlacerOptions {
  Policy policy = Policy::hybrid;
  double hybrid_factor = 1.2;
  double window = 0.0;           // seconds; requests within it are placed longest EET first
  double default_eet = 0.0;      // EET before any measurement
};

class Placer {
 public:
  // resource_nodes[r]: the node (0..nodes-1) of resource r. Throws
  // Error(InvalidArgument) for no resources, a negative node, a hybrid
  // factor below 1 or a negative window.
  Placer(std::vector<int> resource_nodes, PlacerOptions options);

  // The affinity groups (from partition_dataflow). Group g is homed on node
  // g modulo the nodes.
  void set_affinity(Affinity affinity);
  const Affinity& affinity() const noexcept { return affinity_; }

  // Places one request now.
  Decision place(const Request& request, const TaskMonitor& monitor);
  // Places a batch in the prioritized order: by DAT, and within each window
  // (from the first unplaced DAT) longest EET first; ties by DAT, then id.
  std::vector<Decision> place_all(std::vector<Request> requests, const TaskMonitor& monitor);
  // The order place_all would use, without placing.
  std::vector<Request> prioritize(std::vector<Request> requests, const TaskMonitor& monitor) const;

  // A new step: affinity counts start again (EATs stay).
  void new_step();
  // The runtime knows better: resource r is expected free at `at`.
  void set_available(int resource, double at);

  double eat(int resource) const;
  double ect(ObjectId object, double dat, int resource, const TaskMonitor& monitor) const;
  double eet(ObjectId object, const TaskMonitor& monitor) const;
  int resources() const noexcept { return static_cast<int>(nodes_of_.size()); }
  int nodes() const noexcept { return nodes_; }
  const PlacerOptions& options() const noexcept { return options_; }

 private:
  using Slot = std::pair<double, int>;  // (EAT, resource)
  int score(int group, int node) const;
  void move(int resource, double eat);

  PlacerOptions options_;
  std::vector<int> nodes_of_;
  int nodes_ = 0;
  std::vector<double> eat_;
  std::set<Slot> all_;
  std::vector<std::set<Slot>> by_node_;
  Affinity affinity_;
  std::vector<int> placed_;  // [group * nodes + node]: members placed this step
  std::uint64_t sequence_ = 0;
};

}  // namespace cove::store::placement
