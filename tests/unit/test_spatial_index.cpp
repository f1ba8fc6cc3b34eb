// The index against brute force on random boxes, through inserts and removals.
#include <cove/error.hpp>
#include <cove/spatial_index.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

namespace {

using cove::Box;
using cove::Index;

Box random_box(int nd, Index domain, Index max_side, std::mt19937_64& rng) {
  Box b;
  b.ndim = nd;
  for (int d = 0; d < nd; ++d) {
    b.lo[d] = static_cast<Index>(rng() % domain) - domain / 2;
    b.hi[d] = b.lo[d] + 1 + static_cast<Index>(rng() % max_side);
  }
  return b;
}

using Entry = std::pair<Box, std::uint64_t>;

std::vector<std::uint64_t> brute(const std::vector<Entry>& all, const Box& q) {
  std::vector<std::uint64_t> ids;
  for (const auto& [b, id] : all)
    if (b.intersects(q)) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::vector<std::uint64_t> indexed(const cove::SpatialIndex& index, const Box& q) {
  std::vector<std::uint64_t> ids;
  for (const auto& hit : index.query(q)) {
    EXPECT_TRUE(hit.box.intersects(q));
    ids.push_back(hit.payload);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

class SpatialIndexRandom : public ::testing::TestWithParam<int> {};

TEST_P(SpatialIndexRandom, MatchesBruteForceThroughInsertsAndRemovals) {
  const int nd = GetParam();
  std::mt19937_64 rng(1000 + nd);
  cove::SpatialIndex index(nd);
  std::vector<Entry> all;
  const Index domain = nd <= 2 ? 400 : 60;
  std::uint64_t next = 0;
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < 1500; ++i) {
      const Box b = random_box(nd, domain, round % 2 ? 30 : 6, rng);
      index.insert(b, next);
      all.emplace_back(b, next++);
    }
    if (round == 1) {  // duplicates are separate entries
      index.insert(all[0].first, all[0].second);
      all.push_back(all[0]);
    }
    index.check_invariants();
    ASSERT_EQ(index.size(), all.size());
    for (int q = 0; q < 200; ++q) {
      const Box query = random_box(nd, domain, 40, rng);
      ASSERT_EQ(indexed(index, query), brute(all, query)) << "query " << query.to_string();
    }
    // Remove a random half, plus some absent entries.
    std::shuffle(all.begin(), all.end(), rng);
    const std::size_t keep = all.size() / 2;
    for (std::size_t i = keep; i < all.size(); ++i) ASSERT_TRUE(index.remove(all[i].first, all[i].second));
    all.resize(keep);
    EXPECT_FALSE(index.remove(random_box(nd, domain, 5, rng), next + 1));
    if (!all.empty()) {
      EXPECT_FALSE(index.remove(all[0].first, all[0].second + 1000000));
    }
    index.check_invariants();
    ASSERT_EQ(index.size(), all.size());
    for (int q = 0; q < 200; ++q) {
      const Box query = random_box(nd, domain, 40, rng);
      ASSERT_EQ(indexed(index, query), brute(all, query)) << "after removals, query " << query.to_string();
    }
  }
  for (const auto& [b, id] : all) ASSERT_TRUE(index.remove(b, id));
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.height(), 1);
  index.check_invariants();
  EXPECT_TRUE(index.query(random_box(nd, domain, 1000, rng)).empty());
}

INSTANTIATE_TEST_SUITE_P(Dims, SpatialIndexRandom, ::testing::Values(1, 2, 3, 4, 7, 10));

TEST(SpatialIndex, TouchingBoxesDoNotIntersect) {
  cove::SpatialIndex index(2);
  index.insert(Box::from_bounds(std::vector<Index>{0, 0}, std::vector<Index>{10, 10}), 1);
  EXPECT_TRUE(index.query(Box::from_bounds(std::vector<Index>{10, 0}, std::vector<Index>{20, 10})).empty());
  EXPECT_EQ(index.query(Box::from_bounds(std::vector<Index>{9, 9}, std::vector<Index>{20, 10})).size(), 1u);
}

TEST(SpatialIndex, RejectsBadInput) {
  cove::SpatialIndex index(3);
  const Box two = Box::from_shape(std::vector<Index>{2, 2});
  try {
    index.insert(two, 1);
    ADD_FAILURE();
  } catch (const cove::Error& e) {
    EXPECT_NE(std::string(e.what()).find("has 2 dimensions but the index has 3"), std::string::npos) << e.what();
  }
  try {
    index.insert(Box::from_shape(std::vector<Index>{2, 0, 2}), 1);
    ADD_FAILURE();
  } catch (const cove::Error& e) {
    EXPECT_NE(std::string(e.what()).find("is empty"), std::string::npos) << e.what();
  }
  EXPECT_THROW(index.query(two), cove::Error);
  EXPECT_THROW(cove::SpatialIndex(0), cove::Error);
  EXPECT_THROW(cove::SpatialIndex(11), cove::Error);
  EXPECT_EQ(index.size(), 0u);
}

}  // namespace
