// cove.Server: a staging server inside this process, for notebooks, tests
// and single-program workflows. A context manager: leaving it stops it.
#include "python/bindings.hpp"

#include "core/fail.hpp"

#include <cove/server.hpp>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <string>
#include <unistd.h>

namespace nb = nanobind;
using namespace nb::literals;

namespace cove::python {

namespace {

// inproc://cove-py-PID-N: unique within this process.
std::string fresh_inproc_name() {
  static std::atomic<int> next{0};
  return "inproc://cove-py-" + std::to_string(::getpid()) + "-" + std::to_string(next++);
}

}  // namespace

void bind_server(nb::module_& m) {
  nb::class_<Server>(m, "Server",
                     "A staging server inside this process. The default transport, inproc, serves clients of this "
                     "process only; 'local' or 'ucx' serve other processes too.")
      .def(
          "__init__",
          [](Server* self, std::optional<std::string> transport, std::uint64_t memory_budget, int max_versions, int workers,
             std::optional<std::string> reorg, std::optional<std::vector<std::string>> layouts) {
            ServerOptions o;
            o.transport = transport ? *transport : fresh_inproc_name();
            o.memory_budget = memory_budget;
            o.max_versions = max_versions;
            o.workers = workers;
            if (reorg) o.reorg = parse_reorg(*reorg);
            if (layouts)
              for (const auto& l : *layouts) o.layouts.push_back(Layout::parse(l));
            nb::gil_scoped_release nogil;
            new (self) Server(o);
          },
          nb::kw_only(), "transport"_a = nb::none(), "memory_budget"_a = 0, "max_versions"_a = 0, "workers"_a = 2,
          "reorg"_a = nb::none(), "layouts"_a = nb::none())
      .def_prop_ro("address", &Server::address, "The address clients connect to (cove.connect(server.address)).")
      .def("stats", &Server::stats, nb::call_guard<nb::gil_scoped_release>())
      .def("stop", &Server::stop, nb::call_guard<nb::gil_scoped_release>(),
           "Stops serving; requests in progress are answered Unavailable. Idempotent.")
      .def("wait", &Server::wait, nb::call_guard<nb::gil_scoped_release>(),
           "Blocks until the server has stopped (stop(), or a client's stop_server()).")
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__", [](Server& s, nb::args) {
        nb::gil_scoped_release nogil;
        s.stop();
      });
}

}  // namespace cove::python
