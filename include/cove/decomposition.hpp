// Decompositions of a domain into blocks, and their order along a Hilbert
// space-filling curve.
//
// BlockDecomposition cuts a domain box into a regular grid of blocks, the
// per-dimension factors as equal as possible (like MPI_Dims_create), the
// larger factors given to the longer dimensions. Blocks are numbered in C
// order over the grid. hilbert_order() lists them along a Hilbert curve and
// owners_along_curve() deals contiguous stretches of that curve to k owners,
// which is how the staging service places its index shards: nearby blocks,
// same owner.
//
// Errors: InvalidArgument naming the bad value (non-positive counts, more
// blocks than cells in a dimension, ids or points outside the grid).
// Thread-safety: value types; const functions may run concurrently.
#pragma once

#include <cove/box.hpp>
#include <cove/export.hpp>

#include <cstdint>
#include <span>
#include <vector>

namespace cove {

// Factors f[0] >= f[1] >= ... >= f[ndim-1] with product n, as close to each
// other as possible (smallest largest factor, then smallest spread).
// n >= 1, 1 <= ndim <= kMaxDims.
COVE_EXPORT std::vector<Index> dims_create(Index n, int ndim);

class COVE_EXPORT BlockDecomposition {
 public:
  // `nblocks` blocks from dims_create(); every dimension must be able to
  // take its factor (no empty blocks).
  BlockDecomposition(const Box& domain, Index nblocks);
  // An explicit grid: grid[d] blocks along dimension d.
  BlockDecomposition(const Box& domain, std::span<const Index> grid);

  const Box& domain() const noexcept { return domain_; }
  int ndim() const noexcept { return domain_.ndim; }
  std::span<const Index> grid() const noexcept { return {grid_.data(), static_cast<std::size_t>(domain_.ndim)}; }
  Index size() const noexcept { return size_; }

  Box block(Index id) const;
  std::array<Index, kMaxDims> coords(Index id) const;
  Index id(std::span<const Index> coords) const;
  // The block holding `point`, which must lie in the domain.
  Index block_containing(std::span<const Index> point) const;
  // Ids (ascending) of the blocks that intersect `box`.
  std::vector<Index> blocks_intersecting(const Box& box) const;

 private:
  // The grid coordinate along d of the block holding cell x (x inside the domain).
  Index coord_of(int d, Index x) const;

  Box domain_;
  std::array<Index, kMaxDims> grid_{};
  Index size_ = 0;
};

// Position of a point of a 2^bits-per-side grid along the Hilbert curve of
// that grid (Skilling's algorithm). coords.size() * bits <= 64, every
// coordinate < 2^bits.
COVE_EXPORT std::uint64_t hilbert_index(std::span<const std::uint32_t> coords, int bits);

// Block ids of a grid (C-order numbering as in BlockDecomposition) sorted by
// their position on the Hilbert curve of the enclosing power-of-two grid.
// Every block appears once. On a grid whose sides are equal powers of two,
// consecutive blocks are face neighbours; on other grids the curve jumps
// where it leaves and re-enters the grid.
COVE_EXPORT std::vector<Index> hilbert_order(std::span<const Index> grid);

// owner[id] for every block id in `order` (a permutation of 0..n-1): the
// curve is cut into k stretches whose lengths differ by at most one, the
// i-th going to owner i. k >= 1.
COVE_EXPORT std::vector<int> owners_along_curve(std::span<const Index> order, int k);

}  // namespace cove
