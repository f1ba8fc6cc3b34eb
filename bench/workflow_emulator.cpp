// The workflow emulator: the synthetic writer / reader workflow of the
// Kokkos Staging Space paper (section V), one role per MPI job:
//   writer  every step: sleeps `delay` (its computation), fills its block of a
//           3-D float64 domain of side N in its layout, and puts it;
//   reader  every step: sleeps `delay`, waits until every writer rank has
//           put the step, and gets its block of the centred cube of side d
//           in its own layout (its ranks split the cube another way than the
//           writer's split the domain); every element is checked.
// Only the put or get is timed (I/O time); the wait for the writer is not.
// Ranks never meet in MPI during the steps (an MPI wait spins on a core the
// others need): writers announce steps through Cove metadata, and times are
// gathered at the end. bench/workflow.py starts the servers and the roles
// and runs the paper's experiments.
//
//   cove-workflow --role writer|reader --name NAME [--domain N] [--steps S]
//                 [--delay SECONDS] [--subset D] [--layout L] [--writers W]
//                 [--csv FILE]
// Output (rank 0): one CSV row per step: name, role, step, io_s (the slowest
// rank's), bytes (all ranks), server_bytes and replica_bytes (all servers,
// after this role's step), memcpy_gbps (this machine, same run),
// mismatches. Exit status 1 if any element read was wrong.
#include "bench_cli.hpp"

#include <cove/cove.hpp>
#include <cove/mpi.hpp>

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
using cove::Box;
using cove::Index;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct Options {
  std::string role, name = "run", layout = "C", csv;
  Index domain = 128, subset = 0;
  int steps = 5, writers = 0;
  double delay = 0;
};

// Parses and checks the options on every rank; on --help or bad usage
// returns the exit status (rank 0 prints the message).
std::optional<int> parse(int argc, char** argv, int rank, Options& o) {
  CLI::App app{"cove-workflow: the Kokkos Staging Space paper's synthetic writer/reader workflow", "cove-workflow"};
  app.add_option("--role", o.role, "writer or reader")->required()->check(CLI::IsMember({"writer", "reader"}));
  app.add_option("--name", o.name, "the run's name, in the CSV rows");
  app.add_option("--domain", o.domain, "side of the 3-D float64 domain")->check(CLI::Range(Index{2}, Index{2048}));
  app.add_option("--steps", o.steps, "steps")->check(CLI::Range(1, 1000000));
  app.add_option("--delay", o.delay, "seconds of computation per step")->check(CLI::NonNegativeNumber);
  app.add_option("--subset", o.subset, "side of the centred cube a reader reads (0: the whole domain)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--layout", o.layout, "this role's layout (C, F, P2,0,1 ...)");
  app.add_option("--writers", o.writers, "the writer job's process count (readers)")->check(CLI::NonNegativeNumber);
  app.add_option("--csv", o.csv, "write the rows here instead of stdout");
  if (auto done = cove::bench::parse_args(app, argc, argv, rank)) return done;
  std::string why;
  if (o.subset > o.domain) why = "--subset must be 0..domain (0: the whole domain)";
  if (o.role == "reader" && o.writers < 1) why = "a reader needs --writers (the writer's process count)";
  if (why.empty()) return std::nullopt;
  if (rank == 0) fmt::print(stderr, "cove-workflow: {}\n", why);
  return 2;
}

// Element x of the domain holds step * 2^32 + its C-order linear index.
double value_at(Index linear, int step) { return static_cast<double>(step) * 4294967296.0 + static_cast<double>(linear); }

// Visits `box` in the buffer order of `layout`: fn(buffer offset, global linear index).
template <typename Fn>
void for_each_element(const Box& box, const cove::Layout& layout, Index side, Fn fn) {
  const auto strides = layout.strides(box);
  for (Index i = box.lo[0]; i < box.hi[0]; ++i)
    for (Index j = box.lo[1]; j < box.hi[1]; ++j) {
      const Index base = (i - box.lo[0]) * strides[0] + (j - box.lo[1]) * strides[1];
      const Index global = (i * side + j) * side;
      for (Index k = box.lo[2]; k < box.hi[2]; ++k) fn(base + (k - box.lo[2]) * strides[2], global + k);
    }
}

double memcpy_gbps(std::size_t bytes) {
  std::vector<unsigned char> a(bytes, 1), b(bytes, 2);
  std::memcpy(b.data(), a.data(), bytes);
  double best = 1e30;
  for (int r = 0; r < 3; ++r) {
    const auto t0 = Clock::now();
    std::memcpy(b.data(), a.data(), bytes);
    best = std::min(best, seconds_since(t0));
  }
  return static_cast<double>(bytes) / best / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Options o;
  if (auto done = parse(argc, argv, rank, o)) {
    MPI_Finalize();
    return *done;
  }
  const bool writer = o.role == "writer";
  int status = 0;
  try {
    const cove::Layout layout = cove::Layout::parse(o.layout);
    cove::Client c = cove::connect(MPI_COMM_WORLD);
    const std::vector<Index> shape(3, o.domain);
    const Box domain = Box::from_shape(shape);
    c.define("wf", cove::DType(cove::DTypeKind::Float64), 3, shape);
    Box mine;
    if (writer) {
      mine = cove::BlockDecomposition(domain, size).block(rank);
    } else {
      const Index d = o.subset ? o.subset : o.domain, lo = (o.domain - d) / 2;
      const Box cube = Box::from_start_count(std::vector<Index>(3, lo), std::vector<Index>(3, d));
      auto grid = cove::dims_create(size, 3);
      std::reverse(grid.begin(), grid.end());  // split along other axes than the writer's
      mine = cove::BlockDecomposition(cube, grid).block(rank);
    }
    const std::size_t bytes = static_cast<std::size_t>(mine.volume()) * 8;
    std::vector<double> buf(bytes / 8);
    const double mem_gbps = memcpy_gbps(std::max<std::size_t>(bytes, std::size_t{32} << 20));  // not a cached size
    std::vector<double> io(static_cast<std::size_t>(o.steps));
    std::vector<double> server_bytes(io.size()), replica_bytes(io.size());
    long long mismatches = 0;
    for (int step = 1; step <= o.steps; ++step) {
      std::this_thread::sleep_for(std::chrono::duration<double>(o.delay));
      if (writer) {
        for_each_element(mine, layout, o.domain,
                         [&](Index at, Index global) { buf[static_cast<std::size_t>(at)] = value_at(global, step); });
        const auto t0 = Clock::now();
        c.put("wf", static_cast<std::uint64_t>(step), mine, buf.data(), bytes, layout);
        io[step - 1] = seconds_since(t0);
        c.put_meta("wf.put." + std::to_string(rank), static_cast<std::uint64_t>(step), {});
      } else {
        // Bounded: a writer that died must not leave its readers waiting forever.
        for (int w = 0; w < o.writers; ++w)
          c.get_meta("wf.put." + std::to_string(w), static_cast<std::uint64_t>(step), 300000);
        std::fill(buf.begin(), buf.end(), -1.0);
        const auto t0 = Clock::now();
        c.get("wf", static_cast<std::uint64_t>(step), mine, buf.data(), bytes, -1, layout);
        io[step - 1] = seconds_since(t0);
        for_each_element(mine, layout, o.domain, [&](Index at, Index global) {
          mismatches += buf[static_cast<std::size_t>(at)] != value_at(global, step);
        });
      }
      if (rank == 0) {
        const cove::ServerStats s = c.stat();
        server_bytes[step - 1] = static_cast<double>(s.owned_bytes + s.replica_bytes);
        replica_bytes[step - 1] = static_cast<double>(s.replica_bytes);
      }
    }
    std::vector<double> slowest(io.size());
    MPI_Reduce(io.data(), slowest.data(), o.steps, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    long long all_mismatches = 0;
    MPI_Reduce(&mismatches, &all_mismatches, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    unsigned long long total_bytes = 0, my_bytes = bytes;
    MPI_Reduce(&my_bytes, &total_bytes, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      std::FILE* out = o.csv.empty() ? stdout : std::fopen(o.csv.c_str(), "w");
      if (!out) throw cove::Error(cove::Code::InvalidArgument, "cannot write --csv " + o.csv);
      fmt::print(out, "name,role,step,io_s,bytes,server_bytes,replica_bytes,memcpy_gbps,mismatches\n");
      for (int s = 0; s < o.steps; ++s)
        fmt::print(out, "{},{},{},{:.6f},{},{:.0f},{:.0f},{:.3f},{}\n", o.name, o.role, s + 1, slowest[s], total_bytes,
                   server_bytes[s], replica_bytes[s], mem_gbps, all_mismatches);
      if (out != stdout) std::fclose(out);
      if (all_mismatches) {
        fmt::print(stderr, "cove-workflow {}: {} elements read were wrong\n", o.name, all_mismatches);
        status = 1;
      }
    }
  } catch (const cove::Error& e) {
    fmt::print(stderr, "cove-workflow {} rank {}: {}\n", o.name, rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return status;
}
