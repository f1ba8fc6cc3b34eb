// Placement by server 0 through a real group (docs/placement.md, "Placement
// in the servers" and "Decision log"); placed.sh runs it.
//   cove-test-placed decisions   puts placed by `time` (var "tm", 6 blocks), by
//                                `rr-blocking` (var "rr", 4 blocks) and one
//                                unplaced variable ("off", 2 blocks); checks that
//                                Client::placements lists the 10 placed ones with
//                                their variable, box, policy and server, that max
//                                limits the count, and that every block reads back
//   cove-test-placed window      8 blocks of "win" whose reported task times
//                                (TaskDone) grow with the block; 8 clients send
//                                their put_placed 30 ms apart, shortest task
//                                first, all within server 0's placement window:
//                                the decisions of one window (equal DAT) must
//                                come longest EET first; every block reads back
//   cove-test-placed writer VAR FILE
//                                put_placed of versions 1, 2, ... of VAR (8 blocks
//                                of 4 KiB) until FILE exists: "acked V" when
//                                every block's put_placed returned, "failed V:
//                                why" otherwise
//   cove-test-placed check VAR OUT
//                                every version OUT says was acked reads back exactly
// The group comes from COVE_CONNECT.
#include <cove/cove.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace {

using cove::Box;
using cove::Index;
using V = std::vector<Index>;

constexpr Index kBlock = 512;  // doubles: 4 KiB

double value(std::uint64_t version, Index i) { return static_cast<double>(version) * 1e6 + static_cast<double>(i); }

Box block(Index b) { return Box::from_start_count(V{b * kBlock}, V{kBlock}); }

std::vector<double> data_of(std::uint64_t version, Index b) {
  std::vector<double> d(kBlock);
  for (Index i = 0; i < kBlock; ++i) d[static_cast<std::size_t>(i)] = value(version, b * kBlock + i);
  return d;
}

void define(cove::Client& c, const std::string& var, Index blocks) {
  c.define(var, cove::DType(cove::DTypeKind::Float64), 1, V{blocks * kBlock});
}

// Reads the whole variable back; the number of wrong or missing elements.
int read_back(cove::Client& c, const std::string& var, std::uint64_t version, Index blocks) {
  std::vector<double> got(static_cast<std::size_t>(blocks * kBlock));
  try {
    c.get(var, version, Box::from_shape(V{blocks * kBlock}), got.data(), got.size() * 8, 5000);
  } catch (const cove::Error& e) {
    std::printf("FAIL: %s version %llu: %s\n", var.c_str(), static_cast<unsigned long long>(version), e.what());
    return 1;
  }
  for (Index i = 0; i < blocks * kBlock; ++i)
    if (got[static_cast<std::size_t>(i)] != value(version, i)) {
      std::printf("FAIL: %s version %llu: wrong bytes from element %lld on\n", var.c_str(),
                  static_cast<unsigned long long>(version), static_cast<long long>(i));
      return 1;
    }
  return 0;
}

int fail(const std::string& why) {
  std::printf("FAIL: %s\n", why.c_str());
  return 1;
}

int decisions(cove::Client& c) {
  const std::map<std::string, Index> blocks{{"tm", 6}, {"rr", 4}, {"off", 2}};
  for (const auto& [var, n] : blocks) {
    define(c, var, n);
    for (Index b = 0; b < n; ++b) {
      const auto d = data_of(1, b);
      c.put_placed(var, 1, block(b), d.data(), d.size() * 8);
    }
  }
  const std::vector<cove::PlacementDecision> all = c.placements(1024);
  if (all.size() != 10) return fail("expected 10 decisions (tm 6, rr 4, off none), got " + std::to_string(all.size()));
  std::map<std::string, int> seen;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const auto& d = all[i];
    std::printf("%s\n", (d.var + " " + d.box.to_string() + " " + d.policy + " server " + std::to_string(d.server) +
                         " slot " + std::to_string(d.slot) + " seq " + std::to_string(d.sequence))
                            .c_str());
    if (i > 0 && d.sequence != all[i - 1].sequence + 1) return fail("sequence numbers are not consecutive");
    const std::string want = d.var == "tm" ? "time" : d.var == "rr" ? "rr-blocking" : "(none)";
    if (d.policy != want || d.applied != want) return fail(d.var + " placed by " + d.policy + "/" + d.applied);
    if (d.server >= c.servers().size() || d.bytes != kBlock * 8) return fail("server or bytes wrong for " + d.var);
    const int b = seen[d.var]++;
    if (!(d.box == block(b))) return fail(d.var + ": decision " + std::to_string(b) + " is for " + d.box.to_string());
  }
  // Each `time` decision is for the slot with the least ECT.
  for (const auto& d : all)
    if (d.var == "tm" && d.ect != d.min_ect) return fail("a time decision is not the least ECT");
  const auto last3 = c.placements(3);
  if (last3.size() != 3 || last3.back().sequence != all.back().sequence || last3.front().sequence != all[7].sequence)
    return fail("placements(3) is not the newest 3");
  try {
    c.placements(0);
    return fail("placements(0) was accepted");
  } catch (const cove::Error& e) {
    if (e.code() != cove::Code::InvalidArgument) return fail(std::string("placements(0): ") + e.what());
  }
  int bad = 0;
  for (const auto& [var, n] : blocks) bad += read_back(c, var, 1, n);
  std::printf("decisions: %zu listed, %d variables not read back exactly\n", all.size(), bad);
  return bad;
}

int window(cove::Client& c) {
  constexpr Index kBlocks = 8;
  define(c, "win", kBlocks);
  for (Index b = 0; b < kBlocks; ++b) c.task_done("win", block(b), 0.01 * static_cast<double>(b + 1));
  std::vector<cove::Client> clients;
  for (Index b = 0; b < kBlocks; ++b) clients.push_back(cove::Client::connect());
  const auto start = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
  std::vector<std::thread> threads;
  std::vector<std::string> errors(kBlocks);
  for (Index b = 0; b < kBlocks; ++b)
    threads.emplace_back([&, b] {
      std::this_thread::sleep_until(start + std::chrono::milliseconds(30 * b));  // shortest task first
      try {
        const auto d = data_of(1, b);
        clients[static_cast<std::size_t>(b)].put_placed("win", 1, block(b), d.data(), d.size() * 8);
      } catch (const cove::Error& e) {
        errors[static_cast<std::size_t>(b)] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (const auto& e : errors)
    if (!e.empty()) return fail("put_placed: " + e);
  const auto all = c.placements(kBlocks);
  if (all.size() != kBlocks) return fail("expected 8 decisions, got " + std::to_string(all.size()));
  // One window: one DAT for all its requests.
  std::map<double, std::vector<cove::PlacementDecision>> windows;
  for (const auto& d : all) {
    std::printf("seq %llu %s eet %.3f dat %.6f server %u\n", static_cast<unsigned long long>(d.sequence),
                d.box.to_string().c_str(), d.eet, d.dat, d.server);
    windows[d.dat].push_back(d);
  }
  std::size_t largest = 0;
  for (const auto& [dat, ds] : windows) {
    largest = std::max(largest, ds.size());
    for (std::size_t i = 1; i < ds.size(); ++i)
      if (ds[i].eet > ds[i - 1].eet) return fail("a window's decisions are not longest EET first");
  }
  if (largest < 4) return fail("no window held 4 or more of the 8 requests");
  std::printf("window: %zu windows, the largest of %zu requests, longest EET first\n", windows.size(), largest);
  return read_back(c, "win", 1, kBlocks);
}

int writer(cove::Client& c, const std::string& var, const std::string& stop) {
  constexpr Index kBlocks = 8;
  define(c, var, kBlocks);
  for (std::uint64_t version = 1; !std::filesystem::exists(stop) && version < 100000; ++version) {
    try {
      for (Index b = 0; b < kBlocks; ++b) {
        const auto d = data_of(version, b);
        c.put_placed(var, version, block(b), d.data(), d.size() * 8);
      }
      std::printf("acked %llu\n", static_cast<unsigned long long>(version));
    } catch (const cove::Error& e) {
      std::printf("failed %llu: %s\n", static_cast<unsigned long long>(version), e.what());
    }
    std::fflush(stdout);
  }
  return 0;
}

int check(cove::Client& c, const std::string& var, const std::string& out) {
  std::FILE* f = std::fopen(out.c_str(), "r");
  if (!f) return fail("cannot read " + out);
  std::vector<std::uint64_t> acked;
  char line[512];
  while (std::fgets(line, sizeof line, f)) {
    unsigned long long v = 0;
    if (std::sscanf(line, "acked %llu", &v) == 1) acked.push_back(v);
  }
  std::fclose(f);
  int bad = 0;
  for (const std::uint64_t v : acked) bad += read_back(c, var, v, 8);
  std::printf("%s: %zu acknowledged versions, %d not read back exactly\n", var.c_str(), acked.size(), bad);
  return bad == 0 && !acked.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string role = argc > 1 ? argv[1] : "";
  if (!((argc == 2 && (role == "decisions" || role == "window")) ||
        (argc == 4 && (role == "writer" || role == "check")))) {
    std::fprintf(stderr, "usage: %s decisions|window|writer VAR FILE|check VAR OUT (see the source)\n", argv[0]);
    return 2;
  }
  try {
    cove::Client c = cove::Client::connect();
    if (role == "decisions") return decisions(c);
    if (role == "window") return window(c);
    if (role == "writer") return writer(c, argv[2], argv[3]);
    return check(c, argv[2], argv[3]);
  } catch (const cove::Error& e) {
    std::printf("FAIL: %s\n", e.what());
    return 1;
  }
}
