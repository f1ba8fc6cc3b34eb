// Internal: reassembly on the device. make_plans() turns piece copies
// into the kernel's plans (gpu/plan.hpp) with the region engine's copy
// planner, so a device copy and a host copy_region() of the same views
// move the same bytes to the same places.
//
// Errors: what copy_region() reports for the same views (InvalidArgument,
// Overflow). Thread-safety: pure.
#pragma once

#include <cove/region_copy.hpp>

#include "gpu/plan.hpp"

#include <span>
#include <vector>

namespace cove::gpu {

// One piece's part of a region, from where it lies to its place.
struct PieceCopy {
  ConstArrayView src;
  ArrayView dst;
  Box region;  // inside both boxes
};

// The plans for copying every piece, in one launch: one word size for all
// (the largest every piece allows), blocks numbered consecutively.
std::vector<DevicePlan> make_plans(std::span<const PieceCopy> copies, std::size_t elem);

}  // namespace cove::gpu
