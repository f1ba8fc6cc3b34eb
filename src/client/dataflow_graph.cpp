// cove::DataflowGraph (include/cove/dataflow.hpp): the public face of the
// placement library's graph, whose checks and file form it reuses.
#include <cove/dataflow.hpp>

#include "core/fail.hpp"
#include "store/placement/dataflow.hpp"

#include <fstream>

namespace cove {

namespace {

std::vector<std::uint64_t> unsigned_of(std::span<const Index> v, const std::string& object, const char* what) {
  std::vector<std::uint64_t> out;
  for (const Index i : v) {
    if (i < 0) detail::fail(Code::InvalidArgument, "dataflow graph: object '", object, "' has a negative ", what, " ", i);
    out.push_back(static_cast<std::uint64_t>(i));
  }
  return out;
}

}  // namespace

struct DataflowGraph::Impl {
  store::placement::Dataflow graph;
};

DataflowGraph::DataflowGraph() : impl_(std::make_unique<Impl>()) {}
DataflowGraph::~DataflowGraph() = default;
DataflowGraph::DataflowGraph(const DataflowGraph& other) : impl_(std::make_unique<Impl>(*other.impl_)) {}
DataflowGraph& DataflowGraph::operator=(const DataflowGraph& other) {
  if (this != &other) impl_ = std::make_unique<Impl>(*other.impl_);
  return *this;
}
DataflowGraph::DataflowGraph(DataflowGraph&&) noexcept = default;
DataflowGraph& DataflowGraph::operator=(DataflowGraph&&) noexcept = default;

DataflowGraph& DataflowGraph::add_object(const std::string& name, const std::string& var, std::uint64_t version,
                                         std::span<const Index> start, std::span<const Index> count,
                                         std::uint64_t bytes) {
  store::placement::DataObject o;
  o.name = name;
  o.var = var;
  o.version = version;
  o.start = unsigned_of(start, name, "start");
  o.count = unsigned_of(count, name, "count");
  o.bytes = bytes;
  impl_->graph.add_object(std::move(o));
  return *this;
}

DataflowGraph& DataflowGraph::add_task(const std::string& name, const std::string& kind,
                                       const std::vector<std::string>& reads, double cost) {
  impl_->graph.add_task(name, kind, reads, cost);
  return *this;
}

DataflowGraph& DataflowGraph::add_edge(const std::string& from, const std::string& to, std::uint64_t bytes) {
  impl_->graph.add_edge(from, to, bytes);
  return *this;
}

void DataflowGraph::validate() const { impl_->graph.validate(); }
std::size_t DataflowGraph::objects() const noexcept { return impl_->graph.objects().size(); }
std::size_t DataflowGraph::tasks() const noexcept { return impl_->graph.tasks().size(); }

std::string DataflowGraph::to_json() const {
  validate();
  return impl_->graph.to_json();
}

void DataflowGraph::save(const std::string& path) const {
  const std::string text = to_json();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text << '\n';
  if (!out.flush()) detail::fail(Code::NotFound, "dataflow graph: cannot write ", path);
}

}  // namespace cove
