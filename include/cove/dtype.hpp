// Element types: fixed-size scalars and opaque elements of any byte size.
//
// Names follow numpy's array-interface strings so that Python and C agree:
// name() gives the canonical form ("<f8", "|b1", "|V12"), parse() accepts it
// back plus the short forms ("f8", "=i4") and numpy's long names ("float64",
// "int32", "bool", "complex128"). parse(name()) == the original dtype.
// Only little-endian ('<', '=', '|' or no prefix) is accepted.
//
// Errors: parse() and opaque() throw InvalidArgument naming the bad value.
// Thread-safety: value type.
#pragma once

#include <cove/export.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cove {

enum class DTypeKind : std::uint8_t {
  Bool,
  Int8, Int16, Int32, Int64,
  UInt8, UInt16, UInt32, UInt64,
  Float32, Float64,
  Complex64, Complex128,
  Opaque,  // an element of any size that Cove moves but never interprets
};

class COVE_EXPORT DType {
 public:
  // A scalar kind; for Opaque use DType::opaque(size).
  constexpr DType(DTypeKind kind = DTypeKind::UInt8) noexcept : kind_(kind), size_(scalar_size(kind)) {}
  // An opaque element of `size` bytes (1 .. 2^31). Throws InvalidArgument.
  static DType opaque(std::size_t size);
  static DType parse(std::string_view name);

  constexpr DTypeKind kind() const noexcept { return kind_; }
  constexpr std::size_t size() const noexcept { return size_; }
  std::string name() const;

  friend constexpr bool operator==(DType a, DType b) noexcept {
    return a.kind_ == b.kind_ && a.size_ == b.size_;
  }

 private:
  constexpr DType(DTypeKind kind, std::size_t size) noexcept : kind_(kind), size_(size) {}
  static constexpr std::size_t scalar_size(DTypeKind k) noexcept {
    switch (k) {
      case DTypeKind::Bool: case DTypeKind::Int8: case DTypeKind::UInt8: return 1;
      case DTypeKind::Int16: case DTypeKind::UInt16: return 2;
      case DTypeKind::Int32: case DTypeKind::UInt32: case DTypeKind::Float32: return 4;
      case DTypeKind::Int64: case DTypeKind::UInt64: case DTypeKind::Float64:
      case DTypeKind::Complex64: return 8;
      case DTypeKind::Complex128: return 16;
      case DTypeKind::Opaque: return 0;
    }
    return 0;
  }

  DTypeKind kind_;
  std::size_t size_;
};

// The largest element size Cove accepts, for opaque elements.
inline constexpr std::size_t kMaxElementSize = std::size_t{1} << 31;

// Throws InvalidArgument unless 1 <= elem_size <= kMaxElementSize; `what`
// names the argument.
COVE_EXPORT void validate_element_size(std::size_t elem_size, const char* what);

}  // namespace cove
