// The _cove extension module: the C++ API for the pure-Python package
// `cove` (python/cove/), which adds the collective connect and re-exports.
#include "python/args.hpp"
#include "python/bindings.hpp"
#include "python/errors.hpp"

#include "core/fail.hpp"

#include <cove/memory.hpp>

#include <nanobind/stl/string.h>

#include <cmath>
#include <limits>
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

namespace {

[[noreturn]] void bad_integer(nb::handle h, const char* what, const char* want) {
  detail::fail(Code::InvalidArgument, what, " must be ", want, ", not ", nb::type_name(h.type()).c_str(), " ",
               nb::cast<std::string>(nb::repr(h)));
}

// An int from anything with __index__ (not a bool), as a Python int object.
nb::object index_of(nb::handle h, const char* what, const char* want) {
  if (PyBool_Check(h.ptr()) || !PyIndex_Check(h.ptr())) bad_integer(h, what, want);
  PyObject* i = PyNumber_Index(h.ptr());
  if (!i) {
    PyErr_Clear();
    bad_integer(h, what, want);
  }
  return nb::steal(i);
}

}  // namespace

std::uint64_t to_version(nb::handle h, const char* what) {
  constexpr const char* want = "an int in 0..18446744073709551615";
  nb::object i = index_of(h, what, want);
  int negative = PyObject_RichCompareBool(i.ptr(), nb::int_(0).ptr(), Py_LT);
  const unsigned long long v = negative ? 0 : PyLong_AsUnsignedLongLong(i.ptr());
  if (negative || PyErr_Occurred()) {
    PyErr_Clear();
    detail::fail(Code::InvalidArgument, what, " = ", nb::cast<std::string>(nb::str(i)), " is out of range: a version is ", want);
  }
  return v;
}

std::int64_t to_int(nb::handle h, const char* what, std::int64_t lo, std::int64_t hi) {
  // Bounds that are only the C type's say nothing to a Python programmer.
  const bool whole = (lo == std::numeric_limits<std::int64_t>::min() && hi == std::numeric_limits<std::int64_t>::max()) ||
                     (lo == std::numeric_limits<int>::min() && hi == std::numeric_limits<int>::max());
  const std::string want = whole ? "an int" : "an int in " + std::to_string(lo) + ".." + std::to_string(hi);
  nb::object i = index_of(h, what, want.c_str());
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (overflow || (v == -1 && PyErr_Occurred()) || v < lo || v > hi) {
    PyErr_Clear();
    detail::fail(Code::InvalidArgument, what, " = ", nb::cast<std::string>(nb::str(i)), " is out of range: ", want);
  }
  return v;
}

std::vector<Index> to_extents(nb::handle h, const char* what) {
  constexpr const char* want = "an int or a sequence of ints, one per dimension";
  auto one = [&](nb::handle e, const std::string& name) -> Index {
    nb::object i = index_of(e, name.c_str(), "an int");
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
    if (overflow || (v == -1 && PyErr_Occurred())) {
      PyErr_Clear();
      detail::fail(Code::InvalidArgument, name, " = ", nb::cast<std::string>(nb::str(i)), " does not fit 64 bits");
    }
    return static_cast<Index>(v);
  };
  if (!PyBool_Check(h.ptr()) && PyIndex_Check(h.ptr())) {
    // An int; a numpy array has __index__ too but is a sequence unless 0-d.
    PyObject* i = PyNumber_Index(h.ptr());
    if (i) {
      Py_DECREF(i);
      return {one(h, what)};
    }
    PyErr_Clear();
  }
  if (PyUnicode_Check(h.ptr()) || PyBytes_Check(h.ptr()) || !PySequence_Check(h.ptr())) bad_integer(h, what, want);
  PyObject* fast = PySequence_Fast(h.ptr(), "");
  if (!fast) {
    PyErr_Clear();
    bad_integer(h, what, want);
  }
  nb::object seq = nb::steal(fast);
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  std::vector<Index> out;
  out.reserve(static_cast<std::size_t>(n));
  for (Py_ssize_t k = 0; k < n; ++k)
    out.push_back(one(PySequence_Fast_GET_ITEM(fast, k), std::string(what) + "[" + std::to_string(k) + "]"));
  return out;
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
  m.def("device_memory_available", &cove::device_memory_available,
        "Whether this process can hand Cove device (GPU) arrays: Cove was built with CUDA, its plugin loads and a GPU "
        "is visible.");
  cove::python::bind_errors(m);
  cove::python::bind_info(m);
  cove::python::bind_log(m);
  cove::python::bind_steps(m);
  cove::python::bind_client(m);
  cove::python::bind_server(m);
}
