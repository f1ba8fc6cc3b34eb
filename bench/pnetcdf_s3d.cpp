// The S3D-IO checkpoint exchange DTF was measured with (Martsinkevich et
// al.): four variables over a 3-D block decomposition, two 3-D (pressure,
// temperature) and two 4-D (velocity with 3 components, yspecies with 11),
// written by one program and read by another whose decomposition differs.
//
// --api pnetcdf uses only the PnetCDF API, so the same binary runs on real
// files or, under LD_PRELOAD=libcove-pnetcdf.so, through Cove; --api cove
// does the same exchange with Cove's native put/get (the close is a
// put_meta, as the interposer publishes). Readers check every element
// (untimed). Rank 0 prints one line of figures per role:
//   RESULT role=writer steps=S bytes=B write_s=.. close_s=..   (medians per step)
//   RESULT role=reader steps=S bytes=B read_s=..
//
// Usage: cove-pnetcdf-s3d --role writer|reader --api pnetcdf|cove --file PATH
//          --edge N --writers W [--steps S] [--sync] [--drop] [--sleep-ms MS]
#include "bench_cli.hpp"

#include <cove/client.hpp>

#include <fmt/format.h>
#include <mpi.h>
#include <pnetcdf.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Variable {
  const char* name;
  int components;  // 0: a 3-D variable
};
constexpr std::array<Variable, 4> kVars{{{"pressure", 0}, {"temperature", 0}, {"velocity", 3}, {"yspecies", 11}}};

struct Block {
  std::array<MPI_Offset, 3> start{}, count{};  // z, y, x
  std::size_t cells() const { return static_cast<std::size_t>(count[0] * count[1] * count[2]); }
};

Block block_of(const std::array<MPI_Offset, 3>& global, const std::array<int, 3>& grid, int rank) {
  Block b;
  const std::array<int, 3> at{rank / (grid[1] * grid[2]), rank / grid[2] % grid[1], rank % grid[2]};
  for (int d = 0; d < 3; ++d) {
    const MPI_Offset lo = global[d] * at[d] / grid[d], hi = global[d] * (at[d] + 1) / grid[d];
    b.start[d] = lo;
    b.count[d] = hi - lo;
  }
  return b;
}

double value(int var, int comp, MPI_Offset z, MPI_Offset y, MPI_Offset x, int step, const std::array<MPI_Offset, 3>& g) {
  return static_cast<double>(((z * g[1] + y) * g[2] + x)) + 1e9 * comp + 1e11 * var + 1e12 * step;
}

void check(int err, const char* what) {
  if (err != NC_NOERR) {
    fmt::print(stderr, "cove-pnetcdf-s3d: {}: {}\n", what, ncmpi_strerror(err));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

double now() { return MPI_Wtime(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CLI::App app{"S3D-IO shaped PnetCDF exchange"};
  std::string role, api = "pnetcdf", file;
  int edge = 32, writers = 1, steps = 3, sleep_ms = 0;
  bool sync = false, drop = false;
  app.add_option("--role", role)->required()->check(CLI::IsMember({"writer", "reader"}));
  app.add_option("--api", api)->check(CLI::IsMember({"pnetcdf", "cove"}));
  app.add_option("--file", file)->required();
  app.add_option("--edge", edge, "cells per writer block edge")->check(CLI::Range(1, 4096));
  app.add_option("--writers", writers, "writer processes (fixes the global domain)")->check(CLI::Range(1, 4096));
  app.add_option("--steps", steps)->check(CLI::Range(1, 1000));
  app.add_flag("--sync", sync, "writer: ncmpi_sync before close (timed)");
  app.add_flag("--drop", drop, "reader: drop the file from the page cache before opening it (untimed)");
  app.add_option("--sleep-ms", sleep_ms, "reader: sleep before each step (a slow reader)");
  if (auto rc = cove::bench::parse_args(app, argc, argv, rank)) {
    MPI_Finalize();
    return *rc;
  }
  std::array<int, 3> wgrid{0, 0, 0};
  MPI_Dims_create(writers, 3, wgrid.data());
  const std::array<MPI_Offset, 3> global{MPI_Offset{edge} * wgrid[0], MPI_Offset{edge} * wgrid[1],
                                         MPI_Offset{edge} * wgrid[2]};
  std::array<int, 3> grid{0, 0, 0};
  MPI_Dims_create(size, 3, grid.data());
  if (role == "reader") std::reverse(grid.begin(), grid.end());  // another decomposition
  const Block me = block_of(global, grid, rank);
  std::size_t per_cell = 0;
  for (const auto& v : kVars) per_cell += std::max(v.components, 1);
  std::vector<double> data(me.cells() * per_cell);
  std::optional<cove::Client> client;
  if (api == "cove") client = cove::Client::connect();
  auto box_of = [&](const Variable& v) {
    std::vector<cove::Index> start, count;
    if (v.components > 0) start.push_back(0), count.push_back(v.components);
    for (int d = 0; d < 3; ++d) start.push_back(me.start[d]), count.push_back(me.count[d]);
    return cove::Box::from_start_count(start, count);
  };
  auto fill = [&](int step) {
    std::size_t k = 0;
    for (int var = 0; var < 4; ++var)
      for (int c = 0; c < std::max(kVars[var].components, 1); ++c)
        for (MPI_Offset z = 0; z < me.count[0]; ++z)
          for (MPI_Offset y = 0; y < me.count[1]; ++y)
            for (MPI_Offset x = 0; x < me.count[2]; ++x)
              data[k++] = value(var, c, me.start[0] + z, me.start[1] + y, me.start[2] + x, step, global);
  };

  std::vector<double> t_main, t_close;
  long long bad = 0;
  for (int step = 1; step <= steps; ++step) {
    if (role == "writer") {
      fill(step);
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = now();
      double t1 = t0;
      if (api == "pnetcdf") {
        int nc, dims[4], ids[4];
        check(ncmpi_create(MPI_COMM_WORLD, file.c_str(), NC_CLOBBER | NC_64BIT_DATA, MPI_INFO_NULL, &nc), "create");
        check(ncmpi_def_dim(nc, "z", global[0], &dims[1]), "def_dim");
        check(ncmpi_def_dim(nc, "y", global[1], &dims[2]), "def_dim");
        check(ncmpi_def_dim(nc, "x", global[2], &dims[3]), "def_dim");
        int comp3, comp11;
        check(ncmpi_def_dim(nc, "three", 3, &comp3), "def_dim");
        check(ncmpi_def_dim(nc, "nspecies", 11, &comp11), "def_dim");
        for (int var = 0; var < 4; ++var) {
          dims[0] = kVars[var].components == 3 ? comp3 : comp11;
          const bool four = kVars[var].components > 0;
          check(ncmpi_def_var(nc, kVars[var].name, NC_DOUBLE, four ? 4 : 3, four ? dims : dims + 1, &ids[var]), "def_var");
        }
        check(ncmpi_enddef(nc), "enddef");
        std::size_t k = 0;
        for (int var = 0; var < 4; ++var) {
          const int comps = kVars[var].components;
          std::array<MPI_Offset, 4> s{0, me.start[0], me.start[1], me.start[2]}, c{comps, me.count[0], me.count[1], me.count[2]};
          const bool four = comps > 0;
          check(ncmpi_put_vara_double_all(nc, ids[var], four ? s.data() : s.data() + 1, four ? c.data() : c.data() + 1,
                                          data.data() + k), "put_vara");
          k += me.cells() * std::max(comps, 1);
        }
        if (sync) check(ncmpi_sync(nc), "sync");
        t1 = now();
        check(ncmpi_close(nc), "close");
      } else {
        std::size_t k = 0;
        for (int var = 0; var < 4; ++var) {
          const auto& v = kVars[var];
          const std::string name = fmt::format("s3d:{}:{}", file, v.name);
          client->define(name, cove::DTypeKind::Float64, v.components > 0 ? 4 : 3);
          const std::size_t n = me.cells() * std::max(v.components, 1);
          client->put(name, static_cast<std::uint64_t>(step), box_of(v), data.data() + k, n * sizeof(double));
          k += n;
        }
        t1 = now();
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
          const std::byte done{1};
          client->put_meta("s3d:" + file, static_cast<std::uint64_t>(step), std::span(&done, 1));
        }
      }
      const double t2 = now();
      double mine[2] = {t2 - t0, t2 - t1}, all[2];
      MPI_Reduce(mine, all, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
      t_main.push_back(all[0]);
      t_close.push_back(all[1]);
    } else {
      if (sleep_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
      if (drop && rank == 0) {
        const int fd = ::open(file.c_str(), O_RDONLY);
        if (fd >= 0) {
          ::fsync(fd);
          ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
          ::close(fd);
        }
      }
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = now();
      if (api == "pnetcdf") {
        int nc;
        check(ncmpi_open(MPI_COMM_WORLD, file.c_str(), NC_NOWRITE, MPI_INFO_NULL, &nc), "open");
        std::size_t k = 0;
        for (int var = 0; var < 4; ++var) {
          int id;
          check(ncmpi_inq_varid(nc, kVars[var].name, &id), "inq_varid");
          const int comps = kVars[var].components;
          std::array<MPI_Offset, 4> s{0, me.start[0], me.start[1], me.start[2]}, c{comps, me.count[0], me.count[1], me.count[2]};
          const bool four = comps > 0;
          check(ncmpi_get_vara_double_all(nc, id, four ? s.data() : s.data() + 1, four ? c.data() : c.data() + 1,
                                          data.data() + k), "get_vara");
          k += me.cells() * std::max(comps, 1);
        }
        check(ncmpi_close(nc), "close");
      } else {
        if (rank == 0) client->get_meta("s3d:" + file, static_cast<std::uint64_t>(step), 60000);
        MPI_Barrier(MPI_COMM_WORLD);
        std::size_t k = 0;
        for (const auto& v : kVars) {
          const std::size_t n = me.cells() * std::max(v.components, 1);
          client->get(fmt::format("s3d:{}:{}", file, v.name), static_cast<std::uint64_t>(step), box_of(v),
                      data.data() + k, n * sizeof(double), 0);
          k += n;
        }
      }
      const double mine = now() - t0;
      double all = 0;
      MPI_Reduce(&mine, &all, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
      t_main.push_back(all);
      // With real files only the last step is on disk.
      const int expect = api == "pnetcdf" && ::access(file.c_str(), F_OK) == 0 && steps > 1 ? -1 : step;
      std::size_t k = 0;
      for (int var = 0; var < 4; ++var)
        for (int c = 0; c < std::max(kVars[var].components, 1); ++c)
          for (MPI_Offset z = 0; z < me.count[0]; ++z)
            for (MPI_Offset y = 0; y < me.count[1]; ++y)
              for (MPI_Offset x = 0; x < me.count[2]; ++x) {
                const double want = value(var, c, me.start[0] + z, me.start[1] + y, me.start[2] + x,
                                          expect < 0 ? steps : expect, global);
                bad += data[k++] != want;
              }
    }
  }
  long long all_bad = 0;
  MPI_Reduce(&bad, &all_bad, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  const double bytes = static_cast<double>(global[0] * global[1] * global[2]) * static_cast<double>(per_cell) * 8;
  if (rank == 0) {
    if (role == "writer") {
      fmt::print("RESULT role=writer steps={} bytes={:.0f} write_s={:.6f} close_s={:.6f}\n", steps, bytes,
                 median(t_main), median(t_close));
    } else {
      fmt::print("RESULT role=reader steps={} bytes={:.0f} read_s={:.6f} wrong={}\n", steps, bytes, median(t_main),
                 all_bad);
    }
  }
  MPI_Finalize();
  return all_bad == 0 ? 0 : 1;
}
