// The cases the kernel tests share (tests/unit/test_gpu.cpp on the CPU,
// tests/gpu/gpu_check.cpp on a GPU): a layout of each kind, and a region
// cut into the pieces writers would hold.
#pragma once

#include <cove/box.hpp>
#include <cove/layout.hpp>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

namespace cove_test {

// kind 0: C, 1: F, 2: a random permutation of ndim axes.
inline cove::Layout layout_of(int kind, int ndim, std::mt19937_64& rng) {
  if (kind == 0) return cove::Layout::c();
  if (kind == 1) return cove::Layout::f();
  std::vector<int> order(static_cast<std::size_t>(ndim));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  return cove::Layout::permuted(order);
}

// `whole` cut in two along each of its first three axes (up to 8 pieces;
// empty ones left out).
inline std::vector<cove::Box> octants(const cove::Box& whole) {
  std::vector<cove::Box> out;
  const int cuts = std::min(whole.ndim, 3);
  for (int piece = 0; piece < (1 << cuts); ++piece) {
    cove::Box b = whole;
    for (int d = 0; d < cuts; ++d) {
      const cove::Index mid = whole.lo[d] + whole.count(d) / 2;
      if (piece >> d & 1)
        b.lo[d] = mid;
      else
        b.hi[d] = mid;
    }
    if (!b.empty()) out.push_back(b);
  }
  return out;
}

// The region a reader asks for: the domain less its first index where an
// axis has more than two.
inline cove::Box reader_region(const cove::Box& whole) {
  cove::Box region = whole;
  for (int d = 0; d < whole.ndim; ++d)
    if (whole.count(d) > 2) region.lo[d] = whole.lo[d] + 1;
  return region;
}

}  // namespace cove_test
