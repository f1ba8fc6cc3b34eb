// Internal: the regions an endpoint exposes to its peers (local and
// in-process transports), by id.
//
// Reads hold the table shared while they copy, and a region leaves it
// (exclusively) before its memory can be freed: a peer touching a withdrawn
// region gets an error, never freed memory.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <shared_mutex>
#include <utility>
#include <vector>

namespace cove::net {

class Segment;

struct RegionTable {
  // Regions in shared-memory segments have ids with this bit set: a reader
  // tells from the key alone that it may map the region.
  static constexpr std::uint64_t kSegmentBit = std::uint64_t{1} << 63;
  struct Entry {
    std::byte* base;
    std::uint64_t length;
    const Segment* segment = nullptr;  // the region's segment, if it is one
    std::uint64_t token = 0;           // what its keys must carry (memory_key.hpp)
    // Processes allowed to map it for writing, by pid and user (a pid reused
    // by another user's process is not allowed).
    std::vector<std::pair<pid_t, uid_t>> writers = {};
  };
  std::shared_mutex mutex;
  std::map<std::uint64_t, Entry> regions;
  std::uint64_t next = 1;  // ids are never reused
};

}  // namespace cove::net
