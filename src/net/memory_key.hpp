// Internal: the memory key every transport puts in messages to describe
// memory it exposes for one-sided reads.
//
//   KeyHeader (40 bytes) | transport-specific bytes (a packed UCX rkey, or none)
//
// The header says where the bytes are in the exposing process (address,
// length), which of its regions they belong to (region id, for reads the
// exposer serves itself), which process claims them (pid), and the
// region's token: 64 random bits the exposer drew for it. A reader never
// believes the pid: the local transport reads only from the process the
// kernel bound to the connection, and refuses a key whose pid differs; the
// exposer checks region, token, offset and length against its own table.
// Over TCP, where the kernel names no process, the token is what makes a
// key a capability: region ids are small counters, but a key nobody was
// given cannot be guessed.
#pragma once

#include "common/auth.hpp"
#include "core/fail.hpp"
#include "net/wire.hpp"

#include <cstdint>
#include <cstring>
#include <span>

namespace cove::net {

struct KeyHeader {
  std::uint64_t address = 0;
  std::uint64_t length = 0;
  std::uint64_t region = 0;
  std::uint64_t pid = 0;
  std::uint64_t token = 0;
};
static_assert(sizeof(KeyHeader) == 40);

inline KeyHeader read_key_header(std::span<const std::byte> key) {
  KeyHeader h;
  if (key.size() < sizeof h)
    detail::fail(Code::InvalidArgument, "memory key of ", key.size(), " bytes is malformed (at least ", sizeof h,
                 " expected)");
  std::memcpy(&h, key.data(), sizeof h);
  // No process has more than 2^57 bytes of address space (5-level paging).
  constexpr std::uint64_t kAddressSpace = std::uint64_t{1} << 57;
  if (h.length > kAddressSpace || h.address > kAddressSpace - h.length)
    detail::fail(Code::InvalidArgument, "memory key [0x", std::hex, h.address, ", +0x", h.length, std::dec,
                 ") does not describe memory of a process");
  return h;
}

// A region's token: 64 random bits (libsodium), drawn once per region.
inline std::uint64_t random_token() {
  const auto b = common::random_bytes(sizeof(std::uint64_t));
  std::uint64_t t = 0;
  std::memcpy(&t, b.data(), sizeof t);
  return t;
}

inline Bytes make_key(const KeyHeader& h, std::span<const std::byte> extra = {}) {
  Bytes k(sizeof h + extra.size());
  std::memcpy(k.data(), &h, sizeof h);
  if (!extra.empty()) std::memcpy(k.data() + sizeof h, extra.data(), extra.size());
  return k;
}

// InvalidArgument unless every op lies inside [0, length) of the key.
template <typename Ops>
void check_ops(const KeyHeader& h, const Ops& ops) {
  for (const auto& op : ops)
    if (op.offset > h.length || op.bytes > h.length - op.offset)
      detail::fail(Code::InvalidArgument, "remote access [", op.offset, ", +", op.bytes, ") is outside the ", h.length,
                   "-byte region its key describes");
}

}  // namespace cove::net
