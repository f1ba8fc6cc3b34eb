// Core benchmark: region copy, layout reorganisation and the spatial index,
// each reported against the machine's memcpy bandwidth measured in the same
// run on the same number of bytes.
//
// Usage: cove-core-bench [--quick] [--csv FILE]
#include "bench_cli.hpp"

#include <cove/cove.hpp>
#include <cove/detail/thread_pool.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

int g_reps = 7;

// Median wall time of `reps` runs of fn, after one warm-up run.
double median_seconds(const std::function<void()>& fn) {
  fn();
  std::vector<double> t;
  for (int i = 0; i < g_reps; ++i) {
    const auto t0 = Clock::now();
    fn();
    t.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// memcpy of `bytes` from a source that is not in any cache: the copies
// rotate through a pool much larger than the last-level cache.
double cold_memcpy_gbps(std::size_t bytes) {
  const std::size_t pool_bytes = std::max<std::size_t>(bytes * 16, std::size_t{512} << 20);
  std::vector<unsigned char> pool(pool_bytes, 1), dst(bytes, 2);
  const std::size_t slots = pool_bytes / bytes;
  std::size_t next = 0;
  const double s = median_seconds([&] {
    std::memcpy(dst.data(), pool.data() + (next++ % slots) * bytes, bytes);
  });
  return static_cast<double>(bytes) / s / 1e9;
}

double memcpy_gbps(std::size_t bytes) {
  std::vector<unsigned char> a(bytes, 1), b(bytes, 2);
  const double s = median_seconds([&] { std::memcpy(b.data(), a.data(), bytes); });
  return static_cast<double>(bytes) / s / 1e9;
}

struct Row {
  std::string name;
  std::string value;     // measured, human units
  std::string baseline;  // what it is compared with
  double ratio;          // measured / baseline
  std::string target;
  bool met;
};

std::vector<Row> g_rows;

void report_copy(const std::string& name, std::size_t bytes, double seconds, double memcpy_bw, double target) {
  const double gbps = static_cast<double>(bytes) / seconds / 1e9;
  g_rows.push_back({name, fmt::format("{:.2f} GB/s ({:.1f} ms)", gbps, seconds * 1e3),
                    fmt::format("memcpy {:.2f} GB/s", memcpy_bw), gbps / memcpy_bw, fmt::format(">= {:.2f}", target),
                    gbps / memcpy_bw >= target});
}

cove::Box cube(int ndim, cove::Index lo, cove::Index side) {
  cove::Box b;
  b.ndim = ndim;
  for (int d = 0; d < ndim; ++d) {
    b.lo[d] = lo;
    b.hi[d] = lo + side;
  }
  return b;
}

// Checks `samples` random elements of a copy from a C-ordered source whose
// values are their linear indices.
template <typename T>
void verify(const std::vector<T>& dst, const cove::Box& src_box, const cove::Box& dst_box,
            const cove::Layout& dst_layout, const cove::Box& region, const char* what) {
  std::mt19937_64 rng(7);
  const auto ss = cove::Layout::c().strides(src_box), ds = dst_layout.strides(dst_box);
  for (int k = 0; k < 20000; ++k) {
    cove::Index so = 0, dof = 0;
    for (int d = 0; d < region.ndim; ++d) {
      const cove::Index x = region.lo[d] + static_cast<cove::Index>(rng() % region.count(d));
      so += (x - src_box.lo[d]) * ss[d];
      dof += (x - dst_box.lo[d]) * ds[d];
    }
    if (dst[dof] != static_cast<T>(so)) {
      fmt::print(stderr, "benchmark copy '{}' produced a wrong element\n", what);
      std::exit(1);
    }
  }
}

template <typename T>
std::vector<T> iota_vector(std::size_t n) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<T>(i);
  return v;
}

void bench_subarray() {
  const cove::Box src_box = cube(3, 0, 256), region = cube(3, 64, 128);
  const auto src = iota_vector<double>(256 * 256 * 256);
  std::vector<double> dst(128 * 128 * 128, -1);
  const std::size_t bytes = dst.size() * sizeof(double);
  cove::CopyOptions one;
  one.threads = 1;
  const double s = median_seconds([&] {
    cove::copy_region({src.data(), src.size() * 8, src_box, cove::Layout::c()},
                      {dst.data(), bytes, region, cove::Layout::c()}, region, 8, one);
  });
  verify(dst, src_box, region, cove::Layout::c(), region, "subarray");
  report_copy("central 128^3 of 256^3 f64, same layout, 1 thread", bytes, s, memcpy_gbps(bytes), 0.8);
  // The 16 MiB memcpy above runs from the last-level cache; the region is
  // read from a 128 MiB array in memory. The same copy against a memcpy
  // whose source is also in memory:
  report_copy("  same copy vs memcpy from a cold source", bytes, s, cold_memcpy_gbps(bytes), 0.8);
  g_rows.back().baseline = "cold " + g_rows.back().baseline;
}

template <typename T>
void bench_reorganize(const std::string& name, const cove::Box& box, double target, bool threaded_too) {
  const std::size_t n = static_cast<std::size_t>(box.volume()), bytes = n * sizeof(T);
  const auto src = iota_vector<T>(n);
  std::vector<T> dst(n);
  const double mbw = memcpy_gbps(bytes);
  auto run = [&](int threads) {
    cove::CopyOptions opt;
    opt.threads = threads;
    return median_seconds([&] {
      cove::copy_region({src.data(), bytes, box, cove::Layout::c()}, {dst.data(), bytes, box, cove::Layout::f()},
                        box, sizeof(T), opt);
    });
  };
  const double one = run(1);
  verify(dst, box, box, cove::Layout::f(), box, name.c_str());
  report_copy(name + ", 1 thread", bytes, one, mbw, target);
  if (threaded_too) {
    const int threads = cove::detail::ThreadPool::shared().size();
    const double all = run(0);
    verify(dst, box, box, cove::Layout::f(), box, name.c_str());
    g_rows.push_back({name + ", all threads",
                      fmt::format("{:.2f} GB/s ({:.1f} ms), {} threads", static_cast<double>(bytes) / all / 1e9,
                                  all * 1e3, threads),
                      fmt::format("1 thread {:.1f} ms", one * 1e3), one / all, "report speed-up", true});
  }
}

// A 100^3 grid of 10^3-cell blocks; queries are block-sized boxes at random
// offsets, so each hits at most 8 blocks. Inserted in random order (the
// hard case for an R-tree) or in decomposition order (block after block,
// as writers' pieces reach a staging server).
void bench_index(bool random_order) {
  constexpr cove::Index kSide = 100, kBlock = 10;
  std::vector<cove::Box> boxes;
  boxes.reserve(kSide * kSide * kSide);
  for (cove::Index i = 0; i < kSide; ++i)
    for (cove::Index j = 0; j < kSide; ++j)
      for (cove::Index k = 0; k < kSide; ++k) {
        cove::Box b;
        b.ndim = 3;
        b.lo = {i * kBlock, j * kBlock, k * kBlock};
        b.hi = {(i + 1) * kBlock, (j + 1) * kBlock, (k + 1) * kBlock};
        boxes.push_back(b);
      }
  std::mt19937_64 rng(42);
  if (random_order) std::shuffle(boxes.begin(), boxes.end(), rng);
  const std::string order = random_order ? "random order" : "decomposition order";
  cove::SpatialIndex index(3);
  auto t0 = Clock::now();
  for (std::size_t i = 0; i < boxes.size(); ++i) index.insert(boxes[i], i);
  const double insert_s = std::chrono::duration<double>(Clock::now() - t0).count();

  constexpr int kQueries = 100000;
  std::vector<cove::Box> queries(kQueries);
  std::uniform_int_distribution<cove::Index> pos(0, kSide * kBlock - kBlock);
  for (auto& q : queries) {
    q.ndim = 3;
    for (int d = 0; d < 3; ++d) {
      q.lo[d] = pos(rng);
      q.hi[d] = q.lo[d] + kBlock;
    }
  }
  std::size_t hits = 0, most = 0;
  t0 = Clock::now();
  for (const auto& q : queries) {
    std::size_t h = 0;
    index.query(q, [&](const cove::Box&, std::uint64_t) { ++h; });
    hits += h;
    most = std::max(most, h);
  }
  const double query_s = std::chrono::duration<double>(Clock::now() - t0).count();
  if (most > 8 || hits < kQueries) {
    fmt::print(stderr, "index benchmark: unexpected hit counts (max {}, total {})\n", most, hits);
    std::exit(1);
  }
  const double ins_rate = static_cast<double>(boxes.size()) / insert_s;
  g_rows.push_back({"index: insert 10^6 boxes, " + order,
                    fmt::format("{:.2f}M inserts/s (height {})", ins_rate / 1e6, index.height()), "1M/s",
                    ins_rate / 1e6, ">= 1", ins_rate >= 1e6});
  const double q_rate = kQueries / query_s;
  g_rows.push_back({"index: 10^5 queries, <= 8 hits each, " + order,
                    fmt::format("{:.2f}M queries/s ({:.1f} hits avg)", q_rate / 1e6,
                                static_cast<double>(hits) / kQueries),
                    "1M/s", q_rate / 1e6, ">= 1", q_rate >= 1e6});
}

}  // namespace

int main(int argc, char** argv) {
  std::string csv;
  bool quick = false;
  CLI::App app{"cove-core-bench: the region engine and the spatial index against memcpy", "cove-core-bench"};
  app.add_flag("--quick", quick, "3 runs per case instead of the default");
  app.add_option("--csv", csv, "also write the table to this CSV file");
  if (auto done = cove::bench::parse_args(app, argc, argv)) return *done;
  if (quick) g_reps = 3;
  fmt::print("Cove core benchmark: {} hardware threads, median of {} runs per case\n",
             std::thread::hardware_concurrency(), g_reps);
  bench_subarray();
  bench_reorganize<double>("256^3 f64 C->F", cube(3, 0, 256), 0.5, false);
  bench_reorganize<float>("8192^2 f32 transpose", cube(2, 0, 8192), 0.5, true);
  bench_index(true);
  bench_index(false);

  fmt::print("\n{:<56} | {:<42} | {:<24} | {:>6} | {:<15} |\n", "case", "measured", "compared with", "ratio",
             "target");
  fmt::print("{}\n", std::string(160, '-'));
  bool all_met = true;
  for (const auto& r : g_rows) {
    fmt::print("{:<56} | {:<42} | {:<24} | {:>6.2f} | {:<15} | {}\n", r.name, r.value, r.baseline, r.ratio, r.target,
               r.met ? "met" : "MISSED");
    all_met = all_met && r.met;
  }
  if (!csv.empty()) {
    std::ofstream out(csv);
    out << "case,measured,compared_with,ratio,target,met\n";
    for (const auto& r : g_rows)
      out << '"' << r.name << "\",\"" << r.value << "\",\"" << r.baseline << "\"," << r.ratio << ",\"" << r.target
          << "\"," << (r.met ? "yes" : "no") << '\n';
  }
  fmt::print("\n{}\n", all_met ? "all targets met" : "some targets missed (see MISSED above)");
  return 0;
}
