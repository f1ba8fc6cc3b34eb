// Reassembly plans from the region engine's copy plans (assembly.hpp).
#include "gpu/assembly.hpp"

#include "core/copy_kernels.hpp"
#include "core/copy_plan.hpp"
#include "core/fail.hpp"

#include <algorithm>
#include <cstdint>

namespace cove::gpu {
namespace {

// The largest word (1..16 bytes) dividing every one of `values`.
std::int32_t word_dividing(std::int32_t word, std::int64_t value) {
  while (word > 1 && value % word != 0) word /= 2;
  return word;
}

DevicePlan plan_of(const PieceCopy& c, std::size_t elem) {
  detail::CopyPlan cp =
      detail::make_copy_plan(c.src.box, c.src.layout, c.dst.box, c.dst.layout, c.region, elem);
  detail::check_buffer(c.src.data, c.src.size_bytes, c.src.box, elem, "source");
  detail::check_buffer(c.dst.data, c.dst.size_bytes, c.dst.box, elem, "destination");
  DevicePlan p;
  const int n = cp.n;
  // The region engine's choice, with tiles only for elements that fit them.
  switch (detail::auto_method(cp)) {
    case detail::CopyMethod::Runs: p.kind = KernelKind::Runs; break;
    case detail::CopyMethod::Tiled:
      p.kind = cp.elem <= kMaxTiledElem ? KernelKind::Tiled : KernelKind::General;
      if (p.kind == KernelKind::Tiled) detail::move_source_unit_dim_inward(cp);
      break;
    default: p.kind = KernelKind::General; break;
  }
  p.n = n;
  p.elem = cp.elem;
  for (int d = 0; d < n; ++d) {
    p.ext[d] = cp.ext[d];
    p.ss[d] = cp.ss[d];
    p.ds[d] = cp.ds[d];
  }
  p.src = static_cast<const unsigned char*>(c.src.data) + cp.s_off;
  p.dst = static_cast<unsigned char*>(c.dst.data) + cp.d_off;
  return p;
}

std::int32_t word_of(const DevicePlan& p) {
  std::int32_t w = 16;
  w = word_dividing(w, static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(p.src) % 16));
  w = word_dividing(w, static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(p.dst) % 16));
  const int strided = p.kind == KernelKind::Runs ? p.n - 1 : p.n;
  for (int d = 0; d < strided; ++d) w = word_dividing(word_dividing(w, p.ss[d]), p.ds[d]);
  return word_dividing(w, p.kind == KernelKind::Runs ? p.ext[p.n - 1] * p.elem : p.elem);
}

void divide(DevicePlan& p, std::int32_t word) {
  p.word = word;
  const std::int64_t per_word = p.kind == KernelKind::Runs ? p.ext[p.n - 1] * p.elem : p.elem;
  p.words = static_cast<std::int32_t>(per_word / word);
  switch (p.kind) {
    case KernelKind::Runs:
    case KernelKind::General: {
      const int outer = p.kind == KernelKind::Runs ? p.n - 1 : p.n;
      p.rows = 1;
      for (int d = 0; d < outer; ++d) p.rows *= p.ext[d];
      p.per_block = std::max<std::int64_t>(1, kWordsPerBlock / std::max<std::int64_t>(1, p.words));
      p.blocks = (p.rows + p.per_block - 1) / p.per_block;
      break;
    }
    case KernelKind::Tiled: {
      std::int64_t outer = 1;
      for (int d = 0; d < p.n - 2; ++d) outer *= p.ext[d];
      p.tiles_i = (p.ext[p.n - 2] + kTile - 1) / kTile;
      p.tiles_j = (p.ext[p.n - 1] + kTile - 1) / kTile;
      p.tiles = outer * p.tiles_i * p.tiles_j;
      p.blocks = (p.tiles + kTilesPerBlock - 1) / kTilesPerBlock;
      break;
    }
  }
}

}  // namespace

std::vector<DevicePlan> make_plans(std::span<const PieceCopy> copies, std::size_t elem) {
  std::vector<DevicePlan> plans;
  plans.reserve(copies.size());
  std::int32_t word = 16;
  for (const auto& c : copies) {
    if (c.region.empty()) continue;
    plans.push_back(plan_of(c, elem));
    word = std::min(word, word_of(plans.back()));
  }
  std::int64_t first = 0;
  for (auto& p : plans) {
    divide(p, word);
    p.first_block = first;
    first += p.blocks;
  }
  return plans;
}

}  // namespace cove::gpu
