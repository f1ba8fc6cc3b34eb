// The _cove extension module: the C++ API for the pure-Python package
// `cove` (python/cove/), which adds the collective connect and re-exports.
#include "python/bindings.hpp"
#include "python/errors.hpp"

#include "core/fail.hpp"

#include <nanobind/stl/string.h>

#include <cmath>
#include <string>

namespace nb = nanobind;

namespace cove::python {

std::int64_t timeout_ms(std::optional<double> seconds, const char* what) {
  if (!seconds) return -1;
  if (std::isnan(*seconds) || *seconds < 0)
    detail::fail(Code::InvalidArgument, what, " = ", *seconds, " must be >= 0 seconds, or None to wait as long as it takes");
  const double ms = std::ceil(*seconds * 1000.0);
  return ms > 9.0e15 ? -1 : static_cast<std::int64_t>(ms);
}

std::string path_of(nb::handle path, const char* what) {
  try {
    nb::object p = nb::module_::import_("os").attr("fspath")(path);
    if (nb::isinstance<nb::str>(p)) return nb::cast<std::string>(p);
  } catch (const nb::python_error&) {
  }
  detail::fail(Code::InvalidArgument, what, " must be a str or os.PathLike, not ", nb::type_name(path.type()).c_str(),
               " ", nb::cast<std::string>(nb::repr(path)));
}

}  // namespace cove::python

NB_MODULE(_cove, m) {
  m.doc() = "Cove's C++ client and server for Python (use the package `cove`).";
  m.attr("__version__") = COVE_VERSION_STRING;
  cove::python::bind_errors(m);
  cove::python::bind_info(m);
  cove::python::bind_client(m);
  cove::python::bind_server(m);
}
