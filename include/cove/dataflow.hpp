// A consumer's dataflow graph built in code (docs/placement.md, "Dataflow
// graphs and affinity"): the objects its tasks read from staging (a
// variable, a version and a region) and its tasks, each reading objects
// and taking the outputs of earlier tasks along edges that carry bytes.
// It holds what a graph file (.json or .toml) holds:
// Client::register_dataflow(graph) hands it to the placement component,
// and save() writes the JSON file that `cove worker` runs.
//
// Ownership: a value type; copies are independent. A moved-from graph may
// only be assigned to or destroyed.
// Thread-safety: none; build a graph on one thread (const calls may run on
// several at once).
// Errors: each add_* throws Error(InvalidArgument) naming the object or
// task for a duplicate or empty name, start and count of different ranks or
// a negative start or count, a read of an unknown object, an edge from or
// to an unknown task, or a negative or non-finite cost. validate() throws
// Error(InvalidArgument) "dataflow graph has a cycle: a -> b -> a".
#pragma once

#include <cove/box.hpp>
#include <cove/export.hpp>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace cove {

class COVE_EXPORT DataflowGraph {
 public:
  DataflowGraph();
  ~DataflowGraph();
  DataflowGraph(const DataflowGraph& other);
  DataflowGraph& operator=(const DataflowGraph& other);
  DataflowGraph(DataflowGraph&&) noexcept;
  DataflowGraph& operator=(DataflowGraph&&) noexcept;

  // An object tasks read: region (start, count) of `var` at `version`,
  // `bytes` in size (the weight METIS balances).
  DataflowGraph& add_object(const std::string& name, const std::string& var, std::uint64_t version,
                            std::span<const Index> start, std::span<const Index> count, std::uint64_t bytes);
  // A task of `kind` (free text: local, join, correction, output...)
  // reading the objects named; `cost` is its work in seconds when known
  // (`cove worker` works that long).
  DataflowGraph& add_task(const std::string& name, const std::string& kind,
                          const std::vector<std::string>& reads = {}, double cost = 0);
  // Task `to` takes the output of task `from`, `bytes` of it.
  DataflowGraph& add_edge(const std::string& from, const std::string& to, std::uint64_t bytes);

  // Throws for a cycle, naming the tasks on it.
  void validate() const;
  std::size_t objects() const noexcept;
  std::size_t tasks() const noexcept;
  // The JSON file form (validates first).
  std::string to_json() const;
  // Writes to_json() to `path`. Error(NotFound) naming the path when it
  // cannot be written.
  void save(const std::string& path) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cove
