// Kokkos staging benchmark: Kokkos::deep_copy to and from cove::StagingSpace
// views against the cove::Client put and get they wrap, on the same bytes,
// in the same run, against the same server (COVE_CONNECT), with a memcpy of
// the same bytes as the machine's yardstick. Each measurement is the median
// of --reps runs; the Kokkos and the plain call run in pairs, taking turns
// to go first, so that drift in a shared machine falls on both. bench/kokkos_bench.sh starts a server.
//
// Usage: cove-kokkos-bench [--sizes-mib 64,256] [--reps N] [--csv FILE]
#include "bench_cli.hpp"

#include <cove/cove.hpp>
#include <cove/kokkos.hpp>

#include <Kokkos_Core.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double seconds(const std::function<void()>& fn) {
  const auto t0 = Clock::now();
  fn();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Row {
  std::string operation;
  std::size_t mib;
  double kokkos_gbps, client_gbps, memcpy_gbps;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cove-kokkos-bench: Kokkos::deep_copy with cove::StagingSpace against plain cove::Client put/get",
               "cove-kokkos-bench"};
  std::vector<std::size_t> sizes_mib{64, 256};
  int reps = 9;
  std::string csv;
  app.add_option("--sizes-mib", sizes_mib, "field sizes in MiB of double, 2-D (rows x 1024 columns)")->delimiter(',');
  app.add_option("--reps", reps, "timed runs per measurement (median)")->check(CLI::Range(1, 1000));
  app.add_option("--csv", csv, "append the results to this CSV file");
  if (auto status = cove::bench::parse_args(app, argc, argv)) return *status;

  Kokkos::ScopeGuard kokkos(argc, argv);
  cove::kokkos::ScopeGuard staging;
  cove::Client client = cove::kokkos::client();
  std::vector<Row> rows;

  for (const std::size_t mib : sizes_mib) {
    const std::size_t cols = 1024;
    const std::size_t rows_n = mib * (std::size_t{1} << 20) / sizeof(double) / cols;
    const std::size_t bytes = rows_n * cols * sizeof(double);
    const auto n0 = static_cast<cove::Index>(rows_n), n1 = static_cast<cove::Index>(cols);
    const cove::Box box = cove::Box::from_shape(std::vector<cove::Index>{n0, n1});

    Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> src("src", rows_n, cols), dst("dst", rows_n, cols);
    Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace> dst_left("dst_left", rows_n, cols);
    for (std::size_t i = 0; i < src.span(); ++i) src.data()[i] = static_cast<double>(i);
    std::memset(dst.data(), 1, bytes);       // fault the pages in before any timing
    std::memset(dst_left.data(), 1, bytes);

    // One variable per path, so that the two never read each other's pieces.
    const std::string kvar = fmt::format("bench/kokkos/{}", mib), cvar = fmt::format("bench/client/{}", mib);
    Kokkos::View<double**, Kokkos::LayoutRight, cove::StagingSpace> staged(kvar, rows_n, cols);
    Kokkos::View<double**, Kokkos::LayoutLeft, cove::StagingSpace> staged_left(kvar + " (F)", rows_n, cols);
    cove::kokkos::view_bind_layout(staged_left, staged);
    client.define(cvar, cove::DType(cove::DTypeKind::Float64), 2);

    std::vector<double> kput, cput, kget, cget, kreorg, creorg, copy;
    for (int r = 0; r <= reps; ++r) {  // run 0 warms up and is not counted
      const auto version = static_cast<std::uint64_t>(r);
      cove::kokkos::set_version(staged, version);
      cove::kokkos::set_version(staged_left, version);
      // Which of the pair goes first alternates: the second of two calls
      // finds caches and the server's segments warmer.
      const bool kokkos_first = r % 2 == 0;
      auto pair = [&](const std::function<void()>& k, const std::function<void()>& c) {
        double tk = 0, tc = 0;
        if (kokkos_first) tk = seconds(k), tc = seconds(c);
        else tc = seconds(c), tk = seconds(k);
        return std::make_pair(tk, tc);
      };
      const auto [a, b] = pair([&] { Kokkos::deep_copy(staged, src); },
                               [&] { client.put(cvar, version, box, src.data(), bytes); });
      const auto [c, d] = pair([&] { Kokkos::deep_copy(dst, staged); },
                               [&] { client.get(cvar, version, box, dst.data(), bytes, 60000); });
      const auto [e, f] = pair([&] { Kokkos::deep_copy(dst_left, staged_left); },
                               [&] { client.get(cvar, version, box, dst_left.data(), bytes, 60000, cove::Layout::f()); });
      const double g = seconds([&] { std::memcpy(dst.data(), src.data(), bytes); });
      if (r > 0) {
        kput.push_back(a), cput.push_back(b), kget.push_back(c), cget.push_back(d);
        kreorg.push_back(e), creorg.push_back(f), copy.push_back(g);
      }
      if (dst(rows_n - 1, cols - 1) != src(rows_n - 1, cols - 1) || dst_left(1, 0) != src(1, 0)) {
        fmt::print(stderr, "wrong data read back\n");
        return 1;
      }
      client.remove(kvar, version);  // keep the server's memory to one version per path
      client.remove(cvar, version);
    }
    const double gb = static_cast<double>(bytes) / 1e9, mem = gb / median(copy);
    rows.push_back({"put", mib, gb / median(kput), gb / median(cput), mem});
    rows.push_back({"get", mib, gb / median(kget), gb / median(cget), mem});
    rows.push_back({"get C->F", mib, gb / median(kreorg), gb / median(creorg), mem});
  }

  fmt::print("{:<9} {:>6} {:>13} {:>13} {:>8} {:>13}\n", "operation", "MiB", "Kokkos GB/s", "Client GB/s", "ratio",
             "memcpy GB/s");
  for (const auto& r : rows)
    fmt::print("{:<9} {:>6} {:>13.2f} {:>13.2f} {:>7.3f}x {:>13.2f}\n", r.operation, r.mib, r.kokkos_gbps,
               r.client_gbps, r.kokkos_gbps / r.client_gbps, r.memcpy_gbps);
  fmt::print("ratio: Kokkos deep_copy throughput / plain client throughput (target >= 0.95x)\n");
  if (!csv.empty()) {
    std::ofstream out(csv, std::ios::app);
    for (const auto& r : rows)
      out << r.operation << ',' << r.mib << ',' << r.kokkos_gbps << ',' << r.client_gbps << ','
          << r.kokkos_gbps / r.client_gbps << ',' << r.memcpy_gbps << '\n';
  }
  return 0;
}
