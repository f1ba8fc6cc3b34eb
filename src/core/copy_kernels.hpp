// Internal: the loops that move bytes for a CopyPlan (see copy_plan.hpp).
#pragma once

#include "core/copy_plan.hpp"

namespace cove::detail {

// Calls fn(src_offset, dst_offset) for every index of the plan's dimensions
// [0, k), in C order.
template <typename Fn>
void for_each_outer(const CopyPlan& p, int k, Fn&& fn) {
  Index total = 1;
  for (int d = 0; d < k; ++d) total *= p.ext[d];
  std::array<Index, kMaxDims> idx{};
  std::int64_t so = p.s_off, dof = p.d_off;
  for (Index t = 0; t < total; ++t) {
    fn(so, dof);
    for (int d = k - 1; d >= 0; --d) {
      so += p.ss[d];
      dof += p.ds[d];
      if (++idx[d] < p.ext[d]) break;
      so -= p.ss[d] * p.ext[d];
      dof -= p.ds[d] * p.ext[d];
      idx[d] = 0;
    }
  }
}

// `stream` asks for non-temporal stores on long destination runs: for copies
// much larger than the cache, it saves the read-for-ownership of every line.
void copy_runs(const unsigned char* s, unsigned char* d, const CopyPlan& p, bool stream);
void copy_general(const unsigned char* s, unsigned char* d, const CopyPlan& p);
// Requires auto_method(p) == Tiled and move_source_unit_dim_inward(p) applied.
void copy_tiled(const unsigned char* s, unsigned char* d, const CopyPlan& p, bool stream);
void move_source_unit_dim_inward(CopyPlan& p);

}  // namespace cove::detail
