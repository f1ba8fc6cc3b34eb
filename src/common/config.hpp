// Internal: the server's TOML configuration, and the parsers of values that
// configuration files, command lines and the environment share.
//
// Configuration (every key optional; unknown keys are errors):
//   [server]
//   transport       = "ucx"        # "ucx" (this host by Unix-domain sockets, others by UCX),
//                                  # "local" (this host only), or "inproc://NAME" (same process only)
//   listen          = "ib0"        # where UCX listens: an interface or an IP address; default loopback only
//   max_message_bytes = "2MiB"     # the largest request accepted (default: 1 MiB of metadata and its fields)
//   connection_file = "cove.conn"  # written by rank 0, mode 0600, atomically
//   memory_budget   = "8GiB"       # bytes (integer) or "N[KMGT]iB"; 0: no limit
//   max_versions    = 0            # versions kept per variable; 0: all
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
// "8GiB", "512MiB", "1024" -> bytes; InvalidArgument naming `what` otherwise.
std::uint64_t parse_bytes(const std::string& text, const std::string& what);
// parse_bytes, for the largest request a server accepts: at least 1024.
std::size_t parse_message_bytes(const std::string& text, const std::string& what);
// An on/off switch from the environment: unset, empty or "1" is on, "0"
// off; anything else is InvalidArgument naming the variable.
bool env_switch(const char* name);
// A list of layout names separated by commas ("F,P2,0,1": the digits after
// a permutation continue it). InvalidArgument naming the bad one.
std::vector<Layout> parse_layouts(const std::string& text, const std::string& what);

}  // namespace cove::common
