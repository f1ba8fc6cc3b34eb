// The simulation half of the demo: explicit 3-D heat diffusion on a cube,
// cut into slabs along x across the MPI ranks (ghost planes exchanged with
// neighbours), a hot ball in the middle, cold walls. Every step each rank
// puts its slab into Cove as version `step`, and rank 0 stores the
// simulation's own checksum of the whole field as metadata.
//
//   heat-simulation [--n N] [--steps S]      (server from COVE_CONNECT; --help)
#include "common.hpp"

#include <cove/cove.hpp>
#include <cove/mpi.hpp>

#include <fmt/format.h>
#include <mpi.h>

#include <string>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  cove::Index n = 48;
  int steps = 10;
  CLI::App app{"heat-simulation: 3-D heat diffusion that puts its field into Cove every step", "heat-simulation"};
  app.add_option("--n", n, "cells along each side of the cube")->check(CLI::Range(cove::Index{4}, cove::Index{4096}));
  app.add_option("--steps", steps, "time steps (one version each)")->check(CLI::Range(1, 1000000));
  if (auto done = demo::parse_args(app, argc, argv, rank)) {
    MPI_Finalize();
    return *done;
  }
  int status = 0;
  try {
    const std::vector<cove::Index> shape{n, n, n};
    const cove::BlockDecomposition slabs(cove::Box::from_shape(shape), std::vector<cove::Index>{size, 1, 1});
    const cove::Box mine = slabs.block(rank);
    const cove::Index nx = mine.count(0), plane = n * n;
    // Local field with one ghost plane on each side along x.
    std::vector<double> u((nx + 2) * plane, 0.0), next(u.size(), 0.0);
    auto at = [&](cove::Index i, cove::Index j, cove::Index k) -> double& { return u[(i + 1) * plane + j * n + k]; };
    for (cove::Index i = 0; i < nx; ++i)
      for (cove::Index j = 0; j < n; ++j)
        for (cove::Index k = 0; k < n; ++k) {
          const double x = static_cast<double>(mine.lo[0] + i) - n / 2.0, y = j - n / 2.0, z = k - n / 2.0;
          if (x * x + y * y + z * z < (n / 6.0) * (n / 6.0)) at(i, j, k) = 100.0;
        }

    cove::Client client = cove::connect(MPI_COMM_WORLD);
    client.define(demo::kField, cove::DType(cove::DTypeKind::Float64), 3, shape);
    const int up = rank > 0 ? rank - 1 : MPI_PROC_NULL, down = rank + 1 < size ? rank + 1 : MPI_PROC_NULL;
    const double alpha = 0.1;
    for (int step = 1; step <= steps; ++step) {
      // Ghost planes from the neighbours.
      MPI_Sendrecv(&u[plane], static_cast<int>(plane), MPI_DOUBLE, up, 0, &u[(nx + 1) * plane],
                   static_cast<int>(plane), MPI_DOUBLE, down, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Sendrecv(&u[nx * plane], static_cast<int>(plane), MPI_DOUBLE, down, 1, &u[0], static_cast<int>(plane),
                   MPI_DOUBLE, up, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      for (cove::Index i = 0; i < nx; ++i) {
        const cove::Index gi = mine.lo[0] + i;
        for (cove::Index j = 0; j < n; ++j)
          for (cove::Index k = 0; k < n; ++k) {
            double& out = next[(i + 1) * plane + j * n + k];
            if (gi == 0 || gi == n - 1 || j == 0 || j == n - 1 || k == 0 || k == n - 1) {
              out = 0.0;  // cold walls
              continue;
            }
            const double c = at(i, j, k);
            const double lap = at(i - 1, j, k) + at(i + 1, j, k) + at(i, j - 1, k) + at(i, j + 1, k) +
                               at(i, j, k - 1) + at(i, j, k + 1) - 6 * c;
            out = c + alpha * lap;
          }
      }
      std::swap(u, next);
      // Publish the slab (without ghosts) and the simulation's own checksum.
      client.put(demo::kField, static_cast<std::uint64_t>(step), mine, &u[plane],
                 static_cast<std::size_t>(nx * plane) * sizeof(double));
      std::uint64_t local = 0;
      for (cove::Index i = 0; i < nx * plane; ++i)
        local += demo::element_hash(static_cast<std::uint64_t>(mine.lo[0] * plane + i), u[plane + i]);
      std::uint64_t total = 0;
      MPI_Reduce(&local, &total, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
      if (rank == 0)
        client.put_meta(demo::kChecksum, static_cast<std::uint64_t>(step),
                        {reinterpret_cast<const std::byte*>(&total), sizeof total});
    }
    if (rank == 0) fmt::print("simulation: {} ranks, {}^3 cells, {} steps put\n", size, n, steps);
  } catch (const cove::Error& e) {
    fmt::print(stderr, "simulation rank {}: {}\n", rank, e.what());
    status = 1;
  }
  int worst = 0;
  MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
