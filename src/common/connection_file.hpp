// Internal: the connection file a server group writes and clients read.
//
// Format (TOML): version = 1, servers = ["ADDRESS", ...] (one address per
// server, in group order), secret = "..." (the group's secret, which a
// client proves it holds; docs/security.md). The file is written by rank 0
// of the group, mode 0600, atomically (a fresh temporary file created with
// O_EXCL and O_NOFOLLOW in the same folder, then linked or renamed to the
// path), and removed when the group stops.
//
// Errors: Unavailable when the file cannot be written, or does not appear
// within the timeout; AlreadyExists when create_connection_file finds a file
// there; PermissionDenied when it exists but this user may not read it;
// InvalidArgument when the path is not a regular file (a FIFO, a device, a
// directory); Protocol when it is malformed, names no server, or holds an
// address or secret that is not printable text of the allowed length.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cove::common {

inline constexpr std::size_t kMaxAddressBytes = 1024;
inline constexpr std::size_t kMaxSecretBytes = 1024;
inline constexpr std::size_t kMaxConnectionFileBytes = 1 << 20;

struct ConnectionInfo {
  std::vector<std::string> servers;
  std::string secret;  // empty in a file written before clients proved it
};

// Creates the file; AlreadyExists if something is at the path already
// (another group's file, live or stale: the caller decides).
void create_connection_file(const std::string& path, const ConnectionInfo& info);
// Writes the file, replacing whatever file was at the path.
void replace_connection_file(const std::string& path, const ConnectionInfo& info);
// Reads a connection file, waiting up to timeout_ms for it to appear.
ConnectionInfo read_connection_file(const std::string& path, std::int64_t timeout_ms);

}  // namespace cove::common
