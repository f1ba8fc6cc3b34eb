#include "net/process_memory.hpp"

#include <cove/detail/thread_pool.hpp>

#include "common/config.hpp"
#include "core/fail.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77  // Linux 6.5; the value is the same on every architecture
#endif

namespace cove::net {

using detail::fail;

bool cma_enabled() {
  static const bool on = common::env_switch("COVE_CMA");
  return on;
}

PeerProcess PeerProcess::of_socket(int fd) {
  PeerProcess p;
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
    p.pid_ = cred.pid;
    p.uid_ = cred.uid;
  }
  int pidfd = -1;
  len = sizeof pidfd;
  if (p.pid_ > 0 && ::getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) == 0) p.pidfd_ = pidfd;
  return p;
}

PeerProcess::PeerProcess(PeerProcess&& o) noexcept : pid_(o.pid_), uid_(o.uid_), pidfd_(o.pidfd_) {
  refused_ = o.refused_.load();
  o.pidfd_ = -1;
}

PeerProcess& PeerProcess::operator=(PeerProcess&& o) noexcept {
  if (this != &o) {
    if (pidfd_ >= 0) ::close(pidfd_);
    pid_ = o.pid_;
    uid_ = o.uid_;
    pidfd_ = o.pidfd_;
    refused_ = o.refused_.load();
    o.pidfd_ = -1;
  }
  return *this;
}

PeerProcess::~PeerProcess() {
  if (pidfd_ >= 0) ::close(pidfd_);
}

bool PeerProcess::alive() const noexcept {
  if (pidfd_ < 0) return false;
  pollfd p{pidfd_, POLLIN, 0};
  return ::poll(&p, 1, 0) == 0;  // a pidfd becomes readable when its process exits
}

namespace {

// Copies bytes [from, to) of the ops taken end to end. Returns 0, or the
// errno of the failed call.
int copy_share(pid_t pid, std::uint64_t base, std::span<const RemoteOp> ops, std::size_t from, std::size_t to) {
  constexpr std::size_t kIov = 512;  // well under IOV_MAX
  std::vector<iovec> local, remote;
  auto flush = [&]() -> int {
    std::size_t i = 0;
    while (i < local.size()) {
      const std::size_t n = std::min(kIov, local.size() - i);
      const ssize_t done = ::process_vm_readv(pid, &local[i], n, &remote[i], n, 0);
      if (done < 0) return errno;
      if (done == 0) return EFAULT;
      // A partial transfer ends inside some iovec: skip what was done and go on from there.
      auto left = static_cast<std::size_t>(done);
      while (i < local.size() && left >= local[i].iov_len) left -= local[i++].iov_len;
      if (left > 0) {
        local[i].iov_base = static_cast<char*>(local[i].iov_base) + left;
        local[i].iov_len -= left;
        remote[i].iov_base = static_cast<char*>(remote[i].iov_base) + left;
        remote[i].iov_len -= left;
      }
    }
    local.clear();
    remote.clear();
    return 0;
  };
  std::size_t at = 0;  // bytes of the ops before `op`
  for (const auto& op : ops) {
    const std::size_t lo = std::max(at, from), hi = std::min(at + op.bytes, to);
    if (lo < hi) {
      const std::size_t skip = lo - at;
      local.push_back({static_cast<char*>(op.local) + skip, hi - lo});
      remote.push_back({reinterpret_cast<void*>(base + op.offset + skip), hi - lo});
      if (local.size() == kIov)
        if (const int e = flush()) return e;
    }
    at += op.bytes;
    if (at >= to) break;
  }
  return flush();
}

}  // namespace

bool PeerProcess::readable() const noexcept { return cma_enabled() && pidfd_ >= 0 && !refused_; }

// One process_vm_readv moves about half of what memcpy does here (it pins
// every page and copies on one core), so copies of kParallelBytes and more
// are cut into equal shares run on the shared thread pool.
bool PeerProcess::read(std::uint64_t base, std::span<const RemoteOp> ops) {
  if (!readable()) return false;
  constexpr std::size_t kParallelBytes = std::size_t{8} << 20;
  std::size_t total = 0;
  for (const auto& op : ops) total += op.bytes;
  detail::ThreadPool* pool = total >= kParallelBytes ? &detail::ThreadPool::shared() : nullptr;
  const int shares = pool ? std::min(pool->size(), 4) : 1;
  std::atomic<int> error{0};
  if (shares <= 1) {
    error = copy_share(pid_, base, ops, 0, total);
  } else {
    pool->parallel_for(shares, [&](int i) {
      const std::size_t from = total * static_cast<std::size_t>(i) / static_cast<std::size_t>(shares);
      const std::size_t to = total * static_cast<std::size_t>(i + 1) / static_cast<std::size_t>(shares);
      int expected = 0;
      if (const int e = copy_share(pid_, base, ops, from, to)) error.compare_exchange_strong(expected, e);
    });
  }
  // The bytes count only if the process the kernel bound to the connection
  // was alive after the copy: then the pid was still its own throughout.
  if (!alive()) fail(Code::Unavailable, "the process that owns this memory (pid ", pid_, ") is gone");
  const int e = error;
  if (e == 0) return true;
  if (e == EPERM || e == ENOSYS || e == EACCES) {
    refused_ = true;
    return false;
  }
  if (e == ESRCH) fail(Code::Unavailable, "the process that owns this memory (pid ", pid_, ") is gone");
  fail(Code::NotFound, "memory of pid ", pid_, " at [0x", std::hex, base, ", ...) cannot be read: ", std::dec,
       std::strerror(e));
}

}  // namespace cove::net
