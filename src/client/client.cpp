#include <cove/client.hpp>
#include <cove/region_copy.hpp>

#include "core/fail.hpp"
#include "net/protocol.hpp"
#include "net/transport.hpp"
#include "server/config.hpp"

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <tuple>
#include <unistd.h>

namespace cove {

using detail::fail;
using net::Op;

namespace {

// The client's own endpoint, in the server's transport (readers reach its
// put_local data there).
std::unique_ptr<net::Endpoint> open_endpoint(const std::string& server_address) {
  static std::atomic<std::uint64_t> counter{0};
  if (server_address.rfind("inproc://", 0) == 0)
    return net::make_endpoint("inproc://client-" + std::to_string(::getpid()) + "-" + std::to_string(++counter));
  if (server_address.rfind("ucx:", 0) == 0) return net::make_endpoint("ucx");
  fail(Code::InvalidArgument, "server address '", server_address.substr(0, 48),
       "' has an unknown scheme; expected inproc://NAME or ucx:...");
}

void check_buffer(const Box& region, DType dtype, const void* data, std::size_t bytes, const char* what) {
  const auto need = static_cast<std::uint64_t>(region.volume()) * dtype.size();
  if (bytes != need)
    fail(Code::InvalidArgument, what, " buffer of ", bytes, " bytes does not match region ", region.to_string(),
         " of ", dtype.name(), " (", need, " bytes)");
  if (need > 0 && data == nullptr) fail(Code::InvalidArgument, what, " buffer is null");
}

struct QueryPiece {
  Box box;
  Layout layout;
  std::string owner;
  net::Bytes key;
};

}  // namespace

struct Client::Impl {
  std::unique_ptr<net::Endpoint> endpoint;
  std::string server_address;
  net::Peer server;
  std::atomic<std::uint64_t> next_id{1};
  std::mutex mutex;
  std::map<std::string, DType> dtypes;                       // variables this client defined or saw
  std::map<std::string, net::Peer> peers;                    // writers read from, by address
  std::map<std::tuple<std::string, std::uint64_t, std::string>, std::unique_ptr<net::MemoryRegion>> local;

  ~Impl() {
    if (!server || local.empty()) return;
    try {  // release our put_local pieces before our memory goes
      net::WireWriter w(static_cast<std::uint16_t>(Op::Disconnect), next_id++);
      w.str(endpoint->address());
      call(Op::Disconnect, std::move(w), net::deadline_in(5000));
    } catch (...) {
      // The server may be gone already; there is nothing left to release then.
    }
  }

  net::Bytes call(Op op, net::WireWriter&& w, net::Deadline deadline) {
    net::Bytes request = std::move(w).finish();
    const net::Header h = net::read_header(request);
    net::Bytes reply = endpoint->call(server, std::move(request), deadline);
    net::check_reply(reply, static_cast<std::uint16_t>(op), h.request_id);
    return reply;
  }
  net::WireWriter begin(Op op) { return net::WireWriter(static_cast<std::uint16_t>(op), next_id++); }

  DType dtype_of(const std::string& var) {
    {
      std::lock_guard lock(mutex);
      auto it = dtypes.find(var);
      if (it != dtypes.end()) return it->second;
    }
    auto w = begin(Op::List);
    net::Bytes reply = call(Op::List, std::move(w), net::deadline_in(30000));
    net::WireReader r(reply);
    std::lock_guard lock(mutex);
    for (std::uint32_t n = r.u32(); n > 0; --n) {
      const std::string name = r.str();
      dtypes[name] = DType::parse(r.str());
      r.u8();
      if (r.u8()) r.box();
      for (std::uint32_t v = r.u32(); v > 0; --v) {
        r.u64();
        for (std::uint32_t p = r.u32(); p > 0; --p) {
          r.box();
          r.u64();
          r.str();
        }
      }
    }
    auto it = dtypes.find(var);
    if (it == dtypes.end()) fail(Code::NotFound, "variable '", var, "' is not defined");
    return it->second;
  }

  net::Peer peer_for(const std::string& owner) {
    if (owner.empty()) return server;
    {
      std::lock_guard lock(mutex);
      auto it = peers.find(owner);
      if (it != peers.end()) return it->second;
    }
    net::Peer p = endpoint->connect(owner, net::deadline_in(10000));
    std::lock_guard lock(mutex);
    return peers.emplace(owner, p).first->second;
  }

  void send_put(Op op, const std::string& var, std::uint64_t version, const Box& box, const void* data,
                std::size_t bytes, const Layout& layout) {
    validate_box(box, "box");
    const DType dtype = dtype_of(var);
    check_buffer(box, dtype, data, bytes, op == Op::Put ? "put" : "put_local");
    auto region = endpoint->expose(const_cast<void*>(data), bytes);  // only ever read by peers
    auto w = begin(op);
    w.str(var).u64(version).box(box).str(layout.to_string()).str(dtype.name()).u64(bytes);
    if (op == Op::PutLocal) w.str(endpoint->address());
    w.bytes(region->key());
    call(op, std::move(w), net::kNoDeadline);
    if (op == Op::PutLocal) {
      std::lock_guard lock(mutex);
      local[{var, version, box.to_string()}] = std::move(region);
    }
  }

  std::uint64_t get(const std::string& var, std::uint64_t version, bool latest, const Box& region, void* data,
                    std::size_t bytes, std::int64_t timeout_ms, const Layout& layout) {
    validate_box(region, "region");
    layout.axis_order(region.ndim);
    const DType dtype = dtype_of(var);
    check_buffer(region, dtype, data, bytes, "get");
    // A piece may be deleted or evicted between the answer and our read; the
    // read then fails with NotFound and the query is asked again.
    for (int attempt = 0;; ++attempt) {
      auto w = begin(Op::Query);
      w.str(var).u64(version).u8(latest ? 1 : 0).box(region).i64(timeout_ms);
      const net::Deadline deadline = timeout_ms < 0 ? net::kNoDeadline : net::deadline_in(timeout_ms + 30000);
      net::Bytes reply = call(Op::Query, std::move(w), deadline);
      net::WireReader r(reply);
      const std::uint64_t got = r.u64();
      const DType stored = DType::parse(r.str());
      if (!(stored == dtype)) fail(Code::InvalidArgument, "variable '", var, "' now has dtype ", stored.name());
      std::vector<QueryPiece> pieces(r.u32());
      for (auto& p : pieces) {
        p.box = r.box();
        p.layout = Layout::parse(r.str());
        p.owner = r.str();
        const auto k = r.bytes();
        p.key.assign(k.begin(), k.end());
      }
      r.expect_end();
      try {
        for (const auto& p : pieces) read_piece(p, region, data, bytes, layout, dtype.size());
        return got;
      } catch (const Error& e) {
        if (e.code() != Code::NotFound || attempt == 2) throw;
      }
    }
  }

  // Reads the part of piece `p` inside `region` into `data`. Runs contiguous
  // in both buffers go straight to their place; otherwise the part is read
  // packed (in the piece's layout) and reorganised here.
  void read_piece(const QueryPiece& p, const Box& region, void* data, std::size_t bytes, const Layout& layout,
                  std::size_t elem) {
    const Box part = p.box.intersection(region);
    if (part.empty()) return;
    const net::Peer peer = peer_for(p.owner);
    auto* dst = static_cast<std::byte*>(data);
    std::vector<net::RemoteOp> ops;
    const bool direct = for_each_common_run(p.box, p.layout, region, layout, part, elem,
                                            [&](std::int64_t so, std::int64_t dof, std::int64_t n) {
                                              ops.push_back({static_cast<std::uint64_t>(so), dst + dof,
                                                             static_cast<std::size_t>(n)});
                                            });
    if (direct) {
      endpoint->read(peer, p.key, ops, net::kNoDeadline);
      return;
    }
    std::vector<std::byte> packed(static_cast<std::size_t>(part.volume()) * elem);
    std::size_t at = 0;
    contiguous_runs(part, p.box, p.layout, elem).for_each([&](std::int64_t off, std::int64_t n) {
      ops.push_back({static_cast<std::uint64_t>(off), packed.data() + at, static_cast<std::size_t>(n)});
      at += static_cast<std::size_t>(n);
    });
    endpoint->read(peer, p.key, ops, net::kNoDeadline);
    copy_region({packed.data(), packed.size(), part, p.layout}, {data, bytes, region, layout}, part, elem);
  }
};

Client Client::connect(const std::string& target, const ConnectOptions& options) {
  std::string address = target;
  if (address.empty()) {
    const char* env = std::getenv("COVE_CONNECT");
    if (!env || !*env)
      fail(Code::InvalidArgument, "no server given: pass an address or a connection file, or set COVE_CONNECT");
    address = env;
  }
  if (address.rfind("inproc://", 0) != 0 && address.rfind("ucx:", 0) != 0)
    address = config::read_connection_file(address, options.timeout_ms).front();
  Client c;
  c.impl_ = std::make_shared<Impl>();
  c.impl_->endpoint = open_endpoint(address);
  c.impl_->server_address = address;
  try {
    c.impl_->server = c.impl_->endpoint->connect(address, net::deadline_in(options.timeout_ms));
  } catch (const Error& e) {
    fail(Code::Unavailable, "no Cove server at ", address, " within ", options.timeout_ms, " ms (", e.what(), ")");
  }
  return c;
}

Client::~Client() = default;

std::string Client::address() const { return impl_->endpoint->address(); }

void Client::define(const std::string& name, DType dtype, int ndim, std::span<const Index> shape) {
  auto w = impl_->begin(Op::Define);
  w.str(name).str(dtype.name()).u8(static_cast<std::uint8_t>(std::clamp(ndim, 0, 255)));
  if (shape.empty()) {
    w.u8(0);
  } else {
    if (shape.size() != static_cast<std::size_t>(ndim))
      fail(Code::InvalidArgument, "shape has ", shape.size(), " extents but ndim = ", ndim);
    w.u8(1).box(Box::from_shape(shape));
  }
  impl_->call(Op::Define, std::move(w), net::deadline_in(30000));
  std::lock_guard lock(impl_->mutex);
  impl_->dtypes[name] = dtype;
}

void Client::put(const std::string& var, std::uint64_t version, const Box& box, const void* data, std::size_t bytes,
                 const Layout& layout) {
  impl_->send_put(Op::Put, var, version, box, data, bytes, layout);
}

void Client::put_local(const std::string& var, std::uint64_t version, const Box& box, const void* data,
                       std::size_t bytes, const Layout& layout) {
  impl_->send_put(Op::PutLocal, var, version, box, data, bytes, layout);
}

std::size_t Client::release(const std::string& var, std::uint64_t version, const Box& box) {
  auto w = impl_->begin(Op::Release);
  w.str(var).u64(version).box(box).str(impl_->endpoint->address());
  net::Bytes reply = impl_->call(Op::Release, std::move(w), net::deadline_in(30000));
  net::WireReader r(reply);
  const std::uint32_t n = r.u32();
  std::lock_guard lock(impl_->mutex);
  impl_->local.erase({var, version, box.to_string()});
  return n;
}

void Client::get(const std::string& var, std::uint64_t version, const Box& region, void* data, std::size_t bytes,
                 std::int64_t timeout_ms, const Layout& layout) {
  impl_->get(var, version, false, region, data, bytes, timeout_ms, layout);
}

std::uint64_t Client::get_latest(const std::string& var, const Box& region, void* data, std::size_t bytes,
                                 std::int64_t timeout_ms, const Layout& layout) {
  return impl_->get(var, 0, true, region, data, bytes, timeout_ms, layout);
}

std::optional<std::uint64_t> Client::latest(const std::string& var) {
  auto w = impl_->begin(Op::Latest);
  w.str(var);
  try {
    net::Bytes reply = impl_->call(Op::Latest, std::move(w), net::deadline_in(30000));
    return net::WireReader(reply).u64();
  } catch (const Error& e) {
    if (e.code() == Code::NotFound && std::string(e.what()).find("has no versions") != std::string::npos)
      return std::nullopt;
    throw;
  }
}

void Client::remove(const std::string& var, std::uint64_t version) {
  auto w = impl_->begin(Op::Delete);
  w.str(var).u64(version);
  impl_->call(Op::Delete, std::move(w), net::deadline_in(30000));
}

std::vector<VariableInfo> Client::list() {
  net::Bytes reply = impl_->call(Op::List, impl_->begin(Op::List), net::deadline_in(30000));
  net::WireReader r(reply);
  std::vector<VariableInfo> out(r.u32());
  for (auto& v : out) {
    v.name = r.str();
    v.dtype = DType::parse(r.str());
    v.ndim = r.u8();
    if (r.u8()) v.shape = r.box();
    v.versions.resize(r.u32());
    for (auto& ver : v.versions) {
      ver.version = r.u64();
      ver.pieces.resize(r.u32());
      for (auto& p : ver.pieces) {
        p.box = r.box();
        p.bytes = r.u64();
        p.owner = r.str();
      }
    }
  }
  r.expect_end();
  return out;
}

ServerStats Client::stat() {
  net::Bytes reply = impl_->call(Op::Stat, impl_->begin(Op::Stat), net::deadline_in(30000));
  net::WireReader r(reply);
  ServerStats s;
  s.variables = r.u64();
  s.versions = r.u64();
  s.pieces = r.u64();
  s.owned_bytes = r.u64();
  s.local_bytes = r.u64();
  s.memory_budget = r.u64();
  s.requests = r.u64();
  s.bytes_in = r.u64();
  r.expect_end();
  return s;
}

void Client::stop_server() { impl_->call(Op::Stop, impl_->begin(Op::Stop), net::deadline_in(30000)); }

}  // namespace cove
