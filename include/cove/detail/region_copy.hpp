// Internal (cove/detail/: not part of Cove's supported API; it may change
// without notice): the parts of the region engine that Cove's own layers,
// tests and benchmarks use beyond cove::copy_region — forcing a copy
// method, walking the contiguous runs of a copy or of a region.
// Thread-safety, ownership and errors as for cove/region_copy.hpp.
#pragma once

#include <cove/detail/function_ref.hpp>
#include <cove/region_copy.hpp>

#include <array>
#include <cstddef>
#include <cstdint>

namespace cove::detail {

class ThreadPool;

enum class CopyMethod : std::uint8_t { Auto, Runs, Tiled, General };
COVE_EXPORT const char* to_string(CopyMethod method) noexcept;

// What tests and benchmarks may force on a copy: its method (InvalidArgument
// when that method does not apply) and the pool it is split over (nullptr:
// ThreadPool::shared()).
struct CopyControl {
  CopyMethod method = CopyMethod::Auto;
  ThreadPool* pool = nullptr;
};

// cove::copy_region with `control`; returns the method that was used.
COVE_EXPORT CopyMethod copy_region(const ConstArrayView& src, const ArrayView& dst, const Box& region,
                                   std::size_t elem_size, const CopyOptions& options, const CopyControl& control);

// The method copy_region(..., CopyControl{}) would use, and whether a
// forced one applies: Runs and General apply to every copy, Tiled only when
// the two layouts' fastest-varying axes over the region differ.
COVE_EXPORT CopyMethod choose_copy_method(const Box& src_box, const Layout& src_layout, const Box& dst_box,
                                          const Layout& dst_layout, const Box& region, std::size_t elem_size);
COVE_EXPORT bool copy_method_applies(CopyMethod method, const Box& src_box, const Layout& src_layout,
                                     const Box& dst_box, const Layout& dst_layout, const Box& region,
                                     std::size_t elem_size);

// The runs that a copy of `region` from a buffer holding (src_box,
// src_layout) to one holding (dst_box, dst_layout) moves when both sides
// are contiguous along the same axis: calls fn(src_offset, dst_offset,
// bytes) for each and returns true. Returns false without calling fn when
// the layouts' fastest axes differ over the region (no common runs: use
// cove::copy_region). Validation and errors as for copy_region().
COVE_EXPORT bool for_each_common_run(const Box& src_box, const Layout& src_layout, const Box& dst_box,
                                     const Layout& dst_layout, const Box& region, std::size_t elem_size,
                                     FunctionRef<void(std::int64_t, std::int64_t, std::int64_t)> fn);

// The contiguous byte runs that `region` occupies in a buffer holding
// `enclosing` in `layout`: num_runs runs of run_bytes each, the k-th at
// byte offset first_offset + sum_d idx_d * outer_stride[d], where idx walks
// outer_count in C order. Adjacent dimensions are merged, so a region that
// is contiguous in the buffer is one run. Errors as for copy_region().
struct ContiguousRuns {
  std::int64_t first_offset = 0;
  std::int64_t run_bytes = 0;
  std::int64_t num_runs = 0;
  int outer_ndim = 0;
  std::array<Index, kMaxDims> outer_count{};
  std::array<Index, kMaxDims> outer_stride{};  // bytes

  // Calls fn(byte_offset, run_bytes) for every run, in buffer order.
  template <typename Fn>
  void for_each(Fn&& fn) const {
    if (num_runs == 0) return;
    std::array<Index, kMaxDims> idx{};
    std::int64_t offset = first_offset;
    for (std::int64_t k = 0; k < num_runs; ++k) {
      fn(offset, run_bytes);
      for (int d = outer_ndim - 1; d >= 0; --d) {
        offset += outer_stride[d];
        if (++idx[d] < outer_count[d]) break;
        offset -= outer_stride[d] * outer_count[d];
        idx[d] = 0;
      }
    }
  }
};

COVE_EXPORT ContiguousRuns contiguous_runs(const Box& region, const Box& enclosing, const Layout& layout,
                                           std::size_t elem_size);

}  // namespace cove::detail
