// cove._Steps: the C++ walk over a stream's steps (Client::steps), which
// the pure-Python cove.Client.steps() iterates (python/cove/_steps.py).
#include "python/bindings.hpp"

#include <cove/client.hpp>

#include <nanobind/stl/optional.h>

namespace nb = nanobind;
using namespace nb::literals;

namespace cove::python {

void bind_steps(nb::module_& m) {
  nb::class_<Steps>(m, "_Steps")
      .def(
          "next",
          [](Steps& s, std::optional<double> timeout) {
            const std::int64_t ms = timeout_ms(timeout);
            nb::gil_scoped_release nogil;
            return s.next(ms);
          },
          "timeout"_a.none(),
          "The next step's version, or None once the stream has ended; NotFound (timeout 0) or Timeout when no "
          "step comes in time.")
      .def_prop_ro("current", &Steps::current);
}

}  // namespace cove::python
