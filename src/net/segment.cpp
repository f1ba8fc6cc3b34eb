#include "net/segment.hpp"

#include "common/config.hpp"
#include "core/fail.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace cove::net {

using detail::fail;

namespace {

std::atomic<UnmapHook> unmap_hook{nullptr};

void announce_unmap(void* address, std::size_t length) {
  if (UnmapHook hook = unmap_hook.load(std::memory_order_acquire)) hook(address, length);
}

std::size_t page_rounded(std::size_t bytes) {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return (std::max<std::size_t>(bytes, 1) + page - 1) / page * page;
}

}  // namespace

void set_unmap_hook(UnmapHook hook) { unmap_hook.store(hook, std::memory_order_release); }

Segment::Segment(std::size_t bytes) : size_(page_rounded(bytes)) {
  fd_ = ::memfd_create("cove-segment", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd_ < 0) fail(Code::NoMemory, "cannot make a shared-memory segment: ", std::strerror(errno));
  const auto give_up = [this](const char* what) {
    const int e = errno;
    ::close(fd_);
    fail(Code::NoMemory, "shared-memory segment of ", size_, " bytes: ", what, ": ", std::strerror(e));
  };
  if (::fchmod(fd_, 0600) != 0) give_up("fchmod");
  if (::ftruncate(fd_, static_cast<off_t>(size_)) != 0) give_up("ftruncate");
  if (::fcntl(fd_, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) give_up("sealing");
  void* p = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd_, 0);
  if (p == MAP_FAILED) give_up("mmap");
  data_ = static_cast<std::byte*>(p);
}

Segment::~Segment() {
  announce_unmap(data_, size_);
  ::munmap(data_, size_);
  ::close(fd_);
}

int Segment::descriptor(bool writable) const {
  if (writable) return ::fcntl(fd_, F_DUPFD_CLOEXEC, 0);
  // A read-only open file of the same memory: mappings of it cannot be
  // made writable, and its mode keeps others from opening it for writing.
  const std::string path = "/proc/self/fd/" + std::to_string(fd_);
  return ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
}

Mapping::Mapping(int fd, bool writable) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size <= 0) {
    const int e = errno;
    ::close(fd);
    fail(Code::Protocol, "a shared-memory segment from a peer cannot be used: ", std::strerror(e));
  }
  // A segment that can shrink could take pages from under the mapping
  // (SIGBUS): only sealed ones are mapped.
  const int seals = ::fcntl(fd, F_GET_SEALS);
  if (seals < 0 || !(seals & F_SEAL_SHRINK)) {
    ::close(fd);
    fail(Code::PermissionDenied, "a peer sent a shared-memory segment that is not sealed against shrinking");
  }
  size_ = static_cast<std::size_t>(st.st_size);
  writable_ = writable;
  const bool whole = size_ <= kPopulateWhole;
  if (!whole) populated_.assign((size_ + kGranule - 1) / kGranule, false);
  const int prot = writable ? PROT_READ | PROT_WRITE : PROT_READ;
  void* p = ::mmap(nullptr, size_, prot, MAP_SHARED | (whole ? MAP_POPULATE : 0), fd, 0);
  const int e = errno;
  ::close(fd);
  if (p == MAP_FAILED) fail(Code::NoMemory, "cannot map a peer's segment of ", size_, " bytes: ", std::strerror(e));
  data_ = static_cast<std::byte*>(p);
}

Mapping::~Mapping() {
  announce_unmap(data_, size_);
  ::munmap(data_, size_);
}

void Mapping::populate(std::size_t offset, std::size_t length) {
  if (populated_.empty() || length == 0 || offset >= size_) return;
  const std::size_t first = offset / kGranule, last = (std::min(offset + length, size_) - 1) / kGranule;
  std::vector<std::pair<std::size_t, std::size_t>> runs;  // granules [from, to) to fault in
  {
    std::lock_guard lock(mutex_);  // claims them; faulted in outside it
    for (std::size_t g = first; g <= last; ++g) {
      if (populated_[g]) continue;
      populated_[g] = true;
      if (!runs.empty() && runs.back().second == g)
        ++runs.back().second;
      else
        runs.emplace_back(g, g + 1);
    }
  }
  for (const auto& [from, to] : runs) {
    std::byte* at = data_ + from * kGranule;
    const std::size_t bytes = std::min(to * kGranule, size_) - from * kGranule;
    // Linux 5.14 and later fault a range in with one call; older ones a page at a time.
    if (::madvise(at, bytes, writable_ ? MADV_POPULATE_WRITE : MADV_POPULATE_READ) != 0) {
      const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
      volatile const std::byte* p = at;
      for (std::size_t i = 0; i < bytes; i += page) (void)p[i];
    }
  }
}

bool segments_enabled() {
  static const bool on = common::env_switch("COVE_SHM");
  return on;
}

}  // namespace cove::net
