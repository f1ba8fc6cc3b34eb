// Put and get throughput of the C++ client against servers that are already
// running (COVE_CONNECT): the baseline bench/python_bench.py measures the
// Python binding against, in the same run, with the same sizes and server.
// For each size: one untimed put and get, then `reps` timed ones of each
// (a new version per put; buffers allocated and touched beforehand).
// Prints one CSV line per size: size_mib,put_gbps,get_gbps (best of reps).
//   cove-putget-bench --sizes-mib 64,512 --reps 5
#include <cove/client.hpp>
#include <cove/error.hpp>

#include <fmt/core.h>

#include "bench_cli.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
  std::vector<std::int64_t> sizes_mib{64, 512};
  int reps = 5;
  CLI::App app{"put/get throughput of the C++ client (baseline of bench/python_bench.py)"};
  app.add_option("--sizes-mib", sizes_mib, "array sizes in MiB (float64, 2-D)")->delimiter(',');
  app.add_option("--reps", reps, "timed puts and gets per size")->check(CLI::Range(1, 1000));
  CLI11_PARSE(app, argc, argv);
  try {
    cove::Client client = cove::Client::connect();
    std::uint64_t version = 1000000;  // apart from the Python side's versions
    for (const std::int64_t mib : sizes_mib) {
      const cove::Index cols = 1024, rows = mib * (1 << 20) / 8 / cols;
      const std::string var = "bench/cpp/" + std::to_string(mib);
      const cove::Index shape[] = {rows, cols};
      client.define(var, cove::DType(cove::DTypeKind::Float64), 2, shape);
      const cove::Box box = cove::Box::from_shape(shape);
      const std::size_t bytes = static_cast<std::size_t>(rows * cols) * 8;
      std::vector<double> src(static_cast<std::size_t>(rows * cols), 1.5), dst(src.size(), 0.0);
      using clock = std::chrono::steady_clock;
      double best_put = 1e30, best_get = 1e30;
      for (int r = 0; r <= reps; ++r) {
        ++version;
        auto t0 = clock::now();
        client.put(var, version, box, src.data(), bytes, cove::Layout::c(), cove::MemorySpace::host);
        auto t1 = clock::now();
        client.get(var, version, box, dst.data(), bytes, 10000, cove::Layout::c(), cove::MemorySpace::host);
        auto t2 = clock::now();
        if (r == 0) continue;  // warm-up
        best_put = std::min(best_put, std::chrono::duration<double>(t1 - t0).count());
        best_get = std::min(best_get, std::chrono::duration<double>(t2 - t1).count());
        client.remove(var, version);
      }
      if (dst[dst.size() / 2] != 1.5) {
        fmt::print(stderr, "putget-bench: wrong value read back\n");
        return 1;
      }
      client.undefine(var);
      const double gb = static_cast<double>(bytes) / 1e9;
      fmt::print("{},{:.3f},{:.3f}\n", mib, gb / best_put, gb / best_get);
    }
  } catch (const cove::Error& e) {
    fmt::print(stderr, "putget-bench: {}\n", e.what());
    return 1;
  }
  return 0;
}
