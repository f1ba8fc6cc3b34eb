// Copying and reorganizing regions of N-dimensional arrays between buffers.
//
// A buffer holds the elements of a box (its enclosing box) in some layout.
// copy_region() copies the elements of `region` — which must lie inside both
// the source and destination boxes — from one buffer to the other, converting
// between layouts (C, F, any permutation) on the way, for any element size.
//
// Paths, chosen automatically:
//   Runs    both sides contiguous along the same fastest axis: one memcpy per run;
//   Tiled   the fastest axes differ: cache-sized tiles transposed through a
//           small buffer, so each source and destination line is touched once;
//   General anything else (e.g. a single column): element by element.
// Copies of at least CopyOptions::parallel_min_bytes are split across a
// ThreadPool (ThreadPool::shared() unless one is given).
//
// Ownership: nothing is retained; the buffers are used only during the call.
// Source and destination must not overlap.
// Blocking: returns when the copy is complete.
// Thread-safety: concurrent calls are safe on disjoint destinations.
// Errors (cove::Error, nothing written when thrown): InvalidArgument for an
// invalid box or layout, mismatched ranks, a region outside either buffer's
// box, element size 0, a null pointer, a buffer smaller than its box, or a
// forced method that does not apply; Overflow for sizes that do not fit 64 bits.
#pragma once

#include <cove/box.hpp>
#include <cove/export.hpp>
#include <cove/function_ref.hpp>
#include <cove/layout.hpp>

#include <cstddef>
#include <cstdint>

namespace cove {

class ThreadPool;

// A read-only view of an array stored over `box` in `layout`.
struct ConstArrayView {
  const void* data = nullptr;
  std::size_t size_bytes = 0;  // must be >= box.volume() * elem_size
  Box box;
  Layout layout;
};

// A writable view of an array stored over `box` in `layout`.
struct ArrayView {
  void* data = nullptr;
  std::size_t size_bytes = 0;
  Box box;
  Layout layout;
};

enum class CopyMethod : std::uint8_t { Auto, Runs, Tiled, General };
COVE_EXPORT const char* to_string(CopyMethod method) noexcept;

struct CopyOptions {
  int threads = 0;                  // 0: the pool's size; 1: only the calling thread
  ThreadPool* pool = nullptr;       // nullptr: ThreadPool::shared(), created when first needed
  std::int64_t parallel_min_bytes = std::int64_t{4} << 20;  // smaller copies stay on one thread
  // Copies of at least this many bytes write long destination runs with
  // non-temporal stores (around the cache); -1 never does.
  std::int64_t stream_min_bytes = std::int64_t{32} << 20;
  CopyMethod method = CopyMethod::Auto;  // force a path (tests, benchmarks)
};

// Returns the method that was used. See the header comment for errors.
COVE_EXPORT CopyMethod copy_region(const ConstArrayView& src, const ArrayView& dst, const Box& region,
                                   std::size_t elem_size, const CopyOptions& options = {});

// The method copy_region(..., CopyMethod::Auto) would use, and whether a
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
// copy_region). Validation and errors as for copy_region().
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

}  // namespace cove
