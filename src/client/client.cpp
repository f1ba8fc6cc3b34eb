#include <cove/client.hpp>
#include <cove/region_copy.hpp>

#include "core/fail.hpp"
#include "net/protocol.hpp"
#include "net/transport.hpp"
#include "common/connection_file.hpp"
#include "store/access_patterns.hpp"
#include "common/placement.hpp"
#include "common/shard_map.hpp"

#include <algorithm>
#include <cstring>
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <future>
#include <thread>
#include <tuple>
#include <unistd.h>

namespace cove {

using detail::fail;
using net::Op;

namespace {

// The client's own endpoint, in the servers' transport (readers reach its
// put_local data there).
std::unique_ptr<net::Endpoint> open_endpoint(const std::string& server_address) {
  static std::atomic<std::uint64_t> counter{0};
  if (server_address.rfind("inproc://", 0) == 0)
    return net::make_endpoint("inproc://client-" + std::to_string(::getpid()) + "-" + std::to_string(++counter));
  if (server_address.rfind("ucx:", 0) == 0) return net::make_endpoint("ucx");
  fail(Code::InvalidArgument, "server address '", server_address.substr(0, 48),
       "' has an unknown scheme; expected inproc://NAME or ucx:...");
}

bool is_address(const std::string& s) { return s.rfind("inproc://", 0) == 0 || s.rfind("ucx:", 0) == 0; }

std::vector<std::string> split_addresses(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    const auto comma = s.find(',', start);
    const std::string a = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!a.empty()) out.push_back(a);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
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
  std::string holder;  // resolved address
  net::Bytes key;
  bool replica = false;  // a part of a piece in the reader's layout
  net::Bytes source;     // the key of the piece it is a part of (replicas), else key
};

struct VarInfo {
  DType dtype;
  std::optional<Box> shape;
};

// Milliseconds left before `deadline`, for a wait that started with `timeout_ms`.
std::int64_t remaining_ms(std::int64_t timeout_ms, net::Deadline deadline) {
  if (timeout_ms <= 0) return timeout_ms;
  // Rounded up: a wait must never end before the caller asked.
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - net::Clock::now()).count();
  return std::max<std::int64_t>(1, left);
}

}  // namespace

struct Client::Impl {
  std::unique_ptr<net::Endpoint> endpoint;
  std::vector<std::string> addresses;  // the servers, in group order
  std::vector<net::Peer> servers;
  std::atomic<std::uint64_t> next_id{1};
  std::mutex mutex;
  std::map<std::string, VarInfo> vars;                   // definitions seen
  std::map<std::string, std::shared_ptr<const common::ShardMap>> maps;  // by variable; replaced, never changed
  net::PeerCache peers;                                  // writers read from (put_local), by address
  std::uint8_t reorg = 0;                                // COVE_REORG, 0 when unset
  store::AccessPatterns patterns;                        // this client's gets (SAHR), under mutex
  std::map<std::tuple<std::string, std::uint64_t, std::string>, std::unique_ptr<net::MemoryRegion>> local;

  ~Impl() {
    if (servers.empty() || local.empty()) return;
    // Release our put_local pieces before our memory goes. The servers may be
    // gone already; there is nothing left to release then.
    for (std::size_t s = 0; s < servers.size(); ++s) try {
        auto w = begin(Op::Disconnect);
        w.str(endpoint->address());
        call(s, Op::Disconnect, std::move(w), net::deadline_in(5000));
      } catch (...) {
      }
  }

  net::WireWriter begin(Op op) { return net::WireWriter(static_cast<std::uint16_t>(op), next_id++); }

  net::Bytes call(std::size_t server, Op op, net::WireWriter&& w, net::Deadline deadline) {
    net::Bytes request = std::move(w).finish();
    const net::Header h = net::read_header(request);
    net::Bytes reply;
    try {
      reply = endpoint->call(servers[server], std::move(request), deadline);
    } catch (const Error& e) {  // the transport's failure, with which request it was
      fail(e.code(), net::op_name(op), " request to server ", server, ": ", detail::message_of(e));
    }
    net::check_reply(reply, static_cast<std::uint16_t>(op), h.request_id);
    return reply;
  }
  // The same request to every server; returns the replies in server order.
  template <typename Fill>
  std::vector<net::Bytes> call_all(Op op, Fill fill, net::Deadline deadline) {
    std::vector<net::Bytes> replies;
    for (std::size_t s = 0; s < servers.size(); ++s) {
      auto w = begin(op);
      fill(w);
      replies.push_back(call(s, op, std::move(w), deadline));
    }
    return replies;
  }

  void remember(const std::string& name, const VarInfo& info) {
    std::lock_guard lock(mutex);
    vars[name] = info;
    maps[name] = std::make_shared<const common::ShardMap>(info.shape, static_cast<int>(servers.size()), name);
  }

  VarInfo var_info(const std::string& var) {
    {
      std::lock_guard lock(mutex);
      auto it = vars.find(var);
      if (it != vars.end()) return it->second;
    }
    for (const auto& v : list_server(0))
      if (v.name == var) {
        remember(var, {v.dtype, v.shape});
        return {v.dtype, v.shape};
      }
    fail(Code::NotFound, "variable '", var, "' is not defined");
  }

  // The checks the server makes too, made here first so that a bad region
  // is reported as such rather than by the shard map.
  static void check_region(const std::string& var, const VarInfo& info, const Box& box) {
    if (!info.shape) return;
    if (box.ndim != info.shape->ndim)
      fail(Code::InvalidArgument, "variable '", var, "' has ", info.shape->ndim, " dimensions but the region ",
           box.to_string(), " has ", box.ndim);
    if (!info.shape->contains(box))
      fail(Code::InvalidArgument, "region ", box.to_string(), " is outside the global shape ",
           info.shape->to_string(), " of variable '", var, "'");
  }

  // Shared and immutable: a concurrent define() may replace it, not change it.
  std::shared_ptr<const common::ShardMap> shard_map(const std::string& var) {
    var_info(var);
    std::lock_guard lock(mutex);
    return maps.at(var);
  }

  net::Peer peer_for(const std::string& address) {
    for (std::size_t s = 0; s < addresses.size(); ++s)
      if (addresses[s] == address) return servers[s];
    return peers.get(*endpoint, address, 10000);
  }

  void send_put(Op op, const std::string& var, std::uint64_t version, const Box& box, const void* data,
                std::size_t bytes, const Layout& layout) {
    validate_box(box, "box");
    const VarInfo info = var_info(var);
    check_buffer(box, info.dtype, data, bytes, op == Op::Put ? "put" : "put_local");
    check_region(var, info, box);
    // The data goes to the first server that indexes part of it.
    const std::size_t home = static_cast<std::size_t>(shard_map(var)->shards_for(box).front());
    if (op == Op::Put && bytes <= net::kEagerBytes) {  // small: the bytes travel with the request
      auto w = begin(Op::PutInline);
      w.str(var).u64(version).box(box).str(layout.to_string()).str(info.dtype.name()).u64(bytes);
      w.bytes({static_cast<const std::byte*>(data), bytes});
      w.u8(reorg);
      call(home, Op::PutInline, std::move(w), net::kNoDeadline);
      return;
    }
    auto region = endpoint->expose(const_cast<void*>(data), bytes);  // only ever read by peers
    auto w = begin(op);
    w.str(var).u64(version).box(box).str(layout.to_string()).str(info.dtype.name()).u64(bytes);
    if (op == Op::PutLocal) w.str(endpoint->address());
    w.bytes(region->key());
    w.u8(reorg);
    call(home, op, std::move(w), net::kNoDeadline);
    if (op == Op::PutLocal) {
      std::lock_guard lock(mutex);
      local[{var, version, box.to_string()}] = std::move(region);
    }
  }

  struct Answer {
    std::uint64_t version;
    std::vector<QueryPiece> pieces;
    std::vector<std::byte> data;  // the region itself, when a server answered with it
    bool eager = false;
    Reorg method = Reorg::Rad;  // the method in force (the first server's answer)
  };

  Answer query(std::size_t server, const std::string& var, std::uint64_t version, bool latest, const Box& region,
               std::int64_t timeout_ms, const DType& dtype, const Layout& layout = Layout::c(),
               std::uint32_t eager_max = 0) {
    auto w = begin(Op::Query);
    w.str(var).u64(version).u8(latest ? 1 : 0).box(region).i64(timeout_ms).str(layout.to_string()).u32(eager_max);
    w.u8(reorg);
    const net::Deadline deadline = timeout_ms < 0 ? net::kNoDeadline : net::deadline_in(timeout_ms + 30000);
    net::Bytes reply = call(server, Op::Query, std::move(w), deadline);
    net::WireReader r(reply);
    Answer a;
    a.version = r.u64();
    const DType stored = DType::parse(r.str());
    if (!(stored == dtype)) fail(Code::InvalidArgument, "variable '", var, "' now has dtype ", stored.name());
    const std::uint8_t method = r.u8();
    if (method < 1 || method > 4) fail(Code::Protocol, "a server answered with reorganization method ", int{method});
    a.method = static_cast<Reorg>(method);
    if (r.u8()) {
      const auto blob = r.bytes();
      a.data.assign(blob.begin(), blob.end());
      a.eager = true;
      r.expect_end();
      return a;
    }
    a.pieces.resize(r.u32());
    for (auto& p : a.pieces) {
      p.box = r.box();
      p.layout = Layout::parse(r.str());
      p.holder = r.str();
      if (p.holder.empty()) p.holder = addresses[server];
      const auto k = r.bytes();
      p.key.assign(k.begin(), k.end());
      p.replica = r.u8() != 0;
      const auto source = p.replica ? r.bytes() : k;
      p.source.assign(source.begin(), source.end());
    }
    r.expect_end();
    return a;
  }

  // Asks every shard that indexes part of `region` for its pieces; for
  // `latest`, the newest version all of them cover.
  Answer gather(const std::string& var, std::uint64_t version, bool latest, const Box& region,
                std::int64_t timeout_ms, const DType& dtype, const Layout& layout = Layout::c()) {
    const std::vector<int> shards = shard_map(var)->shards_for(region);
    const net::Deadline deadline = net::deadline_in(timeout_ms);
    // A small region within one shard may come back as bytes (one round trip).
    const bool small = static_cast<std::uint64_t>(region.volume()) * dtype.size() <= net::kEagerBytes;
    const auto eager_max = static_cast<std::uint32_t>(shards.size() == 1 && small && !latest ? net::kEagerBytes : 0);
    std::vector<Answer> answers;
    for (int s : shards)
      answers.push_back(query(static_cast<std::size_t>(s), var, version, latest, region,
                              remaining_ms(timeout_ms, deadline), dtype, layout, eager_max));
    if (answers.size() == 1 && answers.front().eager) return std::move(answers.front());
    if (latest) {
      std::uint64_t v = answers.front().version;
      for (const auto& a : answers) v = std::min(v, a.version);
      for (std::size_t i = 0; i < shards.size(); ++i)
        if (answers[i].version != v)
          answers[i] = query(static_cast<std::size_t>(shards[i]), var, v, false, region, 0, dtype, layout);
    }
    Answer all{answers.front().version, {}, {}, false, answers.front().method};
    // A piece indexed by two shards comes twice; its holder may send a
    // replica where the other shard sends the piece itself: the replica wins.
    std::map<std::pair<std::string, net::Bytes>, std::size_t> seen;
    for (auto& a : answers)
      for (auto& p : a.pieces) {
        auto [it, fresh] = seen.try_emplace({p.holder, p.source}, all.pieces.size());
        if (fresh)
          all.pieces.push_back(std::move(p));
        else if (p.replica && !all.pieces[it->second].replica)
          all.pieces[it->second] = std::move(p);
      }
    return all;
  }

  std::uint64_t get(const std::string& var, std::uint64_t version, bool latest, const Box& region, void* data,
                    std::size_t bytes, std::int64_t timeout_ms, const Layout& layout) {
    validate_box(region, "region");
    layout.axis_order(region.ndim);
    const VarInfo info = var_info(var);
    check_region(var, info, region);
    const DType dtype = info.dtype;
    check_buffer(region, dtype, data, bytes, "get");
    // A piece may be deleted or evicted between the answer and our read; the
    // read then fails with NotFound and the query is asked again.
    for (int attempt = 0;; ++attempt) {
      Answer a = gather(var, version, latest, region, timeout_ms, dtype, layout);
      if (a.eager) {
        if (a.data.size() != bytes) fail(Code::Protocol, "a server answered with ", a.data.size(), " bytes for ", bytes);
        std::memcpy(data, a.data.data(), bytes);
        return a.version;
      }
      try {
        for (const auto& p : a.pieces) read_piece(p, region, data, bytes, layout, dtype.size());
        if (a.method == Reorg::Sahr) record_pattern(var, a.version, region, layout);
        return a.version;
      } catch (const Error& e) {
        if (e.code() != Code::NotFound || attempt == 2) throw;
      }
    }
  }

  // SAHR: the get goes into this client's records (Algorithm 1); a pattern
  // the records did not hold yet goes to every server, which prepare the
  // next versions for it. After the get: it never delays the data.
  void record_pattern(const std::string& var, std::uint64_t version, const Box& region, const Layout& layout) {
    {
      std::lock_guard lock(mutex);
      if (!patterns.update(var, layout, region)) return;
    }
    call_all(Op::Pattern, [&](net::WireWriter& w) { w.str(var).str(layout.to_string()).box(region).u64(1).u64(version); },
             net::deadline_in(30000));
  }

  // Reads the part of piece `p` inside `region` into `data`. Runs contiguous
  // in both buffers go straight to their place; otherwise the part is read
  // packed (in the piece's layout) and reorganised here.
  void read_piece(const QueryPiece& p, const Box& region, void* data, std::size_t bytes, const Layout& layout,
                  std::size_t elem) {
    const Box part = p.box.intersection(region);
    if (part.empty()) return;
    const net::Peer peer = peer_for(p.holder);
    auto* dst = static_cast<std::byte*>(data);
    std::vector<net::RemoteOp> ops;
    const bool direct = for_each_common_run(p.box, p.layout, region, layout, part, elem,
                                            [&](std::int64_t so, std::int64_t dof, std::int64_t n) {
                                              ops.push_back({static_cast<std::uint64_t>(so), dst + dof,
                                                             static_cast<std::size_t>(n)});
                                            });
    if (direct) {
      read_runs(peer, p.key, ops);
      return;
    }
    std::vector<std::byte> packed(static_cast<std::size_t>(part.volume()) * elem);
    std::size_t at = 0;
    contiguous_runs(part, p.box, p.layout, elem).for_each([&](std::int64_t off, std::int64_t n) {
      ops.push_back({static_cast<std::uint64_t>(off), packed.data() + at, static_cast<std::size_t>(n)});
      at += static_cast<std::size_t>(n);
    });
    read_runs(peer, p.key, ops);
    copy_region({packed.data(), packed.size(), part, p.layout}, {data, bytes, region, layout}, part, elem);
  }

  // Reads the runs `ops` of a remote region. Many short runs cost a transfer
  // (or an iovec) each: when they are short and packed closely, the span
  // that holds them is read at once and the runs are taken from it here.
  void read_runs(const net::Peer& peer, const net::Bytes& key, std::span<const net::RemoteOp> ops) {
    constexpr std::size_t kShortRun = 4096, kMinRuns = 64, kMaxSpread = 4;
    std::size_t total = 0;
    std::uint64_t lo = UINT64_MAX, hi = 0;
    for (const auto& op : ops) {
      total += op.bytes;
      lo = std::min(lo, op.offset);
      hi = std::max(hi, op.offset + op.bytes);
    }
    if (ops.size() < kMinRuns || total > ops.size() * kShortRun || hi - lo > kMaxSpread * total) {
      endpoint->read(peer, key, ops, net::kNoDeadline);
      return;
    }
    const std::unique_ptr<std::byte[]> span(new std::byte[hi - lo]);  // not zeroed: every byte is read
    const net::RemoteOp whole{lo, span.get(), static_cast<std::size_t>(hi - lo)};
    endpoint->read(peer, key, {&whole, 1}, net::kNoDeadline);
    for (const auto& op : ops) std::memcpy(op.local, span.get() + (op.offset - lo), op.bytes);
  }

  Metadata meta_get(const std::string& name, int mode, std::uint64_t version, std::int64_t timeout_ms) {
    auto w = begin(Op::MetaGet);
    w.str(name).u8(static_cast<std::uint8_t>(mode)).u64(version).i64(timeout_ms);
    const net::Deadline deadline = timeout_ms < 0 ? net::kNoDeadline : net::deadline_in(timeout_ms + 30000);
    const std::size_t server = static_cast<std::size_t>(common::home_server(name, static_cast<int>(servers.size())));
    net::Bytes reply = call(server, Op::MetaGet, std::move(w), deadline);
    net::WireReader r(reply);
    Metadata m;
    m.version = r.u64();
    const auto blob = r.bytes();
    m.data.assign(blob.begin(), blob.end());
    r.expect_end();
    return m;
  }

  std::vector<VariableInfo> list_server(std::size_t s) {
    net::Bytes reply = call(s, Op::List, begin(Op::List), net::deadline_in(30000));
    net::WireReader r(reply);
    std::vector<VariableInfo> out(r.u32());
    for (auto& v : out) {
      v.name = r.str();
      v.dtype = DType::parse(r.str());
      v.ndim = r.u8();
      if (r.u8()) v.shape = r.box();
      if (const std::uint8_t m = r.u8()) v.reorg = static_cast<Reorg>(m);
      v.layouts.resize(r.u32());
      for (auto& l : v.layouts) l = Layout::parse(r.str());
      v.versions.resize(r.u32());
      for (auto& ver : v.versions) {
        ver.version = r.u64();
        ver.pieces.resize(r.u32());
        for (auto& p : ver.pieces) {
          p.box = r.box();
          p.bytes = r.u64();
          p.holder = r.str();
          if (p.holder.empty()) p.holder = addresses[s];
          p.on_server = std::find(addresses.begin(), addresses.end(), p.holder) != addresses.end();
          p.replicas.resize(r.u32());
          for (auto& rep : p.replicas) {
            rep.box = r.box();
            rep.layout = Layout::parse(r.str());
            rep.bytes = r.u64();
            rep.ready = r.u8() != 0;
          }
        }
      }
    }
    r.expect_end();
    return out;
  }
};

std::vector<std::string> Client::resolve(const std::string& target, std::int64_t timeout_ms) {
  std::string where = target;
  if (where.empty()) {
    const char* env = std::getenv("COVE_CONNECT");
    if (!env || !*env)
      fail(Code::InvalidArgument, "no server given: pass an address or a connection file, or set COVE_CONNECT");
    where = env;
  }
  const std::vector<std::string> addresses =
      is_address(where) ? split_addresses(where) : common::read_connection_file(where, timeout_ms);
  if (addresses.empty()) fail(Code::InvalidArgument, "no server address in '", where, "'");
  return addresses;
}

Client Client::connect(const std::string& target, const ConnectOptions& options) {
  const std::vector<std::string> addresses = resolve(target, options.timeout_ms);
  Client c;
  c.impl_ = std::make_shared<Impl>();
  c.impl_->endpoint = open_endpoint(addresses.front());
  c.impl_->addresses = addresses;
  if (const char* env = std::getenv("COVE_REORG"); env && *env)
    c.impl_->reorg = static_cast<std::uint8_t>(parse_reorg(env));  // InvalidArgument names the value
  const net::Deadline deadline = net::deadline_in(options.timeout_ms);
  for (const auto& a : addresses) {
    try {
      c.impl_->servers.push_back(c.impl_->endpoint->connect(a, deadline));
    } catch (const Error& e) {
      fail(Code::Unavailable, "no Cove server at ", a.substr(0, 48), " within ", options.timeout_ms, " ms (",
           e.what(), ")");
    }
  }
  return c;
}

Client::~Client() = default;

std::string Client::address() const { return impl_->endpoint->address(); }
std::vector<std::string> Client::servers() const { return impl_->addresses; }

void Client::define(const std::string& name, DType dtype, int ndim, std::span<const Index> shape,
                    const VariableOptions& options) {
  std::optional<Box> box;
  if (!shape.empty()) {
    if (shape.size() != static_cast<std::size_t>(ndim))
      fail(Code::InvalidArgument, "shape has ", shape.size(), " extents but ndim = ", ndim);
    box = Box::from_shape(shape);
  }
  impl_->call_all(
      Op::Define,
      [&](net::WireWriter& w) {
        w.str(name).str(dtype.name()).u8(static_cast<std::uint8_t>(std::clamp(ndim, 0, 255))).u8(box ? 1 : 0);
        if (box) w.box(*box);
        w.u8(options.reorg ? static_cast<std::uint8_t>(*options.reorg) : 0);
        w.u32(static_cast<std::uint32_t>(options.layouts.size()));
        for (const Layout& l : options.layouts) w.str(l.to_string());
      },
      net::deadline_in(30000));
  impl_->remember(name, {dtype, box});
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
  std::size_t n = 0;
  for (const auto& reply : impl_->call_all(
           Op::Release, [&](net::WireWriter& w) { w.str(var).u64(version).box(box).str(impl_->endpoint->address()); },
           net::deadline_in(30000)))
    n += net::WireReader(reply).u32();
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
  std::optional<std::uint64_t> newest;
  for (std::size_t s = 0; s < impl_->servers.size(); ++s) {
    auto w = impl_->begin(Op::Latest);
    w.str(var);
    try {
      net::Bytes reply = impl_->call(s, Op::Latest, std::move(w), net::deadline_in(30000));
      const std::uint64_t v = net::WireReader(reply).u64();
      newest = newest ? std::max(*newest, v) : v;
    } catch (const Error& e) {
      if (e.code() != Code::NotFound || std::string(e.what()).find("has no versions") == std::string::npos) throw;
    }
  }
  return newest;
}

void Client::remove(const std::string& var, std::uint64_t version) {
  bool found = false;
  for (std::size_t s = 0; s < impl_->servers.size(); ++s) {
    auto w = impl_->begin(Op::Delete);
    w.str(var).u64(version);
    try {
      impl_->call(s, Op::Delete, std::move(w), net::deadline_in(30000));
      found = true;
    } catch (const Error& e) {
      if (e.code() != Code::NotFound) throw;
      if (std::string(e.what()).find("is not defined") != std::string::npos) throw;
    }
  }
  if (!found) fail(Code::NotFound, "variable '", var, "' has no version ", version);
}

std::vector<VariableInfo> Client::list() {
  std::vector<VariableInfo> merged;
  for (std::size_t s = 0; s < impl_->servers.size(); ++s)
    for (auto& v : impl_->list_server(s)) {
      auto it = std::find_if(merged.begin(), merged.end(), [&](const VariableInfo& m) { return m.name == v.name; });
      if (it == merged.end()) {
        merged.push_back(std::move(v));
        continue;
      }
      for (auto& ver : v.versions) {
        auto vi = std::find_if(it->versions.begin(), it->versions.end(),
                               [&](const VersionInfo& m) { return m.version == ver.version; });
        if (vi == it->versions.end()) {
          it->versions.push_back(std::move(ver));
          continue;
        }
        for (auto& p : ver.pieces) {  // a piece indexed by several servers is listed once, with its holder's replicas
          auto q = std::find_if(vi->pieces.begin(), vi->pieces.end(),
                                [&](const PieceInfo& other) { return other.box == p.box && other.holder == p.holder; });
          if (q == vi->pieces.end())
            vi->pieces.push_back(std::move(p));
          else if (q->replicas.empty())
            q->replicas = std::move(p.replicas);
        }
      }
    }
  for (auto& v : merged)
    std::sort(v.versions.begin(), v.versions.end(),
              [](const VersionInfo& a, const VersionInfo& b) { return a.version < b.version; });
  return merged;
}

std::vector<std::pair<std::string, ServerStats>> Client::stat_each() {
  std::vector<std::pair<std::string, ServerStats>> out;
  for (std::size_t s = 0; s < impl_->servers.size(); ++s) {
    net::Bytes reply = impl_->call(s, Op::Stat, impl_->begin(Op::Stat), net::deadline_in(30000));
    net::WireReader r(reply);
    out.emplace_back(impl_->addresses[s], net::read_stats(r));
  }
  return out;
}

ServerStats Client::stat() {
  ServerStats total;
  for (const auto& [address, s] : stat_each()) {
    total.variables = std::max(total.variables, s.variables);
    total.versions = std::max(total.versions, s.versions);
    total.pieces += s.pieces;
    total.owned_bytes += s.owned_bytes;
    total.local_bytes += s.local_bytes;
    total.memory_budget += s.memory_budget;
    total.requests += s.requests;
    total.bytes_in += s.bytes_in;
    total.replicas += s.replicas;
    total.replica_bytes += s.replica_bytes;
    total.reorganizations += s.reorganizations;
    total.replica_answers += s.replica_answers;
    total.patterns = std::max(total.patterns, s.patterns);
    total.reorg = s.reorg;  // the group's configuration: the same on every member
    total.layouts = s.layouts;
  }
  return total;
}

void Client::stop_server() {
  impl_->call_all(Op::Stop, [](net::WireWriter&) {}, net::deadline_in(30000));
}

}  // namespace cove

namespace cove {

// ---- non-blocking put ----

struct PutHandle::State {
  std::shared_future<void> done;
};

bool PutHandle::test() const {
  return state_->done.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}
void PutHandle::wait() const { state_->done.get(); }

PutHandle Client::put_async(const std::string& var, std::uint64_t version, const Box& box, const void* data,
                            std::size_t bytes, const Layout& layout) {
  PutHandle h;
  h.state_ = std::make_shared<PutHandle::State>();
  Client self = *this;  // keeps the connection alive while the put runs
  h.state_->done = std::async(std::launch::async, [self, var, version, box, data, bytes, layout]() mutable {
                     self.put(var, version, box, data, bytes, layout);
                   }).share();
  return h;
}

// ---- subscriptions ----

struct Subscription::State {
  std::atomic<bool> cancelled{false};
  std::thread thread;
  ~State() {
    cancelled = true;
    if (thread.joinable()) {
      if (thread.get_id() == std::this_thread::get_id())
        thread.detach();  // the last handle went away inside the callback
      else
        thread.join();
    }
  }
};

void Subscription::cancel() {
  if (!state_) return;
  state_->cancelled = true;
  if (state_->thread.joinable() && state_->thread.get_id() != std::this_thread::get_id()) state_->thread.join();
}

Subscription Client::subscribe(const std::string& var, const Box& region,
                               std::function<void(const std::string& var, std::uint64_t version)> callback) {
  if (!callback) fail(Code::InvalidArgument, "subscribe needs a callback");
  const VarInfo info = impl_->var_info(var);
  Impl::check_region(var, info, region);
  // Versions already there do not count: start after the newest covering one.
  std::uint64_t next = 0;
  try {
    next = impl_->gather(var, 0, true, region, 0, info.dtype).version + 1;
  } catch (const Error& e) {
    if (e.code() != Code::NotFound) throw;
  }
  Subscription sub;
  sub.state_ = std::make_shared<Subscription::State>();
  auto* state = sub.state_.get();
  auto impl = impl_;
  // The thread holds the client, not the subscription: dropping the last
  // Subscription handle cancels and joins it.
  state->thread = std::thread([state, impl, var, region, callback = std::move(callback), next, dtype = info.dtype]() mutable {
    while (!state->cancelled) {
      try {
        // Short waits, so that a cancel is noticed within about this long.
        const std::uint64_t v = impl->gather(var, next, true, region, 200, dtype).version;
        if (state->cancelled) break;
        callback(var, v);
        next = v + 1;
      } catch (const Error& e) {
        if (e.code() != Code::Timeout) break;
      }
    }
  });
  return sub;
}

// ---- metadata ----

void Client::put_meta(const std::string& name, std::uint64_t version, std::span<const std::byte> data) {
  if (data.size() > net::kMaxMetaBytes)
    fail(Code::InvalidArgument, "metadata '", name, "' of ", data.size(), " bytes exceeds ", net::kMaxMetaBytes);
  auto w = impl_->begin(Op::MetaPut);
  w.str(name).u64(version).bytes(data);
  impl_->call(static_cast<std::size_t>(common::home_server(name, static_cast<int>(impl_->servers.size()))), Op::MetaPut, std::move(w), net::deadline_in(30000));
}

Metadata Client::get_meta(const std::string& name, std::uint64_t version, std::int64_t timeout_ms) {
  return impl_->meta_get(name, 0, version, timeout_ms);
}
Metadata Client::get_meta_next(const std::string& name, std::uint64_t after, std::int64_t timeout_ms) {
  return impl_->meta_get(name, 1, after, timeout_ms);
}
Metadata Client::get_meta_latest(const std::string& name, std::int64_t timeout_ms) {
  return impl_->meta_get(name, 2, 0, timeout_ms);
}

}  // namespace cove
