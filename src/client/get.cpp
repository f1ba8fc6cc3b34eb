// Gets: ask the index shards that own a region which pieces cover it, then
// read each piece's part straight into the caller's buffer, in its layout.
#include "client/impl.hpp"

#include <cove/detail/region_copy.hpp>
#include <cove/region_copy.hpp>

#include "common/log.hpp"
#include "core/box_checks.hpp"
#include "core/fail.hpp"
#include "gpu/device.hpp"
#include "gpu/device_key.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <thread>

namespace cove {

using detail::fail;
using net::Message;
using net::Op;

namespace {

// Milliseconds left before `deadline`, for a wait that started with `timeout_ms`.
std::int64_t remaining_ms(std::int64_t timeout_ms, net::Deadline deadline) {
  if (timeout_ms <= 0) return timeout_ms;
  // Rounded up: a wait must never end before the caller asked.
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - net::Clock::now()).count();
  return std::max<std::int64_t>(1, left);
}

}  // namespace

void Client::Impl::Leases::end() {
  std::map<std::size_t, std::vector<std::uint64_t>> by_server;
  for (const auto& [server, lease] : held_) by_server[server].push_back(lease);
  held_.clear();
  for (auto& [server, ids] : by_server) try {
      const net::Peer peer = impl_.current(server);
      if (!peer || peer->broken()) continue;  // its leases ended with the connection
      impl_.endpoint->notify(peer,
                             net::encode_request<Message<Op::LeaseEnd>>({std::move(ids)}, net::next_request_id()),
                             net::deadline_in(net::kControlTimeoutMs));
    } catch (...) {
      log::dropped("ending a get's leases");
    }
}

// Asks one index shard which pieces cover `region`. The answer comes with
// a lease on what that server holds or indexes; pieces held by other
// servers are noted, to be leased there by id (lease_elsewhere).
Client::Impl::Answer Client::Impl::query(std::size_t server, int shard, const std::string& var, std::uint64_t version,
                                         bool latest, const Box& region, std::int64_t timeout_ms, const DType& dtype,
                                         const Layout& layout, std::uint32_t eager_max, Leases& leases, bool oldest) {
  net::QueryReply reply;
  try {
    reply = call<Message<Op::Query>>(
        server, {var, version, latest, region, timeout_ms, layout, eager_max, reorg, shard, latest && oldest},
        wait_deadline(timeout_ms));
  } catch (const Error& e) {
    // The region or layout did not fit the definition: perhaps one that
    // was remembered wrongly (remember_definition), asked again next time.
    if (e.code() == Code::InvalidArgument) forget(var);
    throw;
  }
  leases.add(server, reply.lease);
  // What this client remembered of the definition decided the shards and
  // sizes: it must be the servers' (else it is asked again next time).
  const VarInfo known = var_info(var);
  if (!(reply.dtype == dtype) || known.shape != reply.shape) {
    forget(var);
    fail(Code::InvalidArgument, "variable '", var, "' is defined with dtype ", reply.dtype.name(), " and ",
         reply.shape ? "global shape " + reply.shape->to_string() : std::string("no global shape"), ", not dtype ",
         dtype.name(), " and ", known.shape ? "global shape " + known.shape->to_string() : std::string("no global shape"),
         " as this client had it");
  }
  Answer a{reply.version, std::move(reply.pieces), std::move(reply.data), reply.method, {}, server,
           std::move(reply.holes), std::move(reply.fill)};
  for (const Box& hole : a.holes)
    if (!region.contains(hole))
      fail(Code::Protocol, "a server answered with a hole ", hole.to_string(), " outside ", region.to_string());
  for (auto& p : a.pieces) {
    if (p.holder.empty()) p.holder = addresses[server];
    if (p.piece == 0) continue;
    if (const auto at = server_index(p.holder); at && *at != server) a.elsewhere[*at].push_back(p.piece);
  }
  return a;
}

Client::Impl::Answer Client::Impl::query_shard(std::size_t s, const std::string& var, std::uint64_t version,
                                               bool latest, const Box& region, std::int64_t timeout_ms,
                                               const DType& dtype, const Layout& layout, std::uint32_t eager_max,
                                               Leases& leases, bool oldest) {
  try {
    return query(s, -1, var, version, latest, region, timeout_ms, dtype, layout, eager_max, leases, oldest);
  } catch (const Error& e) {
    if (e.code() != Code::Unavailable || server_count() < 2) throw;
    // Its entries' second owner: the next member, or after more deaths one
    // further on the ring (replicas = 2; docs/staging.md).
    for (std::size_t i = 1; i < server_count(); ++i) {
      const std::size_t next = (s + i) % server_count();
      log::debug("get of '{}': server {} is unavailable ({}); asking server {} for its index entries", var, s,
                 e.what(), next);
      try {
        return query(next, static_cast<int>(s), var, version, latest, region, timeout_ms, dtype, layout, eager_max,
                     leases, oldest);
      } catch (const Error& backup) {
        if (backup.code() != Code::Unavailable) throw;  // gone too, or not an owner: the next one
      }
    }
    throw;  // no owner answers (replicas = 1: there is none)
  }
}

void Client::Impl::lease_elsewhere(const std::string& var, Answer& a, Leases& leases) {
  for (auto& [holder, ids] : a.elsewhere) {
    try {
      leases.add(holder, call<Message<Op::Lease>>(holder, {var, a.version, ids}).lease);
      continue;
    } catch (const Error& e) {
      if (e.code() != Code::Unavailable) throw;
      // The holder is gone: its pieces' second copies, if all have one.
      std::map<std::size_t, std::vector<std::uint64_t>> copies;
      for (auto& p : a.pieces) {
        if (p.piece == 0 || p.holder != addresses[holder]) continue;
        const auto at = p.copy ? server_index(p.copy.holder) : std::nullopt;
        if (!at) throw;
        p.holder = std::move(p.copy.holder);
        p.key = std::move(p.copy.key);
        p.piece = p.copy.id;
        p.copy = {};
        copies[*at].push_back(p.piece);
      }
      log::debug("get of '{}': server {} is unavailable ({}); reading its pieces' second copies", var, holder,
                 e.what());
      for (auto& [at, cids] : copies)
        leases.add(at, call<Message<Op::Lease>>(at, {var, a.version, std::move(cids)}).lease);
    }
  }
  a.elsewhere.clear();
}

// Asks every shard that indexes part of `region` for its pieces; for
// `latest`, the newest version all of them cover (with `oldest`, the oldest
// at or after `version`).
Client::Impl::Answer Client::Impl::gather(const std::string& var, std::uint64_t version, bool latest,
                                          const Box& region, std::int64_t timeout_ms, const DType& dtype,
                                          Leases& leases, const Layout& layout, bool oldest) {
  const std::vector<int> shards = shard_map(var)->shards_for(region);
  const net::Deadline deadline = net::deadline_in(timeout_ms);
  // A small region within one shard may come back as bytes (one round trip).
  const bool small = static_cast<std::uint64_t>(region.volume()) * dtype.size() <= net::kEagerBytes;
  const auto eager_max = static_cast<std::uint32_t>(shards.size() == 1 && small && !latest ? net::kEagerBytes : 0);
  std::vector<Answer> answers;
  for (int s : shards)
    answers.push_back(query_shard(static_cast<std::size_t>(s), var, version, latest, region,
                                  remaining_ms(timeout_ms, deadline), dtype, layout, eager_max, leases, oldest));
  if (answers.size() == 1 && answers.front().data) return std::move(answers.front());
  if (latest) {
    // Newest: the oldest of the shards' newest covering versions, which all
    // of them cover. Oldest: the newest of their oldest ones, which one
    // that answered an older version may not cover: it is asked again.
    std::uint64_t v = answers.front().version;
    for (const auto& a : answers) v = oldest ? std::max(v, a.version) : std::min(v, a.version);
    try {
      for (std::size_t i = 0; i < shards.size(); ++i)
        if (answers[i].version != v)
          answers[i] =
              query_shard(static_cast<std::size_t>(shards[i]), var, v, false, region, 0, dtype, layout, 0, leases);
    } catch (const Error& e) {
      // Version v went (deleted, evicted) between the answers: the shards
      // are asked again for a newer one (each round asks for a newer
      // version than the last, so this ends).
      if (e.code() != Code::NotFound) throw;
      // Oldest: a shard does not cover v; the next round waits for its
      // oldest covering version from v on, which is newer (or v, once
      // covered).
      log::debug("get_latest of '{}': version {} is not covered by every shard ({}); asking again", var, v,
                 e.what());
      return gather(var, oldest ? v : v + 1, true, region, remaining_ms(timeout_ms, deadline), dtype, leases, layout,
                    oldest);
    }
  }
  Answer all{answers.front().version, {}, {}, answers.front().method, {}, 0, {}, {}};
  // A piece one shard indexes and another holds is leased by the holder's
  // own answer when the holder is a shard asked too: no Lease round trip.
  std::set<std::pair<std::size_t, std::uint64_t>> leased;  // holder, piece id
  for (const auto& a : answers)
    for (const auto& p : a.pieces)
      if (p.piece != 0 && server_index(p.holder) == a.server) leased.emplace(a.server, p.piece);
  for (auto& a : answers) {
    for (auto& [holder, ids] : a.elsewhere) {
      auto& to = all.elsewhere[holder];
      for (std::uint64_t id : ids)
        if (!leased.count({holder, id})) to.push_back(id);
      if (to.empty()) all.elsewhere.erase(holder);
    }
    all.holes.insert(all.holes.end(), a.holes.begin(), a.holes.end());
    if (!a.holes.empty()) all.fill = a.fill;
  }
  // A piece indexed by two shards comes twice, each time with its visible
  // parts in that shard's part of the region (disjoint): it is read once,
  // for all of them. Its holder may send a replica where the other shard
  // sends the piece itself: the replica (whose box holds the piece's part
  // of the region) wins.
  std::map<std::pair<std::string, net::Bytes>, std::size_t> seen;
  for (auto& a : answers)
    for (auto& p : a.pieces) {
      auto [it, fresh] = seen.try_emplace({p.holder, p.source}, all.pieces.size());
      if (fresh) {
        all.pieces.push_back(std::move(p));
        continue;
      }
      net::QueryPiece& kept = all.pieces[it->second];
      p.visible.insert(p.visible.begin(), kept.visible.begin(), kept.visible.end());
      if (p.replica && !kept.replica) kept = std::move(p);
      else kept.visible = std::move(p.visible);
    }
  // Parts of a piece that together fill their bounding box (a piece met by
  // several index blocks comes as one part per block) are read as that box:
  // one read of the piece's rows instead of a strided read per part. The
  // parts are disjoint, so equal volumes mean exactly the same cells.
  for (auto& p : all.pieces) {
    if (p.visible.size() < 2) continue;
    const Box hull = bounding_box(p.visible);
    Index cells = 0;
    for (const Box& b : p.visible) cells += b.volume();
    if (cells == hull.volume()) p.visible.assign(1, hull);
  }
  return all;
}

std::uint64_t Client::Impl::get(const std::string& var, std::uint64_t version, bool latest, const Box& region,
                                void* data, std::size_t bytes, std::int64_t timeout_ms, const Layout& layout,
                                MemorySpace memory) {
  detail::validate_box(region, "region");
  layout.axis_order(region.ndim);
  // One timeout for all of it: the definition (a reader may come first), then the data.
  const net::Deadline deadline = net::deadline_in(timeout_ms);
  const VarInfo info = var_info(var, timeout_ms);
  check_region(var, info, region);
  const DType dtype = info.dtype;
  std::uint64_t need = 0;
  if (__builtin_mul_overflow(static_cast<std::uint64_t>(region.volume()), dtype.size(), &need) || bytes != need)
    fail(Code::InvalidArgument, "get buffer of ", bytes, " bytes does not match region ", region.to_string(), " of ",
         dtype.name());
  if (need > 0 && !data) fail(Code::InvalidArgument, "get buffer is null");
  const bool device = gpu::on_device(gpu::locate(data, memory, "get"));
  // The servers keep what they answered with until the copy is done (the
  // leases). A piece held by another server may be deleted or evicted
  // between the answer and its lease: the lease fails with NotFound and
  // the query is asked again.
  constexpr int kGetAttempts = 8;
  for (int attempt = 0;; ++attempt) {
    Leases leases(*this);
    Answer a = gather(var, version, latest, region, remaining_ms(timeout_ms, deadline), dtype, leases, layout);
    if (a.data) {
      if (a.data->size() != bytes)
        fail(Code::Protocol, "a server answered with ", a.data->size(), " bytes for ", bytes);
      if (device)
        gpu::check(gpu::require("get").copy(data, a.data->data(), bytes, nullptr));
      else
        std::memcpy(data, a.data->data(), bytes);
      count_read(a.server, bytes);
      return a.version;
    }
    try {
      lease_elsewhere(var, a, leases);
      if (device) {
        read_pieces_to_device(a, region, data, bytes, layout, dtype.size());
      } else {
        for (const auto& p : a.pieces)
          for (const Box& part : p.visible) read_piece(p, part, region, data, bytes, layout, dtype.size());
        for (const Box& hole : a.holes) fill_region({data, bytes, region, layout}, hole, a.fill);
      }
      for (const auto& p : a.pieces) {
        std::uint64_t cells = 0;
        for (const Box& part : p.visible) cells += static_cast<std::uint64_t>(part.volume());
        count_read(server_index(p.holder), cells * dtype.size());
      }
    } catch (const Error& e) {
      // A piece deleted or evicted meanwhile, or (in a group) its holder
      // gone: asked again, the shards answer with what is there now.
      const bool again = e.code() == Code::NotFound || (e.code() == Code::Unavailable && server_count() > 1);
      // A piece covered by a newer put goes at its holder when that put
      // arrives there, a moment before every shard has the new entry: the
      // next answers name the new piece. Writers rewriting the region over
      // and over can make a few tries in a row meet that moment.
      if (!again || attempt == kGetAttempts - 1) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(attempt));
      log::debug("get of '{}' {}: a piece went away before it was read ({}); asking again", var, region.to_string(),
                 e.what());
      continue;
    }
    leases.end();
    if (a.method == Reorg::Sahr) record_pattern(var, a.version, region, layout);
    return a.version;
  }
}

std::vector<std::uint64_t> Client::Impl::locate(const std::string& var, std::uint64_t version, const Box& region,
                                                std::int64_t timeout_ms) {
  detail::validate_box(region, "region");
  const net::Deadline deadline = net::deadline_in(timeout_ms);
  const VarInfo info = var_info(var, timeout_ms);
  check_region(var, info, region);
  std::vector<std::uint64_t> held(server_count(), 0);
  Leases leases(*this);
  // A piece indexed by two shards comes from both, each with its part.
  for (int s : shard_map(var)->shards_for(region)) {
    const Answer a = query_shard(static_cast<std::size_t>(s), var, version, false, region,
                                 remaining_ms(timeout_ms, deadline), info.dtype, Layout{}, 0, leases);
    for (const auto& p : a.pieces)
      if (const auto at = server_index(p.holder))
        for (const Box& part : p.visible) held[*at] += static_cast<std::uint64_t>(part.volume()) * info.dtype.size();
  }
  return held;
}

// SAHR: the get goes into this client's records (Algorithm 1); a pattern
// the records did not hold yet goes to every server, which prepare the
// next versions for it. After the get: it never delays the data.
void Client::Impl::record_pattern(const std::string& var, std::uint64_t version, const Box& region,
                                  const Layout& layout) {
  {
    std::lock_guard lock(mutex);
    if (!patterns.update(var, layout, region)) return;
  }
  call_all<Message<Op::Pattern>>({var, layout, region, 1, version});
}

// Reads `part` (inside region and one of p's visible parts) of piece `p`
// into `data`, which holds `region`. From a holder's
// shared-memory segment (mapped here once) the region engine assembles the
// part straight into its place, in one pass. Otherwise runs contiguous in
// both buffers go straight to their place, or the part is read packed (in
// the piece's layout) and reorganised here.
void Client::Impl::read_piece(const net::QueryPiece& p, const Box& part, const Box& region, void* data,
                              std::size_t bytes, const Layout& layout, std::size_t elem) {
  if (part.empty()) return;
  if (gpu::is_device_key(p.key)) {
    read_device_piece(p, part, region, data, bytes, layout, elem);
    return;
  }
  const net::Peer peer = peer_for(p.holder);
  if (const auto window = endpoint->map(peer, p.key, false, net::deadline_in(net::kControlTimeoutMs))) {
    copy_region({window->data, window->size, p.box, p.layout}, {data, bytes, region, layout}, part, elem);
    return;
  }
  auto* dst = static_cast<std::byte*>(data);
  std::vector<net::RemoteOp> ops;
  const bool direct = detail::for_each_common_run(p.box, p.layout, region, layout, part, elem,
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
  detail::contiguous_runs(part, p.box, p.layout, elem).for_each([&](std::int64_t off, std::int64_t n) {
    ops.push_back({static_cast<std::uint64_t>(off), packed.data() + at, static_cast<std::size_t>(n)});
    at += static_cast<std::size_t>(n);
  });
  read_runs(peer, p.key, ops);
  copy_region({packed.data(), packed.size(), part, p.layout}, {data, bytes, region, layout}, part, elem);
}

// Reads the runs `ops` of a remote region. Many short runs cost a transfer
// (or an iovec) each: when they are short and packed closely, the span
// that holds them is read at once and the runs are taken from it here.
// A read that stalls (its holder or the link to it stopped) fails with
// Timeout after net::transfer_ms of its bytes.
void Client::Impl::read_runs(const net::Peer& peer, const net::Bytes& key, std::span<const net::RemoteOp> ops) {
  constexpr std::size_t kShortRun = 4096, kMinRuns = 64, kMaxSpread = 4;
  std::size_t total = 0;
  std::uint64_t lo = UINT64_MAX, hi = 0;
  for (const auto& op : ops) {
    total += op.bytes;
    lo = std::min(lo, op.offset);
    hi = std::max(hi, op.offset + op.bytes);
  }
  if (ops.size() < kMinRuns || total > ops.size() * kShortRun || hi - lo > kMaxSpread * total) {
    endpoint->read(peer, key, ops, net::deadline_in(net::transfer_ms(total)));
    return;
  }
  const std::unique_ptr<std::byte[]> span(new std::byte[hi - lo]);  // not zeroed: every byte is read
  const net::RemoteOp whole{lo, span.get(), static_cast<std::size_t>(hi - lo)};
  endpoint->read(peer, key, {&whole, 1}, net::deadline_in(net::transfer_ms(hi - lo)));
  for (const auto& op : ops) std::memcpy(op.local, span.get() + (op.offset - lo), op.bytes);
}

}  // namespace cove
