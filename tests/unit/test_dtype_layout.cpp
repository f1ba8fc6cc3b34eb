#include <cove/dtype.hpp>
#include <cove/error.hpp>
#include <cove/layout.hpp>

#include <gtest/gtest.h>

#include <vector>

namespace {

using cove::DType;
using cove::DTypeKind;
using cove::Layout;

TEST(DType, NamesRoundTrip) {
  const DTypeKind kinds[] = {DTypeKind::Bool,    DTypeKind::Int8,      DTypeKind::Int16,     DTypeKind::Int32,
                             DTypeKind::Int64,   DTypeKind::UInt8,     DTypeKind::UInt16,    DTypeKind::UInt32,
                             DTypeKind::UInt64,  DTypeKind::Float32,   DTypeKind::Float64,   DTypeKind::Complex64,
                             DTypeKind::Complex128};
  for (auto k : kinds) {
    const DType t(k);
    EXPECT_EQ(DType::parse(t.name()), t) << t.name();
  }
  EXPECT_EQ(DType(DTypeKind::Float64).name(), "<f8");
  EXPECT_EQ(DType(DTypeKind::Bool).name(), "|b1");
  EXPECT_EQ(DType(DTypeKind::Complex128).size(), 16u);
  EXPECT_EQ(DType::opaque(12).name(), "|V12");
  EXPECT_EQ(DType::parse("|V12"), DType::opaque(12));
  EXPECT_EQ(DType::parse("V3").size(), 3u);
}

TEST(DType, ParsesNumpySpellings) {
  EXPECT_EQ(DType::parse("f8"), DType(DTypeKind::Float64));
  EXPECT_EQ(DType::parse("<i4"), DType(DTypeKind::Int32));
  EXPECT_EQ(DType::parse("=u2"), DType(DTypeKind::UInt16));
  EXPECT_EQ(DType::parse("float32"), DType(DTypeKind::Float32));
  EXPECT_EQ(DType::parse("complex64"), DType(DTypeKind::Complex64));
  EXPECT_EQ(DType::parse("?"), DType(DTypeKind::Bool));
  EXPECT_EQ(DType::parse("bool"), DType(DTypeKind::Bool));
}

TEST(DType, RejectsBadNames) {
  for (const char* bad : {"", "f3", "<", "V0", "V", "Vx", "float", "i16", "<V-1"}) {
    try {
      DType::parse(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const cove::Error& e) {
      EXPECT_EQ(e.code(), cove::Code::InvalidArgument);
    }
  }
  try {
    DType::parse(">f8");
    ADD_FAILURE();
  } catch (const cove::Error& e) {
    EXPECT_NE(std::string(e.what()).find("big-endian"), std::string::npos);
  }
  EXPECT_THROW(DType::opaque(0), cove::Error);
}

TEST(Layout, Strides) {
  const cove::Box box = cove::Box::from_start_count(std::vector<cove::Index>{5, 0, 1}, std::vector<cove::Index>{2, 3, 4});
  using S = std::array<cove::Index, cove::kMaxDims>;
  EXPECT_EQ(Layout::c().strides(box), (S{12, 4, 1}));
  EXPECT_EQ(Layout::f().strides(box), (S{1, 2, 6}));
  EXPECT_EQ(Layout::permuted(std::vector<int>{2, 0, 1}).strides(box), (S{3, 1, 6}));
  EXPECT_TRUE(Layout::c().same_order(Layout::permuted(std::vector<int>{0, 1, 2}), 3));
  EXPECT_TRUE(Layout::c().same_order(Layout::f(), 1));
  EXPECT_FALSE(Layout::c().same_order(Layout::f(), 2));
}

TEST(Layout, NamesRoundTrip) {
  for (const Layout& l : {Layout::c(), Layout::f(), Layout::permuted(std::vector<int>{3, 1, 0, 2})})
    EXPECT_EQ(Layout::parse(l.to_string()), l) << l.to_string();
  EXPECT_EQ(Layout::parse("column-major"), Layout::f());
  EXPECT_EQ(Layout::permuted(std::vector<int>{1, 0}).to_string(), "P1,0");
}

TEST(Layout, RejectsBadInput) {
  for (const char* bad : {"", "X", "P", "P1,1", "P0,2", "P0,", "P-1,0", "P0,,1"}) {
    try {
      Layout::parse(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const cove::Error& e) {
      EXPECT_EQ(e.code(), cove::Code::InvalidArgument) << e.what();
    }
  }
  try {
    Layout::permuted(std::vector<int>{0, 2, 2});
    ADD_FAILURE();
  } catch (const cove::Error& e) {
    EXPECT_NE(std::string(e.what()).find("{0,2,2} is not a permutation"), std::string::npos) << e.what();
  }
  try {
    Layout::permuted(std::vector<int>{1, 0}).axis_order(3);
    ADD_FAILURE();
  } catch (const cove::Error& e) {
    EXPECT_NE(std::string(e.what()).find("has rank 2 but the box has 3"), std::string::npos) << e.what();
  }
}

}  // namespace
