// The GPU paths' host-side logic, on the CPU (docs/gpu.md): the reassembly
// kernel's plans and index arithmetic (gpu/plan.hpp) run here block by
// block and word by word exactly as the kernel runs them, against the
// region engine; path selection; the pipelined sender's chunk ring; the
// CUDA IPC key format; and a device pointer where there is no CUDA.
#include <cove/client.hpp>
#include <cove/region_copy.hpp>
#include <cove/server.hpp>

#include <gtest/gtest.h>

#include "expect_error.hpp"
#include "gpu_cases.hpp"
#include "gpu/assembly.hpp"
#include "gpu/device.hpp"
#include "gpu/device_key.hpp"
#include "gpu/paths.hpp"
#include "gpu/plan.hpp"

#include <cstring>
#include <numeric>
#include <random>
#include <vector>

namespace {

using cove::Box;
using cove::Index;
using cove::Layout;
using namespace cove::gpu;

// Runs every block of `plans` as the kernel does: the same functions, the
// same loops (each thread's strided loop, flattened), words of p.word bytes.
void run_on_cpu(const std::vector<DevicePlan>& plans) {
  const auto word = [](unsigned char* d, const unsigned char* s, int w) { std::memcpy(d, s, static_cast<std::size_t>(w)); };
  std::int64_t blocks = 0;
  for (const auto& p : plans) blocks = std::max(blocks, p.first_block + p.blocks);
  for (std::int64_t block = 0; block < blocks; ++block) {
    const DevicePlan& p = plans[piece_of_block(plans.data(), static_cast<int>(plans.size()), block)];
    const std::int64_t b = block - p.first_block;
    ASSERT_GE(b, 0);
    ASSERT_LT(b, p.blocks);
    switch (p.kind) {
      case KernelKind::Runs: {
        const std::int64_t r0 = b * p.per_block, total = std::min(p.per_block, p.rows - r0) * p.words;
        for (std::int64_t f = 0; f < total; ++f) {
          std::int64_t so = 0, dof = 0;
          offsets_of(p, 0, p.n - 1, r0 + f / p.words, so, dof);
          const std::int64_t w = (f % p.words) * p.word;
          word(p.dst + dof + w, p.src + so + w, p.word);
        }
        break;
      }
      case KernelKind::Tiled: {
        std::vector<unsigned char> smem(static_cast<std::size_t>(tile_smem_elems() * p.words * p.word));
        const int di = p.n - 2, dj = p.n - 1;
        const std::int64_t elem = std::int64_t{p.words} * p.word;
        for (std::int64_t tile = b * kTilesPerBlock; tile < std::min(p.tiles, (b + 1) * kTilesPerBlock); ++tile) {
          const TileOrigin o = tile_origin(p, tile);
          for (std::int32_t f = 0; f < kTile * kTile; ++f) {
            const TileElem t = tile_load_elem(f);
            if (t.i < o.ni && t.j < o.nj)
              for (int k = 0; k < p.words; ++k)
                word(smem.data() + t.smem * elem + k * p.word, p.src + o.so + t.i * p.ss[di] + t.j * p.ss[dj] + k * p.word,
                     p.word);
          }
          for (std::int32_t f = 0; f < kTile * kTile; ++f) {
            const TileElem t = tile_store_elem(f);
            if (t.i < o.ni && t.j < o.nj)
              for (int k = 0; k < p.words; ++k)
                word(p.dst + o.dof + t.i * p.ds[di] + t.j * p.ds[dj] + k * p.word, smem.data() + t.smem * elem + k * p.word,
                     p.word);
          }
        }
        break;
      }
      case KernelKind::General: {
        const std::int64_t e0 = b * p.per_block, total = std::min(p.per_block, p.rows - e0) * p.words;
        for (std::int64_t f = 0; f < total; ++f) {
          std::int64_t so = 0, dof = 0;
          offsets_of(p, 0, p.n, e0 + f / p.words, so, dof);
          const std::int64_t w = (f % p.words) * p.word;
          word(p.dst + dof + w, p.src + so + w, p.word);
        }
        break;
      }
    }
  }
}


// A region of `ndim` dimensions cut into pieces (a grid of 2 per axis on
// the first three axes), each in layout `src`, assembled into a buffer in
// layout `dst` by the kernel's arithmetic and by copy_region.
void check_assembly(int ndim, std::size_t elem, int src_kind, int dst_kind, std::mt19937_64& rng) {
  std::vector<Index> shape(static_cast<std::size_t>(ndim));
  for (auto& e : shape) e = std::uniform_int_distribution<Index>(1, ndim <= 3 ? 45 : 6)(rng);
  const Box whole = Box::from_shape(shape);
  const Box region = cove_test::reader_region(whole);
  const Layout out_layout = cove_test::layout_of(dst_kind, ndim, rng);
  const std::size_t out_bytes = static_cast<std::size_t>(region.volume()) * elem;
  std::vector<unsigned char> expected(out_bytes, 0xEE), actual(out_bytes, 0xEE);
  std::vector<std::vector<unsigned char>> sources;
  std::vector<PieceCopy> copies;
  for (const Box& b : cove_test::octants(whole)) {
    const Layout in_layout = cove_test::layout_of(src_kind, ndim, rng);
    std::vector<unsigned char> bytes(static_cast<std::size_t>(b.volume()) * elem);
    for (auto& v : bytes) v = static_cast<unsigned char>(rng());
    sources.push_back(std::move(bytes));
    const Box part = b.intersection(region);
    cove::copy_region({sources.back().data(), sources.back().size(), b, in_layout},
                      {expected.data(), out_bytes, region, out_layout}, part, elem);
    copies.push_back({{sources.back().data(), sources.back().size(), b, in_layout},
                      {actual.data(), out_bytes, region, out_layout},
                      part});
  }
  run_on_cpu(make_plans(copies, elem));
  ASSERT_EQ(expected, actual) << ndim << "-D, " << elem << "-byte elements, layouts " << src_kind << " -> "
                              << dst_kind;
}

TEST(GpuAssembly, KernelArithmeticMatchesTheRegionEngineForEveryLayoutPairAndElementSize) {
  std::mt19937_64 rng(7);
  for (std::size_t elem : {1, 2, 3, 4, 8, 12, 16, 24, 40, 48})
    for (int src = 0; src < 3; ++src)
      for (int dst = 0; dst < 3; ++dst)
        for (int ndim : {1, 2, 3, 4, 10}) check_assembly(ndim, elem, src, dst, rng);
}

TEST(GpuAssembly, PlansPickTheKernelPathAndOneWordSizePerLaunch) {
  const Box box = Box::from_shape(std::vector<Index>{64, 48, 40});
  std::vector<double> a(static_cast<std::size_t>(box.volume())), b(a.size());
  const auto plans_for = [&](const Layout& in, const Layout& out, std::size_t elem) {
    const std::size_t bytes = a.size() * sizeof(double);
    PieceCopy c{{a.data(), bytes, box, in}, {b.data(), bytes, box, out}, box};
    return make_plans({&c, 1}, elem);
  };
  auto p = plans_for(Layout::c(), Layout::c(), 8);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].kind, KernelKind::Runs);
  EXPECT_GE(p[0].word, 8);  // one run, the whole box: words as wide as the buffers' alignment allows
  p = plans_for(Layout::c(), Layout::f(), 8);
  EXPECT_EQ(p[0].kind, KernelKind::Tiled);
  EXPECT_EQ(p[0].word, 8);
  EXPECT_EQ(p[0].words, 1);
  p = plans_for(Layout::c(), Layout::f(), 4);
  EXPECT_EQ(p[0].kind, KernelKind::Tiled);
  EXPECT_EQ(p[0].word, 4);
}

TEST(GpuPaths, SendPathFollowsSizeAvailabilityAndWhatWasAsked) {
  SendContext put;
  put.bytes = std::size_t{256} << 20;
  put.segments = put.same_host = true;
  using P = cove::DeviceSendPath;
  EXPECT_EQ(choose_send(P::automatic, put), P::direct);
  EXPECT_EQ(choose_send(P::pipeline, put), P::pipeline);
  EXPECT_EQ(choose_send(P::baseline, put), P::baseline);
  put.direct_refused = true;  // a server without CUDA
  EXPECT_EQ(choose_send(P::automatic, put), P::pipeline);
  EXPECT_EQ(choose_send(P::direct, put), P::pipeline);
  SendContext small = put;
  small.direct_refused = false;
  small.bytes = 32 << 10;
  small.inline_put = true;
  EXPECT_EQ(choose_send(P::direct, small), P::baseline);
  EXPECT_EQ(choose_send(P::automatic, small), P::baseline);
  SendContext ucx = put;
  ucx.direct_refused = false;
  ucx.segments = ucx.same_host = false;  // another host: no IPC, no mapping
  EXPECT_EQ(choose_send(P::direct, ucx), P::baseline);
  EXPECT_EQ(choose_send(P::pipeline, ucx), P::baseline);
  SendContext local = put;
  local.put_local = true;
  local.direct_refused = false;
  EXPECT_EQ(choose_send(P::automatic, local), P::direct);
  EXPECT_EQ(choose_send(P::pipeline, local), P::baseline);
  local.same_host = false;
  EXPECT_EQ(choose_send(P::direct, local), P::baseline);
  using R = cove::DeviceRecvPath;
  EXPECT_EQ(choose_recv(R::automatic, 4 << 10), R::baseline);
  EXPECT_EQ(choose_recv(R::automatic, 64 << 20), R::direct);
  EXPECT_EQ(choose_recv(R::hybrid, 4 << 10), R::hybrid);
  EXPECT_EQ(cove::parse_send_path("pipeline"), P::pipeline);
  EXPECT_EQ(cove::to_string(R::hybrid), "hybrid");
  cove_test::expect_error(cove::Code::InvalidArgument, "'gdr'", [] { cove::parse_recv_path("gdr"); });
}

// The ring's schedule with host copies standing for the stream copies: every
// byte arrives, and no slot is fetched into while its chunk is unconsumed.
TEST(GpuPaths, ChunkRingNeverRefillsASlotBeforeItsChunkIsConsumed) {
  for (std::size_t bytes : {std::size_t{1}, std::size_t{4096}, std::size_t{10000}, std::size_t{65536 + 17}})
    for (int slots : {2, 3, 4}) {
      const ChunkRing ring(bytes, 1000, slots);
      std::vector<unsigned char> src(bytes), dst(bytes, 0);
      for (std::size_t i = 0; i < bytes; ++i) src[i] = static_cast<unsigned char>(i * 7 + 3);
      std::vector<std::vector<unsigned char>> slot(static_cast<std::size_t>(slots), std::vector<unsigned char>(1000));
      std::vector<long> holds(static_cast<std::size_t>(slots), -1);  // the chunk a slot holds unconsumed
      std::vector<bool> waited(ring.chunks(), false);
      ring.run(
          [&](std::size_t c, int s) {
            ASSERT_EQ(holds[static_cast<std::size_t>(s)], -1) << "slot " << s << " refilled before use";
            holds[static_cast<std::size_t>(s)] = static_cast<long>(c);
            std::memcpy(slot[static_cast<std::size_t>(s)].data(), src.data() + ring.offset(c), ring.length(c));
          },
          [&](std::size_t c) { waited[c] = true; },
          [&](std::size_t c, int s) {
            ASSERT_TRUE(waited[c]);
            ASSERT_EQ(holds[static_cast<std::size_t>(s)], static_cast<long>(c));
            holds[static_cast<std::size_t>(s)] = -1;
            std::memcpy(dst.data() + ring.offset(c), slot[static_cast<std::size_t>(s)].data(), ring.length(c));
          });
      EXPECT_EQ(src, dst) << bytes << " bytes, " << slots << " slots";
    }
}

TEST(GpuKeys, DeviceKeysRoundTripAndMalformedOnesAreRefused) {
  IpcExport e{};
  for (int i = 0; i < 64; ++i) e.handle[i] = static_cast<unsigned char>(i);
  e.base = 0x7f0000000000;
  e.size = 1 << 20;
  e.device = 0;
  const auto* data = reinterpret_cast<const void*>(0x7f0000001000);
  const auto key = make_device_key(data, 4096, e, 1234);
  ASSERT_TRUE(is_device_key(key));
  const DeviceKey k = read_device_key(key);
  EXPECT_EQ(k.header.address, 0x7f0000001000u);
  EXPECT_EQ(k.header.length, 4096u);
  EXPECT_EQ(k.header.pid, 1234u);
  EXPECT_EQ(std::memcmp(k.allocation.handle, e.handle, 64), 0);
  EXPECT_EQ(k.allocation.size, e.size);
  // A transport's key is not a device key; a cut or altered one is refused.
  EXPECT_FALSE(is_device_key(cove::net::make_key({0x1000, 10, 3, 1})));
  auto cut = key;
  cut.pop_back();
  cove_test::expect_error(cove::Code::InvalidArgument, "malformed", [&] { read_device_key(cut); });
  auto bad = key;
  bad[sizeof(cove::net::KeyHeader)] = std::byte{'X'};
  cove_test::expect_error(cove::Code::InvalidArgument, "CUDA IPC magic", [&] { read_device_key(bad); });
}

// Without a GPU (this build's CPU path, and CI), the API is the same and a
// pointer stated as device memory is refused clearly; host pointers pay
// nothing and work as before.
TEST(GpuApi, DevicePointersAreRefusedClearlyWhereThereIsNoCuda) {
  if (cove::device_memory_available()) GTEST_SKIP() << "a GPU is visible: the device tests (cove-gpu-tests) cover it";
  cove::ServerOptions o;
  o.transport = "inproc://gpu-api";
  cove::Server server(o);
  auto c = cove::Client::connect(server.address());
  const Index shape[] = {16};
  c.define("v", cove::DType(cove::DTypeKind::Float64), 1, shape);
  const Box box = Box::from_shape(std::vector<Index>{16});
  std::vector<double> host(16, 1.5);
  cove_test::expect_error(cove::Code::Unsupported, "device memory", [&] {
    c.put("v", 1, box, host.data(), host.size() * 8, Layout::c(), cove::MemorySpace::device);
  });
  cove_test::expect_error(cove::Code::Unsupported, "device memory", [&] {
    c.get("v", 1, box, host.data(), host.size() * 8, 0, Layout::c(), cove::MemorySpace::device);
  });
  EXPECT_EQ(locate(host.data(), cove::MemorySpace::automatic, "put").residence, Residence::Host);
  c.put("v", 1, box, host.data(), host.size() * 8);  // automatic: host memory, as before
  std::vector<double> back(16, 0);
  c.get("v", 1, box, back.data(), back.size() * 8, 0, Layout::c(), cove::MemorySpace::host);
  EXPECT_EQ(back, host);
}

}  // namespace
