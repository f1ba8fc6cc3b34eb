// Internal: the reassembly kernel's plans and index arithmetic, shared by
// the CUDA kernel (plugin/reassemble.cu) and the CPU (gpu/assembly.cpp
// makes the plans; the unit tests run the same arithmetic on the CPU and
// compare with the region engine). Plain data and header-only functions
// that nvcc compiles for both sides; nothing here allocates or throws.
//
// A DevicePlan is one piece's copy: a core CopyPlan (dimensions ordered
// slowest to fastest in the destination, byte strides on both sides) with
// the pointers resolved and the work cut into thread blocks of kThreads
// threads, each doing one of three things:
//   Runs     both sides contiguous along the innermost dimension: a block
//            copies rows_per_block whole rows, word by word;
//   Tiled    the innermost dimensions differ (e.g. C -> F): a block moves
//            kTilesPerBlock tiles of kTile x kTile elements (dimension n-2,
//            which is contiguous in the source, by dimension n-1, contiguous
//            in the destination) through shared memory, one after the
//            other, reading and writing whole lines;
//   General  anything else: a block copies elems_per_block elements.
// Words are `word` bytes (1, 2, 4, 8 or 16): the largest size that divides
// the element (the run, for Runs), both base addresses and every stride, so
// any element size works, 12 and 24 bytes included.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define COVE_HD __host__ __device__ __forceinline__
#else
#define COVE_HD inline
#endif

namespace cove::gpu {

inline constexpr int kPlanDims = 10;  // cove::kMaxDims
inline constexpr int kThreads = 256;  // per block
inline constexpr int kTile = 32;
// Tiles a Tiled block moves (its set-up, finding its piece and its place,
// is paid once for all of them).
inline constexpr int kTilesPerBlock = 8;
// Largest element the tiled kernel takes (its tile must fit in shared memory).
inline constexpr std::int64_t kMaxTiledElem = 40;
// Words a Runs or General block copies (about).
inline constexpr std::int64_t kWordsPerBlock = 8192;

enum class KernelKind : std::int32_t { Runs = 0, Tiled = 1, General = 2 };

struct DevicePlan {
  const unsigned char* src = nullptr;  // the region's first element on each side
  unsigned char* dst = nullptr;
  std::int32_t n = 0;                  // dimensions, 1..kPlanDims
  KernelKind kind = KernelKind::General;
  std::int32_t word = 1;               // bytes per word
  std::int32_t words = 1;              // words per element (Tiled, General) or per row (Runs)
  std::int64_t ext[kPlanDims] = {};    // elements per dimension
  std::int64_t ss[kPlanDims] = {};     // byte strides
  std::int64_t ds[kPlanDims] = {};
  std::int64_t elem = 0;               // element size, bytes
  std::int64_t rows = 0;               // Runs: rows (product of ext[0..n-2]); General: elements
  std::int64_t per_block = 0;          // Runs: rows per block; General: elements per block
  std::int64_t tiles_i = 0, tiles_j = 0;  // Tiled: tiles along dimensions n-2 and n-1
  std::int64_t tiles = 0;                 // Tiled: all of them (blocks take kTilesPerBlock each)
  std::int64_t blocks = 0;             // thread blocks this piece needs
  std::int64_t first_block = 0;        // its first block in a launch of several pieces
};

// a / b, and a % b in `rem`; in 32 bits when both fit, as they nearly always
// do: a GPU divides 64-bit integers in software, several times slower, and
// the kernel decodes every block's position this way.
COVE_HD std::int64_t div_rem(std::int64_t a, std::int64_t b, std::int64_t& rem) {
  if (((a | b) >> 32) == 0) {
    const auto ua = static_cast<std::uint32_t>(a), ub = static_cast<std::uint32_t>(b);
    const std::uint32_t q = ua / ub;
    rem = static_cast<std::int64_t>(ua - q * ub);
    return static_cast<std::int64_t>(q);
  }
  const std::int64_t q = a / b;
  rem = a - q * b;
  return q;
}

// Byte offsets (source, destination) of index `linear` of dimensions
// [from, to) in C order, starting from (so, dof).
COVE_HD void offsets_of(const DevicePlan& p, int from, int to, std::int64_t linear, std::int64_t& so,
                        std::int64_t& dof) {
  for (int d = to - 1; d >= from; --d) {
    std::int64_t i;
    linear = div_rem(linear, p.ext[d], i);
    so += i * p.ss[d];
    dof += i * p.ds[d];
  }
}

// The piece that block `block` of a launch belongs to (plans sorted by
// first_block).
COVE_HD int piece_of_block(const DevicePlan* plans, int count, std::int64_t block) {
  int lo = 0, hi = count - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (plans[mid].first_block <= block)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

// Shared memory of a tile: kTile lines of kTile + 1 elements (the padding
// element puts the warp that writes a destination line, element j, word k
// of its element at word ((kTile + 1) * j + i) * words + k, on 32 banks
// when words is odd).
COVE_HD std::int64_t tile_smem_elems() { return kTile * (kTile + 1); }

// One element of a tile: element (i, j) of the tile (i along dimension
// n-2, j along n-1) and where it sits in shared memory, in elements.
struct TileElem {
  std::int32_t i, j;
  std::int32_t smem;
};

COVE_HD TileElem tile_elem(std::int32_t i, std::int32_t j) { return {i, j, j * (kTile + 1) + i}; }

// Element f of the tile in the order the source is read: along i, then j
// (consecutive threads read consecutive source elements).
COVE_HD TileElem tile_load_elem(std::int32_t f) { return tile_elem(f % kTile, f / kTile); }

// Element f in the order the destination is written: along j, then i.
COVE_HD TileElem tile_store_elem(std::int32_t f) { return tile_elem(f / kTile, f % kTile); }

// Tile `tile` (counted within its piece; block b holds tiles
// b * kTilesPerBlock onwards) of a Tiled plan: the outer index (dimensions
// 0..n-3) and the tile's first element along n-2 and n-1.
struct TileOrigin {
  std::int64_t so, dof;  // byte offsets of the tile's element (0, 0)
  std::int64_t i0, j0;
  std::int32_t ni, nj;   // elements of the tile inside the region
};

COVE_HD TileOrigin tile_origin(const DevicePlan& p, std::int64_t tile) {
  std::int64_t t, tj;
  const std::int64_t outer = div_rem(tile, p.tiles_i * p.tiles_j, t);
  const std::int64_t ti = div_rem(t, p.tiles_j, tj);
  TileOrigin o{0, 0, ti * kTile, tj * kTile, 0, 0};
  offsets_of(p, 0, p.n - 2, outer, o.so, o.dof);
  const int di = p.n - 2, dj = p.n - 1;
  o.so += o.i0 * p.ss[di] + o.j0 * p.ss[dj];
  o.dof += o.i0 * p.ds[di] + o.j0 * p.ds[dj];
  const std::int64_t ni = p.ext[di] - o.i0, nj = p.ext[dj] - o.j0;
  o.ni = static_cast<std::int32_t>(ni < kTile ? ni : kTile);
  o.nj = static_cast<std::int32_t>(nj < kTile ? nj : kTile);
  return o;
}

}  // namespace cove::gpu
