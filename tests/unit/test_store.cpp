// store::Store::fail_over: index entries of a dead member's pieces.
#include "store/store.hpp"

#include <gtest/gtest.h>

namespace {

using cove::Box;
using cove::Index;
namespace store = cove::store;

// An index entry naming `owner` as the holder, with its second copy on
// `copy_holder` (id 7 there). A placed piece (put_placed) is indexed this
// way by every shard, its holder being another server.
std::unique_ptr<store::Piece> entry(const std::string& owner, const std::string& copy_holder) {
  auto p = std::make_unique<store::Piece>();
  p->box = Box::from_start_count(std::vector<Index>{0}, std::vector<Index>{8});
  p->layout = cove::Layout::c();
  p->bytes = 64;
  p->owner = owner;
  p->key = {std::byte{1}};
  p->holder_id = 3;
  p->copy = {copy_holder, {std::byte{2}}, 7};
  return p;
}

TEST(Store, FailOverMovesAnEntryToItsCopyAndLeavesNoHalfCopy) {
  store::Store s(0, 0);
  store::VariableDef def;
  def.name = "v";
  def.dtype = cove::DType(cove::DTypeKind::Float64);
  def.ndim = 1;
  s.define(def);
  std::vector<std::unique_ptr<store::Piece>> evicted;
  const std::uint64_t id = s.add("v", 1, entry("server0", "server2"), evicted);
  std::size_t moved = 0;
  const auto lost = s.fail_over("server0", "server1", moved);
  EXPECT_TRUE(lost.empty());
  EXPECT_EQ(moved, 1u);
  const store::Piece* p = s.piece("v", 1, id);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->owner, "server2");
  EXPECT_EQ(p->holder_id, 7u);
  EXPECT_EQ(p->key, (cove::net::Bytes{std::byte{2}}));
  // The copy is now the piece: the entry has no second copy. A half-moved
  // one (no holder, the old id) is refused by every reader at decode.
  EXPECT_FALSE(p->copy);
  EXPECT_EQ(p->copy.id, 0u);
  EXPECT_TRUE(p->copy.key.empty());
}

}  // namespace
