// Arguments converted by Cove rather than by nanobind, so that a bad one
// raises cove.InvalidArgument naming it and its value (never nanobind's
// "incompatible function arguments" TypeError), and so that a 1-D start or
// count may be a plain int. The casters accept any object; the conversion
// runs, with the GIL held, where the function uses the value.
#pragma once

#include <cove/box.hpp>

#include <nanobind/nanobind.h>

#include <cstdint>
#include <vector>

namespace cove::python {

// A version: an int (or anything with __index__, not a bool) in 0..2^64-1.
std::uint64_t to_version(nanobind::handle h, const char* what);
// Extents per dimension: an int (one dimension) or a sequence of ints.
std::vector<Index> to_extents(nanobind::handle h, const char* what);
// An int (or anything with __index__, not a bool or a str) in lo..hi.
std::int64_t to_int(nanobind::handle h, const char* what, std::int64_t lo, std::int64_t hi);

struct VersionArg {
  nanobind::handle h;
  operator std::uint64_t() const { return to_version(h, "version"); }
};
struct StartArg {
  nanobind::handle h;
  operator std::vector<Index>() const { return to_extents(h, "start"); }
};
struct CountArg {
  nanobind::handle h;
  operator std::vector<Index>() const { return to_extents(h, "count"); }
};
// A plain int argument (nanobind alone would take the str "2" for 2);
// `get` checks its range and names it.
struct IntArg {
  nanobind::handle h;
  std::int64_t get(const char* what, std::int64_t lo, std::int64_t hi) const { return to_int(h, what, lo, hi); }
};

}  // namespace cove::python

namespace nanobind::detail {

#define COVE_ANY_OBJECT_CASTER(Type, Name)                                              \
  template <>                                                                           \
  struct type_caster<Type> {                                                            \
    NB_TYPE_CASTER(Type, const_name(Name))                                              \
    bool from_python(handle src, uint8_t, cleanup_list*) noexcept {                     \
      value.h = src;                                                                    \
      return true;                                                                      \
    }                                                                                   \
  };
COVE_ANY_OBJECT_CASTER(cove::python::VersionArg, "int")
COVE_ANY_OBJECT_CASTER(cove::python::StartArg, "int | collections.abc.Sequence[int]")
COVE_ANY_OBJECT_CASTER(cove::python::CountArg, "int | collections.abc.Sequence[int]")
COVE_ANY_OBJECT_CASTER(cove::python::IntArg, "int")
#undef COVE_ANY_OBJECT_CASTER

}  // namespace nanobind::detail
