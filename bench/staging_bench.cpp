// Staging benchmark: 1 writer, 1 server, 1 reader, each its own process
// (this program runs as 2 MPI ranks: 0 writes, 1 reads; the server is a
// cove-server started by bench/staging_bench.sh). For 3-D float64 arrays
// of 64 MiB and 512 MiB it reports put, get and put_local->get bandwidth,
// each as a ratio to memcpy of the same bytes measured in the same run, and
// the median latency of 1000 puts and 1000 gets of 4 KiB, across processes
// and, with a server of its own, in one process.
//
//   cove-staging-bench [--quick] [--reps N] [--csv FILE]     (server from COVE_CONNECT)
// Each bulk figure is the median of N repetitions (3; 2 with --quick); the
// first one's server block is fresh memory, the others' are recycled.
#include "bench_cli.hpp"

#include <cove/cove.hpp>
#include <cove/mpi.hpp>

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
using cove::Index;
using V = std::vector<Index>;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double memcpy_gbps(std::size_t bytes, int reps) {
  std::vector<unsigned char> a(bytes, 1), b(bytes, 2);
  std::memcpy(b.data(), a.data(), bytes);
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = Clock::now();
    std::memcpy(b.data(), a.data(), bytes);
    t.push_back(seconds_since(t0));
  }
  return static_cast<double>(bytes) / median(t) / 1e9;
}

// Median microseconds of n puts, then n gets, of 4 KiB through a server
// in this process (the in-process transport).
std::pair<double, double> inproc_latency(int n) {
  cove::ServerOptions o;
  o.transport = "inproc://staging-bench";
  cove::Server server(o);
  cove::Client c = cove::Client::connect(server.address());
  const V small{512};
  c.define("lat", cove::DType(cove::DTypeKind::Float64), 1, small);
  const cove::Box all = cove::Box::from_shape(small);
  std::vector<double> buf(512, 3.0), put_t, get_t;
  for (int i = 0; i < n; ++i) {
    const auto t0 = Clock::now();
    c.put("lat", static_cast<std::uint64_t>(i + 1), all, buf.data(), 4096);
    put_t.push_back(seconds_since(t0) * 1e6);
  }
  for (int i = 0; i < n; ++i) {
    const auto t0 = Clock::now();
    c.get("lat", static_cast<std::uint64_t>(i + 1), all, buf.data(), 4096, 0);
    get_t.push_back(seconds_since(t0) * 1e6);
  }
  if (buf[7] != 3.0) throw cove::Error(cove::Code::Internal, "get returned wrong data");
  return {median(put_t), median(get_t)};
}

struct Row {
  std::string name;
  double value;  // GB/s, or microseconds for latency rows
  double memcpy_gbps;
  std::string target;
  bool met;
};

// One client's put then get of the same region, end to end, for each size
// (float64, 2-D): the bytes over the sum of the two medians, against a
// memcpy of the same bytes in the same run.
void put_then_get(cove::Client& c, int reps, std::vector<Row>& rows) {
  std::uint64_t version = 0;
  for (const Index mib : {8, 64, 128}) {
    const V shape{mib * 128, 1024};
    const std::string var = "e2e" + std::to_string(mib);
    c.define(var, cove::DType(cove::DTypeKind::Float64), 2, shape);
    const cove::Box all = cove::Box::from_shape(shape);
    const std::size_t bytes = static_cast<std::size_t>(all.volume()) * 8;
    std::vector<double> in(bytes / 8, 2.5), out(bytes / 8, 0.0);
    const double mbw = memcpy_gbps(bytes, reps + 2);
    std::vector<double> put_t, get_t;
    for (int r = 0; r < reps + 2; ++r) {
      ++version;
      auto t0 = Clock::now();
      c.put(var, version, all, in.data(), bytes);
      put_t.push_back(seconds_since(t0));
      t0 = Clock::now();
      c.get(var, version, all, out.data(), bytes, 0);
      get_t.push_back(seconds_since(t0));
      if (out[bytes / 16] != 2.5) throw cove::Error(cove::Code::Internal, "get returned wrong data");
      c.remove(var, version);
    }
    const double bw = static_cast<double>(bytes) / 1e9 / (median(put_t) + median(get_t));
    rows.push_back({"put+get " + std::to_string(mib) + " MiB, 1 client", bw, mbw, ">= 0.5", bw / mbw >= 0.5});
  }
}

// derive of a 1 GiB version: the median time of a derive, and the bytes the
// servers' memory grew by (0: nothing copied).
void derive_gib(cove::Client& c, int reps, std::vector<Row>& rows) {
  const V shape{1024, 512, 256};
  c.define("derived", cove::DType(cove::DTypeKind::Float64), 3, shape);
  const cove::Box all = cove::Box::from_shape(shape);
  const std::size_t bytes = static_cast<std::size_t>(all.volume()) * 8;
  {
    std::vector<double> data(bytes / 8, 4.5);
    c.put("derived", 1, all, data.data(), bytes);
  }
  const std::uint64_t before = c.stat().owned_bytes;
  std::vector<double> t;
  for (int r = 0; r < 10 * reps; ++r) {
    const auto t0 = Clock::now();
    c.derive("derived", 1, static_cast<std::uint64_t>(r + 2));
    t.push_back(seconds_since(t0) * 1e6);
  }
  const std::uint64_t grew = c.stat().owned_bytes - before;
  const double us = median(t);
  rows.push_back(
      {"derive 1 GiB (" + std::to_string(grew) + " B copied)", us, 0, "<= 1000 us", us <= 1000 && grew == 0});
  c.undefine("derived");
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  bool quick = false;
  int reps = 0;
  std::string csv;
  CLI::App app{"cove-staging-bench: put and get through one server against memcpy (2 ranks: writer, reader)",
               "cove-staging-bench"};
  app.add_flag("--quick", quick, "fewer repetitions");
  app.add_option("--csv", csv, "append the rows to this CSV file");
  app.add_option("--reps", reps, "repetitions of each bulk case, their median reported (default 3, 2 with --quick)")
      ->check(CLI::Range(1, 100));
  if (auto done = cove::bench::parse_args(app, argc, argv, rank)) {
    MPI_Finalize();
    return *done;
  }
  if (size != 2) {
    if (rank == 0) fmt::print(stderr, "run with 2 MPI ranks (writer and reader)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const bool writer = rank == 0;
  if (reps == 0) reps = quick ? 2 : 3;
  std::vector<Row> rows;
  try {
    cove::Client c = cove::connect(MPI_COMM_WORLD);
    // Writer and reader meet through Cove itself between timed phases: an
    // MPI barrier would busy-poll a core the timed side needs (2 cores here).
    std::uint64_t meeting = 0;
    auto sync = [&] {
      ++meeting;
      c.put_meta("sync/" + std::to_string(rank), meeting, {});
      c.get_meta("sync/" + std::to_string(1 - rank), meeting, -1);
    };
    const std::vector<std::pair<const char*, V>> sizes = {{"64 MiB", {256, 256, 128}}, {"512 MiB", {512, 512, 256}}};
    std::uint64_t version = 0;
    for (const auto& [label, shape] : sizes) {
      const std::string var = std::string("bench") + std::to_string(shape[0]);
      c.define(var, cove::DType(cove::DTypeKind::Float64), 3, shape);
      const cove::Box all = cove::Box::from_shape(shape);
      const std::size_t bytes = static_cast<std::size_t>(all.volume()) * 8;
      std::vector<double> buf(bytes / 8, writer ? 1.5 : 0.0);
      const double mbw = writer ? memcpy_gbps(bytes, reps) : 0.0;
      std::vector<double> put_t, get_t, local_t;
      for (int r = 0; r < reps; ++r) {
        // put, then get
        ++version;
        sync();
        if (writer) {
          const auto t0 = Clock::now();
          c.put(var, version, all, buf.data(), bytes);
          put_t.push_back(seconds_since(t0));
        }
        sync();
        if (!writer) {
          const auto t0 = Clock::now();
          c.get(var, version, all, buf.data(), bytes, 10000);
          get_t.push_back(seconds_since(t0));
          if (buf[bytes / 16] != 1.5) throw cove::Error(cove::Code::Internal, "get returned wrong data");
          c.remove(var, version);
        }
        // put_local, then get straight from the writer
        ++version;
        sync();
        if (writer) c.put_local(var, version, all, buf.data(), bytes);
        sync();
        if (!writer) {
          std::fill(buf.begin(), buf.end(), 0.0);
          const auto t0 = Clock::now();
          c.get(var, version, all, buf.data(), bytes, 10000);
          local_t.push_back(seconds_since(t0));
          if (buf[bytes / 16] != 1.5) throw cove::Error(cove::Code::Internal, "get returned wrong data");
        }
        sync();
        if (writer) c.release(var, version, all);
      }
      // Rank 1's timings to rank 0.
      double got[2] = {writer ? 0 : median(get_t), writer ? 0 : median(local_t)};
      double recv[2] = {0, 0};
      MPI_Reduce(got, recv, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
      if (writer) {
        const double gb = static_cast<double>(bytes) / 1e9;
        const double put_bw = gb / median(put_t), get_bw = gb / recv[0], local_bw = gb / recv[1];
        rows.push_back({std::string("put ") + label, put_bw, mbw, ">= 0.5", put_bw / mbw >= 0.5});
        rows.push_back({std::string("get ") + label, get_bw, mbw, ">= 0.5", get_bw / mbw >= 0.5});
        rows.push_back({std::string("put_local -> get ") + label, local_bw, mbw, ">= 0.6", local_bw / mbw >= 0.6});
      }
    }
    // Latency: 1000 puts, then 1000 gets, of 4 KiB: a variable of 4 KiB
    // (smaller than two index blocks: a group indexes it whole on one
    // member), and 4 KiB of a 64 MiB variable (inside one index block).
    const int n = quick ? 200 : 1000;
    const auto latency = [&](const std::string& var, const V& shape, const std::string& label) {
      c.define(var, cove::DType(cove::DTypeKind::Float64), 1, shape);
      const cove::Box box = cove::Box::from_bounds(V{0}, V{512});
      std::vector<double> buf(512, 2.0);
      std::vector<double> t;
      sync();
      if (writer) {
        for (int i = 0; i < n; ++i) {
          const auto t0 = Clock::now();
          c.put(var, static_cast<std::uint64_t>(i + 1), box, buf.data(), 4096);
          t.push_back(seconds_since(t0) * 1e6);
        }
        const double med = median(t);
        rows.push_back({"put " + label, med, 0, "<= 20 us", med <= 20});
      }
      sync();
      double get_med = 0;
      if (!writer) {
        for (int i = 0; i < n; ++i) {
          const auto t0 = Clock::now();
          c.get(var, static_cast<std::uint64_t>(i + 1), box, buf.data(), 4096, 0);
          t.push_back(seconds_since(t0) * 1e6);
        }
        get_med = median(t);
      }
      sync();  // the writer waits here, asleep, not busy in MPI_Reduce while the gets run
      double recv = 0;
      MPI_Reduce(&get_med, &recv, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
      if (writer) rows.push_back({"get " + label, recv, 0, "<= 20 us", recv <= 20});
    };
    latency("lat", V{512}, "4 KiB, median");
    latency("lat-block", V{Index{8} << 20}, "4 KiB of 64 MiB");
    // The same in one process: a server of the writer's own, over the
    // in-process transport (the reader waits asleep in the next sync).
    if (writer) {
      const auto [put_us, get_us] = inproc_latency(n);
      rows.push_back({"put 4 KiB in one process", put_us, 0, "<= 5 us", put_us <= 5});
      rows.push_back({"get 4 KiB in one process", get_us, 0, "<= 5 us", get_us <= 5});
      put_then_get(c, reps, rows);
      derive_gib(c, reps, rows);
    }
    sync();
  } catch (const cove::Error& e) {
    fmt::print(stderr, "rank {}: {}\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (writer) {
    const char* env = std::getenv("COVE_TRANSPORT");
    const std::string transport = env && *env ? env : "local";
    fmt::print("\nCove staging benchmark: 1 writer, 1 server, 1 reader process; clients over {}\n", transport);
    fmt::print("{:<28} | {:<22} | {:<18} | {:>6} | {:<9} |\n", "case", "measured", "memcpy, same bytes", "ratio",
               "target");
    fmt::print("{}\n", std::string(100, '-'));
    for (const auto& r : rows) {
      if (r.memcpy_gbps > 0)
        fmt::print("{:<28} | {:>15.2f} GB/s | {:>13.2f} GB/s | {:>6.2f} | {:<9} | {}\n", r.name, r.value, r.memcpy_gbps,
                   r.value / r.memcpy_gbps, r.target, r.met ? "met" : "MISSED");
      else
        fmt::print("{:<28} | {:>17.1f} us | {:>18} | {:>6} | {:<9} | {}\n", r.name, r.value, "", "", r.target,
                   r.met ? "met" : "MISSED");
    }
    if (!csv.empty()) {
      std::ofstream out(csv, std::ios::app);
      for (const auto& r : rows)
        out << transport << ",\"" << r.name << "\"," << r.value << ',' << r.memcpy_gbps << ','
            << (r.memcpy_gbps > 0 ? r.value / r.memcpy_gbps : 0) << ',' << (r.met ? "met" : "missed") << '\n';
    }
  }
  MPI_Finalize();
  return 0;
}
