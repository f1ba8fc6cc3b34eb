#include <cove/decomposition.hpp>

#include "core/box_checks.hpp"
#include "core/fail.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>

namespace cove {

using detail::fail;

std::vector<Index> dims_create(Index n, int ndim) {
  if (n < 1) fail(Code::InvalidArgument, "number of blocks = ", n, " must be >= 1");
  if (ndim < 1 || ndim > kMaxDims) fail(Code::InvalidArgument, "ndim = ", ndim, "; Cove supports 1 to ", kMaxDims);
  std::vector<Index> divisors;
  for (Index i = 1; i <= n / i; ++i)
    if (n % i == 0) {
      divisors.push_back(i);
      if (i != n / i) divisors.push_back(n / i);
    }
  std::sort(divisors.begin(), divisors.end());

  // f^k >= target, saturating instead of overflowing.
  auto pow_reaches = [](Index f, int k, Index target) {
    Index p = 1;
    for (int i = 0; i < k && p < target; ++i)
      if (__builtin_mul_overflow(p, f, &p)) return true;
    return p >= target;
  };
  // Depth-first over non-increasing factorisations; keep the one with the
  // smallest largest factor, then the smallest spread (largest smallest factor).
  std::vector<Index> best, cur(ndim);
  Index best_max = std::numeric_limits<Index>::max(), best_min = 0;
  std::function<void(int, Index, Index)> search = [&](int d, Index rest, Index limit) {
    if (d == ndim - 1) {
      if (rest > limit) return;
      cur[d] = rest;
      if (cur[0] < best_max || (cur[0] == best_max && rest > best_min)) {
        best = cur;
        best_max = cur[0];
        best_min = rest;
      }
      return;
    }
    for (auto it = divisors.rbegin(); it != divisors.rend(); ++it) {
      const Index f = *it;
      if (f > limit || rest % f != 0) continue;
      if (!pow_reaches(f, ndim - d, rest)) break;  // the remaining factors, all <= f, cannot reach rest
      if (f > best_max) continue;
      cur[d] = f;
      search(d + 1, rest / f, f);
    }
  };
  search(0, n, n);
  return best;
}

BlockDecomposition::BlockDecomposition(const Box& domain, Index nblocks) : domain_(domain) {
  detail::validate_box(domain, "domain");
  const auto factors = dims_create(nblocks, domain.ndim);
  std::array<int, kMaxDims> by_length{};
  std::iota(by_length.begin(), by_length.begin() + domain.ndim, 0);
  std::stable_sort(by_length.begin(), by_length.begin() + domain.ndim,
                   [&](int a, int b) { return domain.count(a) > domain.count(b); });
  std::array<Index, kMaxDims> grid{};
  for (int i = 0; i < domain.ndim; ++i) grid[by_length[i]] = factors[i];
  *this = BlockDecomposition(domain, std::span<const Index>(grid.data(), domain.ndim));
}

BlockDecomposition::BlockDecomposition(const Box& domain, std::span<const Index> grid) : domain_(domain) {
  detail::validate_box(domain, "domain");
  if (grid.size() != static_cast<std::size_t>(domain.ndim))
    fail(Code::InvalidArgument, "grid has ", grid.size(), " entries but the domain has ", domain.ndim, " dimensions");
  size_ = 1;
  for (int d = 0; d < domain.ndim; ++d) {
    if (grid[d] < 1 || grid[d] > domain.count(d))
      fail(Code::InvalidArgument, "grid[", d, "] = ", grid[d], " blocks cannot divide the domain's ", domain.count(d),
           " cells along dimension ", d, " without empty blocks");
    grid_[d] = grid[d];
    size_ = detail::checked_mul(size_, grid[d], "number of blocks");
  }
}

std::array<Index, kMaxDims> BlockDecomposition::coords(Index id) const {
  if (id < 0 || id >= size_) fail(Code::InvalidArgument, "block id ", id, " is outside 0..", size_ - 1);
  std::array<Index, kMaxDims> c{};
  for (int d = ndim() - 1; d >= 0; --d) {
    c[d] = id % grid_[d];
    id /= grid_[d];
  }
  return c;
}

Index BlockDecomposition::id(std::span<const Index> c) const {
  if (c.size() != static_cast<std::size_t>(ndim()))
    fail(Code::InvalidArgument, "block coordinates have ", c.size(), " entries but the grid has ", ndim());
  Index id = 0;
  for (int d = 0; d < ndim(); ++d) {
    if (c[d] < 0 || c[d] >= grid_[d])
      fail(Code::InvalidArgument, "block coordinate [", d, "] = ", c[d], " is outside 0..", grid_[d] - 1);
    id = id * grid_[d] + c[d];
  }
  return id;
}

Box BlockDecomposition::block(Index id) const {
  const auto c = coords(id);
  Box b;
  b.ndim = ndim();
  for (int d = 0; d < ndim(); ++d) {
    const Index n = domain_.count(d), q = n / grid_[d], r = n % grid_[d];
    b.lo[d] = domain_.lo[d] + c[d] * q + std::min(c[d], r);
    b.hi[d] = b.lo[d] + q + (c[d] < r ? 1 : 0);
  }
  return b;
}

Index BlockDecomposition::coord_of(int d, Index x) const {
  // Blocks 0..r-1 have q+1 cells, the rest q.
  const Index n = domain_.count(d), q = n / grid_[d], r = n % grid_[d], off = x - domain_.lo[d];
  const Index big = r * (q + 1);
  return off < big ? off / (q + 1) : r + (off - big) / q;
}

Index BlockDecomposition::block_containing(std::span<const Index> point) const {
  if (!domain_.contains_point(point))
    fail(Code::InvalidArgument, "point is outside the domain ", domain_.to_string());
  std::array<Index, kMaxDims> c{};
  for (int d = 0; d < ndim(); ++d) c[d] = coord_of(d, point[d]);
  return id(std::span<const Index>(c.data(), ndim()));
}

std::vector<Index> BlockDecomposition::blocks_intersecting(const Box& box) const {
  detail::validate_box(box, "query box");
  const Box part = domain_.intersection(box);
  std::vector<Index> ids;
  if (part.empty()) return ids;
  std::array<Index, kMaxDims> first{}, last{}, c{};
  for (int d = 0; d < ndim(); ++d) {
    first[d] = coord_of(d, part.lo[d]);
    last[d] = coord_of(d, part.hi[d] - 1);
  }
  c = first;
  for (;;) {
    ids.push_back(id(std::span<const Index>(c.data(), ndim())));
    int d = ndim() - 1;
    for (; d >= 0; --d) {
      if (++c[d] <= last[d]) break;
      c[d] = first[d];
    }
    if (d < 0) break;
  }
  return ids;
}

}  // namespace cove
