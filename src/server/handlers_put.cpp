// Handlers that change what is stored: Define, Undefine, Put, PutInline,
// PutGrant, PutPublish, PutLocal, IndexAdd, Release, Delete; and what a
// closing connection (a writer) leaves behind; members that die are in members.cpp.
#include "common/log.hpp"
#include "common/printable.hpp"
#include "core/fail.hpp"
#include "gpu/device.hpp"
#include "gpu/device_key.hpp"
#include "net/handshake.hpp"
#include "server/service.hpp"

#include <cove/region_copy.hpp>

#include <algorithm>
#include <cstring>
#include <set>
#include <thread>

namespace cove::server {

using detail::fail;
using net::Op;

net::Empty Service::define(net::DefineRequest&& r) {
  store::VariableDef def;
  def.name = std::move(r.name);
  def.dtype = r.dtype;
  def.ndim = r.ndim;
  def.shape = std::move(r.shape);
  def.reorg = r.reorg;
  def.layouts = std::move(r.layouts);
  def.fill.assign(r.fill.begin(), r.fill.end());
  store::Store::Freed freed;
  std::lock_guard lock(mutex);
  store_.define(def);
  parked_->retry(var_key(def.name), freed);  // readers that came first
  return {};
}

net::VarsReply Service::undefine(net::UndefineRequest&& r) {
  std::vector<std::unique_ptr<store::Piece>> gone;  // released after the lock, under readers' leases
  store::Store::Freed freed;
  net::VarsReply out;
  std::lock_guard lock(mutex);
  for (const std::string& var : r.vars) {
    out.found.push_back(store_.find(var) != nullptr);
    if (!out.found.back()) continue;
    std::vector<std::unique_ptr<store::Piece>> dropped = store_.undefine(var);
    shard_maps_.erase(var);
    patterns_.forget(var);
    parked_->retry(var_key(var), freed);  // gets waiting on it fail with NotFound
    log::info("'{}' undefined: {} pieces dropped", var, dropped.size());
    out.pieces += static_cast<std::uint32_t>(dropped.size());
    std::move(dropped.begin(), dropped.end(), std::back_inserter(gone));
  }
  return out;
}

const store::VariableDef& Service::check_header(const net::PieceHeader& h) {
  const store::VariableDef& def = store_.check_piece(h.var, h.box);
  if (!(def.dtype == h.dtype))
    fail(Code::InvalidArgument, "variable '", h.var, "' has dtype ", def.dtype.name(), " but the piece has ",
         h.dtype.name());
  h.layout.axis_order(def.ndim);  // a permutation of another rank is an error
  std::uint64_t need = 0;
  if (__builtin_mul_overflow(static_cast<std::uint64_t>(h.box.volume()), def.dtype.size(), &need))
    fail(Code::InvalidArgument, "region ", h.box.to_string(), " of '", h.var, "' holds more than 2^64 bytes");
  if (h.bytes != need)
    fail(Code::InvalidArgument, "piece ", h.box.to_string(), " of '", h.var, "' announces ", h.bytes,
         " bytes; the region holds ", need);
  return def;
}

// A piece that carries its variable's definition (a writer's first put of
// a variable it defined with_first_put): the variable is defined here, then
// on every other live member, before the piece is admitted, as the
// writer's own define() would have. A member that does not take it fails
// the put; the definition stays where it was taken (defining again is a no-op).
void Service::define_carried(const net::PieceHeader& h) {
  if (!h.define) return;
  if (h.define->name != h.var)
    fail(Code::InvalidArgument, "a piece of '", h.var, "' carries the definition of '", h.define->name, "'");
  define(net::DefineRequest(*h.define));
  if (group_->alone()) return;
  std::set<std::string> dead;
  {
    std::lock_guard lock(mutex);
    dead = dead_members_;
  }
  std::vector<int> members(static_cast<std::size_t>(group_->size()));
  for (std::size_t i = 0; i < members.size(); ++i) members[i] = static_cast<int>(i);
  for (const auto& [rank, why] : group_->send<net::Message<Op::Define>>(members, *h.define, dead))
    if (!dead.count(group_->address_of(rank))) std::rethrow_exception(why);
}

// Checks a piece against its variable (defining it first when the piece
// carries its definition) and, for bytes held here, reserves room for them.
// Returns the shards that index part of it.
std::vector<int> Service::admit(const net::PieceHeader& h, bool held_here, store::Store::Freed& freed) {
  define_carried(h);
  std::lock_guard lock(mutex);
  const store::VariableDef& def = check_header(h);
  store_.check_open(h.var, h.version);
  std::vector<int> shards = shard_map(def).shards_for(h.box);
  if (held_here) store_.reserve(h.bytes, freed);
  return shards;
}

void Service::unreserve(std::uint64_t bytes) {
  std::lock_guard lock(mutex);
  store_.unreserve(bytes);
}

// Stores a piece whose bytes are here (or, put_local, with its owner), then
// (replicas = 2) has the next member keep a second copy of bytes held
// here, then tells the other shards that index part of it: after it is
// stored, so that a reader they answer finds it.
void Service::store_piece(net::PieceHeader&& h, std::unique_ptr<store::Piece> piece, const std::vector<int>& shards,
                          std::optional<Reorg> reorg, store::Store::Freed& freed) {
  h.define.reset();  // defined everywhere by admit(): not sent on with the entry or the copy
  std::set<std::string> dead;  // as this put sees the group: its targets, and whom forward_entry skips
  {
    std::lock_guard lock(mutex);
    dead = dead_members_;
  }
  const std::vector<int> targets = index_targets(shards, dead);
  const bool mine = std::find(targets.begin(), targets.end(), group_->rank()) != targets.end();
  piece->box = h.box;
  piece->layout = h.layout;
  piece->bytes = h.bytes;
  const bool held_here = piece->owner.empty();
  if (held_here) {
    piece->key = piece->buffer->key;
    bytes_in_ += piece->bytes;
    piece->indexed = mine;  // held here either way; indexed here if this shard (or its backup) covers part of it
  }
  // What the other shards need, copied: once stored, the piece may be
  // evicted by a concurrent put of a newer version.
  net::IndexAddRequest entry{std::move(h), held_here ? address_ : piece->owner, piece->key, 0, {}};
  const std::shared_ptr<store::BufferPool::Block> bytes = piece->buffer;  // for the copy: not reused meanwhile
  std::uint64_t id = 0;
  if (held_here || mine) {
    std::vector<std::unique_ptr<store::Piece>> evicted;
    std::lock_guard lock(mutex);
    id = store_.add(entry.piece.var, entry.piece.version, std::move(piece), evicted);
    if (held_here) entry.piece_id = id;  // other shards' readers lease it here by id
    replicas_->prepare_on_put(entry.piece.var, entry.piece.version,
                              *store_.piece(entry.piece.var, entry.piece.version, id), reorg, freed);
    parked_->retry(var_key(entry.piece.var), freed);
    if (!evicted.empty()) log::info("'{}': {} pieces replaced or of older versions evicted", entry.piece.var, evicted.size());
  }
  if (held_here && replicated()) entry.copy = second_copy(entry.piece, *bytes, id);
  forward_entry(shards, targets, entry, dead);
  if (held_here && !mine) {
    // Pieces held here for other shards that this one covers: their
    // entries there are gone now that the shards have this piece's.
    std::vector<std::unique_ptr<store::Piece>> covered;
    std::lock_guard lock(mutex);
    store_.drop_covered_by(entry.piece.var, entry.piece.version, id, covered);
  }
}

bool Service::replicated() const { return options_.replicas > 1 && group_->size() > 1; }

// Whether storing piece `h` here waits on another member: its index entry
// goes to another shard's owner (or backup), or its bytes get a second
// copy. A piece refused at once (a bad header) waits on nobody.
bool Service::waits_on_members(const net::PieceHeader& h) {
  if (group_->alone()) return false;
  if (replicated() || h.define) return true;
  std::lock_guard lock(mutex);
  try {
    const store::VariableDef& def = check_header(h);
    const std::vector<int> targets = index_targets(shard_map(def).shards_for(h.box), dead_members_);
    return std::any_of(targets.begin(), targets.end(), [&](int rank) { return rank != group_->rank(); });
  } catch (const Error&) {
    return false;
  }
}

// Has the next live member keep a second copy of piece `id`, whose bytes
// are `bytes`. A copy that cannot be made leaves the piece with one
// (logged, and counted in `cove stat`): the put stands.
net::CopyRef Service::second_copy(const net::PieceHeader& h, const store::BufferPool::Block& bytes, std::uint64_t id,
                                  bool restored) {
  int to = group_->successor(group_->rank());
  {
    std::lock_guard lock(mutex);
    while (to != group_->rank() && dead_members_.count(group_->address_of(to))) to = group_->successor(to);
  }
  if (to == group_->rank()) return {};
  net::CopyRef copy;
  try {
    copy = group_->copy(to, h, bytes.data, bytes.key,
                        net::deadline_in(net::kForwardTimeoutMs + net::transfer_ms(h.bytes)), restored);
  } catch (const Error& e) {
    log::warn("'{}' version {} {}: no second copy on server {} ({}); the piece has one copy", h.var, h.version,
              h.box.to_string(), to, e.what());
    return {};
  }
  std::lock_guard lock(mutex);
  if (store::Piece* p = store_.piece(h.var, h.version, id)) p->copy = copy;
  return copy;
}

// The members that index a piece whose shards are `shards`: those, and
// (replicas = 2) the members after them, which keep their entries' backups.
std::vector<int> Service::index_targets(const std::vector<int>& shards, const std::set<std::string>& dead) const {
  std::vector<int> targets;
  for (int s : shards)
    for (int owner : index_owners(s, dead))
      if (std::find(targets.begin(), targets.end(), owner) == targets.end()) targets.push_back(owner);
  return targets;
}

// Sends an index entry to the other members in `targets`, but those in
// `dead`. Fails when a shard's entry reached none of its owners.
void Service::forward_entry(const std::vector<int>& shards, const std::vector<int>& targets,
                            const net::IndexAddRequest& entry, const std::set<std::string>& dead) {
  const auto failed = group_->forward(targets, entry, dead);
  const auto reached = [&](int rank) {
    return std::none_of(failed.begin(), failed.end(), [&](const auto& f) { return f.first == rank; });
  };
  for (int s : shards) {
    const std::vector<int> owners = index_owners(s, dead);
    if (std::none_of(owners.begin(), owners.end(), reached)) {
      const auto why = std::find_if(failed.begin(), failed.end(), [&](const auto& f) { return f.first == owners[0]; });
      std::rethrow_exception(why->second);
    }
  }
  for (const auto& [rank, why] : failed)
    log::debug("an index entry of '{}' did not reach server {} (another member has it)", entry.piece.var, rank);
}

// The bytes of a piece, into a pool block: read from the memory `key`
// names in `from` (a writer's, or for a Copy a member's), over a transport
// that reads only from the connection's own process; or copied from `data`.
// The room was reserved: on failure it is given back and nothing stays.
std::unique_ptr<store::Piece> Service::receive(const net::Peer& from, const net::PieceHeader& h,
                                               const net::Bytes* key, const net::Bytes* data) {
  auto piece = std::make_unique<store::Piece>();
  try {
    piece->buffer = pool_->acquire(h.bytes);
    if (data) {
      std::memcpy(piece->buffer->data, data->data(), h.bytes);
    } else if (gpu::is_device_key(*key)) {  // a writer's GPU memory, read here through CUDA IPC
      gpu::copy_from_device_key(*key, piece->buffer->data, h.bytes);
    } else if (const auto window = endpoint_->map(from, *key, false, net::deadline_in(net::kControlTimeoutMs))) {
      // A member's block on this host (a Copy): mapped, and copied with the
      // region engine's threads, as fast as the writer copied it in.
      if (window->size < h.bytes) fail(Code::Protocol, "a key of ", window->size, " bytes for a piece of ", h.bytes);
      copy_bytes(piece->buffer->data, window->data, h.bytes);
    } else {
      const net::RemoteOp read{0, piece->buffer->data, h.bytes};
      endpoint_->read(from, *key, {&read, 1}, net::deadline_in(net::transfer_ms(h.bytes)));
    }
  } catch (...) {
    unreserve(h.bytes);
    throw;
  }
  return piece;
}

// Put: the server reads the bytes from the writer's memory (`key`).
// PutInline: they came with the request.
net::Empty Service::put(const net::Peer& from, net::PieceHeader&& h, const net::Bytes* key, const net::Bytes* data,
                        std::optional<Reorg> reorg) {
  store::Store::Freed freed;  // replicas dropped to make room: released after the lock
  const std::vector<int> shards = admit(h, true, freed);
  auto piece = receive(from, h, key, data);
  store_piece(std::move(h), std::move(piece), shards, reorg, freed);
  return {};
}

// Copy: a member has this server keep the second copy of a piece it holds
// (replicas = 2), sent with the request or read from the member's memory
// over this server's own connection to it. It is not indexed here: index
// entries name it next to the piece, and a reader turns to it when the
// piece's holder is gone.
net::CopyReply Service::copy(const net::Peer& from, net::CopyRequest&& r) {
  store::Store::Freed freed;
  {
    std::lock_guard lock(mutex);
    check_header(r.piece);
    store_.reserve(r.piece.bytes, freed);
  }
  std::unique_ptr<store::Piece> piece;
  const auto session = session_of(from);
  if (!r.data.empty()) {
    piece = receive(from, r.piece, nullptr, &r.data);
  } else {
    net::Peer member;
    try {
      if (!session) fail(Code::Unavailable, "the connection closed");
      member = group_->member(session->peer_address(), net::deadline_in(net::kControlTimeoutMs));
    } catch (...) {
      unreserve(r.piece.bytes);
      throw;
    }
    piece = receive(member, r.piece, &r.key, nullptr);
  }
  piece->box = r.piece.box;
  piece->layout = r.piece.layout;
  piece->bytes = r.piece.bytes;
  piece->key = piece->buffer->key;
  piece->indexed = false;
  piece->is_copy = true;
  if (session) piece->copy_of = session->peer_address();  // the member whose piece it is
  net::CopyReply reply{0, piece->key};
  std::vector<std::unique_ptr<store::Piece>> evicted;
  std::lock_guard lock(mutex);
  reply.id = store_.add(r.piece.var, r.piece.version, std::move(piece), evicted);
  // A new piece's copy replaces the older copies it covers (their pieces'
  // entries are covered too); a restored copy is of an older piece, and
  // other members' copies here may still be needed when they die.
  if (!r.restored) store_.drop_covered_by(r.piece.var, r.piece.version, reply.id, evicted);
  return reply;
}

// PutLocal: the bytes stay with their owner, the connection's own process;
// only the index learns of them.
net::Empty Service::put_local(Session& s, net::PutLocalRequest&& r) {
  if (r.owner != s.peer_address())
    fail(Code::PermissionDenied, "put_local for the memory of '", common::shown_address(r.owner),
         "', which is not this connection's address");
  store::Store::Freed freed;
  const std::vector<int> shards = admit(r.piece, false, freed);
  auto piece = std::make_unique<store::Piece>();
  piece->owner = std::move(r.owner);
  piece->key = std::move(r.key);
  store_piece(std::move(r.piece), std::move(piece), shards, r.reorg, freed);
  return {};
}

// Whether a PutGrant's offered bytes are read here, as a Put: only into
// the reserve (ServerOptions::pool_reserve), made and faulted in here
// ahead of use, and only when the transport copies straight out of the
// writer's memory. A grant of the same memory would have the writer fault
// in its pages in its own mapping first, which costs about what its copy
// does (docs/staging.md, "Pre-faulted pool"). Without a reserve both ways
// make fresh memory, and the writer copies.
bool Service::pulls(const net::Peer& from, const net::PutGrantRequest& r) {
  return !r.key.empty() && options_.pool_reserve > 0 && r.piece.bytes > store::BufferPool::kSmallMax &&
         endpoint_->reads_in_place(from);
}

// PutGrant: room for a piece the writer copies in itself (a key it offered
// is not used here: pulls() decided against reading it): on this host a
// block of a shared-memory segment the writer maps for writing, over UCX a
// one-sided write. The grant belongs to the connection until it publishes
// or closes.
net::PutGrantReply Service::put_grant(Session& s, net::PutGrantRequest&& r) {
  const net::Peer peer = s.peer.lock();
  if (!peer) fail(Code::Unavailable, "the connection closed");
  store::Store::Freed freed;
  std::vector<int> shards = admit(r.piece, true, freed);
  Grant g{&s, std::move(r.piece), r.reorg, std::move(shards), nullptr};
  try {
    g.block = pool_->acquire(g.piece.bytes, peer->user());
    g.block->region->allow_write(peer);
  } catch (...) {
    unreserve(g.piece.bytes);
    throw;
  }
  net::PutGrantReply reply{0, g.block->key};
  std::lock_guard lock(mutex);
  reply.grant = next_grant_++;
  grants_.emplace(reply.grant, std::move(g));
  return reply;
}

Service::Grant Service::take_grant(const Session& s, std::uint64_t grant) {
  std::lock_guard lock(mutex);
  auto it = grants_.find(grant);
  if (it == grants_.end() || it->second.session != &s)
    fail(Code::NotFound, "grant ", grant, " is not one this connection holds");
  Grant g = std::move(it->second);
  grants_.erase(it);
  return g;
}

net::Empty Service::put_publish(Session& s, net::PutPublishRequest&& r) {
  Grant g = take_grant(s, r.grant);
  auto piece = std::make_unique<store::Piece>();
  piece->buffer = std::move(g.block);
  store::Store::Freed freed;
  store_piece(std::move(g.piece), std::move(piece), g.shards, g.reorg, freed);
  return {};
}

// A connection closed: its grants end. Their blocks are dropped, never
// reused, since the writer may still have been copying into them.
void Service::drop_lost(const std::string& owner, const char* who) {
  std::vector<std::unique_ptr<store::Piece>> lost;  // dropped after the lock
  std::lock_guard lock(mutex);
  if (stopping_) return;
  lost = store_.remove_owner(owner);
  if (lost.empty()) return;
  lost_pieces_ += lost.size();
  log::warn("{} at {} went without releasing them: {} pieces it held are lost", who, common::shown_address(owner), lost.size());
}

void Service::connection_closed(Session& s) {
  s.end_all_leases();  // a reader gone: what it was reading is free
  release_locks(s);    // a lock holder gone (killed, crashed): whoever waits goes on
  release_worker(s);   // a worker gone: its slot is free
  // A writer that goes without Disconnect (killed, crashed) takes its
  // put_local memory with it, and a member of the group that dies the
  // pieces it held: they leave this server's index, so that readers get
  // NotFound (and the versions their slots) instead of Unavailable for
  // good, and they are counted as lost. What this server holds stays.
  if (const std::string owner = s.peer_address(); !owner.empty()) {
    if (s.is_member())
      member_connection_closed(owner);
    else
      drop_lost(owner, "a writer");
  }
  std::vector<std::shared_ptr<store::BufferPool::Block>> dropped;
  std::lock_guard lock(mutex);
  for (auto it = grants_.begin(); it != grants_.end();) {
    if (it->second.session != &s) {
      ++it;
      continue;
    }
    store_.unreserve(it->second.piece.bytes);
    it->second.block->retire();
    dropped.push_back(std::move(it->second.block));
    it = grants_.erase(it);
  }
  if (!dropped.empty()) log::info("a connection closed holding {} unpublished grants; their memory is released", dropped.size());
}

void Service::index_add(net::IndexAddRequest&& r, Responder answer) {
  std::vector<std::pair<int, int>> relays;
  {
    store::Store::Freed freed;
    std::lock_guard lock(mutex);
    check_header(r.piece);
    index_entry(r, freed);
    relays = relay_targets(r.piece.var, r.piece.box);
  }
  answer_after_relay<net::Message<Op::IndexAdd>>(std::move(answer), std::move(relays), net::BackupRequest::Stage::Relay,
                                                 std::move(r));
}

// Release: the writer's pieces leave the index now; the answer waits until
// no reader is copying them, so the writer may then reuse its memory.
void Service::release(Session& s, net::ReleaseRequest&& r, Responder answer) {
  if (r.owner != s.peer_address())
    fail(Code::PermissionDenied, "release of the memory of '", common::shown_address(r.owner),
         "', which is not this connection's address");
  std::vector<std::unique_ptr<store::Piece>> gone;
  {
    std::lock_guard lock(mutex);
    gone = store_.remove_pieces(r.var, r.version, r.box, r.owner);
  }
  answer_when_unleased<net::Message<Op::Release>>(std::move(gone), std::move(answer));
}

net::DeleteReply Service::remove(net::DeleteRequest&& r) {
  std::vector<std::unique_ptr<store::Piece>> gone;
  std::lock_guard lock(mutex);
  if (!store_.find(r.var)) fail(Code::NotFound, "variable '", r.var, "' is not defined");
  if (!store_.has_version(r.var, r.version)) return {false};
  gone = store_.remove_version(r.var, r.version);
  return {true};
}

}  // namespace cove::server
