// The device tests' program (tests/gpu/run.sh drives it; docs/gpu.md):
//
//   cove-gpu-check kernel
//       the reassembly kernel on the GPU: 8 pieces of a 3-D region, and
//       pieces of 1-, 2-, 4- and 10-D regions, for every layout pair and
//       element sizes 1 to 48 bytes, against copy_region on the host;
//   cove-gpu-check write|read --connect FILE --var NAME --rank R --ranks N
//       --versions V --mem device|host [--op put|put_local] [--layout C|F]
//       [--readers M]
//       one writer or reader of an n -> m exchange of a 3-D float64 array:
//       writers split axis 0, readers axis 1; every element a reader gets
//       is checked. put_local writers wait for every reader's "done" before
//       they release. The paths come from COVE_GPU_SEND / COVE_GPU_RECV;
//   cove-gpu-check semantics --connect FILE --var NAME
//       the store's promises read into device memory (docs/staging.md,
//       "What a version promises"): overlapping boxes put in turn from
//       device memory (put) and host memory (put and put_local) read as
//       painted in that order, whole and in random parts, C and F order;
//       a sealed version's unwritten cells read as the fill value. The
//       receive path comes from COVE_GPU_RECV;
//   COVE_CUDA=0 cove-gpu-check refuse --connect FILE --var NAME
//       device buffers handed to a Cove that may not use CUDA (while the
//       program does) are refused with Unsupported, never read as host memory.
//
// Exits 0 when every check passed, 1 on a wrong byte or error, and 77
// (skipped, with a message) where no GPU is visible.
#include <cove/client.hpp>
#include <cove/error.hpp>
#include <cove/region_copy.hpp>

#include <cuda_runtime.h>

#include "gpu/assembly.hpp"
#include "gpu/device.hpp"
#include "gpu_cases.hpp"
#include "random_box.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {

using cove::Box;
using cove::Index;
using cove::Layout;

#define CUDA_OK(call)                                                                          \
  do {                                                                                         \
    const cudaError_t e_ = (call);                                                             \
    if (e_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (0)


// One case of the kernel check: pieces cut from a region (2 per axis on
// the first three axes) in `src_kind` layouts, assembled into `dst_kind`.
bool kernel_case(const std::vector<Index>& shape, std::size_t elem, int src_kind, int dst_kind, std::mt19937_64& rng) {
  const int ndim = static_cast<int>(shape.size());
  const Box whole = Box::from_shape(shape);
  const Box region = cove_test::reader_region(whole);
  const Layout out_layout = cove_test::layout_of(dst_kind, ndim, rng);
  const std::size_t out_bytes = static_cast<std::size_t>(region.volume()) * elem;
  std::vector<unsigned char> expected(out_bytes, 0xEE), actual(out_bytes);
  void* dev_out = nullptr;
  CUDA_OK(cudaMalloc(&dev_out, out_bytes));
  CUDA_OK(cudaMemset(dev_out, 0xEE, out_bytes));
  std::vector<void*> dev_in;
  std::vector<cove::gpu::PieceCopy> copies;
  for (const Box& b : cove_test::octants(whole)) {
    const Layout in_layout = cove_test::layout_of(src_kind, ndim, rng);
    std::vector<unsigned char> bytes(static_cast<std::size_t>(b.volume()) * elem);
    for (auto& v : bytes) v = static_cast<unsigned char>(rng());
    const Box part = b.intersection(region);
    cove::copy_region({bytes.data(), bytes.size(), b, in_layout}, {expected.data(), out_bytes, region, out_layout}, part,
                      elem);
    void* d = nullptr;
    CUDA_OK(cudaMalloc(&d, bytes.size()));
    CUDA_OK(cudaMemcpy(d, bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
    dev_in.push_back(d);
    copies.push_back({{d, bytes.size(), b, in_layout}, {dev_out, out_bytes, region, out_layout}, part});
  }
  const auto plans = cove::gpu::make_plans(copies, elem);
  cove::gpu::check(cove::gpu::runtime()->reassemble(plans.data(), static_cast<int>(plans.size()), nullptr));
  CUDA_OK(cudaDeviceSynchronize());
  CUDA_OK(cudaMemcpy(actual.data(), dev_out, out_bytes, cudaMemcpyDeviceToHost));
  for (void* d : dev_in) CUDA_OK(cudaFree(d));
  CUDA_OK(cudaFree(dev_out));
  if (expected == actual) return true;
  std::size_t at = 0;
  while (expected[at] == actual[at]) ++at;
  std::fprintf(stderr, "kernel: %d-D, %zu-byte elements, layouts %d -> %d: byte %zu differs\n", ndim, elem, src_kind,
               dst_kind, at);
  return false;
}

int kernel_check() {
  std::mt19937_64 rng(11);
  int cases = 0, failed = 0;
  const std::vector<std::vector<Index>> shapes = {
      {1000}, {67, 45}, {40, 33, 70}, {9, 7, 5, 11}, {3, 2, 3, 2, 3, 2, 3, 2, 3, 4}};
  for (std::size_t elem : {1, 2, 3, 4, 8, 12, 16, 24, 40, 48})
    for (int s = 0; s < 3; ++s)
      for (int d = 0; d < 3; ++d)
        for (const auto& shape : shapes) {
          ++cases;
          if (!kernel_case(shape, elem, s, d, rng)) ++failed;
        }
  std::printf("kernel: %d cases, %d failed\n", cases, failed);
  return failed ? 1 : 0;
}

struct Args {
  std::string mode, connect, var, mem = "device", op = "put", layout = "C";
  int rank = 0, ranks = 1, versions = 3, readers = 1;
};

Args parse(int argc, char** argv) {
  Args a;
  a.mode = argc > 1 ? argv[1] : "";
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--connect") a.connect = v;
    else if (k == "--var") a.var = v;
    else if (k == "--mem") a.mem = v;
    else if (k == "--op") a.op = v;
    else if (k == "--layout") a.layout = v;
    else if (k == "--rank") a.rank = std::stoi(v);
    else if (k == "--ranks") a.ranks = std::stoi(v);
    else if (k == "--versions") a.versions = std::stoi(v);
    else if (k == "--readers") a.readers = std::stoi(v);
    else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      std::exit(2);
    }
  }
  return a;
}

const std::vector<Index> kShape = {64, 96, 80};  // 3.75 MiB of float64

// Element x of version v holds v * 10^7 + its C-order global index.
std::vector<double> values(const Box& box, const Layout& layout, int version) {
  std::vector<double> out(static_cast<std::size_t>(box.volume()));
  const auto st = layout.strides(box);
  for (Index i = box.lo[0]; i < box.hi[0]; ++i)
    for (Index j = box.lo[1]; j < box.hi[1]; ++j)
      for (Index k = box.lo[2]; k < box.hi[2]; ++k)
        out[static_cast<std::size_t>((i - box.lo[0]) * st[0] + (j - box.lo[1]) * st[1] + (k - box.lo[2]) * st[2])] =
            version * 1e7 + static_cast<double>((i * kShape[1] + j) * kShape[2] + k);
  return out;
}

Box slab(int axis, int rank, int ranks) {
  Box b = Box::from_shape(kShape);
  const Index n = kShape[static_cast<std::size_t>(axis)];
  b.lo[axis] = n * rank / ranks;
  b.hi[axis] = n * (rank + 1) / ranks;
  return b;
}

int write(const Args& a) {
  auto c = cove::Client::connect(a.connect);
  c.define(a.var, cove::DType(cove::DTypeKind::Float64), 3, kShape);
  const Box box = slab(0, a.rank, a.ranks);
  const std::size_t bytes = static_cast<std::size_t>(box.volume()) * sizeof(double);
  std::vector<void*> buffers;
  for (int v = 1; v <= a.versions; ++v) {
    const auto host = values(box, Layout::c(), v);
    void* data = nullptr;
    if (a.mem == "device") {
      CUDA_OK(cudaMalloc(&data, bytes));
      CUDA_OK(cudaMemcpy(data, host.data(), bytes, cudaMemcpyHostToDevice));
    } else {
      data = std::malloc(bytes);
      std::memcpy(data, host.data(), bytes);
    }
    buffers.push_back(data);
    if (a.op == "put_local") {
      c.put_local(a.var, static_cast<std::uint64_t>(v), box, data, bytes);
    } else {
      c.put(a.var, static_cast<std::uint64_t>(v), box, data, bytes);
      // The put copied the bytes: scribbling over them now must not show.
      if (a.mem == "device")
        CUDA_OK(cudaMemset(data, 0xAB, bytes));
      else
        std::memset(data, 0xAB, bytes);
    }
  }
  if (a.op == "put_local") {
    for (int r = 0; r < a.readers; ++r) c.get_meta(a.var + ".done." + std::to_string(r), 1, 60000);
    for (int v = 1; v <= a.versions; ++v) c.release(a.var, static_cast<std::uint64_t>(v), box);
  }
  for (void* p : buffers) {
    if (a.mem == "device")
      CUDA_OK(cudaFree(p));
    else
      std::free(p);
  }
  return 0;
}

int read(const Args& a) {
  auto c = cove::Client::connect(a.connect);
  // The same definition as the writers' (a no-op when theirs came first):
  // a reader may start before them, and its gets then wait for the data.
  c.define(a.var, cove::DType(cove::DTypeKind::Float64), 3, kShape);
  const Box region = slab(1, a.rank, a.ranks);
  const Layout layout = Layout::parse(a.layout);
  const std::size_t bytes = static_cast<std::size_t>(region.volume()) * sizeof(double);
  void* dev = nullptr;
  if (a.mem == "device") CUDA_OK(cudaMalloc(&dev, bytes));
  std::vector<double> got(static_cast<std::size_t>(region.volume()));
  int bad = 0;
  for (int v = 1; v <= a.versions; ++v) {
    if (a.mem == "device") {
      CUDA_OK(cudaMemset(dev, 0xEE, bytes));
      c.get(a.var, static_cast<std::uint64_t>(v), region, dev, bytes, 60000, layout);
      CUDA_OK(cudaMemcpy(got.data(), dev, bytes, cudaMemcpyDeviceToHost));
    } else {
      std::fill(got.begin(), got.end(), -1.0);
      c.get(a.var, static_cast<std::uint64_t>(v), region, got.data(), bytes, 60000, layout);
    }
    const auto want = values(region, layout, v);
    for (std::size_t i = 0; i < want.size(); ++i)
      if (got[i] != want[i]) {
        if (bad++ < 3)
          std::fprintf(stderr, "reader %d: %s version %d element %zu is %.17g, not %.17g\n", a.rank, a.var.c_str(), v, i,
                       got[i], want[i]);
      }
  }
  if (dev) CUDA_OK(cudaFree(dev));
  const std::byte one{1};
  c.put_meta(a.var + ".done." + std::to_string(a.rank), 1, {&one, 1});
  if (bad) std::fprintf(stderr, "reader %d: %d wrong elements in %s\n", a.rank, bad, a.var.c_str());
  return bad ? 1 : 0;
}

// Overlapping puts, then gets into device memory compared, cell by cell,
// with a reference painted in the same order; then a sealed version with
// holes, which read as the fill value.
int semantics(const Args& a) {
  const std::vector<Index> shape = {48, 80};
  const Box all = Box::from_shape(shape);
  constexpr double kFill = -7.25;
  auto c = cove::Client::connect(a.connect);
  cove::VariableOptions options;
  options.fill.resize(sizeof kFill);
  std::memcpy(options.fill.data(), &kFill, sizeof kFill);
  c.define(a.var, cove::DType(cove::DTypeKind::Float64), 2, shape, options);
  std::mt19937 rng(23);
  const auto random_box = [&] { return cove_test::random_box(rng, shape); };
  const auto cell = [&](Index i, Index j) { return static_cast<std::size_t>(i * shape[1] + j); };
  // Version 1: painted whole, then 30 overlapping boxes; version 2: 6
  // boxes, then sealed.
  std::vector<std::vector<double>> refs(2, std::vector<double>(static_cast<std::size_t>(all.volume()), kFill));
  struct Local {
    std::uint64_t version;
    Box box;
    std::vector<double> data;
  };
  std::vector<Local> kept;  // put_local memory, until released at the end
  std::vector<void*> device;
  for (int version = 1; version <= 2; ++version) {
    const int boxes = version == 1 ? 31 : 6;
    for (int k = 0; k < boxes; ++k) {
      const Box b = version == 1 && k == 0 ? all : random_box();
      const double value = version * 1000 + k;
      std::vector<double> host(static_cast<std::size_t>(b.volume()), value);
      const std::size_t bytes = host.size() * sizeof(double);
      const auto v = static_cast<std::uint64_t>(version);
      if (k % 3 == 0) {  // from device memory
        void* d = nullptr;
        CUDA_OK(cudaMalloc(&d, bytes));
        CUDA_OK(cudaMemcpy(d, host.data(), bytes, cudaMemcpyHostToDevice));
        c.put(a.var, v, b, d, bytes);
        device.push_back(d);
      } else if (k % 3 == 1) {
        c.put(a.var, v, b, host.data(), bytes);
      } else {
        kept.push_back({v, b, std::move(host)});
        c.put_local(a.var, v, b, kept.back().data.data(), bytes);
      }
      for (Index i = b.lo[0]; i < b.hi[0]; ++i)
        for (Index j = b.lo[1]; j < b.hi[1]; ++j) refs[static_cast<std::size_t>(version - 1)][cell(i, j)] = value;
    }
  }
  c.seal(a.var, 2);
  int bad = 0, gets = 0;
  void* dev = nullptr;
  CUDA_OK(cudaMalloc(&dev, static_cast<std::size_t>(all.volume()) * sizeof(double)));
  for (int version = 1; version <= 2; ++version)
    for (int g = 0; g < 8; ++g) {
      const Box region = g == 0 ? all : random_box();
      const Layout layout = g % 2 ? Layout::f() : Layout::c();
      const std::size_t bytes = static_cast<std::size_t>(region.volume()) * sizeof(double);
      CUDA_OK(cudaMemset(dev, 0xEE, bytes));
      c.get(a.var, static_cast<std::uint64_t>(version), region, dev, bytes, 10000, layout);
      std::vector<double> got(static_cast<std::size_t>(region.volume()));
      CUDA_OK(cudaMemcpy(got.data(), dev, bytes, cudaMemcpyDeviceToHost));
      ++gets;
      const auto st = layout.strides(region);
      for (Index i = region.lo[0]; i < region.hi[0]; ++i)
        for (Index j = region.lo[1]; j < region.hi[1]; ++j) {
          const double want = refs[static_cast<std::size_t>(version - 1)][cell(i, j)];
          const double is = got[static_cast<std::size_t>((i - region.lo[0]) * st[0] + (j - region.lo[1]) * st[1])];
          if (is != want && bad++ < 3)
            std::fprintf(stderr, "semantics: version %d cell (%lld, %lld) is %.17g, not %.17g\n", version,
                         static_cast<long long>(i), static_cast<long long>(j), is, want);
        }
    }
  CUDA_OK(cudaFree(dev));
  for (const Local& l : kept) c.release(a.var, l.version, l.box);
  for (void* d : device) CUDA_OK(cudaFree(d));
  std::printf("semantics: %d gets into device memory, %d wrong cells\n", gets, bad);
  return bad ? 1 : 0;
}

// Run with COVE_CUDA=0: Cove may not use CUDA, but this program does. A
// device buffer handed to put or get must be refused (Unsupported), never
// read or written as host memory.
int refuse(const Args& a) {
  const Box box = Box::from_shape(std::vector<Index>{4096});
  const std::size_t bytes = 4096 * sizeof(double);
  void* dev = nullptr;
  CUDA_OK(cudaMalloc(&dev, bytes));
  auto c = cove::Client::connect(a.connect);
  c.define(a.var, cove::DType(cove::DTypeKind::Float64), 1, std::vector<Index>{4096});
  int refused = 0;
  const auto expect_refused = [&](const char* what, const std::function<void()>& fn) {
    try {
      fn();
      std::fprintf(stderr, "refuse: %s of device memory was not refused\n", what);
    } catch (const cove::Error& e) {
      if (e.code() == cove::Code::Unsupported && std::string(e.what()).find("device memory") != std::string::npos)
        ++refused;
      else
        std::fprintf(stderr, "refuse: %s failed otherwise: %s\n", what, e.what());
    }
  };
  expect_refused("put", [&] { c.put(a.var, 1, box, dev, bytes); });
  expect_refused("put_local", [&] { c.put_local(a.var, 2, box, dev, bytes); });
  std::vector<double> host(4096, 2.5);
  c.put(a.var, 3, box, host.data(), bytes);  // host memory still works
  expect_refused("get", [&] { c.get(a.var, 3, box, dev, bytes, 1000); });
  CUDA_OK(cudaFree(dev));
  std::printf("refuse: %d of 3 refused with Unsupported\n", refused);
  return refused == 3 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "refuse") {
    try {
      return refuse(parse(argc, argv));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "refuse: %s\n", e.what());
      return 1;
    }
  }
  if (!cove::device_memory_available()) {
    std::printf("SKIPPED: no GPU is visible here (or Cove has no CUDA): the device tests need one (docs/gpu.md)\n");
    return 77;
  }
  const Args a = parse(argc, argv);
  try {
    if (a.mode == "kernel") return kernel_check();
    if (a.mode == "write") return write(a);
    if (a.mode == "read") return read(a);
    if (a.mode == "semantics") return semantics(a);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s %d: %s\n", a.mode.c_str(), a.rank, e.what());
    return 1;
  }
  std::fprintf(stderr, "usage: cove-gpu-check kernel | write|read --connect FILE --var NAME ...\n");
  return 2;
}
