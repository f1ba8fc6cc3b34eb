// The MPI baseline of the network benchmark (bench/network.py): between
// two ranks, one-way bandwidth (rank 0 sends `reps` messages of each size,
// rank 1 receives them and answers once) and the median round trip of a
// 4 KiB ping-pong. The script picks the wire with OpenMPI's MCA options
// (ob1 over tcp). Prints CSV rows: case,value (GB/s or microseconds).
#include "bench_cli.hpp"

#include <fmt/core.h>

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Bytes per second from rank 0 to rank 1: the sends, then one small ack.
double one_way_gbps(std::size_t bytes, int reps, int rank) {
  std::vector<char> buf(bytes, 1);
  char ack = 0;
  const auto round = [&] {
    if (rank == 0) {
      for (int i = 0; i < reps; ++i) MPI_Send(buf.data(), static_cast<int>(bytes), MPI_BYTE, 1, 0, MPI_COMM_WORLD);
      MPI_Recv(&ack, 1, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      for (int i = 0; i < reps; ++i)
        MPI_Recv(buf.data(), static_cast<int>(bytes), MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(&ack, 1, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
    }
  };
  round();  // warm: connections made, pages touched
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = Clock::now();
  round();
  return static_cast<double>(bytes) * reps / seconds_since(t0) / 1e9;
}

// Median microseconds of a 4 KiB message there and back.
double ping_pong_us(int n, int rank) {
  std::vector<char> buf(4096, 2);
  std::vector<double> t;
  for (int i = 0; i < n + n / 10; ++i) {  // the first tenth warms up
    const auto t0 = Clock::now();
    if (rank == 0) {
      MPI_Send(buf.data(), 4096, MPI_BYTE, 1, 2, MPI_COMM_WORLD);
      MPI_Recv(buf.data(), 4096, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf.data(), 4096, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf.data(), 4096, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
    }
    if (i >= n / 10) t.push_back(seconds_since(t0) * 1e6);
  }
  std::nth_element(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(t.size() / 2), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  bool quick = false;
  CLI::App app{"MPI baseline of the network benchmark: one-way bandwidth and 4 KiB ping-pong between 2 ranks",
               "cove-net-mpi"};
  app.add_flag("--quick", quick, "fewer repetitions");
  if (auto done = cove::bench::parse_args(app, argc, argv, rank)) {
    MPI_Finalize();
    return *done;
  }
  if (size != 2) {
    if (rank == 0) fmt::print(stderr, "run with 2 MPI ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int reps = quick ? 2 : 5;
  const double bw64 = one_way_gbps(std::size_t{64} << 20, reps, rank);
  const double bw512 = one_way_gbps(std::size_t{512} << 20, reps, rank);
  const double rtt = ping_pong_us(quick ? 200 : 2000, rank);
  if (rank == 0) fmt::print("one-way 64 MiB,{:.3f}\none-way 512 MiB,{:.3f}\nround trip 4 KiB,{:.2f}\n", bw64, bw512, rtt);
  MPI_Finalize();
  return 0;
}
