// Internal: a consumer's dataflow graph (docs/placement.md).
//
// Objects are what tasks read from staging: a variable, a version and a
// region (start, count), with a size. Tasks read objects and take the
// output of earlier tasks (edges carry bytes). The graph is given in a JSON
// or TOML file or built through add_object/add_task/add_edge; validate()
// rejects cycles, naming the tasks on one.
//
// File form (JSON; TOML the same keys, [[objects]] and [[tasks]]):
//   { "objects": [ {"name": "b0", "var": "rho", "version": 0,
//                   "start": [0, 0], "count": [64, 64], "bytes": 32768} ],
//     "tasks":   [ {"name": "local0", "kind": "local", "reads": ["b0"], "cost": 0.01},
//                  {"name": "join0", "kind": "join", "after": [ {"task": "local0", "bytes": 1024} ]} ] }
//
// Thread-safety: none.
#pragma once

#include "store/placement/types.hpp"

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace cove::store::placement {

struct DataObject {
  std::string name;
  std::string var;
  std::uint64_t version = 0;
  std::vector<std::uint64_t> start;
  std::vector<std::uint64_t> count;
  std::uint64_t bytes = 0;
};

struct TaskInput {
  int task = 0;                  // index of the producing task
  std::uint64_t bytes = 0;
};

struct Task {
  std::string name;
  std::string kind;              // free text: local, join, correction, output, ...
  std::vector<int> reads;        // object indices (ObjectId = index)
  std::vector<TaskInput> after;  // outputs of earlier tasks
  double cost = 0;               // seconds, when known (the simulator's and workers' synthetic work)
};

class Dataflow {
 public:
  // Each throws Error(InvalidArgument) naming the object or task: a
  // duplicate or empty name, start and count of different ranks, a read of
  // an unknown object, an edge from or to an unknown task, a negative cost.
  int add_object(DataObject object);
  int add_task(std::string name, std::string kind, const std::vector<std::string>& reads, double cost = 0);
  void add_edge(const std::string& from, const std::string& to, std::uint64_t bytes);

  // Throws Error(InvalidArgument) "dataflow graph has a cycle: a -> b -> a".
  void validate() const;
  // Tasks in an order where every task comes after its inputs (validates).
  std::vector<int> topological_order() const;

  // "a -> b -> a" for some cycle (starting at its first task), "" when there is none.
  std::string cycle() const;

  const std::vector<DataObject>& objects() const noexcept { return objects_; }
  const std::vector<Task>& tasks() const noexcept { return tasks_; }
  int object_index(const std::string& name) const;  // -1 when unknown
  int task_index(const std::string& name) const;    // -1 when unknown

  // The JSON file form: from_json(to_json()) gives this graph again.
  std::string to_json() const;

  // Parse and validate; `source` names the text in errors (a path).
  static Dataflow from_json(const std::string& text, const std::string& source);
  static Dataflow from_toml(const std::string& text, const std::string& source);
  // By extension: .json or .toml. Throws Error(NotFound / InvalidArgument) naming the path.
  static Dataflow load(const std::string& path);

 private:
  std::vector<DataObject> objects_;
  std::vector<Task> tasks_;
  std::unordered_map<std::string, int> object_by_name_;
  std::unordered_map<std::string, int> task_by_name_;
};

// The k-way hierarchical reduction of the paper's topological analysis
// (its Figure 4 for k = 2): per block b<i> (object i, `block_bytes`), a
// local<i> task reading it; join tasks combining k outputs per level up to
// one root; correct tasks going back down the same tree; per block a
// correction<i> (after local<i> and its group's correct) and an output<i>.
// Edges between tasks carry `summary_bytes`. Task costs are 0. Throws
// Error(InvalidArgument) for blocks < 1 or k < 2.
Dataflow kway_reduction(int blocks, int k, std::uint64_t block_bytes, std::uint64_t summary_bytes,
                        const std::string& var = "field");

}  // namespace cove::store::placement
