// Roles for the multi-host fault test (tests/integration/hosts.sh), whose
// "hosts" are network namespaces joined by veth links that the test takes
// down and up. Each role prints what it saw, one line per event, and exits
// 0 when it saw nothing wrong.
//   cove-test-hosts put-loop FILE   puts versions 1, 2, ... of a 64 MiB variable until FILE exists, one line
//                                   per put ("put V ok|failed in MS ms"); then every version still held reads
//                                   back exactly and every failed one is either absent or exact
//   cove-test-hosts wait-get MS     waits MS ms for a version that never comes: a clear error (Timeout or
//                                   Unavailable) no later than MS plus the grace, never a hang
//   cove-test-hosts check           the newest version of the variable reads back exactly
// The servers come from COVE_CONNECT.
#include <cove/cove.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace {

using cove::Box;
using cove::Index;
using Clock = std::chrono::steady_clock;

constexpr Index kElements = Index{8} << 20;  // 64 MiB of doubles
const Box kAll = Box::from_shape(std::vector<Index>{kElements});

double value(std::uint64_t version, Index i) { return static_cast<double>(version) * 1e8 + static_cast<double>(i); }

std::vector<double> values(std::uint64_t version) {
  std::vector<double> v(kElements);
  for (Index i = 0; i < kElements; ++i) v[static_cast<std::size_t>(i)] = value(version, i);
  return v;
}

bool exact(std::uint64_t version, const std::vector<double>& got) {
  for (Index i = 0; i < kElements; ++i)
    if (got[static_cast<std::size_t>(i)] != value(version, i)) return false;
  return true;
}

long long ms_since(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
}

void define(cove::Client& c) {
  c.define("stream", cove::DType(cove::DTypeKind::Float64), 1, std::vector<Index>{kElements});
}

// Reads `version` back: true when it is exact (or, with `absent_ok`, absent).
bool reads_back(cove::Client& c, std::uint64_t version, bool absent_ok) {
  std::vector<double> got(kElements);
  try {
    c.get("stream", version, kAll, got.data(), got.size() * 8, 0);
  } catch (const cove::Error& e) {
    if (absent_ok && e.code() == cove::Code::NotFound) return true;
    std::printf("version %llu: %s\n", static_cast<unsigned long long>(version), e.what());
    return false;
  }
  if (exact(version, got)) return true;
  std::printf("WRONG BYTES in version %llu\n", static_cast<unsigned long long>(version));
  return false;
}

int put_loop(cove::Client& c, const std::string& stop) {
  define(c);
  std::set<std::uint64_t> held, failed;
  for (std::uint64_t v = 1; !std::filesystem::exists(stop); ++v) {
    const auto data = values(v);
    const auto t = Clock::now();
    try {
      c.put("stream", v, kAll, data.data(), data.size() * 8);
      std::printf("put %llu ok in %lld ms\n", static_cast<unsigned long long>(v), ms_since(t));
      held.insert(v);
    } catch (const cove::Error& e) {
      std::printf("put %llu failed in %lld ms: %s\n", static_cast<unsigned long long>(v), ms_since(t), e.what());
      failed.insert(v);
    }
    if (v > 2 && held.count(v - 2)) {  // two versions held at most
      held.erase(v - 2);
      try {
        c.remove("stream", v - 2);
      } catch (const cove::Error& e) {
        // Applied by some servers perhaps (the holder) before another
        // failed: like a failed put, exact or absent.
        std::printf("remove %llu failed: %s\n", static_cast<unsigned long long>(v - 2), e.what());
        failed.insert(v - 2);
      }
    }
    std::fflush(stdout);
  }
  int wrong = 0;
  for (auto v : held) wrong += !reads_back(c, v, false);
  // A put that failed on the writer's side may still have landed (the link
  // went down after the server stored it): exact or absent, nothing between.
  for (auto v : failed) wrong += !reads_back(c, v, true);
  std::printf("%zu versions held read back exactly, %zu failed puts absent or exact, %d wrong\n", held.size(),
              failed.size(), wrong);
  return wrong == 0 ? 0 : 1;
}

int wait_get(cove::Client& c, std::int64_t timeout_ms) {
  define(c);
  std::vector<double> got(kElements);
  std::printf("waiting\n");
  std::fflush(stdout);
  const auto t = Clock::now();
  try {
    c.get("stream", 1u << 30, kAll, got.data(), got.size() * 8, timeout_ms);
  } catch (const cove::Error& e) {
    const long long took = ms_since(t);
    const bool clear = e.code() == cove::Code::Timeout || e.code() == cove::Code::Unavailable;
    const bool in_time = took <= timeout_ms + 2000 + 3000;  // the caller's timeout, the grace, slack
    std::printf("get failed in %lld ms (%s, %s): %s\n", took, clear ? "clear" : "UNCLEAR",
                in_time ? "in time" : "TOO LATE", e.what());
    return clear && in_time ? 0 : 1;
  }
  std::printf("a version that was never put was read\n");
  return 1;
}

int check(cove::Client& c) {
  define(c);
  std::vector<double> got(kElements);
  const auto v = c.get_latest("stream", kAll, got.data(), got.size() * 8, 0);
  if (!exact(v, got)) {
    std::printf("WRONG BYTES in version %llu\n", static_cast<unsigned long long>(v));
    return 1;
  }
  std::printf("version %llu read back exactly\n", static_cast<unsigned long long>(v));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string role = argc >= 2 ? argv[1] : "";
  try {
    if (role == "put-loop" && argc == 3) {
      auto c = cove::Client::connect();
      return put_loop(c, argv[2]);
    }
    if (role == "wait-get" && argc == 3) {
      auto c = cove::Client::connect();
      return wait_get(c, std::stoll(argv[2]));
    }
    if (role == "check" && argc == 2) {
      auto c = cove::Client::connect();
      return check(c);
    }
  } catch (const cove::Error& e) {
    std::printf("%s: %s\n", role.c_str(), e.what());
    return 1;
  }
  std::fprintf(stderr, "usage: %s put-loop FILE | wait-get MS | check\n", argv[0]);
  return 2;
}
