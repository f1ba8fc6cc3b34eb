// Property tests: every copy path against a naive element-by-element
// reference, byte for byte, on random boxes, regions, layouts and element sizes.
#include <cove/detail/region_copy.hpp>
#include <cove/detail/thread_pool.hpp>
#include <cove/error.hpp>

#include <gtest/gtest.h>

#include "expect_error.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

namespace {

using cove::Box;
using cove::detail::CopyMethod;
using cove::Index;
using cove::Layout;

// A layout given by its axis order (slowest first), with strides computed
// here from first principles rather than by Layout::strides.
struct TestLayout {
  Layout layout;
  std::vector<int> order;
};

TestLayout make_layout(int kind, int ndim, std::mt19937_64& rng) {
  std::vector<int> order(ndim);
  std::iota(order.begin(), order.end(), 0);
  if (kind == 0) return {Layout::c(), order};
  if (kind == 1) {
    std::reverse(order.begin(), order.end());
    return {Layout::f(), order};
  }
  std::shuffle(order.begin(), order.end(), rng);
  return {Layout::permuted(order), order};
}

std::vector<Index> ref_strides(const Box& box, const std::vector<int>& order) {
  std::vector<Index> s(box.ndim);
  Index stride = 1;
  for (int i = box.ndim - 1; i >= 0; --i) {
    s[order[i]] = stride;
    stride *= box.count(order[i]);
  }
  return s;
}

void reference_copy(const std::vector<unsigned char>& src, const Box& sbox, const std::vector<int>& sorder,
                    std::vector<unsigned char>& dst, const Box& dbox, const std::vector<int>& dorder,
                    const Box& region, std::size_t elem) {
  const auto ss = ref_strides(sbox, sorder), ds = ref_strides(dbox, dorder);
  std::vector<Index> x(region.lo.begin(), region.lo.begin() + region.ndim);
  if (region.empty()) return;
  for (;;) {
    Index so = 0, dof = 0;
    for (int d = 0; d < region.ndim; ++d) {
      so += (x[d] - sbox.lo[d]) * ss[d];
      dof += (x[d] - dbox.lo[d]) * ds[d];
    }
    std::memcpy(&dst[dof * elem], &src[so * elem], elem);
    int d = region.ndim - 1;
    for (; d >= 0; --d) {
      if (++x[d] < region.hi[d]) break;
      x[d] = region.lo[d];
    }
    if (d < 0) return;
  }
}

std::vector<unsigned char> random_bytes(std::size_t n, std::mt19937_64& rng) {
  std::vector<unsigned char> v(n);
  for (auto& b : v) b = static_cast<unsigned char>(rng());
  return v;
}

struct Case {
  Box sbox, dbox, region;
  TestLayout sl, dl;
  std::size_t elem;
};

// A random box around `inner` (which it contains), each side extended by 0..pad.
Box grow(const Box& inner, Index pad, std::mt19937_64& rng) {
  Box b = inner;
  for (int d = 0; d < b.ndim; ++d) {
    b.lo[d] -= static_cast<Index>(rng() % (pad + 1));
    b.hi[d] += static_cast<Index>(rng() % (pad + 1));
  }
  return b;
}

void check_all_paths(const Case& c, std::mt19937_64& rng, cove::detail::ThreadPool& pool) {
  const auto src = random_bytes(static_cast<std::size_t>(c.sbox.volume()) * c.elem, rng);
  const auto sentinel = random_bytes(static_cast<std::size_t>(c.dbox.volume()) * c.elem, rng);
  auto expect = sentinel;
  reference_copy(src, c.sbox, c.sl.order, expect, c.dbox, c.dl.order, c.region, c.elem);

  struct Variant {
    const char* name;
    CopyMethod method;
    int threads;
    bool stream;
  };
  const Variant variants[] = {
      {"auto", CopyMethod::Auto, 1, false},       {"runs", CopyMethod::Runs, 1, false},
      {"general", CopyMethod::General, 1, false}, {"tiled", CopyMethod::Tiled, 1, false},
      {"threaded", CopyMethod::Auto, 3, false},   {"streaming", CopyMethod::Auto, 1, true},
      {"threaded tiled streaming", CopyMethod::Tiled, 3, true},
  };
  for (const auto& v : variants) {
    if (!cove::detail::copy_method_applies(v.method, c.sbox, c.sl.layout, c.dbox, c.dl.layout, c.region, c.elem)) continue;
    auto dst = sentinel;
    cove::CopyOptions opt;
    opt.threads = v.threads;
    opt.parallel_min_bytes = 0;
    opt.stream_min_bytes = v.stream ? 0 : -1;
    cove::detail::copy_region({src.data(), src.size(), c.sbox, c.sl.layout},
                              {dst.data(), dst.size(), c.dbox, c.dl.layout}, c.region, c.elem, opt, {v.method, &pool});
    ASSERT_TRUE(dst == expect) << "path " << v.name << ", elem " << c.elem << ", region " << c.region.to_string()
                               << ", src " << c.sbox.to_string() << ' ' << c.sl.layout.to_string() << ", dst "
                               << c.dbox.to_string() << ' ' << c.dl.layout.to_string();
  }
}

constexpr std::size_t kElemSizes[] = {1, 2, 4, 8, 12, 16, 24};

TEST(RegionCopy, RandomCasesMatchReferenceOnEveryPath) {
  std::mt19937_64 rng(12345);
  cove::detail::ThreadPool pool(3);
  int tiled = 0;
  for (int iter = 0; iter < 700; ++iter) {
    const int ndim = 1 + static_cast<int>(rng() % 6);
    const Index max_side = ndim <= 2 ? 40 : ndim == 3 ? 12 : 5;
    Case c;
    c.region.ndim = ndim;
    for (int d = 0; d < ndim; ++d) {
      c.region.lo[d] = static_cast<Index>(rng() % 7) - 3;
      c.region.hi[d] = c.region.lo[d] + static_cast<Index>(rng() % max_side) + (iter % 50 == 0 ? 0 : 1);
    }
    c.sbox = grow(c.region, 3, rng);
    c.dbox = grow(c.region, iter % 3 == 0 ? 0 : 3, rng);
    c.sl = make_layout(static_cast<int>(rng() % 3), ndim, rng);
    c.dl = make_layout(static_cast<int>(rng() % 3), ndim, rng);
    c.elem = kElemSizes[iter % std::size(kElemSizes)];
    tiled += cove::detail::copy_method_applies(CopyMethod::Tiled, c.sbox, c.sl.layout, c.dbox, c.dl.layout, c.region, c.elem);
    check_all_paths(c, rng, pool);
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(tiled, 100);  // the tiled path was really exercised
}

// Planes larger than one block (2 KiB x 1 KiB) with ragged edges, so the
// tiled path's block, sub-tile and remainder loops all run.
TEST(RegionCopy, LargeTransposesMatchReference) {
  std::mt19937_64 rng(99);
  cove::detail::ThreadPool pool(2);
  for (std::size_t elem : {1, 2, 4, 8, 12, 16}) {
    Case c;
    const Index rows = 300 + static_cast<Index>(rng() % 50), cols = 1100 + static_cast<Index>(rng() % 50);
    c.region = Box::from_shape(std::vector<Index>{rows, cols});
    c.region.lo[0] = 3;
    c.sbox = grow(c.region, 5, rng);
    c.dbox = grow(c.region, 2, rng);
    c.sl = make_layout(0, 2, rng);
    c.dl = make_layout(1, 2, rng);
    c.elem = elem;
    check_all_paths(c, rng, pool);
  }
  Case c;  // 3-D with a permutation on each side
  c.region = Box::from_shape(std::vector<Index>{17, 130, 90});
  c.sbox = grow(c.region, 2, rng);
  c.dbox = c.region;
  c.sl = {Layout::permuted(std::vector<int>{1, 0, 2}), {1, 0, 2}};
  c.dl = {Layout::permuted(std::vector<int>{2, 0, 1}), {2, 0, 1}};
  c.elem = 8;
  check_all_paths(c, rng, pool);
}

TEST(RegionCopy, ChoosesTheExpectedPath) {
  const Box box = Box::from_shape(std::vector<Index>{64, 64});
  const Box col = Box::from_start_count(std::vector<Index>{0, 5}, std::vector<Index>{64, 1});
  EXPECT_EQ(cove::detail::choose_copy_method(box, Layout::c(), box, Layout::c(), box, 8), CopyMethod::Runs);
  EXPECT_EQ(cove::detail::choose_copy_method(box, Layout::c(), box, Layout::f(), box, 8), CopyMethod::Tiled);
  EXPECT_EQ(cove::detail::choose_copy_method(box, Layout::c(), col, Layout::c(), col, 8), CopyMethod::General);
  EXPECT_FALSE(cove::detail::copy_method_applies(CopyMethod::Tiled, box, Layout::c(), box, Layout::c(), box, 8));
}

TEST(RegionCopy, RejectsBadInputAndWritesNothing) {
  const Box box = Box::from_shape(std::vector<Index>{4, 4});
  std::vector<double> src(16, 1.0), dst(16, 0.0);
  auto copy = [&](const Box& sbox, const Box& dbox, const Box& region, std::size_t elem, std::size_t sbytes,
                  cove::detail::CopyControl control = {}) {
    cove::detail::copy_region({src.data(), sbytes, sbox, Layout::c()}, {dst.data(), dst.size() * 8, dbox, Layout::c()},
                              region, elem, {}, control);
  };
  const Box outside = Box::from_start_count(std::vector<Index>{2, 2}, std::vector<Index>{3, 1});
  cove_test::expect_error(cove::Code::InvalidArgument, "not inside the source box", [&] { copy(box, box, outside, 8, 128); });
  cove_test::expect_error(cove::Code::InvalidArgument, "element size = 0", [&] { copy(box, box, box, 0, 128); });
  cove_test::expect_error(cove::Code::InvalidArgument, "source size_bytes = 127", [&] { copy(box, box, box, 8, 127); });
  const Box three = Box::from_shape(std::vector<Index>{4, 4, 1});
  cove_test::expect_error(cove::Code::InvalidArgument, "3 dimensions", [&] { copy(box, box, three, 8, 128); });
  Box bad = box;
  bad.lo[1] = 5;
  cove_test::expect_error(cove::Code::InvalidArgument, "lo[1] = 5 > hi[1] = 4", [&] { copy(box, box, bad, 8, 128); });
  bad = box;
  bad.ndim = 11;
  cove_test::expect_error(cove::Code::InvalidArgument, "ndim is 11", [&] { copy(box, box, bad, 8, 128); });
  cove_test::expect_error(cove::Code::InvalidArgument, "rank 3 but the box has 2", [&] {
    cove::copy_region({src.data(), 128, box, Layout::permuted(std::vector<int>{2, 1, 0})},
                      {dst.data(), 128, box, Layout::c()}, box, 8);
  });
  cove::detail::CopyControl tiled;
  tiled.method = CopyMethod::Tiled;
  cove_test::expect_error(cove::Code::InvalidArgument, "'tiled' does not apply", [&] { copy(box, box, box, 8, 128, tiled); });
  const Box huge = Box::from_shape(std::vector<Index>{Index{1} << 40, Index{1} << 30});
  cove_test::expect_error(cove::Code::Overflow, "does not fit 64 bits", [&] { copy(huge, box, box, 8, 128); });
  cove_test::expect_error(cove::Code::InvalidArgument, "source data is null", [&] {
    cove::copy_region({nullptr, 128, box, Layout::c()}, {dst.data(), 128, box, Layout::c()}, box, 8);
  });
  EXPECT_TRUE(std::all_of(dst.begin(), dst.end(), [](double v) { return v == 0.0; }));
}

TEST(ContiguousRuns, MatchElementEnumeration) {
  std::mt19937_64 rng(5);
  for (int iter = 0; iter < 300; ++iter) {
    const int ndim = 1 + static_cast<int>(rng() % 5);
    Box region;
    region.ndim = ndim;
    for (int d = 0; d < ndim; ++d) {
      region.lo[d] = static_cast<Index>(rng() % 3);
      region.hi[d] = region.lo[d] + 1 + static_cast<Index>(rng() % 5);
    }
    const Box enclosing = grow(region, iter % 2 ? 2 : 0, rng);
    const auto tl = make_layout(static_cast<int>(rng() % 3), ndim, rng);
    const std::size_t elem = kElemSizes[iter % std::size(kElemSizes)];
    // Mark the region's bytes with the reference, then check the runs cover exactly them.
    const std::size_t bytes = static_cast<std::size_t>(enclosing.volume()) * elem;
    std::vector<unsigned char> ones(bytes, 1), marked(bytes, 0), covered(bytes, 0);
    reference_copy(ones, enclosing, tl.order, marked, enclosing, tl.order, region, elem);
    const auto runs = cove::detail::contiguous_runs(region, enclosing, tl.layout, elem);
    std::int64_t n = 0, last_end = -1;
    runs.for_each([&](std::int64_t off, std::int64_t len) {
      ASSERT_GT(off, last_end - 1) << "runs out of buffer order";
      last_end = off + len;
      for (std::int64_t i = off; i < off + len; ++i) covered[i]++;
      ++n;
    });
    EXPECT_EQ(n, runs.num_runs);
    EXPECT_EQ(covered, marked);
    if (region == enclosing) {
      EXPECT_EQ(runs.num_runs, 1) << "a whole buffer is one run";
    }
  }
}

}  // namespace
