// Internal: a region copy reduced to its simplest loop nest.
//
// A plan is the region's dimensions with extent > 1, ordered from slowest to
// fastest in the destination, with byte strides on both sides and adjacent
// dimensions merged where both sides are contiguous across them. The copy
// kernels (copy_kernels.cpp), called from region_copy.cpp, only ever see plans.
#pragma once

#include <cove/detail/region_copy.hpp>

namespace cove::detail {

struct CopyPlan {
  int n = 0;                                  // dimensions, >= 1
  std::array<Index, kMaxDims> ext{};          // elements per dimension
  std::array<std::int64_t, kMaxDims> ss{};    // source stride, bytes
  std::array<std::int64_t, kMaxDims> ds{};    // destination stride, bytes
  std::int64_t s_off = 0;                     // byte offset of the region's first element
  std::int64_t d_off = 0;
  std::int64_t elem = 0;                      // element size, bytes
  std::int64_t bytes = 0;                     // total bytes copied

  // The dimension whose source stride is one element, other than the
  // innermost one; -1 when there is none (then Tiled does not apply).
  int source_unit_dim() const;
  bool innermost_contiguous() const { return ss[n - 1] == elem && ds[n - 1] == elem; }
};

// Validates everything copy_region() validates, except the buffers, and
// builds the plan. `src_what`/`dst_what` name the two sides in messages.
CopyPlan make_copy_plan(const Box& src_box, const Layout& src_layout, const Box& dst_box,
                        const Layout& dst_layout, const Box& region, std::size_t elem_size);

CopyMethod auto_method(const CopyPlan& plan);
// InvalidArgument unless a buffer of `size_bytes` at `data` holds `box`
// (copy_region's check of each side; `what` names it).
void check_buffer(const void* data, std::size_t size_bytes, const Box& box, std::size_t elem, const char* what);
bool method_applies(CopyMethod method, const CopyPlan& plan);

}  // namespace cove::detail
