// Request matching at DTF's scale and beyond: N write requests (the blocks
// of one 3-D decomposition) and N read requests (the blocks of another)
// matched through Cove's spatial index, the R-tree its servers keep per
// variable and version. Every read request is resolved into the write
// requests that hold its parts, and the parts are checked to tile it.
// Reported beside DTF's published figure (16,832 requests per matcher in
// 0.085 s, Martsinkevich et al.) and against a brute-force scan measured
// in the same run.
//
// Usage: cove-pnetcdf-match-bench [--requests N] [--reps R]
#include "bench_cli.hpp"

#include <cove/box.hpp>
#include <cove/spatial_index.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
using cove::Box;
using cove::Index;

// The blocks of a domain split `grid` ways per dimension (sizes need not divide).
std::vector<Box> decompose(const std::array<Index, 3>& domain, const std::array<Index, 3>& grid) {
  std::vector<Box> boxes;
  auto cut = [](Index n, Index parts, Index i) { return n * i / parts; };
  for (Index i = 0; i < grid[0]; ++i)
    for (Index j = 0; j < grid[1]; ++j)
      for (Index k = 0; k < grid[2]; ++k) {
        const std::array<Index, 3> lo{cut(domain[0], grid[0], i), cut(domain[1], grid[1], j), cut(domain[2], grid[2], k)};
        const std::array<Index, 3> hi{cut(domain[0], grid[0], i + 1), cut(domain[1], grid[1], j + 1),
                                      cut(domain[2], grid[2], k + 1)};
        boxes.push_back(Box::from_bounds(lo, hi));
      }
  return boxes;
}

// Three factors of n as close to each other as possible.
std::array<Index, 3> grid_of(Index n) {
  std::array<Index, 3> best{n, 1, 1};
  for (Index a = 1; a * a * a <= n; ++a) {
    if (n % a) continue;
    for (Index b = a; a * b * b <= n; ++b) {
      if ((n / a) % b) continue;
      best = {n / a / b, b, a};
    }
  }
  return best;
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Cove request matching at DTF's scale"};
  Index requests = 100000;
  int reps = 5;
  app.add_option("--requests", requests, "write requests, and as many read requests")->check(CLI::Range(8, 10000000));
  app.add_option("--reps", reps, "repetitions (the median is reported)")->check(CLI::Range(1, 100));
  if (auto rc = cove::bench::parse_args(app, argc, argv)) return *rc;

  // The writer's and the reader's decompositions of one domain differ: the
  // same number of blocks, the grid's factors in another order, so a read
  // request overlaps several write requests.
  const auto wgrid = grid_of(requests);
  const std::array<Index, 3> rgrid{wgrid[2], wgrid[0], wgrid[1]};
  const std::array<Index, 3> domain{wgrid[0] * wgrid[1] * 2, wgrid[1] * wgrid[2] * 2, wgrid[0] * wgrid[2] * 2};
  const auto writes = decompose(domain, wgrid);
  const auto reads = decompose(domain, rgrid);

  std::vector<double> build_s, match_s;
  std::uint64_t parts = 0;
  for (int rep = 0; rep < reps; ++rep) {
    auto t0 = Clock::now();
    cove::SpatialIndex index(3);
    for (std::size_t i = 0; i < writes.size(); ++i) index.insert(writes[i], i);
    build_s.push_back(seconds_since(t0));
    t0 = Clock::now();
    parts = 0;
    for (const auto& r : reads) {
      Index covered = 0;
      index.query(r, [&](const Box& w, std::uint64_t) {
        covered += w.intersection(r).volume();
        ++parts;
      });
      if (covered != r.volume()) {
        fmt::print(stderr, "read request {} is not tiled by the write requests it matched\n", r.to_string());
        return 1;
      }
    }
    match_s.push_back(seconds_since(t0));
  }
  std::sort(build_s.begin(), build_s.end());
  std::sort(match_s.begin(), match_s.end());
  const double build = build_s[build_s.size() / 2], match = match_s[match_s.size() / 2];

  // Baseline in the same run: every read scans every write (on a sample of reads).
  const std::size_t sample = std::min<std::size_t>(reads.size(), 200);
  auto t0 = Clock::now();
  std::uint64_t scanned = 0;
  for (std::size_t i = 0; i < sample; ++i) {
    const Box& r = reads[i * (reads.size() / sample)];
    for (const auto& w : writes) scanned += w.intersects(r);
  }
  const double scan = seconds_since(t0) / static_cast<double>(sample) * static_cast<double>(reads.size());

  const double dtf_requests = 16832, dtf_s = 0.085;
  fmt::print("domain {}x{}x{}; writer grid {}x{}x{}, reader grid {}x{}x{}; {} write and {} read requests, "
             "{} matched parts ({:.1f} per read)\n",
             domain[0], domain[1], domain[2], wgrid[0], wgrid[1], wgrid[2], rgrid[0], rgrid[1], rgrid[2],
             writes.size(), reads.size(), parts, static_cast<double>(parts) / static_cast<double>(reads.size()));
  fmt::print("{:<44} {:>12} {:>14}\n", "", "time (s)", "requests/s");
  fmt::print("{:<44} {:>12.4f} {:>14.0f}\n", "Cove: index the write requests", build,
             static_cast<double>(writes.size()) / build);
  fmt::print("{:<44} {:>12.4f} {:>14.0f}\n", "Cove: match every read request", match,
             static_cast<double>(reads.size()) / match);
  fmt::print("{:<44} {:>12.4f} {:>14.0f}\n", "Cove: both", build + match,
             static_cast<double>(reads.size()) / (build + match));
  fmt::print("{:<44} {:>12.4f} {:>14.0f}\n", "baseline: scan all writes per read (same run)", scan,
             static_cast<double>(reads.size()) / scan);
  fmt::print("{:<44} {:>12.4f} {:>14.0f}\n", "DTF (paper, 16,832 requests per matcher)", dtf_s, dtf_requests / dtf_s);
  fmt::print("Cove matches {:.1f}x as many requests per second as DTF reported, {:.0f}x the scan ({} reps, median)\n",
             static_cast<double>(reads.size()) / (build + match) / (dtf_requests / dtf_s), scan / (build + match), reps);
  (void)scanned;
  return 0;
}
