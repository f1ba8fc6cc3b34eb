#include "core/copy_plan.hpp"

#include <cove/dtype.hpp>

#include "core/box_checks.hpp"
#include "core/fail.hpp"

#include <algorithm>
#include <numeric>

namespace cove::detail {

int CopyPlan::source_unit_dim() const {
  for (int d = 0; d < n - 1; ++d)
    if (ss[d] == elem) return d;
  return -1;
}

namespace {

void require_inside(const Box& region, const Box& box, const char* what) {
  detail::require_same_rank(region, "region", box, what);
  if (!box.contains(region))
    fail(Code::InvalidArgument, "region ", region.to_string(), " is not inside the ", what, " ",
         box.to_string());
}

}  // namespace

CopyPlan make_copy_plan(const Box& src_box, const Layout& src_layout, const Box& dst_box,
                        const Layout& dst_layout, const Box& region, std::size_t elem_size) {
  detail::validate_box(region, "region");
  detail::validate_box(src_box, "source box");
  detail::validate_box(dst_box, "destination box");
  validate_element_size(elem_size, "element size");
  require_inside(region, src_box, "source box");
  require_inside(region, dst_box, "destination box");
  const auto elem = static_cast<std::int64_t>(elem_size);
  // Both buffers' byte sizes must fit: this also bounds every offset below.
  checked_mul(src_box.volume(), elem, "source buffer bytes");
  checked_mul(dst_box.volume(), elem, "destination buffer bytes");
  const auto sst = src_layout.strides(src_box);
  const auto dst = dst_layout.strides(dst_box);

  CopyPlan p;
  p.elem = elem;
  p.bytes = region.volume() * elem;
  struct Dim {
    Index ext;
    std::int64_t ss, ds;
  };
  std::array<Dim, kMaxDims> dims{};
  int n = 0;
  for (int d = 0; d < region.ndim; ++d) {
    p.s_off += (region.lo[d] - src_box.lo[d]) * sst[d] * elem;
    p.d_off += (region.lo[d] - dst_box.lo[d]) * dst[d] * elem;
    if (region.count(d) != 1) dims[n++] = {region.count(d), sst[d] * elem, dst[d] * elem};
  }
  // Slowest destination dimension first (insertion sort: n <= kMaxDims).
  for (int i = 1; i < n; ++i)
    for (int j = i; j > 0 && (dims[j - 1].ds < dims[j].ds ||
                              (dims[j - 1].ds == dims[j].ds && dims[j - 1].ss < dims[j].ss));
         --j)
      std::swap(dims[j - 1], dims[j]);
  // Merge an outer dimension into the next inner one where both sides are contiguous across them.
  int m = 0;
  for (int i = 0; i < n; ++i) {
    if (m > 0) {
      Dim& outer = dims[m - 1];
      if (outer.ss == dims[i].ss * dims[i].ext && outer.ds == dims[i].ds * dims[i].ext) {
        outer = {outer.ext * dims[i].ext, dims[i].ss, dims[i].ds};
        continue;
      }
    }
    dims[m++] = dims[i];
  }
  if (m == 0) dims[m++] = {1, elem, elem};  // a single element (or an empty region)
  p.n = m;
  for (int i = 0; i < m; ++i) {
    p.ext[i] = dims[i].ext;
    p.ss[i] = dims[i].ss;
    p.ds[i] = dims[i].ds;
  }
  return p;
}

CopyMethod auto_method(const CopyPlan& plan) {
  if (plan.innermost_contiguous()) return CopyMethod::Runs;
  if (plan.ds[plan.n - 1] == plan.elem && plan.source_unit_dim() >= 0) return CopyMethod::Tiled;
  return CopyMethod::General;
}

bool method_applies(CopyMethod method, const CopyPlan& plan) {
  switch (method) {
    case CopyMethod::Auto:
    case CopyMethod::Runs:
    case CopyMethod::General:
      return true;
    case CopyMethod::Tiled:
      return auto_method(plan) == CopyMethod::Tiled;
  }
  return false;
}

}  // namespace cove::detail
