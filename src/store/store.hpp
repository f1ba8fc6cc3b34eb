// Internal: the server's versioned object store.
//
// Variables (name, dtype, rank, optional global shape) hold versions; a
// version holds pieces, each a box of the array in some layout, either
// owned by this server (bytes in server memory, exposed for one-sided
// reads) or left in a writer's memory (put_local: the writer's address and
// memory key). A spatial index per version finds the pieces meeting a
// region. Owned bytes count against a memory budget; when a variable holds
// more than max_versions versions the oldest go.
//
// A piece held here may have replicas: parts of it in other layouts, made by
// the server's reorganizers (docs/layouts.md). Replicas count against the
// same budget, go with their piece, and are the first thing dropped when a
// put or another replica needs the memory (oldest versions first).
//
// Thread-safety: none; the server serialises access.
// Errors: InvalidArgument for a piece that does not match its variable's
// definition (naming the field), NotFound for unknown variables or versions,
// NoMemory when an owned piece would exceed the budget (nothing changes).
#pragma once

#include <cove/box.hpp>
#include <cove/dtype.hpp>
#include <cove/layout.hpp>
#include <cove/reorg.hpp>
#include <cove/spatial_index.hpp>

#include "net/messages.hpp"
#include "net/transport.hpp"
#include "store/buffer_pool.hpp"
#include "store/hold.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace cove::store {

struct VariableDef {
  std::string name;
  DType dtype;
  int ndim = 0;
  std::optional<Box> shape;  // the declared global domain, if any
  // Reorganization for this variable, overriding the server's (not part of
  // the definition: a later define may change them).
  std::optional<Reorg> reorg;
  std::vector<Layout> layouts;  // expected reader layouts (RASIA)
  // What cells no put covered read as in a sealed version (dtype size
  // bytes); empty: none, such a get fails. A define without one keeps the
  // variable's; one that differs from it is refused.
  std::vector<std::byte> fill;
};

// A part of a piece in another layout.
struct Replica {
  enum class State : std::uint8_t { Building, Ready, Failed };
  std::uint64_t id = 0;
  Box box;  // inside the piece's box
  Layout layout;
  std::uint64_t bytes = 0;  // counted against the budget while not Failed
  State state = State::Building;
  std::shared_ptr<BufferPool::Block> buffer;  // Ready only
};

struct Piece {
  std::uint64_t id = 0;
  Box box;
  Layout layout;
  std::uint64_t bytes = 0;
  std::string owner;  // "" when this server holds the bytes, else the holder's address (writer or server)
  net::Bytes key;     // memory key for one-sided reads of the bytes
  bool indexed = true;  // false: bytes held here for readers, indexed by other servers
  // Indexed pieces: the parts of `box` that no later put into the version
  // covers, disjoint boxes, which are what the index holds (the last write
  // wins). Empty once later puts cover all of it.
  std::vector<Box> visible;
  std::uint64_t holder_id = 0;  // held by another server: the piece's id there
  std::uint64_t seq = 0;        // when it was indexed here, last (Store::next_seq)
  // replicas = 2: the piece's second copy on another server (entries of
  // pieces held here, and index entries); empty when there is none.
  net::CopyRef copy;
  // Index entries whose holder died before this server found out: the new
  // second copy its copy got meanwhile (Recopy), which becomes the entry's
  // copy when the entry moves to its copy.
  net::CopyRef copy_after;
  bool is_copy = false;  // this is the second copy of another server's piece (never indexed here)
  std::string copy_of;   // is_copy: the address of the server holding the piece
  // Owned pieces only: the bytes, registered with the transport.
  std::shared_ptr<BufferPool::Block> buffer;
  // Pieces held elsewhere: what readers' leases keep (hold.hpp).
  std::shared_ptr<Hold> token = std::make_shared<Hold>();
  std::vector<std::unique_ptr<Replica>> replicas;
  // What a reader's lease on this piece keeps alive: the bytes held here,
  // which are not reused until the lease ends, or the token.
  std::shared_ptr<const void> lease_hold() const {
    if (buffer) return buffer;
    return token;
  }
};

struct StoreStats {
  std::uint64_t variables = 0, versions = 0, pieces = 0;
  std::uint64_t owned_bytes = 0, local_bytes = 0;  // held here / left in writers' memory
  std::uint64_t budget = 0;                        // 0: unlimited
  std::uint64_t replicas = 0, replica_bytes = 0;   // ready or being built
  std::uint64_t metadata_bytes = 0;                // counted against the budget too
  std::uint64_t copies = 0, copy_bytes = 0;        // second copies of other servers' pieces (in owned_bytes)
  std::uint64_t single = 0;                        // pieces held here without a second copy
  // Pieces indexed here that later puts partly cover: how many, and their
  // bytes (held here or elsewhere), all of which stay until the piece goes.
  std::uint64_t partly_covered = 0, partly_covered_bytes = 0;
};

// The part of an indexed piece that answers a query: `boxes` are the
// piece's visible parts inside the query's parts, disjoint from every
// other piece's.
struct Visible {
  Piece* piece = nullptr;
  std::vector<Box> boxes;
};

// What a version holds of some parts of a region: the visible parts of its
// pieces there and, for a sealed version, the parts no put covers.
struct Coverage {
  std::vector<Visible> pieces;
  std::vector<Box> holes;  // sealed versions only
  bool sealed = false;
};

class Store {
 public:
  Store(std::uint64_t memory_budget, int max_versions);

  // Defines a variable, or checks that an existing one has the same
  // definition (InvalidArgument naming the differing field otherwise).
  // A reorg method or layouts given replace the variable's.
  void define(const VariableDef& def);
  const VariableDef* find(const std::string& name) const;

  // Checks a piece against its variable: known variable, rank, region inside
  // the declared shape, non-empty. Throws as documented above.
  const VariableDef& check_piece(const std::string& var, const Box& box) const;
  // Reserves budget for `bytes` owned bytes, dropping ready replicas
  // (oldest versions first) when that makes room; their buffers are moved
  // to `freed` for the caller to release outside its lock. NoMemory when
  // even that is not enough (nothing is dropped then). Release with unreserve().
  using Freed = std::vector<std::shared_ptr<BufferPool::Block>>;
  void reserve(std::uint64_t bytes, Freed& freed);
  void unreserve(std::uint64_t bytes);
  // The memory the server's metadata takes, counted against the same budget
  // (reserve() its growth first).
  void set_metadata_bytes(std::uint64_t bytes) { metadata_bytes_ = bytes; }

  // Adds a piece (owned bytes must have been reserved) and returns its id.
  // An indexed piece is the newest of its version: the parts of older
  // pieces inside its box leave the index (their `visible` shrinks), and
  // those it covers wholly go if servers hold their bytes (put_local ones
  // stay, unindexed, until their writer releases them). The variable's
  // oldest versions beyond max_versions are evicted. What goes is returned in `evicted` so the caller can drop them outside its lock.
  std::uint64_t add(const std::string& var, std::uint64_t version, std::unique_ptr<Piece> piece,
                    std::vector<std::unique_ptr<Piece>>& evicted);

  // Drops the unindexed pieces of (var, version) of the kind of piece `id`
  // (held here for other shards, or second copies) inside its box: once
  // the shards that index them have the newer piece's entry, nobody reads
  // them any more. Into `out`, as add() does.
  void drop_covered_by(const std::string& var, std::uint64_t version, std::uint64_t id,
                       std::vector<std::unique_ptr<Piece>>& out);
  // The indexed pieces of (var, version) whose visible parts meet any of
  // `parts`, with those parts clipped to `parts`, if together they cover
  // every part. Each cell of `parts` is in exactly one returned box: that
  // of the piece whose put was stored here last.
  // A sealed version always answers, with the parts no put covers as
  // holes; so does a version derived from a sealed one (derive()).
  std::optional<Coverage> covering(const std::string& var, std::uint64_t version, std::span<const Box> parts);

  // Seals a version (creating it, empty, if it has no piece here): it takes
  // no more pieces, and covering() answers for it at once. Returns whether
  // it was sealed already. NotFound for an unknown variable.
  bool seal(const std::string& var, std::uint64_t version, std::vector<std::unique_ptr<Piece>>& evicted);
  bool sealed(const std::string& var, std::uint64_t version) const;
  // InvalidArgument naming the variable and version when it is sealed.
  void check_open(const std::string& var, std::uint64_t version) const;

  // Version `to` of each of `vars` starts as version `from`: every piece
  // held or indexed here shared, under the same id (so that other
  // servers' references stay right), its bytes counted once; not sealed.
  // When `from` is sealed, `to` starts complete: covering() answers for it
  // at once, the cells no put covered (there or since) as holes, as in
  // `from`.
  // Checks all first: NotFound for an unknown variable, AlreadyExists when
  // `to` is there already, InvalidArgument for from == to; nothing changes
  // then, nor with `check_only`. A variable without version `from` here is
  // skipped (a member of a group may hold none of it): `found` says, per
  // variable, whether it had it. Returns the pieces shared.
  std::size_t derive(std::span<const std::string> vars, std::uint64_t from, std::uint64_t to, bool check_only,
                     std::vector<bool>& found, std::vector<std::unique_ptr<Piece>>& evicted);
  // Index entries after members die (replicas = 2; shard_backups.cpp in
  // the server). `self` is this server's address: an entry naming it as
  // holder is the piece held here with the entry's id.
  //
  // An index entry of another member's piece, as add() takes it (indexed).
  static std::unique_ptr<Piece> entry_piece(const net::IndexAddRequest& entry);
  // The sequence number the next piece indexed here gets.
  std::uint64_t next_seq() const { return next_seq_; }
  // The indexed piece of (var, version) that `entry` names, or null.
  Piece* find_entry(const std::string& var, std::uint64_t version, const net::IndexAddRequest& entry,
                    const std::string& self);
  // Piece `p` of (var, version), an entry that arrived again, becomes the
  // newest of its version, as add() makes a new one.
  void renew(const std::string& var, std::uint64_t version, Piece& p, std::vector<std::unique_ptr<Piece>>& evicted);
  // Takes another member's entries of a region (a shard's, whose parts in
  // a box `region_of` gives) as they were there: `entries` with their
  // visible parts in the region. Entries indexed here since `mark`
  // (next_seq() then) are newer and stay on top; older ones not among
  // `entries` are hidden in the region (the other member's order says
  // later puts covered them). Entries not known here are added.
  struct Adopted {
    net::IndexAddRequest entry;
    std::vector<Box> visible;
  };
  void adopt(const std::string& var, std::uint64_t version, const std::function<std::vector<Box>(const Box&)>& region_of,
             std::span<const Adopted> entries, std::uint64_t mark, const std::string& self,
             std::vector<std::unique_ptr<Piece>>& out);
  // The pieces of a version held or indexed here (empty when it is gone).
  std::vector<Piece*> pieces_of(const std::string& var, std::uint64_t version);
  // A piece by id, or null when it is gone.
  Piece* piece(const std::string& var, std::uint64_t version, std::uint64_t id);

  // Replicas. find_replica: a replica of `p` in an order equal to `layout`'s
  // whose box contains `part` (Ready preferred), or null.
  Replica* find_replica(Piece& p, const Layout& layout, const Box& part);
  // A new replica of `box` (inside the piece) in `layout`, Building, its
  // bytes reserved as reserve() does (replicas of `p` itself are kept).
  // NoMemory: the replica is recorded as Failed, so that it is not tried again.
  Replica& add_replica(Piece& p, const Box& box, const Layout& layout, std::size_t elem, Freed& freed);
  void replica_ready(Replica& r, std::shared_ptr<BufferPool::Block> buffer);
  // Marks a replica Failed and returns its bytes to the budget.
  void replica_failed(Replica& r);
  std::optional<std::uint64_t> latest(const std::string& var) const;
  bool has_version(const std::string& var, std::uint64_t version) const;
  // The variable's versions, newest first (empty for an unknown variable).
  std::vector<std::uint64_t> versions_newest_first(const std::string& var) const;

  // Removes a version, or the pieces of `owner` with box `box` in a version.
  // Pieces left in a writer's memory (put_local) that a delete, an
  // eviction or an undefine drops are kept aside ("retired") until their
  // writer releases them or disconnects: only then may it reuse the memory,
  // once no reader's lease holds them, and only that answer tells it so.
  std::vector<std::unique_ptr<Piece>> remove_version(const std::string& var, std::uint64_t version);
  std::vector<std::unique_ptr<Piece>> remove_pieces(const std::string& var, std::uint64_t version, const Box& box,
                                                    const std::string& owner);
  // Removes every piece left in `owner`'s memory (a writer disconnecting).
  std::vector<std::unique_ptr<Piece>> remove_owner(const std::string& owner);
  // A member of the group died. The entries of pieces it held move to
  // their second copy: on `self` (this server's address) the copy itself
  // is indexed in the entry's place, elsewhere the entry names the copy's
  // server. Entries without a copy go (returned, with the pieces whose
  // copy this was: they are lost); copies the dead member held are
  // forgotten, and copies held here of pieces the dead member held are
  // pieces of this server's now (readers were sent to them). `moved`
  // counts the entries that moved.
  std::vector<std::unique_ptr<Piece>> fail_over(const std::string& dead, const std::string& self, std::size_t& moved);
  // replicas = 2, after a member died: the pieces held here that have no
  // second copy (theirs was lost with it, or they were copies whose piece
  // was), by variable, version and id.
  struct PieceRef {
    std::string var;
    std::uint64_t version;
    std::uint64_t id;
  };
  std::vector<PieceRef> lacking_copies() const;
  // The entries of piece `id` of `holder` in (var, version) take `copy`
  // (Recopy), and so, as copy_after, do those that still name the member
  // that died with `holder` holding their copy; returns one of them (null
  // when there is none).
  const Piece* set_copy(const std::string& var, std::uint64_t version, const std::string& holder, std::uint64_t id,
                        const net::CopyRef& copy);
  // Removes a variable and everything it holds (NotFound if unknown).
  std::vector<std::unique_ptr<Piece>> undefine(const std::string& var);

  struct VersionListing {
    std::uint64_t version;
    std::vector<const Piece*> pieces;
    bool sealed = false;
  };
  struct VariableListing {
    const VariableDef* def;
    std::vector<VersionListing> versions;
  };
  // Removes everything (the server shutting down: exposed regions must go
  // before the endpoint that exposed them).
  std::vector<std::unique_ptr<Piece>> clear();

  std::vector<VariableListing> list() const;
  StoreStats stats() const;

 private:
  struct Version {
    explicit Version(int ndim) : index(ndim) {}
    std::map<std::uint64_t, std::unique_ptr<Piece>> pieces;  // by id
    SpatialIndex index;
    bool sealed = false;
    // Derived from a sealed (or complete) version: it starts with all of
    // that one's content, whose cells no put covered are the fill value,
    // so it answers at once too (its holes as fill), though still open.
    bool complete = false;
    // Kept while it holds nothing: such a version reads as fill.
    bool kept_empty() const { return sealed || complete; }
  };
  struct Variable {
    VariableDef def;
    std::map<std::uint64_t, Version> versions;
  };

  struct Retired {
    std::string var;
    std::uint64_t version;
    std::unique_ptr<Piece> piece;
  };

  Variable& variable(const std::string& name);
  // Drops a version's pieces into `out`, retiring put_local ones.
  void drop_version(Variable& v, std::map<std::uint64_t, Version>::iterator it, std::vector<std::unique_ptr<Piece>>& out);
  // The retired pieces of `owner` (those of var/version/box when var is given).
  std::vector<std::unique_ptr<Piece>> take_retired(const std::string& owner, const std::string* var,
                                                   std::uint64_t version, const Box* box);
  const Variable& variable(const std::string& name) const;
  void drop_piece(Version& v, std::map<std::uint64_t, std::unique_ptr<Piece>>::iterator it,
                  std::vector<std::unique_ptr<Piece>>& out);
  // Takes `box` out of the visible parts of the version's indexed pieces,
  // dropping into `out` those left with none whose bytes servers hold.
  void cover(Version& v, const Box& box, std::vector<std::unique_ptr<Piece>>& out);
  // Puts piece `p`'s visible parts into the index.
  static void index_visible(Version& v, const Piece& p);
  bool fits(std::uint64_t bytes) const;
  // Drops ready replicas, oldest versions first, except those of `keep`,
  // until `bytes` more fit. False (nothing dropped) when they cannot.
  bool make_room(std::uint64_t bytes, const Piece* keep, Freed& freed);

  // Owned bytes: counted once however many versions share them (derive).
  void count_owned(const Piece& p);
  void uncount_owned(const Piece& p);
  // Evicts the variable's oldest versions beyond max_versions.
  void evict_beyond_max(Variable& v, std::vector<std::unique_ptr<Piece>>& evicted);

  std::uint64_t budget_;
  int max_versions_;
  std::map<const void*, std::uint32_t> owners_of_block_;  // owned bytes shared by several pieces (derive)
  std::uint64_t owned_ = 0, reserved_ = 0, local_ = 0;
  std::uint64_t replica_bytes_ = 0, replicas_ = 0;
  std::uint64_t metadata_bytes_ = 0;
  std::uint64_t next_id_ = 1;
  std::uint64_t next_seq_ = 1;
  std::map<std::string, Variable> vars_;
  std::multimap<std::string, Retired> retired_;  // by owner
};

}  // namespace cove::store
