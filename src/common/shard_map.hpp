// Internal: which server holds the index of which part of a variable.
//
// A variable with a declared global shape is cut into blocks (about
// kBlocksPerServer per server, fewer when the domain is small), the blocks
// are ordered along a Hilbert curve, and contiguous stretches of the curve go
// to the servers in turn, so that a query over a compact region touches few
// servers. A variable without a shape is indexed whole by one server, chosen
// by a hash of its name. Servers and clients compute the same map from
// (shape, number of servers, name).
#pragma once

#include <cove/box.hpp>
#include <cove/decomposition.hpp>

#include <optional>
#include <string>
#include <vector>

namespace cove::common {

class ShardMap {
 public:
  static constexpr int kBlocksPerServer = 4;

  ShardMap(const std::optional<Box>& shape, int servers, const std::string& name);

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
