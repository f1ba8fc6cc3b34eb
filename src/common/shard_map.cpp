#include "common/shard_map.hpp"

#include "common/placement.hpp"

#include "core/fail.hpp"

#include <algorithm>

namespace cove::common {

ShardMap::ShardMap(const std::optional<Box>& shape, std::size_t element_bytes, int servers, const std::string& name)
    : servers_(servers) {
  if (servers < 1) detail::fail(Code::InvalidArgument, "a server group needs at least one server, not ", servers);
  // Blocks of at least kMinBlockBytes (a volume too large to count in bytes has room for every block).
  std::uint64_t bytes = 0;
  const bool huge = shape && __builtin_mul_overflow(static_cast<std::uint64_t>(shape->volume()),
                                                    static_cast<std::uint64_t>(element_bytes), &bytes);
  const auto wanted = static_cast<std::uint64_t>(servers) * kBlocksPerServer;
  const Index nblocks = static_cast<Index>(huge ? wanted : std::min(wanted, bytes / kMinBlockBytes));
  if (servers == 1 || !shape || shape->empty() || nblocks < 2) {
    whole_ = home_server(name, servers);
    return;
  }
  // As many blocks as that, but never more than cells along a dimension.
  auto grid = dims_create(nblocks, shape->ndim);
  std::vector<int> by_length(shape->ndim);
  for (int d = 0; d < shape->ndim; ++d) by_length[d] = d;
  std::stable_sort(by_length.begin(), by_length.end(),
                   [&](int a, int b) { return shape->count(a) > shape->count(b); });
  std::vector<Index> g(shape->ndim);
  for (int i = 0; i < shape->ndim; ++i) g[by_length[i]] = std::min(grid[i], shape->count(by_length[i]));
  blocks_.emplace(*shape, g);
  owner_ = owners_along_curve(hilbert_order(g), servers);
}

std::vector<int> ShardMap::shards_for(const Box& region) const {
  if (whole_ >= 0) return {whole_};
  std::vector<int> out;
  for (Index b : blocks_->blocks_intersecting(region)) out.push_back(owner_[b]);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<Box> ShardMap::parts_of(int shard, const Box& region) const {
  if (whole_ >= 0) return shard == whole_ ? std::vector<Box>{region} : std::vector<Box>{};
  std::vector<Box> out;
  for (Index b : blocks_->blocks_intersecting(region))
    if (owner_[b] == shard) out.push_back(blocks_->block(b).intersection(region));
  return out;
}

}  // namespace cove::common
