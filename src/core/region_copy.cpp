#include <cove/detail/region_copy.hpp>
#include <cove/detail/thread_pool.hpp>

#include "core/copy_kernels.hpp"
#include "core/fail.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace cove::detail {

namespace {

using Byte = unsigned char;

void run_serial(const Byte* s, Byte* d, const CopyPlan& p, CopyMethod m, bool stream) {
  switch (m) {
    case CopyMethod::Runs: return detail::copy_runs(s, d, p, stream);
    case CopyMethod::Tiled: return detail::copy_tiled(s, d, p, stream);
    case CopyMethod::General:
    case CopyMethod::Auto: return detail::copy_general(s, d, p);
  }
}

}  // namespace

void check_buffer(const void* data, std::size_t size_bytes, const Box& box, std::size_t elem,
                  const char* what) {
  const Index need = box.volume() * static_cast<Index>(elem);
  if (need > 0 && data == nullptr) fail(Code::InvalidArgument, what, " data is null");
  if (size_bytes < static_cast<std::size_t>(need))
    fail(Code::InvalidArgument, what, " size_bytes = ", size_bytes, " is smaller than its box ", box.to_string(),
         " needs (", need, " bytes)");
}

const char* to_string(CopyMethod method) noexcept {
  switch (method) {
    case CopyMethod::Auto: return "auto";
    case CopyMethod::Runs: return "runs";
    case CopyMethod::Tiled: return "tiled";
    case CopyMethod::General: return "general";
  }
  return "?";
}

CopyMethod choose_copy_method(const Box& src_box, const Layout& src_layout, const Box& dst_box,
                              const Layout& dst_layout, const Box& region, std::size_t elem_size) {
  return detail::auto_method(detail::make_copy_plan(src_box, src_layout, dst_box, dst_layout, region, elem_size));
}

bool copy_method_applies(CopyMethod method, const Box& src_box, const Layout& src_layout, const Box& dst_box,
                         const Layout& dst_layout, const Box& region, std::size_t elem_size) {
  return detail::method_applies(
      method, detail::make_copy_plan(src_box, src_layout, dst_box, dst_layout, region, elem_size));
}

CopyMethod copy_region(const ConstArrayView& src, const ArrayView& dst, const Box& region, std::size_t elem_size,
                       const CopyOptions& options, const CopyControl& control) {
  CopyPlan p = detail::make_copy_plan(src.box, src.layout, dst.box, dst.layout, region, elem_size);
  detail::check_buffer(src.data, src.size_bytes, src.box, elem_size, "source");
  detail::check_buffer(dst.data, dst.size_bytes, dst.box, elem_size, "destination");
  if (options.threads < 0) fail(Code::InvalidArgument, "CopyOptions.threads = ", options.threads, " is negative");
  CopyMethod m = control.method == CopyMethod::Auto ? detail::auto_method(p) : control.method;
  if (!detail::method_applies(m, p))
    fail(Code::InvalidArgument, "copy method '", to_string(m), "' does not apply to this copy (use '",
         to_string(detail::auto_method(p)), "')");
  if (p.bytes == 0) return m;
  if (m == CopyMethod::Tiled) detail::move_source_unit_dim_inward(p);
  const bool stream = options.stream_min_bytes >= 0 && p.bytes >= options.stream_min_bytes;

  const auto* s = static_cast<const Byte*>(src.data);
  auto* d = static_cast<Byte*>(dst.data);
  int threads = options.threads;
  if (threads != 1 && p.bytes >= options.parallel_min_bytes) {
    ThreadPool& pool = control.pool ? *control.pool : ThreadPool::shared();
    if (threads == 0) threads = pool.size();
    // Split the outermost dimension long enough to give every thread a
    // share; failing that, the longest one.
    int k = -1;
    for (int i = 0; i < p.n && k < 0; ++i)
      if (p.ext[i] >= threads) k = i;
    if (k < 0) k = static_cast<int>(std::max_element(p.ext.begin(), p.ext.begin() + p.n) - p.ext.begin());
    const int tasks = static_cast<int>(std::min<Index>(threads, p.ext[k]));
    if (tasks > 1) {
      pool.parallel_for(tasks, [&](int t) {
        CopyPlan sub = p;
        // Shares differ by at most one; written so that nothing can overflow.
        const Index q = p.ext[k] / tasks, r = p.ext[k] % tasks;
        const Index lo = q * t + std::min<Index>(t, r);
        sub.ext[k] = q + (t < r ? 1 : 0);
        sub.s_off += lo * p.ss[k];
        sub.d_off += lo * p.ds[k];
        run_serial(s, d, sub, m, stream);
      });
      return m;
    }
  }
  run_serial(s, d, p, m, stream);
  return m;
}

bool for_each_common_run(const Box& src_box, const Layout& src_layout, const Box& dst_box, const Layout& dst_layout,
                         const Box& region, std::size_t elem_size,
                         FunctionRef<void(std::int64_t, std::int64_t, std::int64_t)> fn) {
  const CopyPlan p = detail::make_copy_plan(src_box, src_layout, dst_box, dst_layout, region, elem_size);
  if (p.bytes == 0) return true;
  if (!p.innermost_contiguous()) return false;
  const std::int64_t run = p.ext[p.n - 1] * p.elem;
  detail::for_each_outer(p, p.n - 1, [&](std::int64_t so, std::int64_t dof) { fn(so, dof, run); });
  return true;
}

ContiguousRuns contiguous_runs(const Box& region, const Box& enclosing, const Layout& layout, std::size_t elem_size) {
  const CopyPlan p = detail::make_copy_plan(enclosing, layout, enclosing, layout, region, elem_size);
  ContiguousRuns r;
  r.first_offset = p.s_off;
  const bool contiguous = p.innermost_contiguous();
  r.run_bytes = contiguous ? p.ext[p.n - 1] * p.elem : p.elem;
  r.outer_ndim = contiguous ? p.n - 1 : p.n;
  r.num_runs = p.bytes == 0 ? 0 : 1;
  for (int d = 0; d < r.outer_ndim; ++d) {
    r.outer_count[d] = p.ext[d];
    r.outer_stride[d] = p.ss[d];
    r.num_runs *= p.ext[d];
  }
  return r;
}

}  // namespace cove::detail

namespace cove {

void copy_region(const ConstArrayView& src, const ArrayView& dst, const Box& region, std::size_t elem_size,
                 const CopyOptions& options) {
  detail::copy_region(src, dst, region, elem_size, options, detail::CopyControl{});
}

void copy_bytes(void* dst, const void* src, std::size_t bytes, const CopyOptions& options) {
  if (bytes == 0) return;
  const Index n = static_cast<Index>(bytes);
  const Box b = Box::from_shape({&n, 1});
  copy_region({src, bytes, b, Layout::c()}, {dst, bytes, b, Layout::c()}, b, 1, options);
}

void fill_region(const ArrayView& dst, const Box& region, std::span<const std::byte> value) {
  const std::size_t elem = value.size();
  if (elem == 0) detail::fail(Code::InvalidArgument, "fill value of 0 bytes");
  const detail::ContiguousRuns runs = detail::contiguous_runs(region, dst.box, dst.layout, elem);
  if (runs.num_runs == 0) return;
  std::uint64_t need = 0;
  if (__builtin_mul_overflow(static_cast<std::uint64_t>(dst.box.volume()), elem, &need))
    detail::fail(Code::Overflow, "buffer of ", dst.box.to_string(), " with elements of ", elem, " bytes");
  if (!dst.data) detail::fail(Code::InvalidArgument, "fill destination is null");
  if (dst.size_bytes < need)
    detail::fail(Code::InvalidArgument, "fill destination of ", dst.size_bytes, " bytes is smaller than its box ",
                 dst.box.to_string(), " (", need, " bytes)");
  auto* base = static_cast<std::byte*>(dst.data);
  runs.for_each([&](std::int64_t offset, std::int64_t bytes) {
    std::byte* run = base + offset;
    const auto n = static_cast<std::size_t>(bytes);
    std::memcpy(run, value.data(), elem);
    for (std::size_t done = elem; done < n;) {  // doubling: log(n) copies
      const std::size_t step = std::min(done, n - done);
      std::memcpy(run + done, run, step);
      done += step;
    }
  });
}

}  // namespace cove
