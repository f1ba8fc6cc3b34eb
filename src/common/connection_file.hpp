// Internal: the connection file a server group writes and clients read.
//
// Format (TOML): version = 1, servers = ["ADDRESS", ...], one address per
// server in group order. The file is written by rank 0 of the group,
// mode 0600, atomically (a fresh temporary file created with O_EXCL and
// O_NOFOLLOW in the same folder, then renamed over the path), and removed
// when the group stops.
//
// Errors: Unavailable when the file cannot be written, or does not appear
// within the timeout; Protocol when it is malformed, names no server, or
// holds an address that is not printable text of at most kMaxAddressBytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cove::common {

inline constexpr std::size_t kMaxAddressBytes = 1024;

void write_connection_file(const std::string& path, const std::vector<std::string>& servers);
// Reads a connection file, waiting up to timeout_ms for it to appear.
std::vector<std::string> read_connection_file(const std::string& path, std::int64_t timeout_ms);

}  // namespace cove::common
