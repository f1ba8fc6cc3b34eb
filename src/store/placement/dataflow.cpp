#include "store/placement/dataflow.hpp"

#include <cove/error.hpp>

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace cove::store::placement {
namespace {

[[noreturn]] void bad(const std::string& message) { throw Error(Code::InvalidArgument, message); }

std::string named(const std::string& s) { return "'" + s + "'"; }

template <class T>
T field(const nlohmann::json& j, const char* key, const T& fallback, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end()) return fallback;
  try {
    return it->template get<T>();
  } catch (const nlohmann::json::exception&) {
    bad(where + ": field '" + key + "' has the wrong type (" + it->dump() + ")");
  }
}

}  // namespace

int Dataflow::add_object(DataObject object) {
  if (object.name.empty()) bad("dataflow graph: an object has no name");
  if (object_by_name_.count(object.name)) bad("dataflow graph: object " + named(object.name) + " is defined twice");
  if (object.start.size() != object.count.size()) {
    bad("dataflow graph: object " + named(object.name) + " has a start of rank " + std::to_string(object.start.size()) +
        " and a count of rank " + std::to_string(object.count.size()));
  }
  const int index = static_cast<int>(objects_.size());
  object_by_name_.emplace(object.name, index);
  objects_.push_back(std::move(object));
  return index;
}

int Dataflow::add_task(std::string name, std::string kind, const std::vector<std::string>& reads, double cost) {
  if (name.empty()) bad("dataflow graph: a task has no name");
  if (task_by_name_.count(name)) bad("dataflow graph: task " + named(name) + " is defined twice");
  if (!std::isfinite(cost) || cost < 0) bad("dataflow graph: task " + named(name) + " has a negative cost");
  Task task{std::move(name), std::move(kind), {}, {}, cost};
  for (const std::string& r : reads) {
    const int o = object_index(r);
    if (o < 0) bad("dataflow graph: task " + named(task.name) + " reads unknown object " + named(r));
    task.reads.push_back(o);
  }
  const int index = static_cast<int>(tasks_.size());
  task_by_name_.emplace(task.name, index);
  tasks_.push_back(std::move(task));
  return index;
}

void Dataflow::add_edge(const std::string& from, const std::string& to, std::uint64_t bytes) {
  const int f = task_index(from);
  const int t = task_index(to);
  if (f < 0) bad("dataflow graph: task " + named(to) + " takes the output of unknown task " + named(from));
  if (t < 0) bad("dataflow graph: an edge from " + named(from) + " goes to unknown task " + named(to));
  tasks_[static_cast<std::size_t>(t)].after.push_back(TaskInput{f, bytes});
}

int Dataflow::object_index(const std::string& name) const {
  auto it = object_by_name_.find(name);
  return it == object_by_name_.end() ? -1 : it->second;
}

int Dataflow::task_index(const std::string& name) const {
  auto it = task_by_name_.find(name);
  return it == task_by_name_.end() ? -1 : it->second;
}

namespace {

// Kahn's order; `waiting` is left > 0 for the tasks on or after a cycle.
std::vector<int> kahn(const std::vector<Task>& tasks, std::vector<int>& waiting) {
  const std::size_t n = tasks.size();
  std::vector<std::vector<int>> next(n);
  waiting.assign(n, 0);
  for (std::size_t t = 0; t < n; ++t) {
    for (const TaskInput& in : tasks[t].after) {
      next[static_cast<std::size_t>(in.task)].push_back(static_cast<int>(t));
      ++waiting[t];
    }
  }
  std::vector<int> order;
  order.reserve(n);
  for (std::size_t t = 0; t < n; ++t) {
    if (waiting[t] == 0) order.push_back(static_cast<int>(t));
  }
  for (std::size_t i = 0; i < order.size(); ++i) {
    for (int m : next[static_cast<std::size_t>(order[i])]) {
      if (--waiting[static_cast<std::size_t>(m)] == 0) order.push_back(m);
    }
  }
  return order;
}

}  // namespace

std::string Dataflow::cycle() const {
  std::vector<int> waiting;
  if (kahn(tasks_, waiting).size() == tasks_.size()) return "";
  // Walk back along inputs of unfinished tasks until one repeats.
  const std::size_t n = tasks_.size();
  int at = 0;
  while (waiting[static_cast<std::size_t>(at)] == 0) ++at;
  std::vector<int> path;
  std::vector<int> seen_at(n, -1);
  while (seen_at[static_cast<std::size_t>(at)] < 0) {
    seen_at[static_cast<std::size_t>(at)] = static_cast<int>(path.size());
    path.push_back(at);
    for (const TaskInput& in : tasks_[static_cast<std::size_t>(at)].after) {
      if (waiting[static_cast<std::size_t>(in.task)] > 0) {
        at = in.task;
        break;
      }
    }
  }
  // path runs against the edges; the cycle is its tail, reversed, from its lowest task.
  std::vector<int> ring(path.rbegin(), path.rend() - seen_at[static_cast<std::size_t>(at)]);
  std::rotate(ring.begin(), std::min_element(ring.begin(), ring.end()), ring.end());
  std::string text;
  for (int t : ring) text += tasks_[static_cast<std::size_t>(t)].name + " -> ";
  return text + tasks_[static_cast<std::size_t>(ring.front())].name;
}

std::vector<int> Dataflow::topological_order() const {
  std::vector<int> waiting;
  std::vector<int> order = kahn(tasks_, waiting);
  if (order.size() != tasks_.size()) bad("dataflow graph has a cycle: " + cycle());
  return order;
}

void Dataflow::validate() const { (void)topological_order(); }

std::string Dataflow::to_json() const {
  nlohmann::json objects = nlohmann::json::array(), tasks = nlohmann::json::array();
  for (const DataObject& o : objects_)
    objects.push_back({{"name", o.name}, {"var", o.var}, {"version", o.version}, {"start", o.start},
                       {"count", o.count}, {"bytes", o.bytes}});
  for (const Task& t : tasks_) {
    nlohmann::json reads = nlohmann::json::array(), after = nlohmann::json::array();
    for (int r : t.reads) reads.push_back(objects_[static_cast<std::size_t>(r)].name);
    for (const TaskInput& in : t.after)
      after.push_back({{"task", tasks_[static_cast<std::size_t>(in.task)].name}, {"bytes", in.bytes}});
    tasks.push_back({{"name", t.name}, {"kind", t.kind}, {"reads", reads}, {"after", after}, {"cost", t.cost}});
  }
  return nlohmann::json{{"objects", objects}, {"tasks", tasks}}.dump(1);
}

Dataflow Dataflow::from_json(const std::string& text, const std::string& source) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    bad(source + ": not JSON: " + e.what());
  }
  if (!doc.is_object()) bad(source + ": a dataflow graph is an object with 'objects' and 'tasks'");
  Dataflow g;
  const nlohmann::json objects = doc.value("objects", nlohmann::json::array());
  const nlohmann::json tasks = doc.value("tasks", nlohmann::json::array());
  if (!objects.is_array() || !tasks.is_array()) bad(source + ": 'objects' and 'tasks' must be arrays");
  for (std::size_t i = 0; i < objects.size(); ++i) {
    const nlohmann::json& o = objects[i];
    const std::string where = source + ": objects[" + std::to_string(i) + "]";
    if (!o.is_object()) bad(where + " is not an object");
    DataObject d;
    d.name = field<std::string>(o, "name", "", where);
    d.var = field<std::string>(o, "var", d.name, where);
    d.version = field<std::uint64_t>(o, "version", 0, where);
    d.start = field<std::vector<std::uint64_t>>(o, "start", {}, where);
    d.count = field<std::vector<std::uint64_t>>(o, "count", {}, where);
    d.bytes = field<std::uint64_t>(o, "bytes", 0, where);
    g.add_object(std::move(d));
  }
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const nlohmann::json& t = tasks[i];
    const std::string where = source + ": tasks[" + std::to_string(i) + "]";
    if (!t.is_object()) bad(where + " is not an object");
    g.add_task(field<std::string>(t, "name", "", where), field<std::string>(t, "kind", "", where),
               field<std::vector<std::string>>(t, "reads", {}, where), field<double>(t, "cost", 0.0, where));
  }
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const nlohmann::json& t = tasks[i];
    const std::string where = source + ": tasks[" + std::to_string(i) + "]";
    const nlohmann::json after = t.value("after", nlohmann::json::array());
    if (!after.is_array()) bad(where + ": 'after' must be an array");
    for (const nlohmann::json& a : after) {
      if (a.is_string()) {
        g.add_edge(a.get<std::string>(), t.at("name").get<std::string>(), 0);
      } else if (a.is_object()) {
        g.add_edge(field<std::string>(a, "task", "", where), t.at("name").get<std::string>(),
                   field<std::uint64_t>(a, "bytes", 0, where));
      } else {
        bad(where + ": an 'after' entry is a task name or {task, bytes}, not " + a.dump());
      }
    }
  }
  if (const std::string c = g.cycle(); !c.empty()) bad(source + ": dataflow graph has a cycle: " + c);
  return g;
}

Dataflow Dataflow::from_toml(const std::string& text, const std::string& source) {
  toml::table doc;
  try {
    doc = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    std::ostringstream why;
    why << e;
    bad(source + ": not TOML: " + why.str());
  }
  std::ostringstream json;
  json << toml::json_formatter{doc};
  return from_json(json.str(), source);
}

Dataflow Dataflow::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(Code::NotFound, "dataflow graph " + named(path) + " cannot be opened");
  std::ostringstream text;
  text << in.rdbuf();
  auto ends_with = [&](const char* suffix) {
    const std::string s(suffix);
    return path.size() >= s.size() && path.compare(path.size() - s.size(), s.size(), s) == 0;
  };
  if (ends_with(".json")) return from_json(text.str(), path);
  if (ends_with(".toml")) return from_toml(text.str(), path);
  bad("dataflow graph " + named(path) + ": the name must end in .json or .toml");
}

Dataflow kway_reduction(int blocks, int k, std::uint64_t block_bytes, std::uint64_t summary_bytes,
                        const std::string& var) {
  if (blocks < 1) bad("k-way reduction: " + std::to_string(blocks) + " blocks; at least 1");
  if (k < 2) bad("k-way reduction: k = " + std::to_string(k) + "; at least 2");
  Dataflow g;
  std::vector<std::string> level;
  for (int i = 0; i < blocks; ++i) {
    const std::string b = "b" + std::to_string(i);
    DataObject o;
    o.name = b;
    o.var = var;
    o.start = {static_cast<std::uint64_t>(i)};
    o.count = {1};
    o.bytes = block_bytes;
    g.add_object(std::move(o));
    level.push_back("local" + std::to_string(i));
    g.add_task(level.back(), "local", {b});
  }
  // joins[l][j]: the join tasks of level l; group_of_leaf: the first-level join of each leaf.
  std::vector<std::vector<std::string>> joins;
  std::vector<std::vector<int>> children_count;
  int id = 0;
  while (level.size() > 1) {
    std::vector<std::string> up;
    for (std::size_t j = 0; j < level.size(); j += static_cast<std::size_t>(k)) {
      up.push_back("join" + std::to_string(id++));
      g.add_task(up.back(), "join", {});
      for (std::size_t c = j; c < std::min(level.size(), j + static_cast<std::size_t>(k)); ++c) {
        g.add_edge(level[c], up.back(), summary_bytes);
      }
    }
    joins.push_back(up);
    level = std::move(up);
  }
  // Down the tree: correct<x> for every join x, after the join and its parent's correct.
  std::string parent_correct;
  std::vector<std::string> above;  // the corrects of the level above, aligned with joins of that level
  for (std::size_t l = joins.size(); l-- > 0;) {
    std::vector<std::string> here;
    for (std::size_t j = 0; j < joins[l].size(); ++j) {
      here.push_back("correct_" + joins[l][j]);
      g.add_task(here.back(), "correction", {});
      g.add_edge(joins[l][j], here.back(), summary_bytes);
      if (!above.empty()) g.add_edge(above[j / static_cast<std::size_t>(k)], here.back(), summary_bytes);
    }
    above = std::move(here);
  }
  for (int i = 0; i < blocks; ++i) {
    const std::string c = "correction" + std::to_string(i);
    g.add_task(c, "correction", {});
    g.add_edge("local" + std::to_string(i), c, summary_bytes);
    if (!above.empty()) g.add_edge(above[static_cast<std::size_t>(i / k)], c, summary_bytes);
    g.add_task("output" + std::to_string(i), "output", {});
    g.add_edge(c, "output" + std::to_string(i), summary_bytes);
  }
  g.validate();
  return g;
}

}  // namespace cove::store::placement
