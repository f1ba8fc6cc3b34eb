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
// process-wide pool of threads, created on first use.
//
// Ownership: nothing is retained; the buffers are used only during the call.
// Source and destination must not overlap.
// Blocking: returns when the copy is complete.
// Thread-safety: concurrent calls are safe on disjoint destinations.
// Errors (cove::Error, nothing written when thrown): InvalidArgument for an
// invalid box or layout, mismatched ranks, a region outside either buffer's
// box, element size 0, a null pointer or a buffer smaller than its box;
// Overflow for sizes that do not fit 64 bits.
#pragma once

#include <cove/box.hpp>
#include <cove/export.hpp>
#include <cove/layout.hpp>

#include <cstddef>
#include <cstdint>
#include <span>

namespace cove {

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

struct CopyOptions {
  int threads = 0;  // 0: the shared pool's size (COVE_NUM_THREADS, else one per hardware thread); 1: the caller only
  std::int64_t parallel_min_bytes = std::int64_t{4} << 20;  // smaller copies stay on one thread
  // Copies of at least this many bytes write long destination runs with
  // non-temporal stores (around the cache); -1 never does.
  std::int64_t stream_min_bytes = std::int64_t{32} << 20;
};

// See the header comment for errors.
COVE_EXPORT void copy_region(const ConstArrayView& src, const ArrayView& dst, const Box& region,
                             std::size_t elem_size, const CopyOptions& options = {});

// Copies `bytes` contiguous bytes, split across the pool's threads (and
// streamed) as copy_region() splits a copy of that size: the flat copy of
// a whole piece. Errors as for copy_region(); nothing for 0 bytes.
COVE_EXPORT void copy_bytes(void* dst, const void* src, std::size_t bytes, const CopyOptions& options = {});

// Sets every element of `region` (inside dst.box) to `value`, whose size
// is the element size (a fill value: the same bytes in every layout).
// Errors as for copy_region(); InvalidArgument for an empty value.
COVE_EXPORT void fill_region(const ArrayView& dst, const Box& region, std::span<const std::byte> value);

}  // namespace cove
