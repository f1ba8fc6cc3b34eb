// Internal: server 0's placement component (docs/placement.md, "Placement
// in the servers"): it answers Place with the server a piece should go to,
// by the policy configured for its variable (ServerOptions::placement,
// placement_variables), over the worker slots of the whole group, with EETs
// from the task times workers report (TaskDone). Objects are identified by
// variable and box (the same id at every version). Each decision goes to
// the decision log.
//
// Thread-safety: every member takes the object's own mutex.
#pragma once

#include <cove/box.hpp>
#include <cove/client.hpp>
#include <cove/server.hpp>

#include "store/placement/dataflow.hpp"
#include "store/placement/decision_log.hpp"
#include "store/placement/placer.hpp"
#include "store/placement/task_monitor.hpp"

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <vector>
#include <string>

namespace cove::server {

class PlacementService {
 public:
  // Throws Error(InvalidArgument) naming the variable for an unknown policy.
  explicit PlacementService(const ServerOptions& options);

  // The policy for `var`, or nullopt when placement is off for it.
  std::optional<store::placement::Policy> policy_of(const std::string& var) const;
  // A decision for a piece of `box` of `var` among `servers` servers.
  // Unsupported when placement is off for `var`.
  store::placement::Decision place(const std::string& var, const Box& box, std::uint64_t bytes, int servers);
  // A window's requests placed together: they all become available now, so
  // each policy's placer orders them longest EET first (Placer::place_all).
  // The result is in the order of `queries`; nullopt for a variable whose
  // placement is off.
  struct Query {
    std::string var;
    Box box;
    std::uint64_t bytes = 0;
  };
  std::vector<std::optional<store::placement::Decision>> place_window(const std::vector<Query>& queries, int servers);
  int window_ms() const noexcept { return window_ms_; }
  void task_done(const std::string& var, const Box& box, double seconds);
  // The consumer's graph (replacing an earlier one): its affinity groups
  // are computed once every object it reads has a task time reported (the
  // consumer's first step), one group per server. Errors name the source.
  void set_dataflow(const std::string& source, bool toml, const std::string& text);

  // The newest `max` decisions, oldest first (at most net::kMaxPlacements
  // are kept), with the variable and box each was for.
  std::vector<PlacementDecision> recent(std::size_t max) const;

  std::uint64_t decisions() const;
  std::uint64_t fallbacks() const;
  std::uint64_t reports() const;

 private:
  static store::placement::ObjectId object_id(const std::string& var, const Box& box);
  // Numbers the decision in the group's order and records it.
  void record(const std::string& var, const Box& box, store::placement::Decision& d);
  store::placement::Placer& placer(store::placement::Policy policy, int servers);

  mutable std::mutex mutex_;
  std::optional<store::placement::Policy> default_;
  std::map<std::string, store::placement::Policy> by_var_;
  int slots_ = 1;
  int window_ms_ = 0;
  int servers_ = 0;  // the group size the placers were made for
  std::map<store::placement::Policy, std::unique_ptr<store::placement::Placer>> placers_;
  store::placement::TaskMonitor monitor_;
  store::placement::DecisionLog log_;
  std::uint64_t reports_ = 0;
  std::uint64_t sequence_ = 0;  // over every placer: the order decisions were made in
  std::deque<PlacementDecision> recent_;
  // The consumer's graph until it is partitioned: its objects' ids, and
  // those with a task time reported.
  std::optional<store::placement::Dataflow> graph_;
  std::vector<store::placement::ObjectId> graph_ids_;
  std::set<store::placement::ObjectId> reported_;
  std::optional<store::placement::Affinity> affinity_;
  void maybe_partition(int servers);
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

}  // namespace cove::server
