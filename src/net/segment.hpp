// Internal: shared-memory segments, the memory that processes on one host
// copy in and out of directly (docs/transport.md, "Shared-memory segments").
//
// A Segment is an anonymous memory file (memfd): it has no name in any file
// system, so nothing is left behind when its processes exit, however they
// exit. Its mode is 0600, and it is sealed against shrinking and growing, so
// that no process holding it can cut pages from under the others' mappings.
// Its creator maps it read-write with every page faulted in, once.
//
// Other processes get a descriptor of it over a Unix-domain socket
// (SCM_RIGHTS): read-only for readers (who cannot reopen it for writing: its
// mode is 0600), read-write for the one writer it was granted to. A Mapping
// is a segment mapped from such a descriptor.
//
// A Mapping of at most kPopulateWhole bytes (a piece's own segment) is
// faulted in whole when made. A larger one (a chunk of a server's reserve,
// holding many pieces) is faulted in a window at a time, by populate():
// a process touches only the pieces it was given.
//
// Errors: NoMemory when the segment cannot be made or mapped.
// Thread-safety: both are immutable once made; populate() may be called
// from any thread.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace cove::net {

// Called with every segment mapping's address and length just before it is
// unmapped, by the thread that unmaps it: memory registered elsewhere
// (pinned for a GPU's copy engines, gpu/device.cpp) is let go first, so
// that no device copy can reach pages that a later mapping reuses. Set
// once, when CUDA is first used and before anything is registered; null
// (the default): nothing to tell.
using UnmapHook = void (*)(void* address, std::size_t length);
void set_unmap_hook(UnmapHook hook);

class Segment {
 public:
  // A segment of `bytes` bytes (rounded up to whole pages), mapped read-write.
  explicit Segment(std::size_t bytes);
  ~Segment();
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;

  std::byte* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  // A new descriptor for a peer (the caller closes it): read-only unless
  // `writable`. -1 with errno on failure.
  int descriptor(bool writable) const;

 private:
  int fd_ = -1;
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

class Mapping {
 public:
  static constexpr std::size_t kPopulateWhole = std::size_t{64} << 20;
  static constexpr std::size_t kGranule = std::size_t{256} << 10;  // what populate() faults in at least

  // Maps the whole segment `fd` describes (read-only unless `writable`),
  // faulting its pages in if it is small (above); closes `fd` either way.
  Mapping(int fd, bool writable);
  ~Mapping();
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;

  std::byte* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  // Faults in the pages of [offset, offset + length) not faulted in yet
  // (whole granules), before they are copied to or from: one walk
  // instead of a fault per page. Only a speed-up: never fails.
  void populate(std::size_t offset, std::size_t length);

 private:
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  bool writable_ = false;
  std::mutex mutex_;
  std::vector<bool> populated_;  // per granule; empty when faulted in whole
};

// Whether this process puts the memory it allocates for peers in segments
// (COVE_SHM, default 1; 0 leaves it on the heap, where peers on this host
// read it with process_vm_readv or through the connection).
bool segments_enabled();

}  // namespace cove::net
