#include "common/connection_file.hpp"

#include "core/fail.hpp"

#include <toml++/toml.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <sstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace cove::common {

using detail::fail;

namespace {

// Writes the file's text to a temporary file nobody can plant in advance
// (a fresh random name, opened only if it does not exist and is not a
// link), then puts it at the path: link() when nothing may be there
// (atomic, and fails if something is), rename() to replace.
void write_file(const std::string& path, const ConnectionInfo& info, bool exclusive) {
  toml::array list;
  for (const auto& s : info.servers) list.push_back(s);
  toml::table doc{{"version", 1}, {"servers", list}, {"secret", info.secret}};
  std::ostringstream text;
  text << "# Cove connection file: clients find the staging servers here, and the secret\n"
          "# that admits them. Keep it private (mode 0600): whoever reads it can read,\n"
          "# overwrite and delete everything the servers hold.\n"
       << doc << "\n";
  std::random_device rd;
  const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(rd());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) fail(Code::Unavailable, "cannot write connection file ", tmp, ": ", std::strerror(errno));
  const std::string s = text.str();
  const bool ok = ::write(fd, s.data(), s.size()) == static_cast<ssize_t>(s.size()) && ::fsync(fd) == 0;
  ::close(fd);
  const int placed = !ok ? -1 : exclusive ? ::link(tmp.c_str(), path.c_str()) : ::rename(tmp.c_str(), path.c_str());
  const int e = errno;
  ::unlink(tmp.c_str());  // after link(), the temporary name; after a failure, the file
  if (placed == 0) return;
  if (ok && exclusive && e == EEXIST)
    fail(Code::AlreadyExists, "connection file ", path, " already exists");
  fail(Code::Unavailable, "cannot write connection file ", path, ": ", std::strerror(e));
}

void check_text(const std::string& path, const char* what, const std::string& a, std::size_t min, std::size_t max) {
  if (a.size() < min || a.size() > max)
    fail(Code::Protocol, "connection file ", path, " holds ", what, " of ", a.size(), " bytes (", min, "..", max,
         " expected)");
  for (const char c : a)
    if (c < 0x21 || c > 0x7e) fail(Code::Protocol, "connection file ", path, " holds ", what, " with a non-printable character");
}

// The file's text, once it is there. Opened without blocking (a FIFO must
// not hang the caller) and read only if it is a regular file.
std::string read_text(const std::string& path, std::int64_t timeout_ms) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max<std::int64_t>(0, timeout_ms));
  int fd = -1;
  for (;;) {
    fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd >= 0) break;
    const int e = errno;
    if (e == EACCES)
      fail(Code::PermissionDenied, "cannot read connection file ", path,
           ": permission denied (it is private to the user who ran the servers)");
    if (e != ENOENT) fail(Code::Unavailable, "cannot read connection file ", path, ": ", std::strerror(e));
    if (std::chrono::steady_clock::now() >= deadline)
      fail(Code::Unavailable, "no connection file at ", path, " after ", timeout_ms,
           " ms: is a Cove server running with this connection_file?");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail(Code::InvalidArgument, "connection file ", path, " is not a regular file");
  }
  if (static_cast<std::uint64_t>(st.st_size) > kMaxConnectionFileBytes) {
    ::close(fd);
    fail(Code::Protocol, "connection file ", path, " has ", st.st_size, " bytes; at most ", kMaxConnectionFileBytes,
         " are expected");
  }
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  text.resize(got);
  return text;
}

}  // namespace

void create_connection_file(const std::string& path, const ConnectionInfo& info) { write_file(path, info, true); }
void replace_connection_file(const std::string& path, const ConnectionInfo& info) { write_file(path, info, false); }

ConnectionInfo read_connection_file(const std::string& path, std::int64_t timeout_ms) {
  const std::string text = read_text(path, timeout_ms);
  toml::table doc;
  try {
    doc = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    fail(Code::Protocol, "connection file ", path, " is malformed: ", e.description());
  }
  if (doc["version"].value_or<std::int64_t>(0) != 1)
    fail(Code::Protocol, "connection file ", path, " has an unsupported version");
  ConnectionInfo info;
  if (const toml::array* a = doc["servers"].as_array())
    for (const auto& s : *a) {
      auto v = s.value<std::string>();
      if (!v) fail(Code::Protocol, "connection file ", path, ": servers must hold strings");
      check_text(path, "an address", *v, 1, kMaxAddressBytes);
      info.servers.push_back(*v);
    }
  if (info.servers.empty()) fail(Code::Protocol, "connection file ", path, " lists no servers");
  if (auto secret = doc["secret"].value<std::string>()) {
    check_text(path, "a secret", *secret, 16, kMaxSecretBytes);
    info.secret = *secret;
  }
  return info;
}

}  // namespace cove::common
