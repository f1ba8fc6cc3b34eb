// Internal: the metadata a server keeps: small named blobs by version
// (step times, checksums, a writer's "done"), at most kMaxMetaBytes each.
// Each name keeps its newest max_versions versions (0: all), as variables
// do. Its memory (each blob, its name and kEntryBytes of bookkeeping) is
// counted, and the server counts it against its memory budget.
//
// Thread-safety: none; the server serialises access.
// Errors: InvalidArgument for an empty name or an oversized blob.
#pragma once

#include "net/protocol.hpp"
#include "net/wire.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

namespace cove::store {

class MetadataStore {
 public:
  // Bookkeeping counted per version kept, besides the blob and its name.
  static constexpr std::uint64_t kEntryBytes = 96;

  explicit MetadataStore(int max_versions) : max_versions_(max_versions) {}

  // The most memory a put of `bytes` under `name` can add (what it replaces
  // or evicts may give some back).
  static std::uint64_t cost(const std::string& name, std::size_t bytes) {
    return bytes + name.size() + kEntryBytes;
  }
  void put(const std::string& name, std::uint64_t version, std::span<const std::byte> data);
  // The blob `mode` selects: version `version` itself, the first after it,
  // or the newest; none when there is no such version (yet).
  std::optional<std::pair<std::uint64_t, const net::Bytes*>> find(const std::string& name, net::MetaMode mode,
                                                                   std::uint64_t version) const;
  // Memory counted for everything kept, and the number of versions kept.
  std::uint64_t bytes() const noexcept { return bytes_; }
  std::uint64_t entries() const noexcept { return entries_; }

 private:
  int max_versions_;
  std::uint64_t bytes_ = 0, entries_ = 0;
  std::map<std::string, std::map<std::uint64_t, net::Bytes>> blobs_;  // name -> version -> blob
};

}  // namespace cove::store
