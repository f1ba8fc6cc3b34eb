// Internal: the server's TOML configuration, and the parsers of values that
// configuration files, command lines and the environment share.
//
// Configuration (every key optional; unknown keys are errors):
//   [server]
//   transport       = "tcp"        # "tcp" (this host by Unix-domain sockets, others by TCP; the
//                                  # default), "ucx" (others by UCX), "local" (this host only),
//                                  # or "inproc://NAME" (same process only)
//   listen          = "ib0"        # where TCP or UCX listens: an interface or an IP address; default loopback only
//   max_message_bytes = "2MiB"     # the largest request accepted (default: 1 MiB of metadata and its fields)
//   connection_file = "cove.conn"  # written by rank 0, mode 0600, atomically
//   memory_budget   = "8GiB"       # bytes (integer) or "N[KMGT]iB"; 0: no limit
//   max_versions    = 0            # versions kept per variable; 0: all
//   pool_reserve    = "1GiB"       # piece memory made and faulted in ahead of use; 0: none
//   replicas        = 1            # copies of each piece in a group: 1, or 2 (survives one member's death)
//   workers         = 2            # request-handling threads per server
//   log_level       = "info"       # "error", "warn", "info" or "debug"
//   log_file        = "cove.log"   # where the log goes (appended); default stderr
#pragma once

#include <cove/server.hpp>

#include <string>
#include <vector>

namespace cove::common {

struct ServerConfig {
  ServerOptions options;
  std::string connection_file = "cove.conn";
  std::string log_level = "info";
  std::string log_file;  // "" for stderr
};

// Reads and validates a configuration file; errors name the file, key and value.
ServerConfig load_server_config(const std::string& path);
// The accepted ranges of the sizes a server is given.
inline constexpr std::uint64_t kMaxMemoryBudget = std::uint64_t{1} << 50;  // 1 PiB (0: no limit)
inline constexpr std::uint64_t kMinMessageBytes = 1024;
inline constexpr std::uint64_t kMaxMessageBytes = std::uint64_t{1} << 30;  // 1 GiB

// "8GiB", "512MiB", "1024" -> bytes, in min..max; InvalidArgument naming
// `what`, the value and the accepted range otherwise (a sign, a fraction or
// an unknown unit included).
std::uint64_t parse_bytes(const std::string& text, const std::string& what, std::uint64_t min, std::uint64_t max);
// A memory budget: 0 (no limit) up to kMaxMemoryBudget.
std::uint64_t parse_memory_budget(const std::string& text, const std::string& what);
// The largest request a server accepts: kMinMessageBytes..kMaxMessageBytes.
std::size_t parse_message_bytes(const std::string& text, const std::string& what);
// InvalidArgument naming `what` unless `n` is in min..max.
void check_range(std::uint64_t n, const std::string& what, std::uint64_t min, std::uint64_t max);
// An on/off switch from the environment: unset, empty or "1" is on, "0"
// off; anything else is InvalidArgument naming the variable.
bool env_switch(const char* name);
// A list of layout names separated by commas ("F,P2,0,1": the digits after
// a permutation continue it). InvalidArgument naming the bad one.
std::vector<Layout> parse_layouts(const std::string& text, const std::string& what);

}  // namespace cove::common
