// Puts from and gets into device memory (docs/gpu.md): the sender paths
// (baseline, pipeline, direct) and the receiver paths (baseline, hybrid,
// direct) of cove/memory.hpp, over the host paths of client.cpp and get.cpp.
#include "client/impl.hpp"
#include "common/printable.hpp"

#include <cove/detail/region_copy.hpp>
#include <cove/region_copy.hpp>

#include "common/log.hpp"
#include "gpu/assembly.hpp"
#include "gpu/device.hpp"
#include "gpu/device_key.hpp"
#include "gpu/paths.hpp"
#include "net/segment.hpp"

#include <unistd.h>

#include <cstring>

namespace cove {

using detail::fail;
using net::Message;
using net::Op;

namespace {

// Byte offsets [lo, hi) of the part of a piece (`box` in `layout`) that
// holds `part`: its first and last elements, every stride being positive.
std::pair<std::size_t, std::size_t> span_of(const Box& box, const Layout& layout, const Box& part, std::size_t elem) {
  const auto st = layout.strides(box);
  Index lo = 0, hi = 0;
  for (int d = 0; d < box.ndim; ++d) {
    lo += (part.lo[d] - box.lo[d]) * st[d];
    hi += (part.hi[d] - 1 - box.lo[d]) * st[d];
  }
  return {static_cast<std::size_t>(lo) * elem, static_cast<std::size_t>(hi + 1) * elem};
}

}  // namespace

// A piece in a writer's device memory (its key a CUDA IPC handle) is
// readable only on the writer's host (or in its own process).
gpu::DeviceKey Client::Impl::device_key_of(const net::QueryPiece& p) {
  gpu::DeviceKey key = gpu::read_device_key(p.key);
  const char* transport = peer_for(p.holder)->transport();
  if (std::strcmp(transport, "local") != 0 && std::strcmp(transport, "inproc") != 0)
    fail(Code::Unsupported, "a piece of ", p.box.to_string(), " is in the GPU memory of a writer on another host (",
         common::shown_address(p.holder), "): CUDA IPC reaches only processes of one host");
  return key;
}

void Client::Impl::send_device_put(Op op, net::PieceHeader piece, const void* data, const VarInfo& info,
                                   std::size_t home) {
  const std::size_t bytes = piece.bytes;
  gpu::CudaRuntime& rt = gpu::require(op == Op::Put ? "put" : "put_local");
  const net::Peer peer = server(home);
  const char* transport = peer->transport();
  gpu::SendContext ctx;
  ctx.bytes = bytes;
  ctx.put_local = op == Op::PutLocal;
  ctx.inline_put = op == Op::Put && bytes <= net::kEagerBytes;
  ctx.segments = std::strcmp(transport, "local") == 0 && net::segments_enabled();
  ctx.same_host = std::strcmp(transport, "local") == 0;
  ctx.direct_refused = direct_refused_.load();
  DeviceSendPath path = gpu::choose_send(send_path, ctx);
  log::debug("{} of '{}' {} from device memory: {} path", op == Op::Put ? "put" : "put_local", piece.var,
             piece.box.to_string(), to_string(path));
  const net::PieceHeader header = piece;  // again for the next path, when the direct one is refused
  const auto control = [] { return net::deadline_in(net::kControlTimeoutMs); };

  if (path == DeviceSendPath::direct) {
    gpu::IpcExport allocation{};
    gpu::check(rt.ipc_export(data, &allocation));
    net::Bytes key = gpu::make_device_key(data, bytes, allocation, static_cast<std::uint64_t>(::getpid()));
    if (op == Op::PutLocal) {
      call<Message<Op::PutLocal>>(home, {std::move(piece), endpoint->address(), std::move(key), reorg}, control());
      return;
    }
    try {
      call<Message<Op::Put>>(home, {std::move(piece), std::move(key), reorg},
                             net::deadline_in(net::kControlTimeoutMs + net::transfer_ms(bytes)), peer);
      return;
    } catch (const Error& e) {
      if (e.code() != Code::Unsupported) throw;
      // A server without CUDA: this client stops asking servers for it.
      log::info("server {} cannot read device memory ({}); puts from device memory take the pipeline", home, e.what());
      direct_refused_ = true;
      ctx.direct_refused = true;
      path = gpu::choose_send(send_path, ctx);  // pipeline or baseline now
      piece = header;
    }
  }

  if (path == DeviceSendPath::pipeline) {  // puts only: put_local has no pipeline
    const auto grant = call<Message<Op::PutGrant>>(home, {std::move(piece), reorg, {}}, control(), peer);
    const auto window = endpoint->map(peer, grant.key, true, control());
    if (!window || window->size != bytes) fail(Code::Protocol, "a server granted no mappable room for ", bytes, " bytes");
    const gpu::ChunkRing ring(bytes, gpu::kPipelineChunk, gpu::kPipelineSlots);
    gpu::PinnedBuffer staging(gpu::kPipelineChunk * static_cast<std::size_t>(ring.slots()));
    std::vector<std::unique_ptr<gpu::StreamHandle>> streams;
    for (int s = 0; s < ring.slots(); ++s) streams.push_back(std::make_unique<gpu::StreamHandle>());
    const auto slot_data = [&](int s) { return staging.data() + static_cast<std::size_t>(s) * gpu::kPipelineChunk; };
    const auto* src = static_cast<const std::byte*>(data);
    ring.run(
        [&](std::size_t c, int s) {
          gpu::check(rt.copy(slot_data(s), src + ring.offset(c), ring.length(c), streams[s]->get()));
        },
        [&](std::size_t c) { streams[ring.slot(c)]->synchronize(); },
        [&](std::size_t c, int s) { copy_bytes(window->data + ring.offset(c), slot_data(s), ring.length(c)); });
    call<Message<Op::PutPublish>>(home, {grant.grant}, control(), peer);
    return;
  }

  // Baseline: the bytes to pinned host memory, then the host path. A
  // put_local keeps that copy until release.
  auto staging = std::make_shared<gpu::PinnedBuffer>(bytes);
  gpu::check(rt.copy(staging->data(), data, bytes, nullptr));
  void* host = staging->data();
  send_host_put(op, std::move(piece), host, info, home, std::move(staging));
}

// A piece whose bytes are another process's device memory (a put_local
// from device memory), read into host memory at `data` (region, layout).
void Client::Impl::read_device_piece(const net::QueryPiece& p, const Box& part, const Box& region, void* data,
                                     std::size_t bytes, const Layout& layout, std::size_t elem) {
  if (part.empty()) return;
  const gpu::DeviceKey key = device_key_of(p);
  gpu::CudaRuntime& rt = gpu::require("a get of a piece held in device memory");
  std::optional<gpu::IpcMapping> mapping;
  const std::byte* src = reinterpret_cast<const std::byte*>(key.header.address);
  if (key.header.pid != static_cast<std::uint64_t>(::getpid())) {  // CUDA IPC is between processes only
    mapping.emplace(key.allocation);
    src = mapping->at(key.header.address, key.header.length);
  }
  const auto [lo, hi] = span_of(p.box, p.layout, part, elem);
  if (hi > key.header.length) fail(Code::Protocol, "a device piece's key covers less than its box");
  gpu::PinnedBuffer staging(hi - lo);
  gpu::check(rt.copy(staging.data(), src + lo, hi - lo, nullptr));
  // A view of the whole piece of which only [lo, hi) is staged, and read.
  const auto base = reinterpret_cast<const std::byte*>(reinterpret_cast<std::uintptr_t>(staging.data()) - lo);
  copy_region({base, static_cast<std::size_t>(p.box.volume()) * elem, p.box, p.layout}, {data, bytes, region, layout},
              part, elem);
}

// A get into device memory: the pieces of answer `a` assembled at `data`.
void Client::Impl::read_pieces_to_device(const Answer& a, const Box& region, void* data, std::size_t bytes,
                                         const Layout& layout, std::size_t elem) {
  const std::vector<net::QueryPiece>& pieces = a.pieces;
  gpu::CudaRuntime& rt = gpu::require("get");
  const DeviceRecvPath path = gpu::choose_recv(recv_path, bytes);
  if (path == DeviceRecvPath::baseline) {
    gpu::PinnedBuffer host(bytes);
    for (const auto& p : pieces)
      for (const Box& part : p.visible) read_piece(p, part, region, host.data(), bytes, layout, elem);
    for (const Box& hole : a.holes) fill_region({host.data(), bytes, region, layout}, hole, a.fill);
    gpu::check(rt.copy(data, host.data(), bytes, nullptr));
    return;
  }
  // Hybrid and direct: every piece's span on the device (read in place
  // where it already is there), then one kernel launch for all of them.
  std::vector<std::unique_ptr<gpu::PinnedBuffer>> staged;
  std::vector<std::unique_ptr<gpu::DeviceBuffer>> scratch;
  std::vector<std::unique_ptr<gpu::IpcMapping>> mappings;
  std::vector<net::MappedWindow> windows;
  // Declared last, so destroyed first: it waits for the copies in flight
  // before any buffer above goes back to its cache (also when this throws).
  gpu::StreamHandle stream;
  std::vector<gpu::PieceCopy> copies;
  const auto on_device = [&](const void* src, std::size_t n) {
    scratch.push_back(std::make_unique<gpu::DeviceBuffer>(n));
    gpu::check(rt.copy(scratch.back()->data(), src, n, stream.get()));
    return scratch.back()->data();
  };
  // A device view of a piece whose bytes [lo, hi) are at `at`.
  // (The view spans the whole piece; only [lo, hi) of it is ever read.)
  const auto view = [elem](const std::byte* at, std::size_t lo, const net::QueryPiece& p) {
    const auto base = reinterpret_cast<const std::byte*>(reinterpret_cast<std::uintptr_t>(at) - lo);
    return ConstArrayView{base, static_cast<std::size_t>(p.box.volume()) * elem, p.box, p.layout};
  };
  for (const auto& p : pieces)
    for (const Box& part : p.visible) {
      if (part.empty()) continue;
      const auto [lo, hi] = span_of(p.box, p.layout, part, elem);
      ConstArrayView src;
      if (gpu::is_device_key(p.key)) {  // already on a device: read in place
        const gpu::DeviceKey key = device_key_of(p);
        const std::byte* at = reinterpret_cast<const std::byte*>(key.header.address);
        if (key.header.pid != static_cast<std::uint64_t>(::getpid())) {
          mappings.push_back(std::make_unique<gpu::IpcMapping>(key.allocation));
          at = mappings.back()->at(key.header.address, key.header.length);
        }
        if (hi > key.header.length) fail(Code::Protocol, "a device piece's key covers less than its box");
        src = {at, static_cast<std::size_t>(key.header.length), p.box, p.layout};
      } else if (auto window = endpoint->map(peer_for(p.holder), p.key, false,
                                             net::deadline_in(net::kControlTimeoutMs))) {
        if (hi > window->size) fail(Code::Protocol, "a piece's window is smaller than its box");
        const std::byte* from = window->data + lo;
        if (path == DeviceRecvPath::hybrid) {  // through a pinned buffer of this process's
          staged.push_back(std::make_unique<gpu::PinnedBuffer>(hi - lo));
          copy_bytes(staged.back()->data(), from, hi - lo);
          from = staged.back()->data();
        } else if (window->mapping) {  // the copy engine reads the holder's segment itself
          gpu::register_mapping(window->mapping, window->mapping_size, true);
        }
        src = view(on_device(from, hi - lo), lo, p);
        windows.push_back(std::move(*window));
      } else {  // read here by the transport, packed, in the piece's layout
        staged.push_back(std::make_unique<gpu::PinnedBuffer>(static_cast<std::size_t>(part.volume()) * elem));
        std::vector<net::RemoteOp> ops;
        std::size_t at = 0;
        detail::contiguous_runs(part, p.box, p.layout, elem).for_each([&](std::int64_t off, std::int64_t n) {
          ops.push_back({static_cast<std::uint64_t>(off), staged.back()->data() + at, static_cast<std::size_t>(n)});
          at += static_cast<std::size_t>(n);
        });
        read_runs(peer_for(p.holder), p.key, ops);
        src = {on_device(staged.back()->data(), at), at, part, p.layout};
      }
      copies.push_back({src, {data, bytes, region, layout}, part});
    }
  if (!a.holes.empty()) {
    // Cells no put covered (a sealed version): every one holds the fill
    // value, so one filled buffer on the device serves as the source of
    // every chunk of every hole, whatever its box and layout.
    constexpr Index kChunkElements = Index{1} << 16;
    Index largest = 1;
    std::vector<Box> chunks;
    for (const Box& hole : a.holes)
      for (const Box& chunk : split_max_volume(hole, kChunkElements)) {
        largest = std::max(largest, chunk.volume());
        chunks.push_back(chunk);
      }
    const std::size_t filled_bytes = static_cast<std::size_t>(largest) * elem;
    staged.push_back(std::make_unique<gpu::PinnedBuffer>(filled_bytes));
    const Box line = Box::from_start_count(std::vector<Index>{0}, std::vector<Index>{largest});
    fill_region({staged.back()->data(), filled_bytes, line, Layout::c()}, line, a.fill);
    const std::byte* filled = on_device(staged.back()->data(), filled_bytes);
    for (const Box& chunk : chunks)
      copies.push_back({{filled, filled_bytes, chunk, Layout::c()}, {data, bytes, region, layout}, chunk});
  }
  const auto plans = gpu::make_plans(copies, elem);
  if (!plans.empty()) gpu::check(rt.reassemble(plans.data(), static_cast<int>(plans.size()), stream.get()));
  stream.synchronize();
}

}  // namespace cove
