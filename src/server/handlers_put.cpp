// Handlers that change what is stored: Define, Put, PutLocal, PutInline,
// IndexAdd, Release, Delete.
#include "common/log.hpp"
#include "core/fail.hpp"
#include "server/service.hpp"

#include <algorithm>
#include <cstring>

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
  std::lock_guard lock(mutex);
  store_.define(def);
  return {};
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

// Put: the server reads the bytes from the writer's memory (key). PutInline:
// they came with the request. PutLocal: they stay with `owner`, and only the
// index learns of them. The piece is stored, then the other shards that
// index part of it learn of it (so a reader they answer finds it here).
net::Empty Service::put(Session& s, const net::Peer& from, net::PieceHeader&& h, net::Bytes&& key_or_data,
                        const std::string& owner, std::optional<Reorg> reorg, Op op) {
  if (op == Op::PutLocal && owner != s.peer_address())
    fail(Code::PermissionDenied, "put_local for the memory of '", owner.substr(0, 64),
         "', which is not this connection's address");
  auto piece = std::make_unique<store::Piece>();
  piece->box = h.box;
  piece->layout = h.layout;
  piece->bytes = h.bytes;
  std::vector<int> shards;
  store::Store::Freed freed;  // replicas dropped to make room: released after the lock
  {
    std::lock_guard lock(mutex);
    const store::VariableDef& def = check_header(h);
    shards = shard_map(def).shards_for(piece->box);
    if (op != Op::PutLocal) store_.reserve(piece->bytes, freed);
  }
  const int me = group_->rank();
  const bool mine = std::find(shards.begin(), shards.end(), me) != shards.end();
  if (op == Op::PutLocal) {
    piece->owner = owner;
    piece->key = std::move(key_or_data);
  } else {
    try {
      piece->buffer = pool_->acquire(piece->bytes);
      if (op == Op::PutInline) {
        std::memcpy(piece->buffer->data, key_or_data.data(), piece->bytes);
      } else {
        const net::RemoteOp read{0, piece->buffer->data, piece->bytes};
        endpoint_->read(from, key_or_data, {&read, 1}, net::kNoDeadline);
      }
      piece->key = piece->buffer->key;
    } catch (...) {
      std::lock_guard lock(mutex);
      store_.unreserve(piece->bytes);  // the partial piece is dropped; nothing else changed
      throw;
    }
    bytes_in_ += piece->bytes;
    piece->indexed = mine;  // held here either way; indexed here if this shard covers part of it
  }
  // What the other shards need, copied: once stored, the piece may be
  // evicted by a concurrent put of a newer version.
  net::IndexAddRequest entry{std::move(h), op == Op::PutLocal ? owner : address_, piece->key};
  if (op != Op::PutLocal || mine) {
    std::vector<std::unique_ptr<store::Piece>> evicted;
    std::lock_guard lock(mutex);
    const std::uint64_t id = store_.add(entry.piece.var, entry.piece.version, std::move(piece), evicted);
    replicas_->prepare_on_put(entry.piece.var, entry.piece.version, *store_.piece(entry.piece.var, entry.piece.version, id),
                              reorg, freed);
    parked_->retry(var_key(entry.piece.var), freed);
    if (!evicted.empty()) log::debug("'{}': {} pieces of older versions evicted", entry.piece.var, evicted.size());
  }
  group_->forward(shards, entry);
  return {};
}

net::Empty Service::index_add(net::IndexAddRequest&& r) {
  auto piece = std::make_unique<store::Piece>();
  piece->box = r.piece.box;
  piece->layout = r.piece.layout;
  piece->bytes = r.piece.bytes;
  piece->owner = std::move(r.holder);
  piece->key = std::move(r.key);
  std::vector<std::unique_ptr<store::Piece>> evicted;
  store::Store::Freed freed;
  std::lock_guard lock(mutex);
  check_header(r.piece);
  store_.add(r.piece.var, r.piece.version, std::move(piece), evicted);
  parked_->retry(var_key(r.piece.var), freed);
  return {};
}

net::CountReply Service::release(Session& s, net::ReleaseRequest&& r) {
  if (r.owner != s.peer_address())
    fail(Code::PermissionDenied, "release of the memory of '", r.owner.substr(0, 64),
         "', which is not this connection's address");
  std::vector<std::unique_ptr<store::Piece>> gone;
  {
    std::lock_guard lock(mutex);
    gone = store_.remove_pieces(r.var, r.version, r.box, r.owner);
  }
  return {static_cast<std::uint32_t>(gone.size())};
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
