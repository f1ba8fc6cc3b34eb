// The reassembly kernel: assembles several pieces of an N-dimensional
// region into place on the device, in one launch, for any element size and
// any source and destination layouts. The work division and all index
// arithmetic are gpu/plan.hpp's (which the CPU tests check); this file
// only moves words.
#include "gpu/plugin/reassemble.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <vector>
#include <cstdint>

namespace cove::gpu {
namespace {


template <typename W>
__device__ __forceinline__ void copy_word(unsigned char* dst, const unsigned char* src) {
  *reinterpret_cast<W*>(dst) = *reinterpret_cast<const W*>(src);
}

// Tiles a tiled block moves at once (shared memory holds them all).
constexpr int kTilesPerPass = 2;

template <typename W>
__device__ void runs_block(const DevicePlan& p, std::int64_t b) {
  const std::int64_t r0 = b * p.per_block;
  const std::int64_t rows = min(p.per_block, p.rows - r0);
  const std::int64_t total = rows * p.words;
  for (std::int64_t f = threadIdx.x; f < total; f += kThreads) {
    std::int64_t so = 0, dof = 0, k;
    offsets_of(p, 0, p.n - 1, r0 + div_rem(f, p.words, k), so, dof);
    const std::int64_t w = k * static_cast<std::int64_t>(sizeof(W));
    copy_word<W>(p.dst + dof + w, p.src + so + w);
  }
}

// A block's tiles, two at a time: both tiles' loads are in flight together,
// and one pair of barriers serves both. Each thread moves kPerThread
// elements of each tile; WORDS, the words per element, is a template
// argument where it is small (0: p.words, known at run time only). The
// plan's fields are read into registers first: the stores go through byte
// pointers the compiler cannot tell apart from the plan.
template <typename W, int WORDS>
__device__ void tiled_block(const DevicePlan& p, std::int64_t b, W* smem) {
  constexpr int kPerThread = kTile * kTile / kThreads;
  const int di = p.n - 2, dj = p.n - 1;
  const std::int32_t words = WORDS ? WORDS : p.words;
  const std::int64_t ssi = p.ss[di], ssj = p.ss[dj], dsi = p.ds[di], dsj = p.ds[dj];
  const unsigned char* __restrict__ src0 = p.src;
  unsigned char* __restrict__ dst0 = p.dst;
  const std::int64_t last = min(p.tiles, (b + 1) * kTilesPerBlock);
  const std::int32_t tile_words = static_cast<std::int32_t>(tile_smem_elems()) * words;
  constexpr std::int64_t w = sizeof(W);
  for (std::int64_t first = b * kTilesPerBlock; first < last; first += kTilesPerPass) {
    TileOrigin o[kTilesPerPass];
#pragma unroll
    for (int q = 0; q < kTilesPerPass; ++q) {
      o[q] = first + q < last ? tile_origin(p, first + q) : TileOrigin{};  // an empty tile past the last
    }
#pragma unroll
    for (int q = 0; q < kTilesPerPass; ++q)
#pragma unroll
      for (int it = 0; it < kPerThread; ++it) {
        const TileElem t = tile_load_elem(static_cast<std::int32_t>(threadIdx.x) + it * kThreads);
        if (t.i < o[q].ni && t.j < o[q].nj) {
          const unsigned char* at = src0 + o[q].so + t.i * ssi + t.j * ssj;
          W* to = smem + q * tile_words + t.smem * words;
          for (int k = 0; k < words; ++k) to[k] = *reinterpret_cast<const W*>(at + k * w);
        }
      }
    __syncthreads();
#pragma unroll
    for (int q = 0; q < kTilesPerPass; ++q)
#pragma unroll
      for (int it = 0; it < kPerThread; ++it) {
        const TileElem t = tile_store_elem(static_cast<std::int32_t>(threadIdx.x) + it * kThreads);
        if (t.i < o[q].ni && t.j < o[q].nj) {
          unsigned char* at = dst0 + o[q].dof + t.i * dsi + t.j * dsj;
          const W* from = smem + q * tile_words + t.smem * words;
          for (int k = 0; k < words; ++k) *reinterpret_cast<W*>(at + k * w) = from[k];
        }
      }
    __syncthreads();  // the next pass reuses the shared memory
  }
}

template <typename W>
__device__ void general_block(const DevicePlan& p, std::int64_t b) {
  const std::int64_t e0 = b * p.per_block;
  const std::int64_t total = min(p.per_block, p.rows - e0) * p.words;
  for (std::int64_t f = threadIdx.x; f < total; f += kThreads) {
    std::int64_t so = 0, dof = 0, k;
    offsets_of(p, 0, p.n, e0 + div_rem(f, p.words, k), so, dof);
    const std::int64_t w = k * static_cast<std::int64_t>(sizeof(W));
    copy_word<W>(p.dst + dof + w, p.src + so + w);
  }
}

// One kernel per kind of plan (and, for tiles, per element width), each
// launched once for all the pieces of its kind: a single kernel for all
// three takes the registers of the largest path (255 per thread, one block
// per multiprocessor, and the copies wait on memory latency).
template <typename W>
__global__ void __launch_bounds__(kThreads) runs_kernel(const DevicePlan* plans, int count, std::int64_t offset) {
  const std::int64_t block = offset + blockIdx.x;
  const DevicePlan& p = plans[piece_of_block(plans, count, block)];
  runs_block<W>(p, block - p.first_block);
}

// Tiles: at least this many blocks per multiprocessor (up to 128 registers
// per thread; the kernel takes 92, without spilling). Measured on an H100:
// capped at 64 registers (4 blocks) it spills and is no faster; at 40 or
// 32 (6 or 8 blocks) it spills more and runs at half the speed.
constexpr int kTiledBlocksPerSM = 2;

template <typename W, int WORDS>
__global__ void __launch_bounds__(kThreads, kTiledBlocksPerSM) tiled_kernel(const DevicePlan* plans, int count, std::int64_t offset) {
  extern __shared__ unsigned char smem_bytes[];
  const std::int64_t block = offset + blockIdx.x;
  const DevicePlan& p = plans[piece_of_block(plans, count, block)];
  tiled_block<W, WORDS>(p, block - p.first_block, reinterpret_cast<W*>(smem_bytes));
}

template <typename W>
__global__ void __launch_bounds__(kThreads) general_kernel(const DevicePlan* plans, int count, std::int64_t offset) {
  const std::int64_t block = offset + blockIdx.x;
  const DevicePlan& p = plans[piece_of_block(plans, count, block)];
  general_block<W>(p, block - p.first_block);
}

using Kernel = void (*)(const DevicePlan*, int, std::int64_t);

// `count` plans of one kind at `device_plans` (numbered from block 0).
cudaError_t launch(Kernel kernel, const DevicePlan* device_plans, std::int64_t blocks, int count, std::size_t smem,
                   cudaStream_t stream) {
  if (smem > 48 * 1024) {
    const cudaError_t e =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
    if (e != cudaSuccess) return e;
  }
  constexpr std::int64_t kMaxGrid = 0x7fffffff;
  for (std::int64_t at = 0; at < blocks; at += kMaxGrid) {
    const auto grid = static_cast<unsigned>(std::min(kMaxGrid, blocks - at));
    kernel<<<grid, kThreads, smem, stream>>>(device_plans, count, at);
    if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

template <typename W>
Kernel tiled_for(std::int32_t words) {
  switch (words) {
    case 1: return tiled_kernel<W, 1>;
    case 2: return tiled_kernel<W, 2>;
    case 3: return tiled_kernel<W, 3>;
    default: return tiled_kernel<W, 0>;
  }
}

template <typename W>
Kernel kernel_for(KernelKind kind, std::int32_t words) {
  switch (kind) {
    case KernelKind::Runs: return runs_kernel<W>;
    case KernelKind::Tiled: return tiled_for<W>(words);
    default: return general_kernel<W>;
  }
}

Kernel kernel_for(KernelKind kind, std::int32_t word, std::int32_t words) {
  switch (word) {
    case 16: return kernel_for<uint4>(kind, words);
    case 8: return kernel_for<std::uint64_t>(kind, words);
    case 4: return kernel_for<std::uint32_t>(kind, words);
    case 2: return kernel_for<std::uint16_t>(kind, words);
    default: return kernel_for<std::uint8_t>(kind, words);
  }
}

}  // namespace

cudaError_t launch_reassembly(const DevicePlan* plans, int count, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  const int word = plans[0].word;  // one word size per launch (gpu/assembly.cpp)
  for (int i = 1; i < count; ++i)
    if (plans[i].word != word) return cudaErrorInvalidValue;
  // The plans grouped by kind (and, for tiles, words per element), each
  // group's blocks numbered from 0.
  std::vector<DevicePlan> grouped;
  struct Group {
    KernelKind kind;
    std::int32_t words;
    std::size_t first;
    int count;
    std::int64_t blocks;
  };
  std::vector<Group> groups;
  for (int i = 0; i < count; ++i) {
    const auto& p = plans[i];
    const std::int32_t words = p.kind == KernelKind::Tiled ? p.words : 0;
    if (std::none_of(groups.begin(), groups.end(), [&](const Group& g) { return g.kind == p.kind && g.words == words; }))
      groups.push_back({p.kind, words, 0, 0, 0});
  }
  for (auto& g : groups) {
    g.first = grouped.size();
    for (int i = 0; i < count; ++i) {
      const auto& p = plans[i];
      if (p.kind != g.kind || (p.kind == KernelKind::Tiled ? p.words : 0) != g.words) continue;
      grouped.push_back(p);
      grouped.back().first_block = g.blocks;
      g.blocks += p.blocks;
      ++g.count;
    }
  }
  const std::size_t bytes = sizeof(DevicePlan) * grouped.size();
  void* device_plans = nullptr;
  cudaError_t e = cudaMallocAsync(&device_plans, bytes, stream);
  if (e != cudaSuccess) return e;
  // From pageable memory: the runtime has taken the bytes when this returns.
  e = cudaMemcpyAsync(device_plans, grouped.data(), bytes, cudaMemcpyHostToDevice, stream);
  for (const auto& g : groups) {
    if (e != cudaSuccess) break;
    const std::size_t smem =
        g.kind == KernelKind::Tiled ? kTilesPerPass * tile_smem_elems() * g.words * static_cast<std::size_t>(word) : 0;
    e = launch(kernel_for(g.kind, word, g.words), static_cast<const DevicePlan*>(device_plans) + g.first, g.blocks,
               g.count, smem, stream);
  }
  const cudaError_t f = cudaFreeAsync(device_plans, stream);
  return e != cudaSuccess ? e : f;
}

}  // namespace cove::gpu
