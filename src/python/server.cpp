// cove.Server: a staging server inside this process, for notebooks, tests
// and single-program workflows. A context manager: leaving it stops it.
#include "python/args.hpp"
#include "python/bindings.hpp"

#include "core/fail.hpp"

#include <cove/server.hpp>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <limits>
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
                     "process only; 'local' (this host), 'tcp' or 'ucx' serve other processes too, which connect through "
                     "the connection file it writes (connection_file=, write_connection_file()).")
      .def(
          "__init__",
          [](Server* self, std::optional<std::string> transport, IntArg memory_budget, IntArg max_versions,
             IntArg workers, std::optional<std::string> reorg, std::optional<std::vector<std::string>> layouts,
             nb::handle connection_file) {
            ServerOptions o;
            o.transport = transport ? *transport : fresh_inproc_name();
            o.memory_budget =
                static_cast<std::uint64_t>(memory_budget.get("memory_budget", 0, std::numeric_limits<std::int64_t>::max()));
            o.max_versions = static_cast<int>(max_versions.get("max_versions", std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
            o.workers = static_cast<int>(workers.get("workers", std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
            if (reorg) o.reorg = parse_reorg(*reorg);
            if (layouts)
              for (const auto& l : *layouts) o.layouts.push_back(Layout::parse(l));
            std::optional<std::string> file;
            if (!connection_file.is_none()) file = path_of(connection_file, "connection_file");
            nb::gil_scoped_release nogil;
            new (self) Server(o);
            if (file) try {
                self->write_connection_file(*file);
              } catch (...) {
                self->stop();
                self->~Server();
                throw;
              }
          },
          nb::kw_only(), "transport"_a = nb::none(), "memory_budget"_a = 0, "max_versions"_a = 0, "workers"_a = 2,
          "reorg"_a = nb::none(), "layouts"_a = nb::none(), "connection_file"_a = nb::none())
      .def_prop_ro("address", &Server::address, "The address clients connect to (cove.connect(server.address)).")
      .def_prop_ro("secret", &Server::secret,
                   "The secret clients of other processes prove they hold (cove.connect(address, secret=...)); the "
                   "connection file carries it. Hand it only to processes that may read and delete everything "
                   "this server holds.")
      .def(
          "write_connection_file",
          [](Server& s, nb::handle path) {
            const std::string p = path_of(path, "path");
            nb::gil_scoped_release nogil;
            s.write_connection_file(p);
          },
          "path"_a,
          "Writes a connection file (str or os.PathLike; mode 0600) naming this server and its secret: another "
          "process connects with cove.connect(path). stop() removes it. InvalidArgument for an inproc server, "
          "AlreadyExists when anything is at the path.")
      .def("stats", &Server::stats, nb::call_guard<nb::gil_scoped_release>())
      .def("stop", &Server::stop, nb::call_guard<nb::gil_scoped_release>(),
           "Stops serving (requests in progress are answered Unavailable) and removes the connection files it "
           "wrote. Idempotent.")
      .def("wait", &Server::wait, nb::call_guard<nb::gil_scoped_release>(),
           "Blocks until the server has stopped (stop(), or a client's stop_server()).")
      .def("__repr__", [](const Server& s) { return "<cove.Server " + s.address() + ">"; })
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__", [](Server& s, nb::args) {
        nb::gil_scoped_release nogil;
        s.stop();
      });
}

}  // namespace cove::python
