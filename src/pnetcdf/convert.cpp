#include "convert.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace cove::pnetcdf {
namespace {

template <class T> constexpr T fill_of();
template <> constexpr signed char fill_of() { return NC_FILL_BYTE; }
template <> constexpr char fill_of() { return NC_FILL_CHAR; }
template <> constexpr short fill_of() { return NC_FILL_SHORT; }
template <> constexpr int fill_of() { return NC_FILL_INT; }
template <> constexpr float fill_of() { return NC_FILL_FLOAT; }
template <> constexpr double fill_of() { return NC_FILL_DOUBLE; }
template <> constexpr unsigned char fill_of() { return NC_FILL_UBYTE; }
template <> constexpr unsigned short fill_of() { return NC_FILL_USHORT; }
template <> constexpr unsigned int fill_of() { return NC_FILL_UINT; }
template <> constexpr long long fill_of() { return NC_FILL_INT64; }
template <> constexpr unsigned long long fill_of() { return NC_FILL_UINT64; }

template <class S, class D>
bool in_range(S x) {
  if constexpr (std::is_floating_point_v<D>) {
    if constexpr (std::is_floating_point_v<S> && sizeof(S) > sizeof(D)) {
      return !(x > std::numeric_limits<D>::max() || x < -std::numeric_limits<D>::max());
    }
    return true;
  } else if constexpr (std::is_floating_point_v<S>) {
    return !(x > static_cast<S>(std::numeric_limits<D>::max()) || x < static_cast<S>(std::numeric_limits<D>::min()));
  } else {
    return std::in_range<D>(x);
  }
}

// What x86's truncating conversion makes of NaN, which PnetCDF passes on.
template <class D>
D nan_to() {
  if constexpr (std::is_floating_point_v<D>) {
    return std::numeric_limits<D>::quiet_NaN();
  } else if constexpr (sizeof(D) == 8) {
    return static_cast<D>(std::uint64_t{1} << 63);
  } else if constexpr (sizeof(D) == 4) {
    return static_cast<D>(std::uint32_t{1} << 31);
  } else {
    return D{0};
  }
}

template <class S, class D, bool kLongFill = false>
int convert_n(const void* src, void* dst, std::size_t n) {
  const D fill = kLongFill ? static_cast<D>(NC_FILL_INT) : fill_of<D>();
  int status = NC_NOERR;
  for (std::size_t i = 0; i < n; ++i) {
    S x;
    std::memcpy(&x, static_cast<const char*>(src) + i * sizeof(S), sizeof(S));
    D y;
    if constexpr (std::is_floating_point_v<S> && !std::is_floating_point_v<D>) {
      if (std::isnan(x)) {
        y = nan_to<D>();
      } else if (in_range<S, D>(x)) {
        y = static_cast<D>(x);
      } else {
        y = fill;
        status = NC_ERANGE;
      }
    } else if (in_range<S, D>(x)) {
      y = static_cast<D>(x);
    } else {
      y = fill;
      status = NC_ERANGE;
    }
    std::memcpy(static_cast<char*>(dst) + i * sizeof(D), &y, sizeof(D));
  }
  return status;
}

template <class S>
int convert_from(const void* src, void* dst, nc_type to, std::size_t n) {
  switch (to) {
    case NC_BYTE: return convert_n<S, signed char>(src, dst, n);
    case NC_SHORT: return convert_n<S, short>(src, dst, n);
    case NC_INT: return convert_n<S, int>(src, dst, n);
    case NC_FLOAT: return convert_n<S, float>(src, dst, n);
    case NC_DOUBLE: return convert_n<S, double>(src, dst, n);
    case NC_UBYTE: return convert_n<S, unsigned char>(src, dst, n);
    case NC_USHORT: return convert_n<S, unsigned short>(src, dst, n);
    case NC_UINT: return convert_n<S, unsigned int>(src, dst, n);
    case NC_INT64: return convert_n<S, long long>(src, dst, n);
    case NC_UINT64: return convert_n<S, unsigned long long>(src, dst, n);
    case kMemLong: return convert_n<S, long long, true>(src, dst, n);
    default: return NC_EBADTYPE;
  }
}

}  // namespace

std::size_t type_size(nc_type t) {
  switch (t) {
    case NC_BYTE: case NC_CHAR: case NC_UBYTE: return 1;
    case NC_SHORT: case NC_USHORT: return 2;
    case NC_INT: case NC_UINT: case NC_FLOAT: return 4;
    case NC_DOUBLE: case NC_INT64: case NC_UINT64: case kMemLong: return 8;
    default: return 0;
  }
}

int check_external(nc_type t, int cmode) {
  if (t < NC_BYTE || t > NC_UINT64) return NC_EBADTYPE;
  if (t > NC_DOUBLE && !(cmode & NC_64BIT_DATA)) return NC_ESTRICTCDF2;
  return NC_NOERR;
}

int convert(const void* src, nc_type from, void* dst, nc_type to, std::size_t n, bool raw_byte) {
  if ((from == NC_CHAR) != (to == NC_CHAR)) return NC_ECHAR;
  if (type_size(from) == 0 || type_size(to) == 0) return NC_EBADTYPE;
  if (from == to || (from == kMemLong && to == NC_INT64) || (from == NC_INT64 && to == kMemLong) || (raw_byte && ((from == NC_BYTE && to == NC_UBYTE) || (from == NC_UBYTE && to == NC_BYTE)))) {
    if (src != dst) std::memmove(dst, src, n * type_size(from));
    return NC_NOERR;
  }
  switch (from) {
    case NC_BYTE: return convert_from<signed char>(src, dst, to, n);
    case NC_SHORT: return convert_from<short>(src, dst, to, n);
    case NC_INT: return convert_from<int>(src, dst, to, n);
    case NC_FLOAT: return convert_from<float>(src, dst, to, n);
    case NC_DOUBLE: return convert_from<double>(src, dst, to, n);
    case NC_UBYTE: return convert_from<unsigned char>(src, dst, to, n);
    case NC_USHORT: return convert_from<unsigned short>(src, dst, to, n);
    case NC_UINT: return convert_from<unsigned int>(src, dst, to, n);
    case NC_INT64: return convert_from<long long>(src, dst, to, n);
    case NC_UINT64: return convert_from<unsigned long long>(src, dst, to, n);
    case kMemLong: return convert_from<long long>(src, dst, to, n);
    default: return NC_EBADTYPE;
  }
}

nc_type memory_type(MPI_Datatype t) {
  if (t == MPI_CHAR) return NC_CHAR;
  if (t == MPI_SIGNED_CHAR || t == MPI_BYTE) return NC_BYTE;
  if (t == MPI_UNSIGNED_CHAR) return NC_UBYTE;
  if (t == MPI_SHORT) return NC_SHORT;
  if (t == MPI_UNSIGNED_SHORT) return NC_USHORT;
  if (t == MPI_INT) return NC_INT;
  if (t == MPI_UNSIGNED) return NC_UINT;
  if (t == MPI_LONG) return kMemLong;
  if (t == MPI_FLOAT) return NC_FLOAT;
  if (t == MPI_DOUBLE) return NC_DOUBLE;
  if (t == MPI_LONG_LONG_INT || t == MPI_INT64_T) return NC_INT64;
  if (t == MPI_UNSIGNED_LONG_LONG || t == MPI_UINT64_T) return NC_UINT64;
  return NC_NAT;
}

}  // namespace cove::pnetcdf
