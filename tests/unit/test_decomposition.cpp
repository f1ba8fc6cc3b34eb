#include "common/placement.hpp"
#include "common/shard_map.hpp"

#include <cove/decomposition.hpp>
#include <cove/error.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <random>
#include <set>
#include <vector>

namespace {

using cove::Box;
using cove::Index;
using V = std::vector<Index>;

TEST(DimsCreate, BalancedLikeMpi) {
  EXPECT_EQ(cove::dims_create(12, 2), (V{4, 3}));
  EXPECT_EQ(cove::dims_create(16, 3), (V{4, 2, 2}));
  EXPECT_EQ(cove::dims_create(7, 2), (V{7, 1}));
  EXPECT_EQ(cove::dims_create(1, 3), (V{1, 1, 1}));
  EXPECT_EQ(cove::dims_create(64, 3), (V{4, 4, 4}));
  EXPECT_EQ(cove::dims_create(36, 2), (V{6, 6}));
  EXPECT_EQ(cove::dims_create(24, 3), (V{4, 3, 2}));
  EXPECT_EQ(cove::dims_create(1024, 10), V(10, 2));
  for (Index n = 1; n <= 200; ++n)
    for (int nd = 1; nd <= 4; ++nd) {
      const auto f = cove::dims_create(n, nd);
      ASSERT_EQ(f.size(), static_cast<std::size_t>(nd));
      EXPECT_EQ(std::accumulate(f.begin(), f.end(), Index{1}, std::multiplies<>()), n);
      EXPECT_TRUE(std::is_sorted(f.rbegin(), f.rend()));
    }
  EXPECT_THROW(cove::dims_create(0, 2), cove::Error);
  EXPECT_THROW(cove::dims_create(4, 0), cove::Error);
}

TEST(BlockDecomposition, BlocksTileTheDomainExactly) {
  std::mt19937_64 rng(8);
  for (int iter = 0; iter < 100; ++iter) {
    const int nd = 1 + static_cast<int>(rng() % 4);
    V lo(nd), count(nd);
    for (int d = 0; d < nd; ++d) {
      lo[d] = static_cast<Index>(rng() % 20) - 10;
      count[d] = 6 + static_cast<Index>(rng() % 30);
    }
    const Box domain = Box::from_start_count(lo, count);
    const Index n = 1 + static_cast<Index>(rng() % 6);
    const cove::BlockDecomposition dec(domain, n);
    ASSERT_EQ(dec.size(), n);
    Index total = 0;
    for (Index id = 0; id < n; ++id) {
      const Box b = dec.block(id);
      ASSERT_TRUE(domain.contains(b));
      ASSERT_FALSE(b.empty());
      total += b.volume();
      for (Index j = id + 1; j < n; ++j) ASSERT_FALSE(b.intersects(dec.block(j)));
      const auto c = dec.coords(id);
      EXPECT_EQ(dec.id(std::span<const Index>(c.data(), nd)), id);
      // Every corner of the block maps back to it.
      EXPECT_EQ(dec.block_containing(b.start()), id);
      V last(nd);
      for (int d = 0; d < nd; ++d) last[d] = b.hi[d] - 1;
      EXPECT_EQ(dec.block_containing(last), id);
    }
    EXPECT_EQ(total, domain.volume());
    // blocks_intersecting against brute force.
    for (int q = 0; q < 20; ++q) {
      Box query;
      query.ndim = nd;
      for (int d = 0; d < nd; ++d) {
        query.lo[d] = lo[d] - 3 + static_cast<Index>(rng() % (count[d] + 3));
        query.hi[d] = query.lo[d] + 1 + static_cast<Index>(rng() % 8);
      }
      V expect;
      for (Index id = 0; id < n; ++id)
        if (dec.block(id).intersects(query)) expect.push_back(id);
      EXPECT_EQ(dec.blocks_intersecting(query), expect) << query.to_string();
    }
  }
}

TEST(BlockDecomposition, LargerFactorsGoToLongerDimensions) {
  const cove::BlockDecomposition dec(Box::from_shape(V{10, 1000, 100}), 12);
  EXPECT_EQ(std::vector<Index>(dec.grid().begin(), dec.grid().end()), (V{2, 3, 2}));
}

TEST(BlockDecomposition, RejectsBadInput) {
  const Box domain = Box::from_shape(V{4, 4});
  EXPECT_THROW(cove::BlockDecomposition(domain, V{5, 1}), cove::Error);
  EXPECT_THROW(cove::BlockDecomposition(domain, V{2}), cove::Error);
  EXPECT_THROW(cove::BlockDecomposition(domain, Index{0}), cove::Error);
  EXPECT_THROW(cove::BlockDecomposition(domain, Index{17}), cove::Error);
  const cove::BlockDecomposition dec(domain, V{2, 2});
  EXPECT_THROW(dec.block(4), cove::Error);
  EXPECT_THROW(dec.block_containing(V{4, 0}), cove::Error);
}

std::array<Index, cove::kMaxDims> coords_of(Index id, const V& grid) {
  std::array<Index, cove::kMaxDims> c{};
  for (int d = static_cast<int>(grid.size()) - 1; d >= 0; --d) {
    c[d] = id % grid[d];
    id /= grid[d];
  }
  return c;
}

void expect_visits_each_once(const V& order, Index n) {
  std::vector<int> seen(static_cast<std::size_t>(n), 0);
  for (Index id : order) {
    ASSERT_GE(id, 0);
    ASSERT_LT(id, n);
    seen[id]++;
  }
  EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int s) { return s == 1; }));
}

TEST(Hilbert, PowerOfTwoGridsVisitFaceNeighboursInTurn) {
  for (const V& grid : {V{8}, V{2, 2}, V{16, 16}, V{4, 4, 4}, V{8, 8, 8}, V{4, 4, 4, 4}, V{2, 2, 2, 2, 2, 2}}) {
    const auto order = cove::hilbert_order(grid);
    const Index n = std::accumulate(grid.begin(), grid.end(), Index{1}, std::multiplies<>());
    ASSERT_EQ(static_cast<Index>(order.size()), n);
    expect_visits_each_once(order, n);
    for (std::size_t i = 1; i < order.size(); ++i) {
      const auto a = coords_of(order[i - 1], grid), b = coords_of(order[i], grid);
      Index dist = 0;
      for (std::size_t d = 0; d < grid.size(); ++d) dist += std::abs(a[d] - b[d]);
      ASSERT_EQ(dist, 1) << "step " << i << " of grid with " << grid.size() << " dims jumps";
    }
  }
}

TEST(Hilbert, OtherGridsVisitEveryBlockOnce) {
  for (const V& grid : {V{3, 5}, V{7}, V{5, 3, 6}, V{1, 9, 2}}) {
    const Index n = std::accumulate(grid.begin(), grid.end(), Index{1}, std::multiplies<>());
    expect_visits_each_once(cove::hilbert_order(grid), n);
  }
  EXPECT_THROW(cove::hilbert_order(V{0, 2}), cove::Error);
  EXPECT_THROW(cove::hilbert_index(std::vector<std::uint32_t>{1, 2, 3}, 22), cove::Error);
  EXPECT_THROW(cove::hilbert_index(std::vector<std::uint32_t>{4}, 2), cove::Error);
}

TEST(Hilbert, OwnersGetContiguousBalancedStretches) {
  const V grid{8, 8};
  const auto order = cove::hilbert_order(grid);
  for (int k : {1, 3, 5, 64, 100}) {
    const auto owner = cove::owners_along_curve(order, k);
    std::vector<int> sizes(static_cast<std::size_t>(k), 0);
    int prev = 0;
    for (Index id : order) {
      const int o = owner[id];
      ASSERT_GE(o, prev) << "owners are not contiguous along the curve";
      prev = o;
      sizes[o]++;
    }
    const auto [mn, mx] = std::minmax_element(sizes.begin(), sizes.end());
    if (k <= 64) {
      EXPECT_LE(*mx - *mn, 1);
    }
  }
  EXPECT_THROW(cove::owners_along_curve(order, 0), cove::Error);
  EXPECT_THROW(cove::owners_along_curve(V{0, 0}, 1), cove::Error);
}

}  // namespace

// The index of a variable is cut into blocks of at least a page
// (ShardMap::kMinBlockBytes): a variable of a few KiB lives whole on one
// member, so that a request for it costs one round trip; larger ones get
// about four blocks per member.
TEST(ShardMap, BlocksHoldAtLeastAPageAndSmallVariablesLiveWhole) {
  using cove::common::ShardMap;
  const auto bytes_of = [](const ShardMap& map, const Box& all, std::size_t elem) {
    std::vector<std::uint64_t> out;
    for (int s = 0; s < map.servers(); ++s)
      for (const Box& b : map.parts_of(s, all)) out.push_back(static_cast<std::uint64_t>(b.volume()) * elem);
    return out;
  };
  // 4 KiB of doubles over two members: one of them, by the name's hash, indexes it whole.
  const Box small = Box::from_shape(V{512});
  const ShardMap whole(small, 8, 2, "lat");
  EXPECT_EQ(whole.shards_for(small), std::vector<int>{cove::common::home_server("lat", 2)});
  EXPECT_EQ(bytes_of(whole, small, 8), std::vector<std::uint64_t>{4096});
  // The same cells of bytes are smaller still; of 16-byte elements, two blocks.
  EXPECT_EQ(ShardMap(small, 1, 2, "lat").shards_for(small).size(), 1u);
  EXPECT_EQ(ShardMap(small, 16, 2, "lat").shards_for(small), (std::vector<int>{0, 1}));
  // 8 KiB: two blocks of a page, one per member.
  const Box two = Box::from_shape(V{1024});
  const ShardMap split(two, 8, 2, "s");
  EXPECT_EQ(split.shards_for(two), (std::vector<int>{0, 1}));
  EXPECT_EQ(bytes_of(split, two, 8), (std::vector<std::uint64_t>{4096, 4096}));
  // Between, never a block under a page; from 32 KiB on, four per member.
  for (Index n : {1536, 2000, 4099, 20000}) {
    const Box all = Box::from_shape(V{n, 3});
    const auto blocks = bytes_of(ShardMap(all, 8, 3, "v"), all, 8);
    EXPECT_EQ(blocks.size(), std::min<std::size_t>(12, static_cast<std::size_t>(n * 3 * 8 / 4096))) << n;
    for (auto b : blocks) EXPECT_GE(b, 4096u) << n;
  }
  // A volume past 2^64 bytes does not overflow into a small one.
  const Box huge = Box::from_shape(V{Index{1} << 40, Index{1} << 22});
  EXPECT_EQ(ShardMap(huge, 8, 2, "h").shards_for(huge), (std::vector<int>{0, 1}));
  // One member, or no shape: whole.
  EXPECT_EQ(ShardMap(two, 8, 1, "s").shards_for(two), std::vector<int>{0});
  EXPECT_EQ(ShardMap(std::nullopt, 8, 4, "s").shards_for(two), std::vector<int>{cove::common::home_server("s", 4)});
}
