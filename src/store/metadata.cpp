#include "store/metadata.hpp"

#include "core/fail.hpp"

namespace cove::store {

using detail::fail;

void MetadataStore::put(const std::string& name, std::uint64_t version, std::span<const std::byte> data) {
  if (name.empty()) fail(Code::InvalidArgument, "metadata name is empty");
  if (data.size() > net::kMaxMetaBytes)
    fail(Code::InvalidArgument, "metadata '", name, "' of ", data.size(), " bytes exceeds ", net::kMaxMetaBytes);
  auto& versions = blobs_[name];
  auto [it, fresh] = versions.try_emplace(version);
  if (fresh) {
    ++entries_;
    bytes_ += cost(name, 0);
  }
  bytes_ -= it->second.size();
  it->second.assign(data.begin(), data.end());
  bytes_ += it->second.size();
  if (max_versions_ > 0)
    while (versions.size() > static_cast<std::size_t>(max_versions_)) {
      bytes_ -= cost(name, versions.begin()->second.size());
      --entries_;
      versions.erase(versions.begin());
    }
}

std::optional<std::pair<std::uint64_t, const net::Bytes*>> MetadataStore::find(const std::string& name,
                                                                               net::MetaMode mode,
                                                                               std::uint64_t version) const {
  auto it = blobs_.find(name);
  if (it == blobs_.end() || it->second.empty()) return std::nullopt;
  const auto& versions = it->second;
  auto found = versions.end();
  switch (mode) {
    case net::MetaMode::Exact: found = versions.find(version); break;
    case net::MetaMode::Next: found = versions.upper_bound(version); break;
    case net::MetaMode::Latest:
    case net::MetaMode::LatestIfAny: found = std::prev(versions.end()); break;
  }
  if (found == versions.end()) return std::nullopt;
  return std::make_pair(found->first, &found->second);
}

}  // namespace cove::store
