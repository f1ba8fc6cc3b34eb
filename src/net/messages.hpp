// Internal: every message of the Cove protocol (protocol.hpp lists them),
// one type per request and per reply, each with its encode and decode.
//
// encode() writes the body; decode() reads one, checking every field
// (Protocol for a malformed or truncated body, InvalidArgument for a value
// that is well formed but not valid, such as an unknown dtype name) and
// that nothing follows the last field. A message type M is tied to its Op
// by Message<Op>: Message<Op::Define>::Request is DefineRequest.
//
// Sizes: every count is checked against the bytes that remain before
// anything is allocated for it (WireReader::count).
#pragma once

#include <cove/box.hpp>
#include <cove/client.hpp>
#include <cove/dtype.hpp>
#include <cove/layout.hpp>
#include <cove/reorg.hpp>
#include <cove/server.hpp>

#include "net/protocol.hpp"
#include "net/wire.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cove::net {

// A reply (or request) with no fields.
struct Empty {
  void encode(WireWriter&) const {}
  static Empty decode(WireReader& in);
  bool operator==(const Empty&) const = default;
};

// ---- connection ----

// The first message of a connection. Its layout never changes, so that
// peers of different versions can say why they cannot talk: the version
// travels in the body as well as in the header.
struct HelloRequest {
  std::uint16_t protocol = kProtocolVersion;
  Role role = Role::Client;
  std::string address;  // the sender's own address ("" for a client nobody connects to)
  void encode(WireWriter& out) const;
  static HelloRequest decode(WireReader& in);
  bool operator==(const HelloRequest&) const = default;
};
struct HelloReply {
  std::uint16_t protocol = kProtocolVersion;
  std::string address;  // the answering endpoint's
  Bytes nonce;          // for Join: the peer proves HMAC(group secret, nonce)
  void encode(WireWriter& out) const;
  static HelloReply decode(WireReader& in);
  bool operator==(const HelloReply&) const = default;
};
struct JoinRequest {
  Bytes proof;
  void encode(WireWriter& out) const;
  static JoinRequest decode(WireReader& in);
  bool operator==(const JoinRequest&) const = default;
};

// ---- variables and data ----

struct DefineRequest {
  std::string name;
  DType dtype;
  int ndim = 0;
  std::optional<Box> shape;
  std::optional<Reorg> reorg;   // the variable's method, if given
  std::vector<Layout> layouts;  // the variable's expected layouts, if given
  Bytes fill;                   // the fill value (dtype size bytes), or empty for none
  void encode(WireWriter& out) const;
  static DefineRequest decode(WireReader& in);
  bool operator==(const DefineRequest&) const = default;
};

// The fields every piece message starts with.
struct PieceHeader {
  std::string var;
  std::uint64_t version = 0;
  Box box;
  Layout layout;
  DType dtype;
  std::uint64_t bytes = 0;
  // A put's piece may carry its variable's definition (name = var): the
  // writer's first put of a variable it defined with_first_put. The server
  // defines it on every member before it admits the piece. Never forwarded.
  std::optional<DefineRequest> define;
  void encode(WireWriter& out) const;
  static PieceHeader decode(WireReader& in);
  bool operator==(const PieceHeader&) const = default;
};

// Put: the server reads `bytes` from the writer's memory described by `key`.
struct PutRequest {
  PieceHeader piece;
  Bytes key;
  std::optional<Reorg> reorg;  // the writer's method, if it has one
  void encode(WireWriter& out) const;
  static PutRequest decode(WireReader& in);
  bool operator==(const PutRequest&) const = default;
};
// PutGrant: space for a piece, which the writer fills itself (one-sided
// writes to `key`) and then publishes. The grant is the connection's: it
// ends with a PutPublish, or when the connection closes.
// A writer on the server's host may offer its own memory (`key`, exposed
// for reading): a server that reads it in place into memory made ahead
// (ServerOptions::pool_reserve) stores the piece at once and answers grant
// 0, which is cheaper than the writer faulting in fresh pages of a grant.
// Otherwise it grants room as without an offer.
struct PutGrantRequest {
  PieceHeader piece;
  std::optional<Reorg> reorg;
  Bytes key;  // the writer's memory, offered; empty: none
  void encode(WireWriter& out) const;
  static PutGrantRequest decode(WireReader& in);
  bool operator==(const PutGrantRequest&) const = default;
};
struct PutGrantReply {
  std::uint64_t grant = 0;  // 0: the server read the offered bytes and stored the piece
  Bytes key;  // where to write the piece's bytes
  void encode(WireWriter& out) const;
  static PutGrantReply decode(WireReader& in);
  bool operator==(const PutGrantReply&) const = default;
};
struct PutPublishRequest {
  std::uint64_t grant = 0;
  void encode(WireWriter& out) const;
  static PutPublishRequest decode(WireReader& in);
  bool operator==(const PutPublishRequest&) const = default;
};
// PutLocal: the bytes stay in the memory of `owner` (the writer's address).
struct PutLocalRequest {
  PieceHeader piece;
  std::string owner;
  Bytes key;
  std::optional<Reorg> reorg;
  void encode(WireWriter& out) const;
  static PutLocalRequest decode(WireReader& in);
  bool operator==(const PutLocalRequest&) const = default;
};
// PutInline: the bytes travel here (at most kEagerBytes).
struct PutInlineRequest {
  PieceHeader piece;
  Bytes data;
  std::optional<Reorg> reorg;
  void encode(WireWriter& out) const;
  static PutInlineRequest decode(WireReader& in);
  bool operator==(const PutInlineRequest&) const = default;
};
// The second copy of a piece a server holds, on another server of its
// group (replicas = 2): that server's address, the copy's memory key and
// its id there. An empty holder: there is none.
struct CopyRef {
  std::string holder;
  Bytes key;
  std::uint64_t id = 0;
  explicit operator bool() const { return !holder.empty(); }
  void encode(WireWriter& out) const;
  static CopyRef decode(WireReader& in);
  bool operator==(const CopyRef&) const = default;
};
// Copy (server to server, replicas = 2): the receiver keeps `piece`,
// unindexed, as the piece's second copy. Its bytes come in `data` (at most
// kEagerBytes), or the receiver reads them from the sender's memory at
// `key`, over its own connection to the sender: exactly one of the two.
// The reply says where the copy is.
struct CopyRequest {
  PieceHeader piece;
  Bytes key;
  Bytes data;
  // A copy made again after a member died (restore_copies): older than
  // copies already there, so it replaces none of them.
  bool restored = false;
  void encode(WireWriter& out) const;
  static CopyRequest decode(WireReader& in);
  bool operator==(const CopyRequest&) const = default;
};
struct CopyReply {
  std::uint64_t id = 0;
  Bytes key;
  void encode(WireWriter& out) const;
  static CopyReply decode(WireReader& in);
  bool operator==(const CopyReply&) const = default;
};
// IndexAdd: a piece held by `holder` (a writer or another server).
struct IndexAddRequest {
  PieceHeader piece;
  std::string holder;
  Bytes key;
  std::uint64_t piece_id = 0;  // the piece's id at its holder, when the holder is a server (for leases)
  CopyRef copy;                // its second copy, if one was made
  void encode(WireWriter& out) const;
  static IndexAddRequest decode(WireReader& in);
  bool operator==(const IndexAddRequest&) const = default;
};

struct ReleaseRequest {
  std::string var;
  std::uint64_t version = 0;
  Box box;
  std::string owner;
  void encode(WireWriter& out) const;
  static ReleaseRequest decode(WireReader& in);
  bool operator==(const ReleaseRequest&) const = default;
};
// Release and Disconnect: how many pieces the server dropped.
struct CountReply {
  std::uint32_t count = 0;
  void encode(WireWriter& out) const;
  static CountReply decode(WireReader& in);
  bool operator==(const CountReply&) const = default;
};

struct QueryRequest {
  std::string var;
  std::uint64_t version = 0;  // with latest: the oldest version that may answer (0: any)
  bool latest = false;
  Box region;
  std::int64_t timeout_ms = 0;  // 0: answer now; < 0: wait until covered
  Layout layout;                // the reader's
  std::uint32_t eager_max = 0;  // answer with the bytes when the region is at most this big and all here
  std::optional<Reorg> reorg;   // the reader's method, if it has one
  // The index shard to answer for: -1 for the server's own; else the
  // member before it in the group, which is gone (replicas = 2 keeps each
  // shard's entries on the next member too).
  std::int32_t shard = -1;
  // With latest: the oldest covering version at or after `version` instead
  // of the newest (a reader walking every step, Client::steps).
  bool oldest = false;
  void encode(WireWriter& out) const;
  static QueryRequest decode(WireReader& in);
  bool operator==(const QueryRequest&) const = default;
};
// A piece (or a replica of part of one) that covers part of a query's region.
struct QueryPiece {
  Box box;
  Layout layout;
  std::string holder;  // the holder's address; "" for the answering server
  Bytes key;           // memory key of the bytes
  bool replica = false;
  Bytes source;        // replicas: the key of the piece it is part of (identifies the piece)
  std::uint64_t piece = 0;  // the piece's id at a holder that is another server (Lease), else 0
  CopyRef copy;             // its second copy, read when the holder is gone
  // The parts of `box` to read: those no later put covers, inside the
  // answering shard's part of the region (the last write wins).
  std::vector<Box> visible;
  void encode(WireWriter& out) const;
  static QueryPiece decode(WireReader& in);
  bool operator==(const QueryPiece&) const = default;
};
// A server answers for the part of the region its index shard holds: the
// pieces covering it, or the region's bytes (eager) in the reader's layout.
struct QueryReply {
  std::uint64_t version = 0;
  DType dtype;
  // The variable's global shape (none: it has none). With the dtype, the
  // reader checks what it remembered of the definition, which decides the
  // shards it asks (a definition remembered wrongly fails the get).
  std::optional<Box> shape;
  Reorg method = Reorg::Rad;  // the method in force
  std::optional<Bytes> data;  // eager answer
  std::vector<QueryPiece> pieces;
  // The lease on the pieces this server holds or indexes (0: none): their
  // bytes are not reused until the reader ends it (LeaseEnd) or goes.
  std::uint64_t lease = 0;
  // A sealed version: the parts of the shard's part of the region that no
  // put covers, which read as `fill` (the variable's fill value).
  std::vector<Box> holes;
  Bytes fill;  // dtype size bytes when there are holes, else empty
  void encode(WireWriter& out) const;
  static QueryReply decode(WireReader& in);
  bool operator==(const QueryReply&) const = default;
};

// Lookup: a variable's definition, waiting up to timeout_ms (0: answer now,
// < 0: until it is defined) for a writer to define it.
struct LookupRequest {
  std::string var;
  std::int64_t timeout_ms = 0;
  void encode(WireWriter& out) const;
  static LookupRequest decode(WireReader& in);
  bool operator==(const LookupRequest&) const = default;
};
struct LookupReply {
  DType dtype;
  int ndim = 0;
  std::optional<Box> shape;
  Bytes fill;  // empty: none
  void encode(WireWriter& out) const;
  static LookupReply decode(WireReader& in);
  bool operator==(const LookupReply&) const = default;
};

// MetaPut: a small named blob by version (Client::put_meta).
struct MetaPutRequest {
  std::string name;
  std::uint64_t version = 0;
  Bytes data;  // at most kMaxMetaBytes
  void encode(WireWriter& out) const;
  static MetaPutRequest decode(WireReader& in);
  bool operator==(const MetaPutRequest&) const = default;
};

// Seal: a version of some variables is complete (docs/staging.md): gets of
// it never wait, and it takes no more puts. All or nothing: an unknown
// variable seals none. The reply says, per variable, whether it was sealed
// already. `then_meta`: once they are sealed, that metadata is put on this
// server as MetaPut would (a producer's close of a version: one round trip
// for both); a failure to put it leaves the variables sealed.
struct SealRequest {
  std::vector<std::string> vars;
  std::uint64_t version = 0;
  std::optional<MetaPutRequest> then_meta;
  void encode(WireWriter& out) const;
  static SealRequest decode(WireReader& in);
  bool operator==(const SealRequest&) const = default;
};
struct SealReply {
  std::vector<bool> already;  // by variable, in the request's order
  void encode(WireWriter& out) const;
  static SealReply decode(WireReader& in);
  bool operator==(const SealReply&) const = default;
};

// Derive: version `to` of each variable starts as version `from` (its
// pieces shared, not copied), all of them or none; with `check_only`,
// nothing changes: the client asks every member first. The reply says, per
// variable, whether this server held version `from` of it, and how many
// pieces it shares.
struct DeriveRequest {
  std::vector<std::string> vars;
  std::uint64_t from = 0, to = 0;
  bool check_only = false;
  void encode(WireWriter& out) const;
  static DeriveRequest decode(WireReader& in);
  bool operator==(const DeriveRequest&) const = default;
};
// Recopy (server to server, replicas = 2): piece `piece_id` that `holder`
// holds in (var, version) has a new second copy, made because its old one
// was lost with a member: the index entries of it take `copy`.
struct RecopyRequest {
  std::string var;
  std::uint64_t version = 0;
  std::string holder;
  std::uint64_t piece_id = 0;
  CopyRef copy;
  void encode(WireWriter& out) const;
  static RecopyRequest decode(WireReader& in);
  bool operator==(const RecopyRequest&) const = default;
};

// Backup (server to server, replicas = 2): the index entries of shard
// `shard`, sent by its first live owner to a member that becomes its
// second owner after another died (docs/staging.md, "Replication"):
//   Begin     the entries that follow replace what the receiver knows of the
//             shard's region; entries it indexes from now on are newer
//   Snapshot  every entry of (var, version) with visible parts in the shard's
//             region at the sender, oldest first, with those parts
//   End       the snapshot is whole: the receiver answers for the shard
//   Relay     one entry the sender indexed after its snapshot (no parts:
//             the newest of its version)
//   Recopy    one entry whose piece got a new second copy (its `copy`)
struct BackupEntry {
  IndexAddRequest entry;
  std::vector<Box> visible;
  void encode(WireWriter& out) const;
  static BackupEntry decode(WireReader& in);
  bool operator==(const BackupEntry&) const = default;
};
struct BackupRequest {
  enum class Stage : std::uint8_t { Begin = 0, Snapshot = 1, End = 2, Relay = 3, Recopy = 4 };
  std::int32_t shard = 0;
  Stage stage = Stage::Begin;
  std::string var;                  // Snapshot
  std::uint64_t version = 0;        // Snapshot
  std::vector<BackupEntry> entries;  // Snapshot; Relay: exactly one
  void encode(WireWriter& out) const;
  static BackupRequest decode(WireReader& in);
  bool operator==(const BackupRequest&) const = default;
};

// Derive and Undefine: for each variable of the request, whether this
// server defines it; and the pieces it shared (Derive) or dropped (Undefine).
struct VarsReply {
  std::vector<bool> found;
  std::uint32_t pieces = 0;
  void encode(WireWriter& out) const;
  static VarsReply decode(WireReader& in);
  bool operator==(const VarsReply&) const = default;
};
// Undefine: the variables that go, with everything they hold; those this
// server does not define are answered not found, not refused.
struct UndefineRequest {
  std::vector<std::string> vars;
  void encode(WireWriter& out) const;
  static UndefineRequest decode(WireReader& in);
  bool operator==(const UndefineRequest&) const = default;
};

struct VarRequest {  // Latest
  std::string var;
  void encode(WireWriter& out) const;
  static VarRequest decode(WireReader& in);
  bool operator==(const VarRequest&) const = default;
};
// Latest: the newest version this server holds, if any (NotFound only when
// the variable is not defined).
struct LatestReply {
  std::optional<std::uint64_t> version;
  void encode(WireWriter& out) const;
  static LatestReply decode(WireReader& in);
  bool operator==(const LatestReply&) const = default;
};

struct DeleteRequest {
  std::string var;
  std::uint64_t version = 0;
  void encode(WireWriter& out) const;
  static DeleteRequest decode(WireReader& in);
  bool operator==(const DeleteRequest&) const = default;
};
// Delete: whether this server held the version (NotFound only when the
// variable is not defined).
struct DeleteReply {
  bool found = false;
  void encode(WireWriter& out) const;
  static DeleteReply decode(WireReader& in);
  bool operator==(const DeleteReply&) const = default;
};

// List: every variable this server knows, with the versions and pieces it
// holds or indexes (PieceInfo::on_server is the client's to fill in).
struct ListReply {
  std::vector<VariableInfo> variables;
  void encode(WireWriter& out) const;
  static ListReply decode(WireReader& in);
  bool operator==(const ListReply&) const;
};

struct StatReply {
  ServerStats stats;
  void encode(WireWriter& out) const;
  static StatReply decode(WireReader& in);
  bool operator==(const StatReply&) const;
};

struct DisconnectRequest {
  std::string owner;
  void encode(WireWriter& out) const;
  static DisconnectRequest decode(WireReader& in);
  bool operator==(const DisconnectRequest&) const = default;
};

// ---- metadata ----

struct MetaGetRequest {
  std::string name;
  MetaMode mode = MetaMode::Exact;
  std::uint64_t version = 0;
  std::int64_t timeout_ms = 0;
  void encode(WireWriter& out) const;
  static MetaGetRequest decode(WireReader& in);
  bool operator==(const MetaGetRequest&) const = default;
};
struct MetaGetReply {
  bool found = true;  // false only for LatestIfAny, when the name has no version (version 0, no data)
  std::uint64_t version = 0;
  Bytes data;
  void encode(WireWriter& out) const;
  static MetaGetReply decode(WireReader& in);
  bool operator==(const MetaGetReply&) const = default;
};

// ---- access patterns (SAHR) ----

struct PatternRequest {
  std::string var;
  Layout layout;
  Box region;
  std::uint64_t gets = 1;
  std::uint64_t version = 0;  // the version the reader's get read; newer ones held are prepared
  void encode(WireWriter& out) const;
  static PatternRequest decode(WireReader& in);
  bool operator==(const PatternRequest&) const = default;
};

// ---- leases ----

// Lease: pieces this server holds, by id, that an index shard elsewhere
// answered with.
struct LeaseRequest {
  std::string var;
  std::uint64_t version = 0;
  std::vector<std::uint64_t> pieces;
  void encode(WireWriter& out) const;
  static LeaseRequest decode(WireReader& in);
  bool operator==(const LeaseRequest&) const = default;
};
struct LeaseReply {
  std::uint64_t lease = 0;
  void encode(WireWriter& out) const;
  static LeaseReply decode(WireReader& in);
  bool operator==(const LeaseReply&) const = default;
};
struct LeaseEndRequest {
  std::vector<std::uint64_t> leases;
  void encode(WireWriter& out) const;
  static LeaseEndRequest decode(WireReader& in);
  bool operator==(const LeaseEndRequest&) const = default;
};

// ---- locks (docs/placement.md) ----

// Lock: `name`, or the region (start, count) of it (empty: the whole
// object), shared (write = false) or exclusive; waits at most timeout_ms
// (0: only if free now). At most kMaxDims dimensions.
struct LockRequest {
  std::string name;
  bool write = false;
  std::vector<std::uint64_t> start;
  std::vector<std::uint64_t> count;
  std::int64_t timeout_ms = 0;
  void encode(WireWriter& out) const;
  static LockRequest decode(WireReader& in);
  bool operator==(const LockRequest&) const = default;
};
struct UnlockRequest {
  std::string name;
  std::vector<std::uint64_t> start;
  std::vector<std::uint64_t> count;
  void encode(WireWriter& out) const;
  static UnlockRequest decode(WireReader& in);
  bool operator==(const UnlockRequest&) const = default;
};

// ---- in-staging workers (docs/placement.md) ----

// Worker: the sending connection takes one of the server's worker slots
// until it closes. `name` (at most kMaxStringBytes) names it in stat and
// errors. The reply: its slot, the server's slots, the workers now
// registered there (slot < slots, workers <= slots, checked at decode).
struct WorkerRequest {
  std::string name;
  void encode(WireWriter& out) const;
  static WorkerRequest decode(WireReader& in);
  bool operator==(const WorkerRequest&) const = default;
};
struct WorkerReply {
  std::uint32_t slot = 0;
  std::uint32_t slots = 0;
  std::uint32_t workers = 0;
  void encode(WireWriter& out) const;
  static WorkerReply decode(WireReader& in);
  bool operator==(const WorkerReply&) const = default;
};

// Place: where a piece of `bytes` bytes of `box` of `var` goes (server 0
// decides, docs/placement.md): the server's index in the group, the
// decision's number and the policy applied.
struct PlaceRequest {
  std::string var;
  Box box;
  std::uint64_t bytes = 0;
  void encode(WireWriter& out) const;
  static PlaceRequest decode(WireReader& in);
  bool operator==(const PlaceRequest&) const = default;
};
struct PlaceReply {
  std::uint32_t server = 0;
  std::uint64_t sequence = 0;
  std::string policy;
  void encode(WireWriter& out) const;
  static PlaceReply decode(WireReader& in);
  bool operator==(const PlaceReply&) const = default;
};
// TaskDone: the task reading `box` of `var` ran `seconds` (>= 0, finite):
// the task monitor's explicit end event.
struct TaskDoneRequest {
  std::string var;
  Box box;
  double seconds = 0;
  void encode(WireWriter& out) const;
  static TaskDoneRequest decode(WireReader& in);
  bool operator==(const TaskDoneRequest&) const = default;
};

// Dataflow: a consumer's graph (docs/placement.md), the text of a JSON or
// TOML file (`toml` says which; at most kMaxMetaBytes), `source` naming it
// in errors.
struct DataflowRequest {
  std::string source;
  bool toml = false;
  std::string text;
  void encode(WireWriter& out) const;
  static DataflowRequest decode(WireReader& in);
  bool operator==(const DataflowRequest&) const = default;
};

// Placements: the newest `max` (1..kMaxPlacements) decisions of server 0's
// placement component, oldest first, and how many it made in all. Decode
// checks: the counts, finite non-negative times, group >= -1.
struct PlacementsRequest {
  std::uint32_t max = 16;
  void encode(WireWriter& out) const;
  static PlacementsRequest decode(WireReader& in);
  bool operator==(const PlacementsRequest&) const = default;
};
struct PlacementsReply {
  std::uint64_t total = 0;
  std::vector<PlacementDecision> decisions;
  void encode(WireWriter& out) const;
  static PlacementsReply decode(WireReader& in);
  bool operator==(const PlacementsReply&) const;
};

// ---- the table: Op -> request and reply types ----

template <Op>
struct Message;
#define COVE_MESSAGE(OP, REQUEST, REPLY) \
  template <>                            \
  struct Message<Op::OP> {               \
    static constexpr Op op = Op::OP;     \
    using Request = REQUEST;             \
    using Reply = REPLY;                 \
  };
COVE_MESSAGE(Hello, HelloRequest, HelloReply)
COVE_MESSAGE(Join, JoinRequest, Empty)
COVE_MESSAGE(Define, DefineRequest, Empty)
COVE_MESSAGE(Put, PutRequest, Empty)
COVE_MESSAGE(PutLocal, PutLocalRequest, Empty)
COVE_MESSAGE(PutInline, PutInlineRequest, Empty)
COVE_MESSAGE(Release, ReleaseRequest, CountReply)
COVE_MESSAGE(Query, QueryRequest, QueryReply)
COVE_MESSAGE(Latest, VarRequest, LatestReply)
COVE_MESSAGE(Delete, DeleteRequest, DeleteReply)
COVE_MESSAGE(List, Empty, ListReply)
COVE_MESSAGE(Stat, Empty, StatReply)
COVE_MESSAGE(Disconnect, DisconnectRequest, CountReply)
COVE_MESSAGE(Stop, Empty, Empty)
COVE_MESSAGE(IndexAdd, IndexAddRequest, Empty)
COVE_MESSAGE(MetaPut, MetaPutRequest, Empty)
COVE_MESSAGE(MetaGet, MetaGetRequest, MetaGetReply)
COVE_MESSAGE(Pattern, PatternRequest, Empty)
COVE_MESSAGE(PutGrant, PutGrantRequest, PutGrantReply)
COVE_MESSAGE(PutPublish, PutPublishRequest, Empty)
COVE_MESSAGE(Lease, LeaseRequest, LeaseReply)
COVE_MESSAGE(LeaseEnd, LeaseEndRequest, Empty)
COVE_MESSAGE(Undefine, UndefineRequest, VarsReply)  // the pieces this server dropped
COVE_MESSAGE(Copy, CopyRequest, CopyReply)
COVE_MESSAGE(Lock, LockRequest, Empty)
COVE_MESSAGE(Unlock, UnlockRequest, Empty)
COVE_MESSAGE(Worker, WorkerRequest, WorkerReply)
COVE_MESSAGE(Place, PlaceRequest, PlaceReply)
COVE_MESSAGE(TaskDone, TaskDoneRequest, Empty)
COVE_MESSAGE(Dataflow, DataflowRequest, Empty)
COVE_MESSAGE(Placements, PlacementsRequest, PlacementsReply)
COVE_MESSAGE(Lookup, LookupRequest, LookupReply)
COVE_MESSAGE(Seal, SealRequest, SealReply)
COVE_MESSAGE(Derive, DeriveRequest, VarsReply)
COVE_MESSAGE(Recopy, RecopyRequest, Empty)
COVE_MESSAGE(Backup, BackupRequest, Empty)
#undef COVE_MESSAGE

// Calls fn.template operator()<Message<op>>() for the Op `type`; false
// when no Op has that type.
template <typename Fn>
bool visit_op(std::uint16_t type, Fn&& fn) {
  switch (static_cast<Op>(type)) {
#define COVE_VISIT(OP)                        \
  case Op::OP:                                \
    fn.template operator()<Message<Op::OP>>(); \
    return true;
    COVE_VISIT(Hello) COVE_VISIT(Join) COVE_VISIT(Define) COVE_VISIT(Put) COVE_VISIT(PutLocal)
    COVE_VISIT(PutInline) COVE_VISIT(Release) COVE_VISIT(Query) COVE_VISIT(Latest) COVE_VISIT(Delete)
    COVE_VISIT(List) COVE_VISIT(Stat) COVE_VISIT(Disconnect) COVE_VISIT(Stop) COVE_VISIT(IndexAdd)
    COVE_VISIT(MetaPut) COVE_VISIT(MetaGet) COVE_VISIT(Pattern) COVE_VISIT(PutGrant) COVE_VISIT(PutPublish)
    COVE_VISIT(Lease) COVE_VISIT(LeaseEnd) COVE_VISIT(Undefine) COVE_VISIT(Copy) COVE_VISIT(Lock)
    COVE_VISIT(Unlock) COVE_VISIT(Worker) COVE_VISIT(Place) COVE_VISIT(TaskDone)
    COVE_VISIT(Dataflow) COVE_VISIT(Placements) COVE_VISIT(Lookup) COVE_VISIT(Seal) COVE_VISIT(Derive)
    COVE_VISIT(Recopy) COVE_VISIT(Backup)
#undef COVE_VISIT
  }
  return false;
}

// A whole request message of type M::op.
template <typename M>
Bytes encode_request(const typename M::Request& request, std::uint64_t request_id) {
  WireWriter out(static_cast<std::uint16_t>(M::op), request_id);
  request.encode(out);
  return std::move(out).finish();
}
// A whole Ok reply to request `request_id`.
template <typename M>
Bytes encode_reply(const typename M::Reply& reply, std::uint64_t request_id) {
  WireWriter out(static_cast<std::uint16_t>(M::op), request_id);
  reply.encode(out);
  return std::move(out).finish();
}
// The body of `message` decoded as T (the header must have been read).
template <typename T>
T decode_body(std::span<const std::byte> message) {
  WireReader in(message);
  T value = T::decode(in);
  in.expect_end();
  return value;
}

}  // namespace cove::net
