// A random box inside a shape, for the tests that paint overlapping puts
// (tests/unit/test_semantics.cpp on the CPU, tests/gpu/gpu_check.cpp on a
// GPU).
#pragma once

#include <cove/box.hpp>

#include <random>
#include <utility>
#include <vector>

namespace cove_test {

// A box inside [0, shape) with random corners (never empty).
inline cove::Box random_box(std::mt19937& rng, const std::vector<cove::Index>& shape) {
  std::vector<cove::Index> lo(shape.size()), count(shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d) {
    std::uniform_int_distribution<cove::Index> at(0, shape[d] - 1);
    cove::Index x = at(rng), y = at(rng);
    if (x > y) std::swap(x, y);
    lo[d] = x;
    count[d] = y - x + 1;
  }
  return cove::Box::from_start_count(lo, count);
}

}  // namespace cove_test
