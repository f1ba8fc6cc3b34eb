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

// A block's tiles, one after the other. Each thread moves kPerThread
// elements of a tile; WORDS, the words per element, is a template argument
// where it is small (0: p.words, known at run time only), and then the
// thread's loads are all issued before the first is waited for. The
// plan's fields are read into registers first: the stores go through byte
// pointers the compiler cannot tell apart from the plan.
template <typename W, int WORDS>
__device__ void tiled_block(const DevicePlan& p, std::int64_t b, W* smem) {
  constexpr int kPerThread = kTile * kTile / kThreads;
  constexpr int kSlots = WORDS ? WORDS : 1;
  const int di = p.n - 2, dj = p.n - 1;
  const std::int32_t words = WORDS ? WORDS : p.words;
  const std::int64_t ssi = p.ss[di], ssj = p.ss[dj], dsi = p.ds[di], dsj = p.ds[dj];
  const unsigned char* __restrict__ src0 = p.src;
  unsigned char* __restrict__ dst0 = p.dst;
  const std::int64_t last = min(p.tiles, (b + 1) * kTilesPerBlock);
  constexpr std::int64_t w = sizeof(W);
  for (std::int64_t tile = b * kTilesPerBlock; tile < last; ++tile) {
    const TileOrigin o = tile_origin(p, tile);
    const unsigned char* __restrict__ src = src0 + o.so;
    unsigned char* __restrict__ dst = dst0 + o.dof;
    W v[kPerThread][kSlots];
#pragma unroll
    for (int it = 0; it < kPerThread; ++it) {
      const TileElem t = tile_load_elem(static_cast<std::int32_t>(threadIdx.x) + it * kThreads);
      if (t.i < o.ni && t.j < o.nj) {
        const unsigned char* at = src + t.i * ssi + t.j * ssj;
        if constexpr (WORDS > 0) {
#pragma unroll
          for (int k = 0; k < WORDS; ++k) v[it][k] = *reinterpret_cast<const W*>(at + k * w);
        } else {
          for (int k = 0; k < words; ++k) smem[t.smem * words + k] = *reinterpret_cast<const W*>(at + k * w);
        }
      }
    }
    if constexpr (WORDS > 0) {
#pragma unroll
      for (int it = 0; it < kPerThread; ++it) {
        const TileElem t = tile_load_elem(static_cast<std::int32_t>(threadIdx.x) + it * kThreads);
        if (t.i < o.ni && t.j < o.nj)
#pragma unroll
          for (int k = 0; k < WORDS; ++k) smem[t.smem * WORDS + k] = v[it][k];
      }
    }
    __syncthreads();
#pragma unroll
    for (int it = 0; it < kPerThread; ++it) {
      const TileElem t = tile_store_elem(static_cast<std::int32_t>(threadIdx.x) + it * kThreads);
      if (t.i < o.ni && t.j < o.nj) {
        unsigned char* at = dst + t.i * dsi + t.j * dsj;
        for (int k = 0; k < words; ++k) *reinterpret_cast<W*>(at + k * w) = smem[t.smem * words + k];
      }
    }
    __syncthreads();  // the next tile reuses the shared memory
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

// Tiles: at least this many blocks per multiprocessor (64 registers per
// thread); left alone, the compiler keeps every word's addresses of the
// unrolled tile in registers across the tile loop (114 to 255 of them).
constexpr int kTiledBlocksPerSM = 4;

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
        g.kind == KernelKind::Tiled ? tile_smem_elems() * g.words * static_cast<std::size_t>(word) : 0;
    e = launch(kernel_for(g.kind, word, g.words), static_cast<const DevicePlan*>(device_plans) + g.first, g.blocks,
               g.count, smem, stream);
  }
  const cudaError_t f = cudaFreeAsync(device_plans, stream);
  return e != cudaSuccess ? e : f;
}

}  // namespace cove::gpu
