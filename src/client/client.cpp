// The client: connecting, definitions, puts, releases, metadata and the
// administrative calls (gets are in get.cpp).
#include "client/impl.hpp"
#include "common/printable.hpp"

#include <cove/dataflow.hpp>
#include <cove/region_copy.hpp>

#include "common/auth.hpp"
#include "common/connection_file.hpp"
#include "common/log.hpp"
#include "common/placement.hpp"
#include "core/box_checks.hpp"
#include "core/fail.hpp"
#include "gpu/device.hpp"
#include "net/inet.hpp"
#include "net/segment.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace cove {

using detail::fail;
using net::Message;
using net::Op;

namespace {

// How long a member of a group whose connection file is there may take to
// answer before the client takes it for dead.
constexpr std::int64_t kMemberGraceMs = 2000;
// The same for connecting again to a member on this host (net::on_this_host),
// which no link failure can hide: one that refuses is gone, and waiting
// out kMemberGraceMs, once a second, would stall every call that needs it.
// This is long enough for a full listen backlog to drain.
constexpr std::int64_t kLocalGraceMs = 100;

bool is_address(const std::string& s) {
  return s.rfind("inproc://", 0) == 0 || s.rfind("ucx:", 0) == 0 || s.rfind("local:", 0) == 0;
}

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
  std::uint64_t need = 0;
  if (__builtin_mul_overflow(static_cast<std::uint64_t>(region.volume()), dtype.size(), &need))
    fail(Code::InvalidArgument, what, " region ", region.to_string(), " of ", dtype.name(), " holds more than 2^64 bytes");
  if (bytes != need)
    fail(Code::InvalidArgument, what, " buffer of ", bytes, " bytes does not match region ", region.to_string(),
         " of ", dtype.name(), " (", need, " bytes)");
  if (need > 0 && data == nullptr) fail(Code::InvalidArgument, what, " buffer is null");
}

void check_meta_size(const std::string& name, std::span<const std::byte> data) {
  if (data.size() > net::kMaxMetaBytes)
    fail(Code::InvalidArgument, "metadata '", name, "' of ", data.size(), " bytes exceeds ", net::kMaxMetaBytes);
}
}  // namespace

// ---- Impl ----

Client::Impl::~Impl() {
  if (addresses.empty() || local.empty()) return;
  // Release our put_local pieces before our memory goes: each server
  // answers once no reader copies them any more (no deadline: the memory
  // must not go under a reader). The servers may be gone already; there is
  // nothing left to release then.
  for (std::size_t s = 0; s < server_count(); ++s) try {
      if (reachable(s)) call<Message<Op::Disconnect>>(s, {endpoint->address()}, net::kNoDeadline);
    } catch (...) {
      log::dropped("releasing this client's put_local pieces as it disconnects");
    }
}

// A server may not be there yet: connecting is tried again until the
// deadline (a UCX connection fails only when first used: the hello proves
// it). `secret`, when empty, becomes that of a server in this process.
net::Peer Client::Impl::connect_server(const std::string& address, std::string& secret, net::Deadline deadline,
                                       std::int64_t timeout_ms) {
  for (;;) {
    try {
      net::Peer p = endpoint->connect(address, deadline);
      if (secret.empty()) {
        // Is anybody there? (Connections are made lazily by some transports.)
        net::greet(*endpoint, p, net::Role::Client, "", {}, std::max(deadline, net::deadline_in(1000)));
        secret = common::local_secret(address);
      }
      if (secret.empty())
        fail(Code::PermissionDenied, "no secret for the Cove server at ", common::shown_address(address),
             ": connect through the connection file its server or group wrote (cove-server --connection-file, ",
             "a server's write_connection_file), or give the group's secret (connect's secret option, or ",
             "COVE_SECRET)");
      if (std::strcmp(p->transport(), "ucx") == 0)
        net::greet(*endpoint, p, net::Role::Client, "", secret, std::max(deadline, net::deadline_in(1000)));
      return p;
    } catch (const Error& e) {
      if (e.code() == Code::PermissionDenied) throw;
      if (e.code() != Code::Unavailable || net::Clock::now() >= deadline)
        fail(e.code() == Code::InvalidArgument ? Code::InvalidArgument : Code::Unavailable, "no Cove server at ",
             common::shown_address(address), " within ", timeout_ms, " ms (", detail::message_of(e), ")");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
}

void Client::Impl::connect_all(net::Deadline deadline, std::int64_t timeout_ms) {
  std::vector<net::Peer> connected;
  std::optional<Error> first_error;
  for (std::size_t s = 0; s < addresses.size(); ++s) try {
      connected.push_back(connect_server(addresses[s], secrets[s], deadline, timeout_ms));
    } catch (const Error& e) {
      if (e.code() != Code::Unavailable) throw;
      if (!first_error) first_error = e;
      connected.push_back(nullptr);
      log::warn("server {} of the group ({}) does not answer: serving on without it", s, common::shown_address(addresses[s]));
    }
  if (std::none_of(connected.begin(), connected.end(), [](const net::Peer& p) { return p != nullptr; })) throw *first_error;
  // Hello once every server is connected: this client's address (which
  // grows a UCX part when a server is reached by UCX) is final now.
  for (std::size_t s = 0; s < addresses.size(); ++s)
    if (connected[s])
      net::greet(*endpoint, connected[s], net::Role::Client, endpoint->address(), secrets[s],
                 net::deadline_in(net::kControlTimeoutMs));
  std::lock_guard lock(servers_mutex_);
  servers_ = std::move(connected);
  retry_after_.assign(servers_.size(), net::Clock::time_point{});
}

net::Peer Client::Impl::server(std::size_t s) {
  std::lock_guard lock(servers_mutex_);  // held while connecting again: callers to s wait for the one attempt
  net::Peer& p = servers_.at(s);
  if (!p)
    fail(Code::Unavailable, "server ", s, " (", common::shown_address(addresses[s]), ") did not answer when this client connected");
  if (!p->broken()) return p;
  if (net::Clock::now() < retry_after_.at(s))
    fail(Code::Unavailable, "server ", s, " (", common::shown_address(addresses[s]), ") did not answer a moment ago");
  log::warn("the connection to server {} ({}) failed: connecting again", s, common::shown_address(addresses[s]));
  try {
    const std::int64_t grace = net::on_this_host(addresses[s]) ? kLocalGraceMs : kMemberGraceMs;
    net::Peer again = connect_server(addresses[s], secrets[s], net::deadline_in(grace), grace);
    net::greet(*endpoint, again, net::Role::Client, endpoint->address(), secrets[s],
               net::deadline_in(net::kControlTimeoutMs));
    p = again;
  } catch (...) {
    retry_after_.at(s) = net::Clock::now() + std::chrono::milliseconds(kRetryMs);
    throw;
  }
  return p;
}

void Client::Impl::detail_fail(const Error& e, const char* op, std::size_t server) {
  fail(e.code(), op, " request to server ", server, ": ", detail::message_of(e));
}

void Client::Impl::remember(const std::string& name, const VarInfo& info) {
  std::lock_guard lock(mutex);
  vars[name] = info;
  maps[name] = std::make_shared<const common::ShardMap>(info.shape, info.dtype.size(), static_cast<int>(server_count()), name);
}

void Client::Impl::forget(const std::string& name) {
  std::lock_guard lock(mutex);
  vars.erase(name);
  maps.erase(name);
  undeclared.erase(name);
}

std::optional<net::DefineRequest> Client::Impl::undeclared_definition(const std::string& var) {
  std::lock_guard lock(mutex);
  const auto it = undeclared.find(var);
  if (it == undeclared.end()) return std::nullopt;
  return it->second;
}

void Client::Impl::declare(const std::string& var) {
  const std::optional<net::DefineRequest> d = undeclared_definition(var);
  if (!d) return;
  call_all<Message<Op::Define>>(*d);
  std::lock_guard lock(mutex);
  undeclared.erase(var);
}

Client::Impl::VarInfo Client::Impl::put_info(const std::string& var) {
  {
    std::lock_guard lock(mutex);
    auto it = vars.find(var);
    if (it != vars.end()) return it->second;
  }
  return var_info(var);
}

Client::Impl::VarInfo Client::Impl::var_info(const std::string& var, std::optional<std::int64_t> timeout_ms) {
  declare(var);
  {
    std::lock_guard lock(mutex);
    auto it = vars.find(var);
    if (it != vars.end()) return it->second;
  }
  // Every server knows every definition: the first that answers, which
  // waits for it as the caller's timeout says (a reader may come first).
  const net::Deadline deadline = timeout_ms ? wait_deadline(*timeout_ms) : net::deadline_in(net::kControlTimeoutMs);
  for (std::size_t s = 0;; ++s) {
    if (!reachable(s) && s + 1 < server_count()) continue;
    try {
      const net::LookupReply d = call<Message<Op::Lookup>>(s, {var, timeout_ms.value_or(0)}, deadline);
      VarInfo info{d.dtype, d.shape, d.ndim, std::vector<std::byte>(d.fill.begin(), d.fill.end())};
      remember(var, info);
      return info;
    } catch (const Error& e) {
      if (e.code() != Code::Unavailable || s + 1 == server_count()) throw;
    }
  }
}

void Client::Impl::check_region(const std::string& var, const VarInfo& info, const Box& box) {
  if (!info.shape) return;
  if (box.ndim != info.shape->ndim)
    fail(Code::InvalidArgument, "variable '", var, "' has ", info.shape->ndim, " dimensions but the region ",
         box.to_string(), " has ", box.ndim);
  if (!info.shape->contains(box))
    fail(Code::InvalidArgument, "region ", box.to_string(), " is outside the global shape ", info.shape->to_string(),
         " of variable '", var, "'");
}

std::shared_ptr<const common::ShardMap> Client::Impl::shard_map(const std::string& var) {
  put_info(var);  // the map only: an undeclared definition stays with the puts
  std::lock_guard lock(mutex);
  return maps.at(var);
}

net::Peer Client::Impl::peer_for(const std::string& address) {
  for (std::size_t s = 0; s < addresses.size(); ++s)
    if (addresses[s] == address) return server(s);
  return peers.get(address, [&] { return endpoint->connect(address, net::deadline_in(net::kPeerConnectTimeoutMs)); });
}

std::vector<VariableInfo> Client::Impl::list_server(std::size_t s, std::optional<net::Deadline> deadline) {
  auto listed = call<Message<Op::List>>(s, {}, deadline.value_or(net::deadline_in(net::kControlTimeoutMs))).variables;
  for (auto& v : listed)
    for (auto& ver : v.versions)
      for (auto& p : ver.pieces) {
        if (p.holder.empty()) p.holder = addresses[s];
        p.on_server = std::find(addresses.begin(), addresses.end(), p.holder) != addresses.end();
      }
  return listed;
}

std::size_t Client::Impl::put_target(std::size_t home) {
  for (std::size_t i = 0;; ++i) {
    const std::size_t s = (home + i) % server_count();
    try {
      server(s);
      return s;
    } catch (const Error& e) {
      if (e.code() != Code::Unavailable || i + 1 >= server_count()) throw;
      log::debug("put: server {} is unavailable ({}); trying the next", s, e.what());
    }
  }
}

std::optional<std::size_t> Client::Impl::server_index(const std::string& address) const {
  const auto at = std::find(addresses.begin(), addresses.end(), address);
  if (at == addresses.end()) return std::nullopt;
  return static_cast<std::size_t>(at - addresses.begin());
}

void Client::Impl::send_put(Op op, const std::string& var, std::uint64_t version, const Box& box, const void* data,
                            std::size_t bytes, const Layout& layout, MemorySpace memory,
                            std::optional<std::size_t> on) {
  const char* what = op == Op::Put ? "put" : "put_local";
  detail::validate_box(box, "box");
  const VarInfo info = put_info(var);
  check_buffer(box, info.dtype, data, bytes, what);
  check_region(var, info, box);
  // The data goes to the first server that indexes part of it, or when
  // that one is gone to the next that answers (it tells the shards).
  const std::size_t home =
      put_target(on ? *on : static_cast<std::size_t>(shard_map(var)->shards_for(box).front()));
  // A definition made with_first_put travels with the piece; once a put
  // carrying it is stored, every server has it.
  net::PieceHeader piece{var, version, box, layout, info.dtype, bytes, undeclared_definition(var)};
  if (gpu::on_device(gpu::locate(data, memory, what)))
    send_device_put(op, piece, data, info, home);
  else
    send_host_put(op, piece, data, info, home);
  if (piece.define) {
    std::lock_guard lock(mutex);
    if (const auto it = undeclared.find(var); it != undeclared.end() && it->second == *piece.define) undeclared.erase(it);
  }
}

void Client::Impl::send_host_put(Op op, net::PieceHeader piece, const void* data, const VarInfo& info,
                                 std::size_t home, std::shared_ptr<void> staging) {
  const std::size_t bytes = piece.bytes;
  const Box box = piece.box;  // the piece itself goes with the first request
  const Layout layout = piece.layout;
  // Every step has a deadline: a server or link that stops answering fails
  // the put (Timeout, Unavailable) instead of holding the writer.
  const auto control = [] { return net::deadline_in(net::kControlTimeoutMs); };
  if (op == Op::Put && bytes <= net::kEagerBytes) {  // small: the bytes travel with the request
    const auto* b = static_cast<const std::byte*>(data);
    call<Message<Op::PutInline>>(home, {std::move(piece), net::Bytes(b, b + bytes), reorg}, control());
    return;
  }
  const net::Peer peer = server(home);  // one connection for every step (a grant ends with its connection)
  const char* transport = peer->transport();
  const bool same_host = std::strcmp(transport, "local") == 0;
  if (op == Op::Put && (std::strcmp(transport, "ucx") == 0 || (same_host && net::segments_enabled()))) {
    // The server grants space, we copy the bytes into it (on this host,
    // into its shared-memory segment, mapped here once; over UCX, a
    // one-sided write), and then it stores them. On this host we offer our
    // memory too: a server with memory made ahead reads it in place
    // instead and answers grant 0 (messages.hpp).
    std::unique_ptr<net::MemoryRegion> offered;
    net::Bytes offer;
    if (same_host) {
      offered = endpoint->expose(const_cast<void*>(data), bytes);  // only ever read by the server
      const auto k = offered->key();
      offer.assign(k.begin(), k.end());
    }
    const auto grant = call<Message<Op::PutGrant>>(home, {std::move(piece), reorg, std::move(offer)},
                                                   net::deadline_in(net::kControlTimeoutMs + net::transfer_ms(bytes)),
                                                   peer);
    if (grant.grant == 0) return;  // read and stored by the server
    if (auto window = endpoint->map(peer, grant.key, true, control())) {
      if (window->size != bytes) fail(Code::Protocol, "a server granted ", window->size, " bytes for ", bytes);
      copy_region({data, bytes, box, layout}, {window->data, window->size, box, layout}, box, info.dtype.size());
    } else {
      const net::RemoteOp write{0, const_cast<void*>(data), bytes};
      endpoint->write(peer, grant.key, {&write, 1}, net::deadline_in(net::transfer_ms(bytes)));
    }
    call<Message<Op::PutPublish>>(home, {grant.grant}, control(), peer);
    return;
  }
  auto region = endpoint->expose(const_cast<void*>(data), bytes);  // only ever read by peers
  const auto k = region->key();
  net::Bytes key(k.begin(), k.end());
  if (op == Op::PutLocal) {
    auto where = std::make_tuple(piece.var, piece.version, box.to_string());
    call<Message<Op::PutLocal>>(home, {std::move(piece), endpoint->address(), std::move(key), reorg}, control());
    std::lock_guard lock(mutex);
    local[std::move(where)] = {std::move(staging), std::move(region)};
  } else {
    // The server reads the bytes before it answers.
    call<Message<Op::Put>>(home, {std::move(piece), std::move(key), reorg},
                           net::deadline_in(net::kControlTimeoutMs + net::transfer_ms(bytes)));
  }
}

// ---- Client ----

ConnectTarget Client::resolve_target(const std::string& target, std::int64_t timeout_ms) {
  std::string where = target;
  if (where.empty()) {
    const char* env = std::getenv("COVE_CONNECT");
    if (!env || !*env)
      fail(Code::InvalidArgument, "no server given: pass an address or a connection file, or set COVE_CONNECT");
    where = env;
  }
  ConnectTarget t;
  if (is_address(where)) {
    t.servers = split_addresses(where);
  } else {
    auto info = common::read_connection_file(where, timeout_ms);
    t.servers = std::move(info.servers);
    t.secret = std::move(info.secret);
    t.from_file = true;
  }
  if (t.servers.empty()) fail(Code::InvalidArgument, "no server address in '", where, "'");
  return t;
}

std::vector<std::string> Client::resolve(const std::string& target, std::int64_t timeout_ms) {
  return resolve_target(target, timeout_ms).servers;
}

Client Client::connect(const std::string& target, const ConnectOptions& options) {
  ConnectTarget resolved = resolve_target(target, options.timeout_ms);
  const std::vector<std::string>& addresses = resolved.servers;
  std::string secret = !options.secret.empty() ? options.secret : std::move(resolved.secret);
  if (const char* env = std::getenv("COVE_SECRET"); secret.empty() && env) secret = env;
  Client c;
  c.impl_ = std::make_shared<Impl>();
  Impl& impl = *c.impl_;
  impl.endpoint = net::make_endpoint_for(addresses.front());
  impl.addresses = addresses;
  if (const char* env = std::getenv("COVE_REORG"); env && *env) impl.reorg = parse_reorg(env);  // names a bad value
  impl.send_path = options.send_path;
  impl.recv_path = options.recv_path;
  if (const char* env = std::getenv("COVE_GPU_SEND"); env && *env) impl.send_path = parse_send_path(env);
  if (const char* env = std::getenv("COVE_GPU_RECV"); env && *env) impl.recv_path = parse_recv_path(env);
  const net::Deadline deadline = net::deadline_in(options.timeout_ms);
  // Each server's secret: the one given, else that of a server in this
  // process (known once it is there).
  std::vector<std::string> secrets(addresses.size(), secret);
  // A group whose connection file is there has started: a member that does
  // not answer within a short grace has died. The client serves on with the
  // others; requests that need it fail with Unavailable naming it.
  const net::Deadline member_deadline =
      resolved.from_file || options.group_started ? std::min(deadline, net::deadline_in(kMemberGraceMs)) : deadline;
  impl.secrets = std::move(secrets);
  impl.connect_all(member_deadline, options.timeout_ms);
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
  if (ndim < 1 || ndim > kMaxDims) fail(Code::InvalidArgument, "variable '", name, "': ndim = ", ndim, " must be 1..", kMaxDims);
  if (!options.fill.empty() && options.fill.size() != dtype.size())
    fail(Code::InvalidArgument, "variable '", name, "': a fill value of ", options.fill.size(), " bytes for dtype ",
         dtype.name(), ", whose elements have ", dtype.size());
  net::DefineRequest request{name,           dtype, ndim, box, options.reorg, options.layouts,
                             net::Bytes(options.fill.begin(), options.fill.end())};
  if (options.with_first_put) {
    impl_->remember(name, {dtype, box, ndim, options.fill});
    std::lock_guard lock(impl_->mutex);
    impl_->undeclared[name] = std::move(request);
    return;
  }
  impl_->call_all<Message<Op::Define>>(request);
  impl_->remember(name, {dtype, box, ndim, options.fill});
  std::lock_guard lock(impl_->mutex);
  impl_->undeclared.erase(name);
}

void Client::remember_definition(const std::string& var, const VariableDefinition& def) {
  if (def.ndim < 1 || def.ndim > kMaxDims) fail(Code::InvalidArgument, "variable '", var, "': ndim = ", def.ndim, " must be 1..", kMaxDims);
  if (def.shape) {
    detail::validate_box(*def.shape, "global shape");
    if (def.shape->ndim != def.ndim)
      fail(Code::InvalidArgument, "variable '", var, "': global shape has ", def.shape->ndim, " dimensions but ndim = ", def.ndim);
  }
  if (!def.fill.empty() && def.fill.size() != def.dtype.size())
    fail(Code::InvalidArgument, "variable '", var, "': a fill value of ", def.fill.size(), " bytes for dtype ",
         def.dtype.name(), ", whose elements have ", def.dtype.size());
  impl_->remember(var, {def.dtype, def.shape, def.ndim, def.fill});
}

VariableDefinition Client::definition(const std::string& var, std::int64_t timeout_ms) {
  const Impl::VarInfo info = impl_->var_info(var, timeout_ms);
  return {info.dtype, info.ndim, info.shape, info.fill};
}

bool Client::seal(const std::string& var, std::uint64_t version) { return seal(std::span(&var, 1), version).front(); }

std::vector<bool> Client::seal(std::span<const std::string> vars, std::uint64_t version) {
  return impl_->seal(vars, version, std::nullopt);
}

std::vector<bool> Client::seal_and_put_meta(std::span<const std::string> vars, std::uint64_t version,
                                            const std::string& meta_name, std::span<const std::byte> meta) {
  check_meta_size(meta_name, meta);
  return impl_->seal(vars, version, net::MetaPutRequest{meta_name, version, net::Bytes(meta.begin(), meta.end())});
}

std::vector<bool> Client::Impl::seal(std::span<const std::string> names, std::uint64_t version,
                                     std::optional<net::MetaPutRequest> then_meta) {
  if (names.empty()) fail(Code::InvalidArgument, "seal of version ", version, " names no variable");
  for (const std::string& var : names) var_info(var);  // NotFound for an unknown variable, before any server changes
  std::vector<bool> already(names.size(), true);
  auto merge = [&](const net::SealReply& reply) {
    if (reply.already.size() != names.size())
      fail(Code::Protocol, "a seal answer for ", reply.already.size(), " variables of ", names.size());
    for (std::size_t i = 0; i < names.size(); ++i) already[i] = already[i] && reply.already[i];
  };
  // The metadata's own server last: it puts the metadata once all have sealed.
  const std::size_t home =
      then_meta ? static_cast<std::size_t>(common::home_server(then_meta->name, static_cast<int>(server_count())))
                : server_count();
  net::SealRequest request{std::vector<std::string>(names.begin(), names.end()), version, std::nullopt};
  for (std::size_t s = 0; s < server_count(); ++s)
    if (s != home && reachable(s)) merge(call<Message<Op::Seal>>(s, request));
  if (then_meta) {
    request.then_meta = std::move(then_meta);
    merge(call<Message<Op::Seal>>(home, request));
  }
  return already;
}

std::size_t Client::derive(std::span<const std::string> vars, std::uint64_t from, std::uint64_t to) {
  if (vars.empty()) fail(Code::InvalidArgument, "derive of version ", to, " from ", from, " names no variable");
  for (const std::string& var : vars) impl_->declare(var);
  net::DeriveRequest request{std::vector<std::string>(vars.begin(), vars.end()), from, to, true};
  // Every member checks first (unknown variables, a version `to` already
  // there), so that a refused derive changes nothing anywhere; then a
  // variable no member holds version `from` of is NotFound.
  std::vector<bool> found(vars.size(), false);
  for (const auto& reply : impl_->call_all<Message<Op::Derive>>(request)) {
    if (reply.found.size() != vars.size())
      fail(Code::Protocol, "a derive answer for ", reply.found.size(), " variables of ", vars.size());
    for (std::size_t i = 0; i < vars.size(); ++i) found[i] = found[i] || reply.found[i];
  }
  for (std::size_t i = 0; i < vars.size(); ++i)
    if (!found[i]) fail(Code::NotFound, "variable '", vars[i], "' has no version ", from, " to derive version ", to, " from");
  request.check_only = false;
  std::size_t shared = 0;
  for (const auto& reply : impl_->call_all<Message<Op::Derive>>(request)) shared += reply.pieces;
  return shared;
}

std::size_t Client::derive(const std::string& var, std::uint64_t from, std::uint64_t to) {
  return derive(std::span<const std::string>(&var, 1), from, to);
}

void Client::put(const std::string& var, std::uint64_t version, const Box& box, const void* data, std::size_t bytes,
                 const Layout& layout, MemorySpace memory) {
  impl_->send_put(Op::Put, var, version, box, data, bytes, layout, memory);
}

void Client::put_on(std::size_t server, const std::string& var, std::uint64_t version, const Box& box,
                    const void* data, std::size_t bytes, const Layout& layout, MemorySpace memory) {
  if (server >= impl_->server_count())
    fail(Code::OutOfRange, "put_on of '", var, "': server ", server, " is not one of the ", impl_->server_count(),
         " servers");
  impl_->send_put(Op::Put, var, version, box, data, bytes, layout, memory, server);
}

std::size_t Client::put_placed(const std::string& var, std::uint64_t version, const Box& box, const void* data,
                               std::size_t bytes, const Layout& layout, MemorySpace memory) {
  detail::validate_box(box, "box");
  // A put that will be refused must not take a placement decision (it
  // would count against the chosen slot's availability).
  const Impl::VarInfo info = impl_->put_info(var);
  check_buffer(box, info.dtype, data, bytes, "put");
  Impl::check_region(var, info, box);
  std::optional<std::size_t> on;
  try {
    const net::PlaceReply r = impl_->call<Message<Op::Place>>(0, {var, box, bytes});
    if (r.server < impl_->server_count()) on = r.server;
    else log::warn("put_placed of '{}': server 0 placed it on server {} of {}; putting it as put()", var, r.server,
                   impl_->server_count());
  } catch (const Error& e) {
    log::debug("put_placed of '{}' {}: no placement ({}); putting it as put()", var, box.to_string(), e.what());
  }
  impl_->send_put(Op::Put, var, version, box, data, bytes, layout, memory, on);
  return on ? *on : static_cast<std::size_t>(impl_->shard_map(var)->shards_for(box).front());
}

void Client::task_done(const std::string& var, const Box& box, double seconds) {
  detail::validate_box(box, "box");
  if (!(seconds >= 0) || !std::isfinite(seconds))
    fail(Code::InvalidArgument, "task_done of '", var, "': ", seconds, " s is negative or not finite");
  impl_->declare(var);
  impl_->call<Message<Op::TaskDone>>(0, {var, box, seconds});
}

void Client::Impl::end_read_task(std::chrono::steady_clock::time_point now) {
  std::optional<LastRead> last;
  {
    std::lock_guard lock(mutex);
    last.swap(last_read);
  }
  if (!last) return;
  const double seconds = std::chrono::duration<double>(now - last->at).count();
  try {
    call<Message<Op::TaskDone>>(0, {last->var, last->region, seconds});
  } catch (const Error& e) {
    log::debug("task time of '{}' {} ({} s, by read interval) not reported: {}", last->var, last->region.to_string(),
               seconds, e.what());
  }
}

void Client::monitor_reads(bool on) {
  std::lock_guard lock(impl_->mutex);
  impl_->monitor_reads = on;
  if (!on) impl_->last_read.reset();
}

void Client::end_read_task() { impl_->end_read_task(std::chrono::steady_clock::now()); }

void Client::register_dataflow(const std::string& path) {
  const bool toml = path.size() >= 5 && path.compare(path.size() - 5, 5, ".toml") == 0;
  const bool json = path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0;
  if (!toml && !json) fail(Code::InvalidArgument, "dataflow graph ", path, ": expected a .json or .toml file");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(Code::NotFound, "dataflow graph ", path, " cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  impl_->send_dataflow(path, toml, text.str());
}

void Client::register_dataflow(const DataflowGraph& graph) {
  impl_->send_dataflow("(built through the API)", false, graph.to_json());
}

void Client::Impl::send_dataflow(const std::string& source, bool toml, std::string text) {
  if (text.size() > net::kMaxMetaBytes)
    fail(Code::InvalidArgument, "dataflow graph ", source, " has ", text.size(), " bytes; at most ", net::kMaxMetaBytes);
  call<Message<Op::Dataflow>>(0, {source, toml, std::move(text)});
}

std::vector<PlacementDecision> Client::placements(std::size_t max) {
  if (max == 0 || max > net::kMaxPlacements)
    fail(Code::InvalidArgument, "placements: ", max, " decisions asked for; 1 to ", net::kMaxPlacements);
  return impl_->call<Message<Op::Placements>>(0, {static_cast<std::uint32_t>(max)}).decisions;
}

SharedBuffer Client::allocate(std::size_t bytes) {
  if (bytes == 0) fail(Code::InvalidArgument, "allocate of 0 bytes");
  struct State {
    std::shared_ptr<Impl> impl;  // the endpoint that exposes the memory outlives it
    std::unique_ptr<net::MemoryRegion> region;
    ~State() { region.reset(); }
  };
  auto state = std::make_shared<State>();
  state->impl = impl_;
  state->region = impl_->endpoint->allocate(bytes);
  SharedBuffer b;
  b.data_ = state->region->data();
  b.size_ = bytes;
  b.state_ = std::move(state);
  return b;
}

void Client::put_local(const std::string& var, std::uint64_t version, const Box& box, const void* data,
                       std::size_t bytes, const Layout& layout, MemorySpace memory) {
  impl_->send_put(Op::PutLocal, var, version, box, data, bytes, layout, memory);
}

std::size_t Client::release(const std::string& var, std::uint64_t version, const Box& box) {
  impl_->declare(var);
  std::size_t n = 0;
  // Each server answers once no reader copies the piece any more: no deadline.
  for (std::size_t s = 0; s < impl_->server_count(); ++s)
    if (impl_->reachable(s))
      n += impl_->call<Message<Op::Release>>(s, {var, version, box, impl_->endpoint->address()}, net::kNoDeadline)
               .count;
  std::lock_guard lock(impl_->mutex);
  impl_->local.erase({var, version, box.to_string()});
  return n;
}

void Client::get(const std::string& var, std::uint64_t version, const Box& region, void* data, std::size_t bytes,
                 std::int64_t timeout_ms, const Layout& layout, MemorySpace memory) {
  impl_->monitored(var, region,
                   [&] { return impl_->get(var, version, false, region, data, bytes, timeout_ms, layout, memory); });
}

std::uint64_t Client::get_latest(const std::string& var, const Box& region, void* data, std::size_t bytes,
                                 std::int64_t timeout_ms, const Layout& layout, MemorySpace memory) {
  return impl_->monitored(var, region,
                          [&] { return impl_->get(var, 0, true, region, data, bytes, timeout_ms, layout, memory); });
}

std::optional<std::uint64_t> Client::latest(const std::string& var) {
  impl_->declare(var);
  std::optional<std::uint64_t> newest;
  for (const auto& reply : impl_->call_all<Message<Op::Latest>>({var}))
    if (reply.version) newest = newest ? std::max(*newest, *reply.version) : *reply.version;
  return newest;
}

void Client::remove(const std::string& var, std::uint64_t version) {
  impl_->declare(var);
  bool found = false;
  for (const auto& reply : impl_->call_all<Message<Op::Delete>>({var, version})) found |= reply.found;
  if (!found) fail(Code::NotFound, "variable '", var, "' has no version ", version);
}

std::size_t Client::undefine(const std::string& var) { return undefine(std::span<const std::string>(&var, 1)); }

std::size_t Client::undefine(std::span<const std::string> vars) {
  if (vars.empty()) fail(Code::InvalidArgument, "undefine names no variable");
  for (const std::string& var : vars) impl_->declare(var);
  const net::UndefineRequest request{std::vector<std::string>(vars.begin(), vars.end())};
  std::size_t dropped = 0;
  std::set<std::string> found;
  for (const auto& reply : impl_->call_all<Message<Op::Undefine>>(request)) {
    if (reply.found.size() != vars.size())
      fail(Code::Protocol, "an undefine answer for ", reply.found.size(), " variables of ", vars.size());
    dropped += reply.pieces;
    for (std::size_t i = 0; i < vars.size(); ++i)
      if (reply.found[i]) found.insert(vars[i]);
  }
  std::string missing;  // the names no server defined, each once
  for (const std::string& var : vars) {
    impl_->forget(var);
    if (found.insert(var).second) missing += (missing.empty() ? "'" : ", '") + var + "'";
  }
  if (!missing.empty()) fail(Code::NotFound, "variable ", missing, " is not defined");
  return dropped;
}

std::vector<VariableInfo> Client::Impl::list_if_answers(std::size_t s) {
  if (!reachable(s)) return {};
  try {
    return list_server(s);
  } catch (const Error& e) {
    if (e.code() != Code::Unavailable && e.code() != Code::Timeout) throw;
    return {};
  }
}

std::vector<VariableInfo> Client::list() {
  std::vector<VariableInfo> merged;
  for (std::size_t s = 0; s < impl_->server_count(); ++s)
    for (auto& v : impl_->list_if_answers(s)) {
      auto it = std::find_if(merged.begin(), merged.end(), [&](const VariableInfo& m) { return m.name == v.name; });
      if (it == merged.end()) {
        merged.push_back(std::move(v));
        continue;
      }
      if (it->fill.empty()) it->fill = std::move(v.fill);
      for (auto& ver : v.versions) {
        auto vi = std::find_if(it->versions.begin(), it->versions.end(),
                               [&](const VersionInfo& m) { return m.version == ver.version; });
        if (vi == it->versions.end()) {
          it->versions.push_back(std::move(ver));
          continue;
        }
        vi->sealed = vi->sealed || ver.sealed;
        for (auto& p : ver.pieces) {  // a piece indexed by several servers is listed once, with its holder's replicas
          auto q = std::find_if(vi->pieces.begin(), vi->pieces.end(),
                                [&](const PieceInfo& other) { return other.box == p.box && other.holder == p.holder; });
          if (q == vi->pieces.end()) {
            vi->pieces.push_back(std::move(p));
            continue;
          }
          if (q->replicas.empty()) q->replicas = std::move(p.replicas);
          if (q->copy.empty()) q->copy = std::move(p.copy);
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
  for (std::size_t s = 0; s < impl_->server_count(); ++s) {
    ServerStats st;
    st.reachable = false;
    if (impl_->reachable(s)) try {
        st = impl_->call<Message<Op::Stat>>(s, {}).stats;
      } catch (const Error& e) {
        if (e.code() != Code::Unavailable && e.code() != Code::Timeout) throw;  // gone since: unreachable
      }
    out.emplace_back(impl_->addresses[s], std::move(st));
  }
  return out;
}

ServerStats Client::stat() {
  ServerStats total;
  for (const auto& [address, s] : stat_each()) {
    if (!s.reachable) continue;
    total.variables = std::max(total.variables, s.variables);
    total.versions = std::max(total.versions, s.versions);
    total.pieces += s.pieces;
    total.owned_bytes += s.owned_bytes;
    total.local_bytes += s.local_bytes;
    total.memory_budget += s.memory_budget;
    total.requests += s.requests;
    total.bytes_in += s.bytes_in;
    total.bytes_out += s.bytes_out;
    total.replicas += s.replicas;
    total.replica_bytes += s.replica_bytes;
    total.reorganizations += s.reorganizations;
    total.replica_answers += s.replica_answers;
    total.patterns = std::max(total.patterns, s.patterns);
    total.parked_gets += s.parked_gets;
    total.metadata += s.metadata;
    total.metadata_bytes += s.metadata_bytes;
    total.lost_pieces += s.lost_pieces;
    total.partly_covered += s.partly_covered;
    total.restored_copies += s.restored_copies;
    total.restored_backups += s.restored_backups;
    total.partly_covered_bytes += s.partly_covered_bytes;
    total.clients += s.clients;
    total.worker_slots += s.worker_slots;
    total.workers += s.workers;
    total.placements += s.placements;
    total.placement_fallbacks += s.placement_fallbacks;
    total.task_reports += s.task_reports;
    total.uptime_ms = std::max(total.uptime_ms, s.uptime_ms);
    total.reorg = s.reorg;  // the group's configuration: the same on every member
    total.layouts = s.layouts;
  }
  return total;
}

void Client::stop_server() { impl_->call_all<Message<Op::Stop>>({}); }

// ---- metadata ----

void Client::put_meta(const std::string& name, std::uint64_t version, std::span<const std::byte> data) {
  check_meta_size(name, data);
  const auto home = static_cast<std::size_t>(common::home_server(name, static_cast<int>(impl_->server_count())));
  impl_->call<Message<Op::MetaPut>>(home, {name, version, net::Bytes(data.begin(), data.end())});
}

std::optional<Metadata> Client::Impl::meta_get(const std::string& name, net::MetaMode mode, std::uint64_t version,
                                               std::int64_t timeout_ms) {
  const auto home = static_cast<std::size_t>(common::home_server(name, static_cast<int>(server_count())));
  auto reply = call<Message<Op::MetaGet>>(home, {name, mode, version, timeout_ms}, wait_deadline(timeout_ms));
  if (!reply.found) {
    // Only LatestIfAny may answer "none"; the other modes fail or wait instead.
    if (mode != net::MetaMode::LatestIfAny)
      fail(Code::Protocol, "metadata '", name, "': the server answered \"no version\" to a lookup that must find one");
    return std::nullopt;
  }
  return Metadata{reply.version, std::move(reply.data)};
}

Metadata Client::get_meta(const std::string& name, std::uint64_t version, std::int64_t timeout_ms) {
  return *impl_->meta_get(name, net::MetaMode::Exact, version, timeout_ms);
}
Metadata Client::get_meta_next(const std::string& name, std::uint64_t after, std::int64_t timeout_ms) {
  return *impl_->meta_get(name, net::MetaMode::Next, after, timeout_ms);
}
Metadata Client::get_meta_latest(const std::string& name, std::int64_t timeout_ms) {
  return *impl_->meta_get(name, net::MetaMode::Latest, 0, timeout_ms);
}
std::optional<Metadata> Client::find_latest_meta(const std::string& name) {
  return impl_->meta_get(name, net::MetaMode::LatestIfAny, 0, 0);
}

// ---- locks ----

namespace {

// A template so that it can take the private Impl a member passes it.
template <typename Impl>
void lock_call(Impl& impl, const std::string& name, bool write, std::span<const Index> start,
               std::span<const Index> count, std::int64_t timeout_ms) {
  if (timeout_ms < 0) fail(Code::InvalidArgument, "lock on '", name, "': timeout ", timeout_ms, " ms is negative");
  if (start.size() != count.size() || start.size() > static_cast<std::size_t>(kMaxDims))
    fail(Code::InvalidArgument, "lock on '", name, "': start has ", start.size(), " and count ", count.size(),
         " dimensions");
  for (std::size_t d = 0; d < start.size(); ++d) {
    if (start[d] < 0 || count[d] < 1)
      fail(Code::InvalidArgument, "lock on '", name, "': dimension ", d, " has start ", start[d], " and count ", count[d]);
  }
  const auto home = static_cast<std::size_t>(common::home_server(name, static_cast<int>(impl.server_count())));
  impl.template call<Message<Op::Lock>>(home, {name, write, {start.begin(), start.end()}, {count.begin(), count.end()}, timeout_ms},
                               Impl::wait_deadline(timeout_ms));
}

}  // namespace

WorkerSlot Client::become_worker(std::size_t server, const std::string& name) {
  if (server >= impl_->server_count())
    fail(Code::OutOfRange, "worker '", name, "': server ", server, " is not one of the ", impl_->server_count(),
         " servers");
  if (name.empty()) fail(Code::InvalidArgument, "a worker's name is empty");
  const net::WorkerReply r = impl_->call<Message<Op::Worker>>(server, {name});
  return {r.slot, r.slots, r.workers};
}

std::vector<std::uint64_t> Client::locate(const std::string& var, std::uint64_t version, const Box& region,
                                          std::int64_t timeout_ms) {
  return impl_->locate(var, version, region, timeout_ms);
}

std::vector<std::uint64_t> Client::bytes_read() const {
  std::lock_guard lock(impl_->mutex);
  std::vector<std::uint64_t> out = impl_->read_bytes;
  out.resize(impl_->server_count());
  return out;
}

void Client::lock_read(const std::string& name, std::span<const Index> start, std::span<const Index> count,
                       std::int64_t timeout_ms) {
  lock_call(*impl_, name, false, start, count, timeout_ms);
}

void Client::lock_write(const std::string& name, std::span<const Index> start, std::span<const Index> count,
                        std::int64_t timeout_ms) {
  lock_call(*impl_, name, true, start, count, timeout_ms);
}

void Client::unlock(const std::string& name, std::span<const Index> start, std::span<const Index> count) {
  if (start.size() != count.size())
    fail(Code::InvalidArgument, "unlock of '", name, "': start has ", start.size(), " and count ", count.size(),
         " dimensions");
  const auto home = static_cast<std::size_t>(common::home_server(name, static_cast<int>(impl_->server_count())));
  impl_->call<Message<Op::Unlock>>(home, {name, {start.begin(), start.end()}, {count.begin(), count.end()}});
}

}  // namespace cove
