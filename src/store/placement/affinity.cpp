#include "store/placement/affinity.hpp"

#include <cove/error.hpp>

#include <algorithm>
#include <map>

#ifdef COVE_HAVE_METIS
#include <metis.h>
#endif

namespace cove::store::placement {

void Affinity::assign(ObjectId object, int group) {
  if (group < 0 || group >= groups_) {
    throw Error(Code::InvalidArgument, "affinity: group " + std::to_string(group) + " for object " +
                                           std::to_string(object) + " is outside 0.." + std::to_string(groups_ - 1));
  }
  group_[object] = group;
}

std::optional<int> Affinity::group_of(ObjectId object) const {
  auto it = group_.find(object);
  if (it == group_.end()) return std::nullopt;
  return it->second;
}

bool have_metis() noexcept {
#ifdef COVE_HAVE_METIS
  return true;
#else
  return false;
#endif
}

namespace {

// Objects take the part of the first task reading them; the cut is the bytes
// on edges whose ends are in different parts.
Partition finish(const Dataflow& graph, int parts, std::vector<int> task_part) {
  Partition p;
  p.ok = true;
  p.affinity = Affinity(parts);
  const auto& tasks = graph.tasks();
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    for (int o : tasks[t].reads) {
      if (!p.affinity.group_of(static_cast<ObjectId>(o))) p.affinity.assign(static_cast<ObjectId>(o), task_part[t]);
    }
    for (const TaskInput& in : tasks[t].after) {
      if (task_part[static_cast<std::size_t>(in.task)] != task_part[t]) p.cut_bytes += in.bytes;
    }
  }
  p.task_part = std::move(task_part);
  return p;
}

}  // namespace

Partition partition_dataflow(const Dataflow& graph, int parts, int imbalance) {
  if (parts < 1) throw Error(Code::InvalidArgument, "partition: " + std::to_string(parts) + " parts; at least 1");
  const auto& tasks = graph.tasks();
  const std::size_t n = tasks.size();
  if (n == 0) {
    Partition p;
    p.warning = "the dataflow graph has no tasks; no affinity, placing as time";
    return p;
  }
  if (parts == 1 || n == 1) return finish(graph, parts, std::vector<int>(n, 0));
#ifndef COVE_HAVE_METIS
  (void)imbalance;
  Partition p;
  p.warning = "this build has no METIS (libmetis-dev); no affinity, placing as time";
  return p;
#else
  // Undirected adjacency with summed weights; METIS wants integer weights,
  // so bytes are scaled to keep the largest within 2^20.
  std::vector<std::map<int, std::uint64_t>> adj(n);
  std::uint64_t largest = 1;
  std::vector<std::uint64_t> read_bytes(n, 0);
  for (std::size_t t = 0; t < n; ++t) {
    for (const TaskInput& in : tasks[t].after) {
      const auto f = static_cast<std::size_t>(in.task);
      if (f == t) continue;
      adj[t][static_cast<int>(f)] += in.bytes;
      adj[f][static_cast<int>(t)] += in.bytes;
      largest = std::max({largest, adj[t][static_cast<int>(f)]});
    }
    for (int o : tasks[t].reads) read_bytes[t] += graph.objects()[static_cast<std::size_t>(o)].bytes;
    largest = std::max(largest, read_bytes[t]);
  }
  const std::uint64_t scale = std::max<std::uint64_t>(1, largest >> 20);
  auto weight = [&](std::uint64_t bytes) { return static_cast<idx_t>(std::max<std::uint64_t>(1, bytes / scale)); };
  std::vector<idx_t> xadj{0}, adjncy, adjwgt, vwgt;
  for (std::size_t t = 0; t < n; ++t) {
    for (const auto& [m, bytes] : adj[t]) {
      adjncy.push_back(static_cast<idx_t>(m));
      adjwgt.push_back(weight(bytes));
    }
    xadj.push_back(static_cast<idx_t>(adjncy.size()));
    vwgt.push_back(weight(read_bytes[t]));
  }
  idx_t nvtxs = static_cast<idx_t>(n);
  idx_t ncon = 1;
  idx_t nparts = parts;
  idx_t objval = 0;
  std::vector<idx_t> part(n, 0);
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = 1;  // the same partition every run
  options[METIS_OPTION_UFACTOR] = static_cast<idx_t>(imbalance);
  const int rc = METIS_PartGraphKway(&nvtxs, &ncon, xadj.data(), adjncy.data(), vwgt.data(), nullptr, adjwgt.data(),
                                     &nparts, nullptr, nullptr, options, &objval, part.data());
  if (rc != METIS_OK) {
    Partition p;
    p.warning = std::string("METIS_PartGraphKway failed (") +
                (rc == METIS_ERROR_INPUT ? "input error" : rc == METIS_ERROR_MEMORY ? "out of memory" : "error") +
                ") on " + std::to_string(n) + " tasks into " + std::to_string(parts) + " parts with imbalance " +
                std::to_string(imbalance) +
                "; no affinity, placing as time";
    return p;
  }
  std::vector<int> task_part(n);
  for (std::size_t t = 0; t < n; ++t) task_part[t] = static_cast<int>(part[t]);
  return finish(graph, parts, std::move(task_part));
#endif
}

}  // namespace cove::store::placement
