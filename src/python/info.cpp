// What list() and stat() return, as read-only Python objects. Boxes appear
// as `start` and `count` tuples, dtypes by their numpy names ("<f8").
#include "python/bindings.hpp"

#include <cove/client.hpp>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>

namespace nb = nanobind;

namespace cove::python {

namespace {

nb::tuple as_tuple(const std::vector<Index>& v) {
  nb::list l;
  for (Index x : v) l.append(x);
  return nb::tuple(l);
}

template <typename T>
void box_properties(nb::class_<T>& c) {
  c.def_prop_ro("start", [](const T& t) { return as_tuple(t.box.start()); }, "The region's first index per dimension.")
      .def_prop_ro("count", [](const T& t) { return as_tuple(t.box.count()); }, "The region's extent per dimension.");
}

}  // namespace

void bind_info(nb::module_& m) {
  nb::class_<ReplicaInfo> replica(m, "ReplicaInfo", "A part of a piece that a server holds in another layout.");
  box_properties(replica);
  replica.def_prop_ro("layout", [](const ReplicaInfo& r) { return r.layout.to_string(); })
      .def_ro("bytes", &ReplicaInfo::bytes)
      .def_ro("ready", &ReplicaInfo::ready, "False while it is being built.");

  nb::class_<PieceInfo> piece(m, "PieceInfo", "A piece of a version: its region and where its bytes are.");
  box_properties(piece);
  piece.def_ro("bytes", &PieceInfo::bytes)
      .def_ro("holder", &PieceInfo::holder, "Address of the process whose memory holds the bytes.")
      .def_ro("on_server", &PieceInfo::on_server, "True: held by a staging server (put); False: by a writer (put_local).")
      .def_ro("replicas", &PieceInfo::replicas)
      .def_ro("copy", &PieceInfo::copy, "The server holding its second copy (replicas = 2), or ''.")
      .def("__repr__", [](const PieceInfo& p) {
        return "PieceInfo(" + p.box.to_string() + ", " + std::to_string(p.bytes) + " bytes, " +
               (p.on_server ? "on server " : "in writer ") + p.holder + ")";
      });

  nb::class_<VersionInfo>(m, "VersionInfo", "A version of a variable and its pieces.")
      .def_ro("version", &VersionInfo::version)
      .def_ro("pieces", &VersionInfo::pieces)
      .def_ro("sealed", &VersionInfo::sealed, "True once sealed: gets never wait for it, puts into it are refused.")
      .def("__repr__", [](const VersionInfo& v) {
        return "VersionInfo(" + std::to_string(v.version) + ", " + std::to_string(v.pieces.size()) + " pieces)";
      });

  nb::class_<VariableInfo>(m, "VariableInfo", "A variable: its definition and the versions the servers hold.")
      .def_ro("name", &VariableInfo::name)
      .def_prop_ro("dtype", [](const VariableInfo& v) { return v.dtype.name(); }, "numpy's name of the dtype, e.g. '<f8'.")
      .def_ro("ndim", &VariableInfo::ndim)
      .def_prop_ro(
          "shape", [](const VariableInfo& v) -> nb::object { return v.shape ? nb::object(as_tuple(v.shape->count())) : nb::none(); },
          "The declared global shape, or None.")
      .def_ro("versions", &VariableInfo::versions)
      .def_prop_ro(
          "fill",
          [](const VariableInfo& v) -> nb::object {
            if (v.fill.empty()) return nb::none();
            return nb::bytes(reinterpret_cast<const char*>(v.fill.data()), v.fill.size());
          },
          "The fill value's bytes (one element), or None.")
      .def_prop_ro("reorg", [](const VariableInfo& v) -> nb::object {
        return v.reorg ? nb::object(nb::str(reorg_name(*v.reorg))) : nb::none();
      })
      .def_prop_ro("layouts", [](const VariableInfo& v) {
        std::vector<std::string> names;
        for (const auto& l : v.layouts) names.push_back(l.to_string());
        return names;
      })
      .def("__repr__", [](const VariableInfo& v) {
        return "VariableInfo('" + v.name + "', " + v.dtype.name() + ", ndim=" + std::to_string(v.ndim) + ", " +
               std::to_string(v.versions.size()) + " versions)";
      });

  nb::class_<ServerStats> stats(m, "ServerStats", "A server's figures, or their totals over a group (Client.stat()).");
#define COVE_STAT(field) stats.def_ro(#field, &ServerStats::field);
  COVE_STAT(variables) COVE_STAT(versions) COVE_STAT(pieces) COVE_STAT(owned_bytes) COVE_STAT(local_bytes)
  COVE_STAT(memory_budget) COVE_STAT(requests) COVE_STAT(bytes_in) COVE_STAT(bytes_out) COVE_STAT(replicas)
  COVE_STAT(replica_bytes) COVE_STAT(reorganizations) COVE_STAT(replica_answers) COVE_STAT(patterns)
  COVE_STAT(metadata) COVE_STAT(metadata_bytes) COVE_STAT(lost_pieces) COVE_STAT(replication) COVE_STAT(copies)
  COVE_STAT(copy_bytes) COVE_STAT(single_copies) COVE_STAT(moved_pieces) COVE_STAT(lost_members)
  COVE_STAT(worker_slots) COVE_STAT(workers) COVE_STAT(placements) COVE_STAT(placement_fallbacks)
  COVE_STAT(task_reports) COVE_STAT(partly_covered) COVE_STAT(partly_covered_bytes) COVE_STAT(restored_copies) COVE_STAT(restored_backups) COVE_STAT(parked_gets) COVE_STAT(clients) COVE_STAT(uptime_ms) COVE_STAT(reachable)
#undef COVE_STAT
  stats.def("__repr__", [](const ServerStats& s) {
    return "ServerStats(variables=" + std::to_string(s.variables) + ", versions=" + std::to_string(s.versions) +
           ", pieces=" + std::to_string(s.pieces) + ", owned_bytes=" + std::to_string(s.owned_bytes) +
           ", local_bytes=" + std::to_string(s.local_bytes) + ")";
  });
}

}  // namespace cove::python
