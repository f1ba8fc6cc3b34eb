#include <cove/box.hpp>
#include <cove/error.hpp>

#include <gtest/gtest.h>

#include "expect_error.hpp"

#include <random>
#include <vector>

namespace {

using cove::Box;
using cove::Index;
using V = std::vector<Index>;
using cove_test::expect_error;


TEST(Box, StartCountRoundTrip) {
  const Box b = Box::from_start_count(V{1, -2, 3}, V{4, 5, 0});
  EXPECT_EQ(b.ndim, 3);
  EXPECT_EQ(b.start(), (V{1, -2, 3}));
  EXPECT_EQ(b.count(), (V{4, 5, 0}));
  EXPECT_EQ(b.hi[1], 3);
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.volume(), 0);
  EXPECT_EQ(b.to_string(), "[1:5, -2:3, 3:3)");
}

TEST(Box, RejectsBadInput) {
  expect_error(cove::Code::InvalidArgument, "count[1] = -1 is negative", [] { Box::from_start_count(V{0, 0}, V{1, -1}); });
  expect_error(cove::Code::InvalidArgument, "11 dimensions", [] { Box::from_start_count(V(11, 0), V(11, 1)); });
  expect_error(cove::Code::InvalidArgument, "start has 0 dimensions", [] { Box::from_start_count(V{}, V{}); });
  expect_error(cove::Code::InvalidArgument, "count has 1", [] { Box::from_start_count(V{0, 0}, V{1}); });
  expect_error(cove::Code::Overflow, "start[0] + count[0]", [] {
    Box::from_start_count(V{INT64_MAX - 1}, V{2});
  });
  expect_error(cove::Code::InvalidArgument, "lo[0] = 3 > hi[0] = 2", [] { Box::from_bounds(V{3}, V{2}); });
  expect_error(cove::Code::InvalidArgument, "shape[1] = -4", [] { Box::from_shape(V{2, -4}); });
  const Box big = Box::from_shape(V{Index{1} << 32, Index{1} << 32});
  expect_error(cove::Code::Overflow, "volume", [&] { (void)big.volume(); });
  const Box a = Box::from_shape(V{2, 2}), b = Box::from_shape(V{2, 2, 2});
  expect_error(cove::Code::InvalidArgument, "2 dimensions but other box has 3", [&] { (void)a.intersects(b); });
}

TEST(Box, IntersectionAndContainment) {
  const Box a = Box::from_bounds(V{0, 0}, V{10, 10});
  const Box b = Box::from_bounds(V{5, -5}, V{15, 5});
  const Box c = Box::from_bounds(V{10, 0}, V{12, 10});  // touches a's face
  EXPECT_TRUE(a.intersects(b));
  EXPECT_EQ(a.intersection(b), Box::from_bounds(V{5, 0}, V{10, 5}));
  EXPECT_FALSE(a.intersects(c));
  EXPECT_TRUE(a.intersection(c).empty());
  EXPECT_TRUE(a.contains(Box::from_bounds(V{1, 1}, V{10, 10})));
  EXPECT_FALSE(a.contains(b));
  EXPECT_TRUE(a.contains_point(V{9, 0}));
  EXPECT_FALSE(a.contains_point(V{10, 0}));
}

TEST(Box, SplitGridTilesExactly) {
  std::mt19937_64 rng(3);
  for (int iter = 0; iter < 200; ++iter) {
    const int nd = 1 + static_cast<int>(rng() % 4);
    V lo(nd), count(nd), factors(nd);
    for (int d = 0; d < nd; ++d) {
      lo[d] = static_cast<Index>(rng() % 10) - 5;
      count[d] = 1 + static_cast<Index>(rng() % 9);
      factors[d] = 1 + static_cast<Index>(rng() % count[d]);
    }
    const Box box = Box::from_start_count(lo, count);
    const auto pieces = cove::split_grid(box, factors);
    Index total = 0;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      EXPECT_TRUE(box.contains(pieces[i]));
      EXPECT_FALSE(pieces[i].empty());
      total += pieces[i].volume();
      for (std::size_t j = i + 1; j < pieces.size(); ++j) EXPECT_FALSE(pieces[i].intersects(pieces[j]));
      for (int d = 0; d < nd; ++d) {  // sizes differ by at most one
        EXPECT_LE(pieces[i].count(d), count[d] / factors[d] + 1);
        EXPECT_GE(pieces[i].count(d), count[d] / factors[d]);
      }
    }
    EXPECT_EQ(total, box.volume());
  }
  expect_error(cove::Code::InvalidArgument, "factors[0] = 5 must be in 1..4",
               [] { cove::split_grid(Box::from_shape(V{4}), V{5}); });
}

TEST(Box, SplitMaxVolume) {
  const Box box = Box::from_start_count(V{3, 0, -7}, V{17, 9, 31});
  const auto pieces = cove::split_max_volume(box, 100);
  Index total = 0;
  for (const auto& p : pieces) {
    EXPECT_LE(p.volume(), 100);
    EXPECT_TRUE(box.contains(p));
    total += p.volume();
  }
  EXPECT_EQ(total, box.volume());
  expect_error(cove::Code::InvalidArgument, "max_volume = 0", [&] { cove::split_max_volume(box, 0); });
}

}  // namespace

TEST(Box, BoundingBoxHoldsEveryBox) {
  const std::vector<Box> boxes{Box::from_start_count(V{2, 5}, V{3, 1}), Box::from_start_count(V{-1, 7}, V{1, 4}),
                               Box::from_start_count(V{0, 6}, V{1, 1})};
  EXPECT_EQ(cove::bounding_box(boxes), Box::from_bounds(V{-1, 5}, V{5, 11}));
  EXPECT_EQ(cove::bounding_box(std::span(boxes).first(1)), boxes[0]);
  EXPECT_THROW(cove::bounding_box(std::span<const Box>{}), cove::Error);
  const std::vector<Box> mixed{boxes[0], Box::from_shape(V{4})};
  EXPECT_THROW(cove::bounding_box(mixed), cove::Error);
}
