#include "python/errors.hpp"

#include "core/fail.hpp"

#include <cove/error.hpp>

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <tuple>
#include <vector>

namespace nb = nanobind;

namespace cove::python {

void bind_errors(nb::module_& m) {
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      const std::string message = detail::message_of(e);
      try {
        nb::object cls = nb::module_::import_("cove._errors").attr("error_class")(static_cast<int>(e.code()));
        nb::object exc = cls(message);
        PyErr_SetObject(cls.ptr(), exc.ptr());
      } catch (const nb::python_error&) {
        // cove._errors itself failed: keep the message at least.
        PyErr_SetString(PyExc_RuntimeError, e.what());
      }
    }
  });
  m.def(
      "_status_table",
      [] {
        std::vector<std::tuple<int, std::string, std::string>> rows;
#define COVE_X(c_name, cpp_name, value, text) rows.emplace_back(value, #cpp_name, text);
        COVE_STATUS_TABLE(COVE_X)
#undef COVE_X
        return rows;
      },
      "The status table's rows (value, name, text), from include/cove/status_table.h.");
}

}  // namespace cove::python
