// cove-gpu-bench: the GPU paths against the device's own copies, measured
// in the same run (docs/gpu.md; the DataSpaces-GPU paper's synthetic
// writer/reader benchmark). Needs a GPU; prints SKIPPED and exits 0
// without one.
//
//   1. The reassembly kernel: a 3-D region assembled from 8 pieces (C) into
//      F order, float64 and 12-byte elements, against a device-to-device
//      cudaMemcpy of the same bytes.
//   2. Puts from device memory by every sender path and gets into device
//      memory by every receiver path, message sizes 8 MiB to 1 GiB, through
//      a real cove-server (started here, stopped by its PID), against a
//      pinned cudaMemcpy of the same bytes (device to host for puts, host
//      to device for gets).
#include <cove/client.hpp>
#include <cove/region_copy.hpp>

#include <cuda_runtime.h>
#include <fmt/core.h>

#include "bench_cli.hpp"
#include "gpu/assembly.hpp"
#include "gpu/device.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

extern char** environ;

namespace {

using cove::Box;
using cove::Index;
using cove::Layout;
using Clock = std::chrono::steady_clock;

void cuda_ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// Median seconds of `reps` runs of fn (after one warm-up), timed on the host
// around a device synchronisation.
double median_seconds(int reps, const std::function<void()>& fn) {
  fn();
  cuda_ok(cudaDeviceSynchronize(), "sync");
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    fn();
    cuda_ok(cudaDeviceSynchronize(), "sync");
    t.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

double gbps(std::size_t bytes, double s) { return static_cast<double>(bytes) / s / 1e9; }

// `whole` cut in two along each of its three axes.
std::vector<Box> octants(const Box& whole) {
  std::vector<Box> out;
  for (int p = 0; p < 8; ++p) {
    Box b = whole;
    for (int d = 0; d < 3; ++d) {
      const Index mid = whole.count(d) / 2;
      if (p >> d & 1)
        b.lo[d] = mid;
      else
        b.hi[d] = mid;
    }
    out.push_back(b);
  }
  return out;
}

// 8 pieces (2 x 2 x 2, C order) of a region of `shape`, assembled into F.
void kernel_row(const char* name, const std::vector<Index>& shape, std::size_t elem, int reps, double memcpy_gbps) {
  const Box region = Box::from_shape(shape);
  const std::size_t bytes = static_cast<std::size_t>(region.volume()) * elem;
  void* out = nullptr;
  cuda_ok(cudaMalloc(&out, bytes), "cudaMalloc");
  std::vector<void*> in;
  std::vector<cove::gpu::PieceCopy> copies;
  int p = 0;
  for (const Box& b : octants(region)) {
    const std::size_t n = static_cast<std::size_t>(b.volume()) * elem;
    void* d = nullptr;
    cuda_ok(cudaMalloc(&d, n), "cudaMalloc");
    cuda_ok(cudaMemset(d, p++, n), "cudaMemset");
    in.push_back(d);
    copies.push_back({{d, n, b, Layout::c()}, {out, bytes, region, Layout::f()}, b});
  }
  const auto plans = cove::gpu::make_plans(copies, elem);
  const double s = median_seconds(reps, [&] {
    cove::gpu::check(cove::gpu::runtime()->reassemble(plans.data(), static_cast<int>(plans.size()), nullptr));
  });
  fmt::print("| {} | {} MiB | {:.3f} ms | {:.0f} GB/s | {:.2f} |\n", name, bytes >> 20, s * 1e3, gbps(bytes, s),
             gbps(bytes, s) / memcpy_gbps);
  for (void* d : in) cudaFree(d);
  cudaFree(out);
}

void kernel_bench(int reps) {
  const std::vector<Index> shape = {256, 512, 256};  // 256 MiB of float64
  const std::size_t bytes = std::size_t{256} << 20;
  void *a = nullptr, *b = nullptr;
  cuda_ok(cudaMalloc(&a, bytes * 3 / 2), "cudaMalloc");
  cuda_ok(cudaMalloc(&b, bytes * 3 / 2), "cudaMalloc");
  const double d2d = median_seconds(reps, [&] { cuda_ok(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice), "copy"); });
  const double d2d12 =
      median_seconds(reps, [&] { cuda_ok(cudaMemcpy(b, a, bytes * 3 / 2, cudaMemcpyDeviceToDevice), "copy"); });
  cudaFree(a);
  cudaFree(b);
  fmt::print("\n### Reassembly kernel: 3-D region from 8 pieces, C -> F\n\n");
  fmt::print("device-to-device cudaMemcpy, same run: {:.0f} GB/s (256 MiB), {:.0f} GB/s (384 MiB); "
             "bandwidths count the bytes copied once\n\n",
             gbps(bytes, d2d), gbps(bytes * 3 / 2, d2d12));
  fmt::print("| elements | region | kernel time | kernel bandwidth | × cudaMemcpy |\n| --- | --- | --- | --- | --- |\n");
  kernel_row("float64 (8 B)", shape, 8, reps, gbps(bytes, d2d));
  kernel_row("12-byte", shape, 12, reps, gbps(bytes * 3 / 2, d2d12));
}

// A cove-server of our own, stopped by its PID.
struct ServerProcess {
  pid_t pid = -1;
  std::string dir, conn;
  explicit ServerProcess(const std::string& binary) {
    char tmpl[] = "/tmp/cove-gpu-bench-XXXXXX";
    if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
    dir = tmpl;
    conn = dir + "/cove.conn";
    // A budget of 16 GiB keeps 4 GiB of freed blocks for reuse: the
    // steps of a workflow put pieces of the same sizes again.
    std::vector<std::string> args = {binary, "--connection-file", conn, "--transport", "local",
                                     "--memory-budget", "16GiB", "--log-file", dir + "/server.log"};
    if (getuid() == 0) args.push_back("--allow-run-as-root");
    std::vector<char*> argv;
    for (auto& s : args) argv.push_back(s.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid, binary.c_str(), nullptr, nullptr, argv.data(), environ) != 0)
      throw std::runtime_error("cannot start " + binary);
    for (int i = 0; i < 400 && !std::filesystem::exists(conn); ++i) usleep(25000);
    if (!std::filesystem::exists(conn)) throw std::runtime_error("cove-server did not start (see " + dir + ")");
  }
  ~ServerProcess() {
    if (pid > 0) {
      kill(pid, SIGTERM);
      waitpid(pid, nullptr, 0);
    }
    std::filesystem::remove_all(dir);
  }
};

cove::Client connect(const std::string& conn, cove::DeviceSendPath send, cove::DeviceRecvPath recv) {
  cove::ConnectOptions o;
  o.send_path = send;
  o.recv_path = recv;
  return cove::Client::connect(conn, o);
}

void staging_bench(const std::string& server_binary, const std::vector<int>& sizes_mib, int reps) {
  ServerProcess server(server_binary);
  using S = cove::DeviceSendPath;
  using R = cove::DeviceRecvPath;
  const std::vector<S> sends = {S::baseline, S::pipeline, S::direct};
  const std::vector<R> recvs = {R::baseline, R::hybrid, R::direct};
  fmt::print("\n### Puts from and gets into device memory, one node, through cove-server\n\n");
  fmt::print("Median of {} runs after a warm-up. Puts: one piece of the message size; gets: the whole region, "
             "stored as 8 pieces (2 x 2 x 2), into device memory in C order. memcpy: pinned host memory, same run.\n\n",
             reps);
  fmt::print("| size | put baseline | put pipeline | put direct | direct vs baseline | D2H memcpy | direct vs memcpy "
             "| get baseline | get hybrid | get direct | best vs baseline | H2D memcpy | best vs memcpy |\n");
  fmt::print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
  std::uint64_t version = 0;
  for (int mib : sizes_mib) {
    const std::size_t bytes = static_cast<std::size_t>(mib) << 20;
    const std::vector<Index> shape = {static_cast<Index>(mib) * 2, 256, 256};  // float64
    const Box whole = Box::from_shape(shape);
    const std::string var = "field" + std::to_string(mib);
    void *dev = nullptr, *pinned = nullptr;
    cuda_ok(cudaMalloc(&dev, bytes), "cudaMalloc");
    cuda_ok(cudaMemset(dev, 1, bytes), "cudaMemset");
    cuda_ok(cudaMallocHost(&pinned, bytes), "cudaMallocHost");
    const double d2h = median_seconds(reps, [&] { cuda_ok(cudaMemcpy(pinned, dev, bytes, cudaMemcpyDeviceToHost), "D2H"); });
    const double h2d = median_seconds(reps, [&] { cuda_ok(cudaMemcpy(dev, pinned, bytes, cudaMemcpyHostToDevice), "H2D"); });
    std::vector<double> put_s;
    for (S path : sends) {
      auto c = connect(server.conn, path, R::automatic);
      c.define(var, cove::DType(cove::DTypeKind::Float64), 3, shape);
      put_s.push_back(median_seconds(reps, [&] {
        const std::uint64_t v = ++version;
        c.put(var, v, whole, dev, bytes);
        c.remove(var, v);  // timed too, but small: frees the server's memory for the next
      }));
    }
    // The region as 8 pieces on the server, for the gets.
    auto writer = connect(server.conn, S::direct, R::automatic);
    const std::uint64_t v = ++version;
    double value = 0;
    for (const Box& b : octants(whole)) {
      std::vector<double> part(static_cast<std::size_t>(b.volume()), ++value);
      writer.put(var, v, b, part.data(), part.size() * sizeof(double));
    }
    std::vector<double> get_s;
    for (R path : recvs) {
      auto c = connect(server.conn, S::automatic, path);
      get_s.push_back(median_seconds(reps, [&] { c.get(var, v, whole, dev, bytes, 10000); }));
    }
    writer.remove(var, v);
    const double best_get = std::min(get_s[1], get_s[2]);
    const auto cell = [&](double s) { return fmt::format("{:.1f} ms ({:.1f} GB/s)", s * 1e3, gbps(bytes, s)); };
    fmt::print("| {} MiB | {} | {} | {} | {:.2f}× | {} | {:.2f} | {} | {} | {} | {:.2f}× | {} | {:.2f} |\n", mib,
               cell(put_s[0]), cell(put_s[1]), cell(put_s[2]), put_s[0] / put_s[2], cell(d2h), d2h / put_s[2],
               cell(get_s[0]), cell(get_s[1]), cell(get_s[2]), get_s[0] / best_get, cell(h2d), h2d / best_get);
    cudaFree(dev);
    cudaFreeHost(pinned);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cove-gpu-bench: Cove's GPU paths against the device's own copies (docs/gpu.md)"};
  std::string server = "cove-server";
  std::vector<int> sizes = {8, 64, 256, 1024};
  int reps = 5;
  bool kernel_only = false;
  app.add_option("--server", server, "the cove-server program to start");
  app.add_option("--sizes", sizes, "message sizes, MiB")->delimiter(',');
  app.add_option("--reps", reps, "timed runs per figure (the median is shown)")->check(CLI::PositiveNumber);
  app.add_flag("--kernel-only", kernel_only, "only the reassembly kernel");
  if (auto rc = cove::bench::parse_args(app, argc, argv)) return *rc;
  if (!cove::device_memory_available()) {
    fmt::print("SKIPPED: no GPU is visible here (or Cove has no CUDA)\n");
    return 0;
  }
  try {
    cudaDeviceProp prop{};
    cuda_ok(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    fmt::print("## cove-gpu-bench on {} ({} SMs, {} MiB)\n", prop.name, prop.multiProcessorCount,
               prop.totalGlobalMem >> 20);
    kernel_bench(reps);
    if (!kernel_only) staging_bench(server, sizes, reps);
  } catch (const std::exception& e) {
    fmt::print(stderr, "cove-gpu-bench: {}\n", e.what());
    return 1;
  }
  return 0;
}
