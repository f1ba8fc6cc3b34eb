// `cove graph FILE --nodes N`: checks a consumer's dataflow graph (JSON or
// TOML, docs/placement.md) and shows the affinity groups METIS makes of it
// for N staging nodes, as the data and hybrid placement policies use them.
#include "commands.hpp"

#include "store/placement/affinity.hpp"
#include "store/placement/dataflow.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <map>

namespace cove::tool {

int graph(const std::string& path, int nodes, int imbalance, bool json) {
  using namespace store::placement;
  const Dataflow g = Dataflow::load(path);
  const Partition p = partition_dataflow(g, nodes, imbalance);
  std::uint64_t edges = 0, edge_bytes = 0, read_bytes = 0;
  for (const Task& t : g.tasks()) {
    edges += t.after.size();
    for (const TaskInput& in : t.after) edge_bytes += in.bytes;
  }
  for (const DataObject& o : g.objects()) read_bytes += o.bytes;
  if (json) {
    nlohmann::json out = {{"file", path},       {"tasks", g.tasks().size()}, {"objects", g.objects().size()},
                          {"edges", edges},     {"edge_bytes", edge_bytes},  {"nodes", nodes},
                          {"partitioned", p.ok}, {"cut_bytes", p.cut_bytes}, {"warning", p.warning}};
    nlohmann::json groups = nlohmann::json::object();
    for (std::size_t i = 0; i < g.objects().size(); ++i) {
      if (auto group = p.affinity.group_of(i)) groups[g.objects()[i].name] = *group;
    }
    out["groups"] = groups;
    fmt::print("{}\n", out.dump(2));
    return 0;
  }
  fmt::print("{}: {} tasks, {} objects ({}), {} edges ({})\n", printable(path), g.tasks().size(), g.objects().size(),
             human_bytes(read_bytes), edges, human_bytes(edge_bytes));
  if (!p.ok) {
    fmt::print("warning: {}\n", printable(p.warning));
    return 0;
  }
  fmt::print("{} parts (one per node): {} cross parts\n", nodes, human_bytes(p.cut_bytes));
  std::map<int, std::vector<std::string>> by_group;
  for (std::size_t i = 0; i < g.objects().size(); ++i) {
    if (auto group = p.affinity.group_of(i)) by_group[*group].push_back(g.objects()[i].name);
  }
  for (const auto& [group, names] : by_group) {
    std::vector<std::string> shown;
    for (const std::string& n : names) shown.push_back(printable(n));
    fmt::print("node {}: {}\n", group, fmt::join(shown, " "));
  }
  return 0;
}

}  // namespace cove::tool
