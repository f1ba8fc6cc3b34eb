// Internal: the regions an endpoint exposes to its peers (local and
// in-process transports), by id.
//
// Reads hold the table shared while they copy, and a region leaves it
// (exclusively) before its memory can be freed: a peer touching a withdrawn
// region gets an error, never freed memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <shared_mutex>

namespace cove::net {

struct RegionTable {
  struct Entry {
    std::byte* base;
    std::uint64_t length;
  };
  std::shared_mutex mutex;
  std::map<std::uint64_t, Entry> regions;
  std::uint64_t next = 1;  // ids are never reused
};

}  // namespace cove::net
