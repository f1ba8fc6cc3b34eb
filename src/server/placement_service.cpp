#include "server/placement_service.hpp"

#include "common/log.hpp"
#include "common/placement.hpp"
#include "core/fail.hpp"
#include "net/protocol.hpp"

#include <algorithm>

namespace cove::server {

using namespace store::placement;

PlacementService::PlacementService(const ServerOptions& o)
    : slots_(std::max(1, o.worker_slots)), window_ms_(o.placement_window_ms) {
  try {
    if (!o.placement.empty()) default_ = parse_policy(o.placement);
  } catch (const Error& e) {
    detail::fail(Code::InvalidArgument, "ServerOptions.placement: ", detail::message_of(e));
  }
  for (const auto& [var, name] : o.placement_variables) try {
      by_var_.emplace(var, parse_policy(name));
    } catch (const Error& e) {
      detail::fail(Code::InvalidArgument, "ServerOptions.placement_variables['", var, "']: ", detail::message_of(e));
    }
}

std::optional<Policy> PlacementService::policy_of(const std::string& var) const {
  std::lock_guard lock(mutex_);
  if (auto it = by_var_.find(var); it != by_var_.end()) return it->second;
  return default_;
}

ObjectId PlacementService::object_id(const std::string& var, const Box& box) {
  std::string key = var;
  key.push_back('\0');
  for (int d = 0; d < box.ndim; ++d) key += std::to_string(box.lo[d]) + ":" + std::to_string(box.hi[d]) + ",";
  return common::fnv1a_64(key);
}

Placer& PlacementService::placer(Policy policy, int servers) {
  if (servers != servers_) {  // the group changed (joined): the resources with it
    placers_.clear();
    servers_ = servers;
  }
  auto& p = placers_[policy];
  const bool fresh = !p;
  if (!p) {
    std::vector<int> nodes;
    for (int s = 0; s < servers; ++s)
      for (int w = 0; w < slots_; ++w) nodes.push_back(s);
    PlacerOptions po;
    po.policy = policy;
    po.window = 0;
    p = std::make_unique<Placer>(std::move(nodes), po);
  }
  if (fresh && affinity_) p->set_affinity(*affinity_);
  return *p;
}

Decision PlacementService::place(const std::string& var, const Box& box, std::uint64_t bytes, int servers) {
  const std::optional<Policy> policy = policy_of(var);
  if (!policy) detail::fail(Code::Unsupported, "placement is off for '", var, "' (server.placement)");
  std::lock_guard lock(mutex_);
  const double now = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  maybe_partition(std::max(1, servers));
  Decision d = placer(*policy, std::max(1, servers)).place({object_id(var, box), now, bytes}, monitor_);
  record(var, box, d);
  return d;
}

std::vector<std::optional<Decision>> PlacementService::place_window(const std::vector<Query>& queries, int servers) {
  std::vector<std::optional<Decision>> out(queries.size());
  std::map<Policy, std::vector<std::size_t>> by_policy;
  for (std::size_t i = 0; i < queries.size(); ++i)
    if (const auto p = policy_of(queries[i].var)) by_policy[*p].push_back(i);
  std::lock_guard lock(mutex_);
  const double now = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  servers = std::max(1, servers);
  maybe_partition(servers);
  for (const auto& [policy, indices] : by_policy) {
    std::vector<Request> requests;
    for (const std::size_t i : indices) requests.push_back({object_id(queries[i].var, queries[i].box), now, queries[i].bytes});
    // One object may come twice in a window (two versions): each decision
    // goes to the first of its requests not answered yet.
    std::vector<bool> answered(indices.size(), false);
    for (Decision& d : placer(policy, servers).place_all(requests, monitor_)) {
      std::size_t j = 0;
      while (answered[j] || requests[j].object != d.object) ++j;
      answered[j] = true;
      record(queries[indices[j]].var, queries[indices[j]].box, d);
      out[indices[j]] = d;
    }
  }
  return out;
}

void PlacementService::record(const std::string& var, const Box& box, Decision& d) {
  d.sequence = sequence_++;
  log_.add(d);
  log::debug("placement of '{}' {}: {}", var, box.to_string(), format_decision(d));
  PlacementDecision p;
  p.sequence = d.sequence;
  p.var = var;
  p.box = box;
  p.bytes = d.bytes;
  p.policy = policy_name(d.policy);
  p.applied = policy_name(d.applied);
  p.server = static_cast<std::uint32_t>(d.node);
  p.slot = static_cast<std::uint32_t>(d.resource % slots_);  // resources are numbered server-major
  p.eet = d.eet;
  p.dat = d.dat;
  p.eat = d.eat_before;
  p.ect = d.ect;
  p.min_ect = d.min_ect;
  p.group = d.group;
  p.affinity = d.affinity;
  p.candidates = static_cast<std::uint32_t>(std::max(0, d.candidates));
  if (recent_.size() == net::kMaxPlacements) recent_.pop_front();
  recent_.push_back(std::move(p));
}

std::vector<PlacementDecision> PlacementService::recent(std::size_t max) const {
  std::lock_guard lock(mutex_);
  const std::size_t n = std::min(max, recent_.size());
  return {recent_.end() - static_cast<std::ptrdiff_t>(n), recent_.end()};
}

void PlacementService::task_done(const std::string& var, const Box& box, double seconds) {
  std::lock_guard lock(mutex_);
  const ObjectId id = object_id(var, box);
  monitor_.record(id, seconds);
  ++reports_;
  if (graph_) reported_.insert(id);
}

void PlacementService::set_dataflow(const std::string& source, bool toml, const std::string& text) {
  Dataflow g = toml ? Dataflow::from_toml(text, source) : Dataflow::from_json(text, source);
  std::vector<ObjectId> ids;
  for (const DataObject& o : g.objects()) {
    std::vector<Index> start(o.start.begin(), o.start.end()), count(o.count.begin(), o.count.end());
    ids.push_back(object_id(o.var, Box::from_start_count(start, count)));
  }
  std::lock_guard lock(mutex_);
  graph_ = std::move(g);
  graph_ids_ = std::move(ids);
  reported_.clear();
  log::info("dataflow graph {}: {} tasks, {} objects; affinity after its first step", source,
            graph_->tasks().size(), graph_->objects().size());
}

// Once, after the consumer's first step (every object of its graph has a
// task time): METIS, one part per server; a failure places as time.
void PlacementService::maybe_partition(int servers) {
  if (!graph_) return;
  for (const ObjectId id : graph_ids_)
    if (!reported_.count(id)) return;
  const Partition p = partition_dataflow(*graph_, servers);
  if (!p.ok) {
    log::warn("dataflow graph: {}", p.warning);
  } else {
    Affinity a(p.affinity.groups());
    for (std::size_t i = 0; i < graph_ids_.size(); ++i)
      if (const auto g = p.affinity.group_of(static_cast<ObjectId>(i))) a.assign(graph_ids_[i], *g);
    affinity_ = std::move(a);
    for (auto& [policy, placer] : placers_) placer->set_affinity(*affinity_);
    log::info("dataflow graph partitioned into {} groups ({} bytes cut)", p.affinity.groups(), p.cut_bytes);
  }
  graph_.reset();
}

std::uint64_t PlacementService::decisions() const {
  std::lock_guard lock(mutex_);
  return log_.total();
}
std::uint64_t PlacementService::fallbacks() const {
  std::lock_guard lock(mutex_);
  return log_.fallbacks();
}
std::uint64_t PlacementService::reports() const {
  std::lock_guard lock(mutex_);
  return reports_;
}

}  // namespace cove::server
