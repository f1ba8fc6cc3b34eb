// Memory layouts: how a box's elements are ordered in a buffer.
//
// The logical box is independent of memory order. A Layout lists the box's
// axes from slowest- to fastest-varying in memory:
//   C: 0, 1, ..., n-1      (row-major, numpy default, Kokkos LayoutRight)
//   F: n-1, ..., 1, 0      (column-major, Fortran, Kokkos LayoutLeft)
//   a permutation, e.g. {2, 0, 1}: axis 1 fastest, then 0, then 2.
// C and F apply to any rank; a permutation has a fixed rank.
//
// Names round-trip through to_string()/parse(): "C", "F", "P2,0,1".
// Errors: InvalidArgument for a permutation that is not one, an unknown name,
// or a rank that does not match the box (naming both). Thread-safety: value type.
#pragma once

#include <cove/box.hpp>
#include <cove/export.hpp>

#include <array>
#include <span>
#include <string>
#include <string_view>

namespace cove {

class COVE_EXPORT Layout {
 public:
  enum class Kind : std::uint8_t { C, F, Permuted };

  constexpr Layout() noexcept = default;  // C
  static constexpr Layout c() noexcept { return Layout(Kind::C); }
  static constexpr Layout f() noexcept { return Layout(Kind::F); }
  // axes_slow_to_fast must be a permutation of 0..n-1, 1 <= n <= kMaxDims.
  static Layout permuted(std::span<const int> axes_slow_to_fast);
  static Layout parse(std::string_view name);

  Kind kind() const noexcept { return kind_; }
  // 0 for C and F (any rank), else the permutation's rank.
  int rank() const noexcept { return kind_ == Kind::Permuted ? rank_ : 0; }
  // Axes from slowest to fastest for a box of rank `ndim`. Throws
  // InvalidArgument when a permutation's rank differs from ndim.
  std::array<int, kMaxDims> axis_order(int ndim) const;
  // Element strides of each axis for an array stored over `box` in this layout.
  // Throws InvalidArgument on a rank mismatch, Overflow when they do not fit.
  std::array<Index, kMaxDims> strides(const Box& box) const;
  // True when this layout orders a rank-`ndim` box the same way as `other`.
  bool same_order(const Layout& other, int ndim) const;

  std::string to_string() const;
  friend COVE_EXPORT bool operator==(const Layout& a, const Layout& b) noexcept;

 private:
  constexpr explicit Layout(Kind kind) noexcept : kind_(kind) {}

  Kind kind_ = Kind::C;
  int rank_ = 0;
  std::array<int, kMaxDims> axes_{};
};

}  // namespace cove
