#include "common/config.hpp"

#include "common/log.hpp"
#include "core/fail.hpp"

#include <toml++/toml.h>

#include <filesystem>

#include <cerrno>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace cove::common {

using detail::fail;

void check_range(std::uint64_t n, const std::string& what, std::uint64_t min, std::uint64_t max) {
  if (n < min || n > max)
    fail(Code::InvalidArgument, what, " = ", n, " is out of range: accepted are ", min, "..", max, " bytes");
}

std::uint64_t parse_bytes(const std::string& text, const std::string& what, std::uint64_t min, std::uint64_t max) {
  const auto range = [&] { return std::to_string(min) + ".." + std::to_string(max) + " bytes"; };
  // Digits first: strtoull would take "-5" as 2^64 - 5, and " 5" too.
  if (text.empty() || text[0] < '0' || text[0] > '9')
    fail(Code::InvalidArgument, what, " = '", text, "' is not a size: expected digits and a unit (e.g. 1073741824, ",
         "\"512MiB\", \"8GiB\"), in ", range());
  std::size_t pos = 0;
  unsigned long long n = 0;
  try {
    n = std::stoull(text, &pos);
  } catch (...) {
    fail(Code::InvalidArgument, what, " = '", text, "' is out of range: accepted are ", range());
  }
  const std::string unit = text.substr(pos);
  std::uint64_t scale = 1;
  if (unit.empty() || unit == "B")
    scale = 1;
  else if (unit == "KiB")
    scale = 1ull << 10;
  else if (unit == "MiB")
    scale = 1ull << 20;
  else if (unit == "GiB")
    scale = 1ull << 30;
  else if (unit == "TiB")
    scale = 1ull << 40;
  else
    fail(Code::InvalidArgument, what, " = '", text, "' has unit '", unit, "'; use B, KiB, MiB, GiB or TiB");
  std::uint64_t bytes;
  if (__builtin_mul_overflow(static_cast<std::uint64_t>(n), scale, &bytes) || bytes < min || bytes > max)
    fail(Code::InvalidArgument, what, " = '", text, "' is out of range: accepted are ", range());
  return bytes;
}

std::uint64_t parse_memory_budget(const std::string& text, const std::string& what) {
  return parse_bytes(text, what, 0, kMaxMemoryBudget);
}

std::size_t parse_message_bytes(const std::string& text, const std::string& what) {
  return static_cast<std::size_t>(parse_bytes(text, what, kMinMessageBytes, kMaxMessageBytes));
}

bool env_switch(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v || std::strcmp(v, "1") == 0) return true;
  if (std::strcmp(v, "0") == 0) return false;
  fail(Code::InvalidArgument, name, " = '", v, "'; expected 0 or 1");
}

std::vector<Layout> parse_layouts(const std::string& text, const std::string& what) {
  std::vector<std::string> names;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string token = text.substr(at, comma - at);
    const bool continues = !names.empty() && names.back().rfind('P', 0) == 0 && !token.empty() &&
                           token.find_first_not_of("0123456789") == std::string::npos;
    if (continues)
      names.back() += "," + token;  // the next axis of a permutation
    else
      names.push_back(token);
    at = comma + 1;
  }
  std::vector<Layout> out;
  for (const auto& n : names) {
    if (n.empty()) fail(Code::InvalidArgument, what, " = '", text, "' has an empty layout name");
    try {
      out.push_back(Layout::parse(n));
    } catch (const Error& e) {
      fail(Code::InvalidArgument, what, ": ", detail::message_of(e));
    }
  }
  return out;
}

namespace {

// A size in a configuration file: an integer of bytes or a string with a unit.
std::uint64_t size_value(const toml::node& v, const std::string& what, std::uint64_t min, std::uint64_t max) {
  if (auto i = v.value_exact<std::int64_t>()) {
    if (*i < 0) fail(Code::InvalidArgument, what, " = ", *i, " is out of range: accepted are ", min, "..", max, " bytes");
    check_range(static_cast<std::uint64_t>(*i), what, min, max);
    return static_cast<std::uint64_t>(*i);
  }
  if (auto t = v.value_exact<std::string>()) return parse_bytes(*t, what, min, max);
  fail(Code::InvalidArgument, what, " must be an integer of bytes or a string such as \"8GiB\", in ", min, "..", max,
       " bytes");
}

}  // namespace

ServerConfig load_server_config(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    fail(Code::InvalidArgument, "configuration ", path, " is not a regular file",
         std::filesystem::exists(path, ec) ? "" : " (it does not exist)");
  toml::table doc;
  try {
    doc = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    std::ostringstream where;
    where << e.source().begin;
    fail(Code::InvalidArgument, "configuration ", path, ": ", e.description(), " at ", where.str());
  }
  ServerConfig c;
  for (const auto& [section, node] : doc)
    if (section.str() != "server")
      fail(Code::InvalidArgument, "configuration ", path, ": unknown section or key '", section.str(), "'");
  const toml::table* server = doc["server"].as_table();
  if (!server) return c;
  auto key = [&](const char* k) { return std::string("configuration ") + path + ": server." + k; };
  for (const auto& [k, v] : *server) {
    const std::string name(k.str());
    if (name == "transport") {
      auto s = v.value<std::string>();
      if (!s) fail(Code::InvalidArgument, key("transport"), " must be a string");
      if (*s != "ucx" && *s != "tcp" && *s != "local" && s->rfind("inproc://", 0) != 0)
        fail(Code::InvalidArgument, key("transport"), " = '", *s, "'; expected \"tcp\", \"ucx\", \"local\" or \"inproc://NAME\"");
      c.options.transport = *s;
    } else if (name == "listen") {
      auto s = v.value<std::string>();
      if (!s) fail(Code::InvalidArgument, key("listen"), " must be a string (an interface name or an IP address)");
      c.options.listen = *s;
    } else if (name == "log_file") {
      auto s = v.value<std::string>();
      if (!s) fail(Code::InvalidArgument, key("log_file"), " must be a string (a file name)");
      c.log_file = *s;
    } else if (name == "max_message_bytes") {
      c.options.max_message_bytes = static_cast<std::size_t>(
          size_value(v, key("max_message_bytes"), kMinMessageBytes, kMaxMessageBytes));
    } else if (name == "connection_file") {
      auto s = v.value<std::string>();
      if (!s || s->empty()) fail(Code::InvalidArgument, key("connection_file"), " must be a non-empty string");
      c.connection_file = *s;
    } else if (name == "memory_budget") {
      c.options.memory_budget = size_value(v, key("memory_budget"), 0, kMaxMemoryBudget);
    } else if (name == "pool_reserve") {
      c.options.pool_reserve = size_value(v, key("pool_reserve"), 0, kMaxMemoryBudget);
    } else if (name == "max_versions") {
      auto i = v.value<std::int64_t>();
      if (!i || *i < 0 || *i > 1'000'000)
        fail(Code::InvalidArgument, key("max_versions"), " must be an integer in 0..1000000");
      c.options.max_versions = static_cast<int>(*i);
    } else if (name == "replicas") {
      auto i = v.value<std::int64_t>();
      if (!i || *i < 1 || *i > 2)
        fail(Code::InvalidArgument, key("replicas"), " must be 1 or 2 (copies of each piece in a group)");
      c.options.replicas = static_cast<int>(*i);
    } else if (name == "workers") {
      auto i = v.value<std::int64_t>();
      if (!i || *i < 1 || *i > 256) fail(Code::InvalidArgument, key("workers"), " must be an integer in 1..256");
      c.options.workers = static_cast<int>(*i);
    } else if (name == "reorg") {
      auto s = v.value<std::string>();
      if (!s) fail(Code::InvalidArgument, key("reorg"), " must be a string (rad, rasar, rasia or sahr)");
      try {
        c.options.reorg = parse_reorg(*s);
      } catch (const Error& e) {
        fail(Code::InvalidArgument, key("reorg"), ": ", detail::message_of(e));
      }
    } else if (name == "layouts") {
      const toml::array* a = v.as_array();
      if (!a) fail(Code::InvalidArgument, key("layouts"), " must be an array of layout names, e.g. [\"F\", \"P2,0,1\"]");
      c.options.layouts.clear();
      for (const auto& e : *a) {
        auto s = e.value<std::string>();
        if (!s) fail(Code::InvalidArgument, key("layouts"), " must hold strings");
        try {
          c.options.layouts.push_back(Layout::parse(*s));
        } catch (const Error& err) {
          fail(Code::InvalidArgument, key("layouts"), ": ", detail::message_of(err));
        }
      }
    } else if (name == "reorg_threads") {
      auto i = v.value<std::int64_t>();
      if (!i || *i < 1 || *i > 64) fail(Code::InvalidArgument, key("reorg_threads"), " must be an integer in 1..64");
      c.options.reorg_threads = static_cast<int>(*i);
    } else if (name == "placement") {
      auto s = v.value<std::string>();
      if (!s) fail(Code::InvalidArgument, key("placement"), " must be a string: a policy name");
      c.options.placement = *s;  // the name is checked by the server (ServerOptions.placement)
    } else if (name == "placement_variables") {
      const toml::table* t = v.as_table();
      if (!t) fail(Code::InvalidArgument, key("placement_variables"), " must be a table: variable = \"policy\"");
      for (const auto& [var, policy] : *t) {
        auto s = policy.value<std::string>();
        if (!s) fail(Code::InvalidArgument, key("placement_variables"), ".", var.str(), " must be a string: a policy name");
        c.options.placement_variables[std::string(var.str())] = *s;
      }
    } else if (name == "placement_window_ms") {
      auto i = v.value<std::int64_t>();
      if (!i || *i < 0 || *i > 1000)
        fail(Code::InvalidArgument, key("placement_window_ms"), " must be an integer in 0..1000 (ms)");
      c.options.placement_window_ms = static_cast<int>(*i);
    } else if (name == "worker_slots") {
      auto i = v.value<std::int64_t>();
      if (!i || *i < 0 || *i > 4096) fail(Code::InvalidArgument, key("worker_slots"), " must be an integer in 0..4096");
      c.options.worker_slots = static_cast<int>(*i);
    } else if (name == "log_level") {
      auto s = v.value<std::string>();
      if (!s) fail(Code::InvalidArgument, key("log_level"), " must be a string");
      log::parse_level(*s, key("log_level"));  // InvalidArgument naming the key and value
      c.log_level = *s;
    } else {
      fail(Code::InvalidArgument, "configuration ", path, ": unknown key server.", name);
    }
  }
  return c;
}

}  // namespace cove::common
