// Internal: which server holds the index of which part of a variable.
//
// A variable with a declared global shape is cut into blocks (about
// kBlocksPerServer per server, fewer when the domain is small), the blocks
// are ordered along a Hilbert curve, and contiguous stretches of the curve go
// to the servers in turn, so that a query over a compact region touches few
// servers. A block holds about kMinBlockBytes or more (the blocks of a cut
// differ by at most a row per dimension): a smaller variable has
// fewer blocks, and one of less than two blocks' bytes is indexed whole, as
// is a variable without a shape, by one server chosen by a hash of its name
// (a request for a few KiB then costs one round trip, not one per member).
// Servers and clients compute the same map from (shape, element size, number
// of servers, name).
#pragma once

#include <cove/box.hpp>
#include <cove/decomposition.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cove::common {

class ShardMap {
 public:
  static constexpr int kBlocksPerServer = 4;
  static constexpr std::uint64_t kMinBlockBytes = 4096;

  // `element_bytes`: the size of one element of the variable's dtype.
  ShardMap(const std::optional<Box>& shape, std::size_t element_bytes, int servers, const std::string& name);

  int servers() const noexcept { return servers_; }
  // The servers whose part meets `region`, ascending.
  std::vector<int> shards_for(const Box& region) const;
  // The parts of `region` that server `shard` indexes (disjoint boxes).
  std::vector<Box> parts_of(int shard, const Box& region) const;

 private:
  int servers_;
  int whole_ = -1;  // the single shard of a variable without a shape
  std::optional<BlockDecomposition> blocks_;
  std::vector<int> owner_;  // by block id
};

}  // namespace cove::common
