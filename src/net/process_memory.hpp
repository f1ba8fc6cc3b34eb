// Internal: reading another process's memory on the same host, for the
// local transport.
//
// PeerProcess is the process at the other end of a Unix-domain socket, as
// the kernel names it: its pid (SO_PEERCRED) and a pidfd (SO_PEERPIDFD) that
// tells whether that very process is still alive, so that a pid reused by
// another process is never read. read() copies with process_vm_readv, one
// kernel copy, cut into shares on the shared thread pool when large, and
// checks after the copy that the process lived through it.
//
// Thread-safety: read() may be called from several threads at once.
// Errors: read() returns false when the kernel refuses (no ptrace rights,
// no pidfd support, COVE_CMA=0): the caller moves the bytes another way.
// It throws Unavailable when the process is gone and NotFound when an
// address is not mapped in it.
#pragma once

#include "net/transport.hpp"

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <span>

namespace cove::net {

class PeerProcess {
 public:
  // The process at the other end of the connected Unix socket `fd`.
  static PeerProcess of_socket(int fd);
  PeerProcess() = default;
  PeerProcess(PeerProcess&& o) noexcept;
  PeerProcess& operator=(PeerProcess&& o) noexcept;
  PeerProcess(const PeerProcess&) = delete;
  ~PeerProcess();

  pid_t pid() const noexcept { return pid_; }
  uid_t uid() const noexcept { return uid_; }
  // False once the process has exited (or when there is no pidfd to tell).
  bool alive() const noexcept;
  // Copies ops (offsets from `base` in the process's address space) into
  // local memory. See the header comment for what it returns and throws.
  bool read(std::uint64_t base, std::span<const RemoteOp> ops);
  // Whether read() may copy directly: false once the kernel refused, or
  // with COVE_CMA=0 or no pidfd.
  bool readable() const noexcept;

 private:
  pid_t pid_ = 0;
  uid_t uid_ = 0;
  int pidfd_ = -1;
  std::atomic<bool> refused_{false};  // the kernel said no once: it will again
};

// Whether this process may read its peers' memory directly (COVE_CMA,
// default 1; 0 moves every byte through the connection instead).
bool cma_enabled();

}  // namespace cove::net
