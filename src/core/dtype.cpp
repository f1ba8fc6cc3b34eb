#include <cove/dtype.hpp>

#include "core/fail.hpp"

#include <array>
#include <charconv>

namespace cove {

using detail::fail;

namespace {

struct ScalarName {
  DTypeKind kind;
  const char* code;  // numpy kind + size, without byte-order prefix
  const char* long_name;
};

constexpr std::array<ScalarName, 13> kScalars{{
    {DTypeKind::Bool, "b1", "bool"},
    {DTypeKind::Int8, "i1", "int8"},
    {DTypeKind::Int16, "i2", "int16"},
    {DTypeKind::Int32, "i4", "int32"},
    {DTypeKind::Int64, "i8", "int64"},
    {DTypeKind::UInt8, "u1", "uint8"},
    {DTypeKind::UInt16, "u2", "uint16"},
    {DTypeKind::UInt32, "u4", "uint32"},
    {DTypeKind::UInt64, "u8", "uint64"},
    {DTypeKind::Float32, "f4", "float32"},
    {DTypeKind::Float64, "f8", "float64"},
    {DTypeKind::Complex64, "c8", "complex64"},
    {DTypeKind::Complex128, "c16", "complex128"},
}};

}  // namespace

void validate_element_size(std::size_t elem_size, const char* what) {
  if (elem_size < 1 || elem_size > kMaxElementSize)
    fail(Code::InvalidArgument, what, " = ", elem_size, " bytes; element sizes must be 1..", kMaxElementSize);
}

DType DType::opaque(std::size_t size) {
  validate_element_size(size, "opaque element size");
  return DType(DTypeKind::Opaque, size);
}

std::string DType::name() const {
  if (kind_ == DTypeKind::Opaque) return "|V" + std::to_string(size_);
  for (const auto& s : kScalars)
    if (s.kind == kind_) return std::string(size_ == 1 ? "|" : "<") + s.code;
  return "?";
}

DType DType::parse(std::string_view name) {
  for (const auto& s : kScalars)
    if (name == s.long_name) return DType(s.kind);
  std::string_view code = name;
  if (!code.empty() && code.front() == '>')
    fail(Code::InvalidArgument, "dtype '", name, "' is big-endian; Cove supports little-endian only");
  if (!code.empty() && (code.front() == '<' || code.front() == '=' || code.front() == '|'))
    code.remove_prefix(1);
  for (const auto& s : kScalars)
    if (code == s.code) return DType(s.kind);
  if (code == "?") return DType(DTypeKind::Bool);
  if (code.size() > 1 && code.front() == 'V') {
    std::size_t size = 0;
    const char* first = code.data() + 1;
    const char* last = code.data() + code.size();
    auto [ptr, ec] = std::from_chars(first, last, size);
    if (ec == std::errc{} && ptr == last) return opaque(size);
  }
  fail(Code::InvalidArgument, "unknown dtype '", name,
       "'; expected a numpy-style name such as '<f8', 'i4', 'float32' or '|V12'");
}

}  // namespace cove
