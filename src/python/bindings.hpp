// The parts of the _cove extension module, each binding one area.
// Every blocking call releases the GIL; Python objects are touched only
// with it held.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <optional>

namespace cove::python {

void bind_info(nanobind::module_& m);    // VariableInfo, ServerStats and their parts (info.cpp)
void bind_client(nanobind::module_& m);  // Client, PutHandle, Subscription (client.cpp)
void bind_server(nanobind::module_& m);  // Server (server.cpp)
void bind_log(nanobind::module_& m);     // Cove's log lines queued for logging (log.cpp)
void bind_steps(nanobind::module_& m);   // _Steps, the walk Client.steps() iterates (steps.cpp)

// A timeout in seconds (None: wait as long as it takes) as Cove's
// milliseconds (< 0: forever). InvalidArgument for a negative or NaN one.
std::int64_t timeout_ms(std::optional<double> seconds, const char* what = "timeout");

// A file path from a str or os.PathLike; InvalidArgument naming `what`
// for anything else.
std::string path_of(nanobind::handle path, const char* what);

}  // namespace cove::python
