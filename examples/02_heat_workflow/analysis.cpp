// The analysis half of the demo: on its own MPI ranks, with the domain cut
// along y instead of x, it gets every step of the simulation's field from
// Cove, computes statistics and the checksum of what it received, and
// compares that with the checksum the simulation stored. Prints a table and
// a final verified / FAILED line; exit status 0 only when every step matched.
//
//   heat-analysis [--n N] [--steps S] [--timeout-ms T]   (server from COVE_CONNECT)
#include "common.hpp"

#include <cove/cove.hpp>
#include <cove/mpi.hpp>

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  cove::Index n = 48;
  int steps = 10;
  std::int64_t timeout_ms = 60000;
  CLI::App app{"heat-analysis: reads the simulation's field from Cove and checks it step by step", "heat-analysis"};
  app.add_option("--n", n, "cells along each side of the cube (as the simulation)")
      ->check(CLI::Range(cove::Index{4}, cove::Index{4096}));
  app.add_option("--steps", steps, "time steps to read")->check(CLI::Range(1, 1000000));
  app.add_option("--timeout-ms", timeout_ms, "how long each get waits for its step")->check(CLI::NonNegativeNumber);
  if (auto done = demo::parse_args(app, argc, argv, rank)) {
    MPI_Finalize();
    return *done;
  }
  int matched = 0, failed = 0;
  try {
    const std::vector<cove::Index> shape{n, n, n};
    const cove::BlockDecomposition cut(cove::Box::from_shape(shape), std::vector<cove::Index>{1, size, 1});
    const cove::Box mine = cut.block(rank);
    std::vector<double> block(static_cast<std::size_t>(mine.volume()));
    cove::Client client = cove::connect(MPI_COMM_WORLD);
    client.define(demo::kField, cove::DType(cove::DTypeKind::Float64), 3, shape);
    if (rank == 0)
      fmt::print("{:>5} {:>12} {:>12} {:>14} {:>18} {:>8}\n", "step", "min", "max", "mean", "checksum", "match");
    for (int step = 1; step <= steps; ++step) {
      client.get(demo::kField, static_cast<std::uint64_t>(step), mine, block.data(), block.size() * sizeof(double),
                 timeout_ms);
      demo::StepSummary local{0, 0.0, std::numeric_limits<double>::max(), std::numeric_limits<double>::lowest()};
      std::size_t at = 0;
      for (cove::Index i = mine.lo[0]; i < mine.hi[0]; ++i)
        for (cove::Index j = mine.lo[1]; j < mine.hi[1]; ++j)
          for (cove::Index k = mine.lo[2]; k < mine.hi[2]; ++k) {
            const double v = block[at++];
            local.checksum += demo::element_hash(static_cast<std::uint64_t>((i * n + j) * n + k), v);
            local.sum += v;
            local.min = std::min(local.min, v);
            local.max = std::max(local.max, v);
          }
      demo::StepSummary total{};
      MPI_Reduce(&local.checksum, &total.checksum, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
      MPI_Reduce(&local.sum, &total.sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
      MPI_Reduce(&local.min, &total.min, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
      MPI_Reduce(&local.max, &total.max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
      if (rank == 0) {
        const auto meta = client.get_meta(demo::kChecksum, static_cast<std::uint64_t>(step), timeout_ms);
        std::uint64_t theirs = 0;
        std::memcpy(&theirs, meta.data.data(), std::min(meta.data.size(), sizeof theirs));
        const bool ok = theirs == total.checksum;
        (ok ? matched : failed)++;
        fmt::print("{:>5} {:>12.4f} {:>12.4f} {:>14.6f}  {:016x} {:>8}\n", step, total.min, total.max,
                   total.sum / static_cast<double>(n * n * n), total.checksum, ok ? "yes" : "NO");
      }
    }
  } catch (const cove::Error& e) {
    fmt::print(stderr, "analysis rank {}: {}\n", rank, e.what());
    failed++;
  }
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0)
    fmt::print("{}: {} of {} steps matched the simulation's checksum (analysis on {} ranks)\n",
               any_failed ? "FAILED" : "verified", matched, steps, size);
  MPI_Finalize();
  return any_failed ? 1 : 0;
}
