// An MPI program for the integration tests: writers put (or put_local) a
// decomposed N-D array for several versions; readers, with another process
// count and decomposition, get their blocks and check every element against
// the value that encodes its global index.
//
//   cove-test-exchange --role writer|reader --ndim D --versions V [--local]
//                      [--timeout-ms T] [--reader-layout C|F]
// The server comes from COVE_CONNECT. Exit 0 when every check passed.
#include <cove/cove.hpp>
#include <cove/mpi.hpp>

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

const std::vector<cove::Index> kShapes[] = {{}, {1000}, {48, 40}, {20, 18, 16}, {9, 8, 7, 10}};

double value_at(const std::vector<cove::Index>& global, const std::vector<cove::Index>& shape, std::uint64_t version) {
  cove::Index lin = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) lin = lin * shape[d] + global[d];
  return static_cast<double>(lin) + 1e7 * static_cast<double>(version);
}

// Calls fn(global index, offset in a buffer holding `box` in `layout`) for every element.
template <typename Fn>
void for_each_element(const cove::Box& box, const cove::Layout& layout, Fn&& fn) {
  const auto strides = layout.strides(box);
  std::vector<cove::Index> x(box.lo.begin(), box.lo.begin() + box.ndim);
  for (;;) {
    cove::Index off = 0;
    for (int d = 0; d < box.ndim; ++d) off += (x[d] - box.lo[d]) * strides[d];
    fn(x, off);
    int d = box.ndim - 1;
    for (; d >= 0; --d) {
      if (++x[d] < box.hi[d]) break;
      x[d] = box.lo[d];
    }
    if (d < 0) return;
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::string role;
  int ndim = 3, versions = 2;
  bool local = false;
  std::int64_t timeout_ms = 60000;
  cove::Layout reader_layout = cove::Layout::c();
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--role") role = next();
    else if (a == "--ndim") ndim = std::atoi(next().c_str());
    else if (a == "--versions") versions = std::atoi(next().c_str());
    else if (a == "--local") local = true;
    else if (a == "--timeout-ms") timeout_ms = std::atoll(next().c_str());
    else if (a == "--reader-layout") reader_layout = cove::Layout::parse(next());
  }
  if ((role != "writer" && role != "reader") || ndim < 1 || ndim > 4 || versions < 1) {
    if (rank == 0) std::fprintf(stderr, "usage: %s --role writer|reader --ndim 1..4 --versions V [--local]\n", argv[0]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const auto& shape = kShapes[ndim];
  const cove::Box domain = cove::Box::from_shape(shape);
  int failures = 0;
  try {
    cove::Client client = cove::connect(MPI_COMM_WORLD);
    client.define("field", cove::DType(cove::DTypeKind::Float64), ndim, shape);
    client.define("done", cove::DType(cove::DTypeKind::Int32), 1, std::vector<cove::Index>{64});
    if (role == "writer") {
      // Writers cut the domain one way...
      const cove::BlockDecomposition dec(domain, size);
      const cove::Box mine = dec.block(rank);
      std::vector<std::vector<double>> data(static_cast<std::size_t>(versions));
      for (int v = 1; v <= versions; ++v) {
        auto& d = data[v - 1];
        d.resize(static_cast<std::size_t>(mine.volume()));
        for_each_element(mine, cove::Layout::c(),
                         [&](const std::vector<cove::Index>& g, cove::Index off) { d[off] = value_at(g, shape, v); });
        if (local)
          client.put_local("field", v, mine, d.data(), d.size() * 8);
        else
          client.put("field", v, mine, d.data(), d.size() * 8);
      }
      if (local) {  // put_local data must stay until the readers are done
        std::int32_t flag = 0;
        client.get("done", 1, cove::Box::from_start_count(std::vector<cove::Index>{0}, std::vector<cove::Index>{1}),
                   &flag, 4, timeout_ms);
      }
    } else {
      // ...readers another: the grid reversed, so blocks straddle writers' blocks.
      auto grid = cove::dims_create(size, ndim);
      std::reverse(grid.begin(), grid.end());
      for (int d = 0; d < ndim; ++d) grid[d] = std::min<cove::Index>(grid[d], shape[d]);
      const cove::BlockDecomposition dec(domain, grid);
      for (int v = 1; v <= versions; ++v) {
        for (cove::Index b = rank; b < dec.size(); b += size) {
          const cove::Box mine = dec.block(b);
          std::vector<double> got(static_cast<std::size_t>(mine.volume()), -1);
          client.get("field", v, mine, got.data(), got.size() * 8, timeout_ms, reader_layout);
          for_each_element(mine, reader_layout, [&](const std::vector<cove::Index>& g, cove::Index off) {
            if (got[off] != value_at(g, shape, v) && failures++ < 5)
              std::fprintf(stderr, "reader %d: version %d element %lld: got %.1f, want %.1f\n", rank, v,
                           static_cast<long long>(off), got[off], value_at(g, shape, v));
          });
        }
      }
      MPI_Barrier(MPI_COMM_WORLD);
      if (rank == 0 && local) {
        std::int32_t one = 1;
        client.put("done", 1, cove::Box::from_start_count(std::vector<cove::Index>{0}, std::vector<cove::Index>{1}),
                   &one, 4);
      }
    }
  } catch (const cove::Error& e) {
    std::fprintf(stderr, "%s %d: %s\n", role.c_str(), rank, e.what());
    failures++;
  }
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("%s x%d: %s\n", role.c_str(), size, total ? "FAILED" : "all elements checked");
  MPI_Finalize();
  return total ? 1 : 0;
}
