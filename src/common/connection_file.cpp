#include "common/connection_file.hpp"

#include "core/fail.hpp"

#include <toml++/toml.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace cove::common {

using detail::fail;

void write_connection_file(const std::string& path, const std::vector<std::string>& servers) {
  toml::array list;
  for (const auto& s : servers) list.push_back(s);
  toml::table doc{{"version", 1}, {"servers", list}};
  std::ostringstream text;
  text << "# Cove connection file: clients find the staging servers here.\n" << doc << "\n";
  // A name nobody can plant in advance, opened only if it does not exist
  // and is not a link: a symlink waiting there is never followed.
  std::random_device rd;
  const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(rd());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) fail(Code::Unavailable, "cannot write connection file ", tmp, ": ", std::strerror(errno));
  const std::string s = text.str();
  const bool ok = ::write(fd, s.data(), s.size()) == static_cast<ssize_t>(s.size()) && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    fail(Code::Unavailable, "cannot write connection file ", path, ": ", std::strerror(e));
  }
}

namespace {

void check_address(const std::string& path, const std::string& a) {
  if (a.empty() || a.size() > kMaxAddressBytes)
    fail(Code::Protocol, "connection file ", path, " holds an address of ", a.size(), " bytes (1..", kMaxAddressBytes,
         " expected)");
  for (const char c : a)
    if (c < 0x21 || c > 0x7e)
      fail(Code::Protocol, "connection file ", path, " holds an address with a non-printable character");
}

}  // namespace

std::vector<std::string> read_connection_file(const std::string& path, std::int64_t timeout_ms) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max<std::int64_t>(0, timeout_ms));
  while (::access(path.c_str(), R_OK) != 0) {
    if (std::chrono::steady_clock::now() >= deadline)
      fail(Code::Unavailable, "no connection file at ", path, " after ", timeout_ms,
           " ms: is a Cove server running with this connection_file?");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  toml::table doc;
  try {
    doc = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    fail(Code::Protocol, "connection file ", path, " is malformed: ", e.description());
  }
  if (doc["version"].value_or<std::int64_t>(0) != 1)
    fail(Code::Protocol, "connection file ", path, " has an unsupported version");
  std::vector<std::string> servers;
  if (const toml::array* a = doc["servers"].as_array())
    for (const auto& s : *a) {
      auto v = s.value<std::string>();
      if (!v) fail(Code::Protocol, "connection file ", path, ": servers must hold strings");
      check_address(path, *v);
      servers.push_back(*v);
    }
  if (servers.empty()) fail(Code::Protocol, "connection file ", path, " lists no servers");
  return servers;
}

}  // namespace cove::common
