// N-dimensional boxes: the geometry every region, piece and query is made of.
//
// A Box is a plain value struct, half-open [lo, hi) in each of its `ndim`
// dimensions (at most kMaxDims). At the API, regions are given as start +
// count, as HDF5, ADIOS2 and PnetCDF users expect; from_start_count() and
// start()/count() convert. Logical index order is C order (last index varies
// fastest); memory layout is a separate thing (cove/layout.hpp).
//
// Errors: functions that take a Box validate it (ndim in 1..kMaxDims,
// lo <= hi, no overflow) and throw cove::Error naming the bad field:
// InvalidArgument for a malformed box or mismatched ranks, Overflow for
// coordinates or volumes that do not fit 64 bits.
// Thread-safety: value type; const functions may be called concurrently.
#pragma once

#include <cove/export.hpp>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace cove {

inline constexpr int kMaxDims = 10;
using Index = std::int64_t;

struct COVE_EXPORT Box {
  int ndim = 0;
  std::array<Index, kMaxDims> lo{};
  std::array<Index, kMaxDims> hi{};

  // start[d] + count[d] must fit 64 bits; count[d] >= 0; sizes must match and
  // be 1..kMaxDims. Throws InvalidArgument / Overflow.
  static Box from_start_count(std::span<const Index> start, std::span<const Index> count);
  // lo[d] <= hi[d]. Throws InvalidArgument.
  static Box from_bounds(std::span<const Index> lo, std::span<const Index> hi);
  // [0, shape) in every dimension.
  static Box from_shape(std::span<const Index> shape);

  Index count(int d) const noexcept { return hi[d] - lo[d]; }
  std::vector<Index> start() const { return {lo.begin(), lo.begin() + ndim}; }
  std::vector<Index> count() const;

  // Number of elements; throws Overflow when it does not fit int64.
  Index volume() const;
  // True when some dimension has count 0 (a box of rank 0 is also empty).
  bool empty() const noexcept;

  // Both boxes must have the same rank (else InvalidArgument).
  bool contains(const Box& other) const;
  bool contains_point(std::span<const Index> point) const;
  bool intersects(const Box& other) const;
  // The common part; an empty box (lo == hi somewhere) when they are disjoint.
  Box intersection(const Box& other) const;

  // "[0:4, 2:8)" style, for messages and logs.
  std::string to_string() const;

  friend COVE_EXPORT bool operator==(const Box& a, const Box& b) noexcept;
};


// Splits `box` into a grid of factors[0] x ... x factors[ndim-1] pieces in C
// order, each dimension cut as evenly as possible (the first count % f pieces
// are one longer). Every factor must be >= 1 and <= the box's count in that
// dimension (no empty pieces). Throws InvalidArgument.
COVE_EXPORT std::vector<Box> split_grid(const Box& box, std::span<const Index> factors);

// `a` minus `b`: at most 2 * ndim disjoint boxes whose union is the part of
// `a` outside `b` (empty when b covers a; {a} when they are disjoint).
COVE_EXPORT std::vector<Box> subtract(const Box& a, const Box& b);

// True when the union of `pieces` covers `region` (pieces may overlap and
// may reach outside it).
COVE_EXPORT bool covers(std::span<const Box> pieces, const Box& region);

// The smallest box that holds every box of `boxes` (of one rank; at least
// one box, else InvalidArgument).
COVE_EXPORT Box bounding_box(std::span<const Box> boxes);

// Splits `box` into pieces of at most max_volume elements by repeatedly
// halving the longest dimension. max_volume >= 1. Throws InvalidArgument.
COVE_EXPORT std::vector<Box> split_max_volume(const Box& box, Index max_volume);

}  // namespace cove
