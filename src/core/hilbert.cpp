// Hilbert curve ordering, after J. Skilling, "Programming the Hilbert
// curve", AIP Conf. Proc. 707 (2004): coordinates are converted in place to
// the curve's "transposed" index, whose bits interleave to the position.
#include <cove/decomposition.hpp>

#include "core/fail.hpp"

#include <algorithm>
#include <numeric>

namespace cove {

using detail::fail;

namespace {

// Skilling's AxesToTranspose for n coordinates of `bits` bits each.
void axes_to_transpose(std::uint32_t* x, int n, int bits) {
  const std::uint32_t m = 1u << (bits - 1);
  for (std::uint32_t q = m; q > 1; q >>= 1) {  // inverse undo of the excess work
    const std::uint32_t p = q - 1;
    for (int i = 0; i < n; ++i) {
      if (x[i] & q) {
        x[0] ^= p;  // invert
      } else {
        const std::uint32_t t = (x[0] ^ x[i]) & p;  // exchange
        x[0] ^= t;
        x[i] ^= t;
      }
    }
  }
  for (int i = 1; i < n; ++i) x[i] ^= x[i - 1];  // Gray encode
  std::uint32_t t = 0;
  for (std::uint32_t q = m; q > 1; q >>= 1)
    if (x[n - 1] & q) t ^= q - 1;
  for (int i = 0; i < n; ++i) x[i] ^= t;
}

std::uint64_t hilbert_index_unchecked(std::uint32_t* x, int n, int bits) {
  axes_to_transpose(x, n, bits);
  std::uint64_t h = 0;
  for (int b = bits - 1; b >= 0; --b)
    for (int i = 0; i < n; ++i) h = (h << 1) | ((x[i] >> b) & 1u);
  return h;
}

}  // namespace

std::uint64_t hilbert_index(std::span<const std::uint32_t> coords, int bits) {
  const int n = static_cast<int>(coords.size());
  if (n < 1 || n > kMaxDims) fail(Code::InvalidArgument, "hilbert_index: ", n, " coordinates; expected 1 to ", kMaxDims);
  if (bits < 1 || bits > 32 || n * bits > 64)
    fail(Code::InvalidArgument, "hilbert_index: bits = ", bits, " with ", n, " coordinates needs ", n * bits,
         " bits; at most 64 fit");
  std::array<std::uint32_t, kMaxDims> x{};
  for (int i = 0; i < n; ++i) {
    if (bits < 32 && coords[i] >> bits)
      fail(Code::InvalidArgument, "hilbert_index: coordinate [", i, "] = ", coords[i], " does not fit ", bits, " bits");
    x[i] = coords[i];
  }
  return hilbert_index_unchecked(x.data(), n, bits);
}

std::vector<Index> hilbert_order(std::span<const Index> grid) {
  const int n = static_cast<int>(grid.size());
  if (n < 1 || n > kMaxDims) fail(Code::InvalidArgument, "grid has ", n, " dimensions; expected 1 to ", kMaxDims);
  Index total = 1, longest = 1;
  for (int d = 0; d < n; ++d) {
    if (grid[d] < 1) fail(Code::InvalidArgument, "grid[", d, "] = ", grid[d], " must be >= 1");
    total = detail::checked_mul(total, grid[d], "number of blocks");
    longest = std::max(longest, grid[d]);
  }
  int bits = 1;
  while ((Index{1} << bits) < longest) ++bits;
  if (n * bits > 64)
    fail(Code::InvalidArgument, "grid of ", n, " dimensions with up to ", longest,
         " blocks per side needs a ", n * bits, "-bit curve index; at most 64 bits are supported");
  std::vector<std::pair<std::uint64_t, Index>> keyed(static_cast<std::size_t>(total));
  std::array<Index, kMaxDims> c{};
  for (Index id = 0; id < total; ++id) {
    std::array<std::uint32_t, kMaxDims> x{};
    for (int d = 0; d < n; ++d) x[d] = static_cast<std::uint32_t>(c[d]);
    keyed[id] = {hilbert_index_unchecked(x.data(), n, bits), id};
    for (int d = n - 1; d >= 0; --d) {
      if (++c[d] < grid[d]) break;
      c[d] = 0;
    }
  }
  std::sort(keyed.begin(), keyed.end());
  std::vector<Index> order(keyed.size());
  for (std::size_t i = 0; i < keyed.size(); ++i) order[i] = keyed[i].second;
  return order;
}

std::vector<int> owners_along_curve(std::span<const Index> order, int k) {
  if (k < 1) fail(Code::InvalidArgument, "number of owners k = ", k, " must be >= 1");
  const auto n = static_cast<Index>(order.size());
  std::vector<int> owner(order.size(), -1);
  for (Index p = 0; p < n; ++p) {
    const Index id = order[p];
    if (id < 0 || id >= n || owner[id] != -1)
      fail(Code::InvalidArgument, "order is not a permutation of 0..", n - 1, ": entry ", p, " = ", id);
    owner[id] = static_cast<int>(p * k / n);
  }
  return owner;
}

}  // namespace cove
