// Placement: which server of a group holds what, computed the same way by
// every client and server, whatever compiler or standard library built it.
//
// The hash is 64-bit FNV-1a over the name's bytes (offset basis
// 0xcbf29ce484222325, prime 0x100000001b3): fixed and documented, unlike
// std::hash, so that a client and a server built differently never disagree
// about where a variable or a metadata name lives.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace cove::common {

constexpr std::uint64_t fnv1a_64(std::string_view bytes) noexcept {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const char c : bytes) {
    h ^= static_cast<std::uint8_t>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

// The server (0..servers-1) that holds everything of `name` that is not
// split by a shard map: metadata blobs, and variables without a global shape.
constexpr int home_server(std::string_view name, int servers) noexcept {
  return servers <= 1 ? 0 : static_cast<int>(fnv1a_64(name) % static_cast<std::uint64_t>(servers));
}

}  // namespace cove::common
