// Internal: the small pieces of cryptography Cove uses, through libsodium.
//
//   - random_bytes / random_hex: nonces, group secrets, names nobody can guess;
//   - prove / verify: HMAC-SHA-512-256 of a challenge under a secret, so that
//     a client or a server of a group proves it holds the group's secret
//     without sending it;
//   - the secrets of this process's own servers.
//
// Thread-safety: all functions may be called from any thread.
// Errors: Internal if libsodium cannot start (no entropy source).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cove::common {

std::vector<std::byte> random_bytes(std::size_t n);
// 2n lower-case hex digits of n random bytes.
std::string random_hex(std::size_t n);

// The proof that the holder of `secret` saw `challenge` (32 bytes).
std::vector<std::byte> prove(std::string_view secret, std::span<const std::byte> challenge);
// Whether `proof` is prove(secret, challenge), compared in constant time.
bool verify(std::string_view secret, std::span<const std::byte> challenge, std::span<const std::byte> proof);

// The secrets of the servers running in this process, by address. A client
// in the same process, which could read the server's memory anyway, proves
// them without being told (an embedded server, a notebook, a unit test).
void remember_local_secret(const std::string& address, const std::string& secret);
void forget_local_secret(const std::string& address);
// Empty when no server of this process has that address.
std::string local_secret(const std::string& address);

}  // namespace cove::common
