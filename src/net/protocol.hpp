// Internal: the Cove protocol between clients and staging servers, and
// between the servers of a group. This header is its table of contents:
//   - Op: every message type, with who may send it (kOps);
//   - the protocol version, exchanged in the hello;
//   - the named constants both sides use (sizes, timeouts, codes).
// Each message's fields, and its encode and decode, are in messages.hpp;
// the framing (header, WireWriter / WireReader) is in wire.hpp.
//
// A request is a message of type Op; its reply has the same type and request
// id, status Ok and the reply's body, or an error status and a body holding
// one string (the message), in every protocol version.
#pragma once

#include <cove/error.hpp>
#include <cove/reorg.hpp>

#include "net/wire.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace cove::net {

// Raised when a message changes meaning; a client and a server of different
// versions fail at the hello with a message naming both.
inline constexpr std::uint16_t kProtocolVersion = kWireVersion;

enum class Op : std::uint16_t {
  Hello = 1,       // first message of every connection: versions and role
  Join = 2,        // a peer proves it holds the group's secret (after Hello)
  Define = 3,
  Put = 4,         // the server reads the bytes from the writer's memory
  PutLocal = 5,    // the bytes stay in the writer's memory
  PutInline = 6,   // the bytes travel inside the request (small puts)
  Release = 7,     // a writer withdraws a put_local piece
  Query = 8,       // which pieces cover a region (waits as the get's timeout says)
  Latest = 9,
  Delete = 10,
  List = 11,
  Stat = 12,
  Disconnect = 13, // a writer leaving: its put_local pieces go
  Stop = 14,
  IndexAdd = 15,   // server to server: an index entry for a piece held elsewhere
  MetaPut = 16,
  MetaGet = 17,    // waits as Query does
  Pattern = 18,    // a reader's access pattern (SAHR)
  PutGrant = 19,   // space for a piece the writer will copy in itself (over UCX)
  PutPublish = 20, // the writer has copied a granted piece: store it
  Lease = 21,      // a reader about to copy pieces this server holds, named by id
  LeaseEnd = 22,   // a reader done copying (sent as a notice: not answered)
  Undefine = 23,   // a variable and everything it holds go
  Copy = 24,       // server to server: keep a second copy of a piece (replicas = 2)
  Lock = 25,       // a read or write lock on an object or region (waits until granted or its timeout)
  Unlock = 26,
  Worker = 27,     // the connection becomes a consumer worker of this server (a worker slot)
  Place = 28,      // where a piece goes (server 0's placement component)
  TaskDone = 29,   // a consumer task's execution time (the task monitor)
  Dataflow = 30,   // a consumer's dataflow graph, for affinity (server 0)
  Placements = 31, // the newest placement decisions, with their inputs (server 0)
  Lookup = 32,     // a variable's definition (waits for it as the request's timeout says)
  Seal = 33,       // a version is complete: gets never wait, puts are refused
  Derive = 34,     // versions that start as other versions, sharing their pieces
  Recopy = 35,     // server to server: a piece has a new second copy (restored after a member died)
  Backup = 36,     // server to server: a shard's index entries for a new second owner (after a member died)
};

// Who may send a message type. The dispatcher refuses the others before
// decoding anything.
enum class Sender : std::uint8_t {
  Anyone,   // also before the hello (only Hello itself)
  Greeted,  // any peer that said hello, before it proved anything (only Join)
  Client,   // a peer that proved it holds the group's secret (Join): clients and servers
  Server,   // a server of the group that proved it (Join after a hello as a server)
};

struct OpInfo {
  Op op;
  const char* name;
  Sender sender;
};

inline constexpr std::array<OpInfo, 36> kOps{{
    {Op::Hello, "hello", Sender::Anyone},
    {Op::Join, "join", Sender::Greeted},
    {Op::Define, "define", Sender::Client},
    {Op::Put, "put", Sender::Client},
    {Op::PutLocal, "put_local", Sender::Client},
    {Op::PutInline, "put_inline", Sender::Client},
    {Op::Release, "release", Sender::Client},
    {Op::Query, "query", Sender::Client},
    {Op::Latest, "latest", Sender::Client},
    {Op::Delete, "delete", Sender::Client},
    {Op::List, "list", Sender::Client},
    {Op::Stat, "stat", Sender::Client},
    {Op::Disconnect, "disconnect", Sender::Client},
    {Op::Stop, "stop", Sender::Client},
    {Op::IndexAdd, "index_add", Sender::Server},
    {Op::MetaPut, "meta_put", Sender::Client},
    {Op::MetaGet, "meta_get", Sender::Client},
    {Op::Pattern, "pattern", Sender::Client},
    {Op::PutGrant, "put_grant", Sender::Client},
    {Op::PutPublish, "put_publish", Sender::Client},
    {Op::Lease, "lease", Sender::Client},
    {Op::LeaseEnd, "lease_end", Sender::Client},
    {Op::Undefine, "undefine", Sender::Client},
    {Op::Copy, "copy", Sender::Server},
    {Op::Lock, "lock", Sender::Client},
    {Op::Unlock, "unlock", Sender::Client},
    {Op::Worker, "worker", Sender::Client},
    {Op::Place, "place", Sender::Client},
    {Op::TaskDone, "task_done", Sender::Client},
    {Op::Dataflow, "dataflow", Sender::Client},
    {Op::Placements, "placements", Sender::Client},
    {Op::Lookup, "lookup", Sender::Client},
    {Op::Seal, "seal", Sender::Client},
    {Op::Derive, "derive", Sender::Client},
    {Op::Recopy, "recopy", Sender::Server},
    {Op::Backup, "backup", Sender::Server},
}};

// The entry of `type`, or null for a type no Op has.
constexpr const OpInfo* op_info(std::uint16_t type) noexcept {
  for (const OpInfo& i : kOps)
    if (static_cast<std::uint16_t>(i.op) == type) return &i;
  return nullptr;
}
const char* op_name(Op op) noexcept;

// ---- named constants ----

// Puts and gets of at most this many bytes travel inside messages.
inline constexpr std::size_t kEagerBytes = std::size_t{64} << 10;
// A metadata blob's limit.
inline constexpr std::size_t kMaxMetaBytes = std::size_t{1} << 20;
// The largest request a server accepts by default: an inline put or a
// metadata blob with its fields. Larger messages are refused before
// anything is allocated for them (ServerOptions::max_message_bytes).
inline constexpr std::size_t kDefaultMaxRequestBytes = kMaxMetaBytes + (std::size_t{64} << 10);
// The largest reply a client accepts (a listing of a large space).
inline constexpr std::size_t kMaxReplyBytes = std::size_t{256} << 20;
// At most this many dimensions, layouts, pieces... in one message: counts
// are also checked against the bytes that remain (WireReader::count).
inline constexpr std::uint32_t kMaxCount = 1u << 24;
// Placement decisions server 0 keeps and one Placements reply carries.
inline constexpr std::uint32_t kMaxPlacements = 1024;

// Timeouts, in milliseconds.
inline constexpr std::int64_t kControlTimeoutMs = 30000;     // define, list, stat, delete, metadata puts...
// Added to a call's own timeout (a get's, a metadata get's) for its
// deadline: a server that does not answer within it (stopped, hung,
// unreachable) fails the call with Timeout soon after the caller's own
// timeout: max(kMinWaitGraceMs, 10% of the timeout) later.
inline constexpr std::int64_t kMinWaitGraceMs = 250;
inline constexpr std::int64_t wait_grace_ms(std::int64_t timeout_ms) noexcept {
  return timeout_ms / 10 > kMinWaitGraceMs ? timeout_ms / 10 : kMinWaitGraceMs;
}
inline constexpr std::int64_t kForwardTimeoutMs = 30000;     // server to server
// A server reading a writer's bytes (Put over a socket or UCX) gives up
// after this, plus the time the bytes take at kSlowestTransferBytesPerS:
// a writer that stops mid-put fails its own put and holds up nobody for long.
inline constexpr std::int64_t kTransferStallMs = 10000;
inline constexpr std::uint64_t kSlowestTransferBytesPerS = 100ull << 20;
// How long moving `bytes` in one transfer may take before it counts as stalled.
inline constexpr std::int64_t transfer_ms(std::uint64_t bytes) noexcept {
  return kTransferStallMs + static_cast<std::int64_t>(bytes / (kSlowestTransferBytesPerS / 1000));
}
inline constexpr std::int64_t kPeerConnectTimeoutMs = 10000; // a reader connecting to a writer
inline constexpr std::int64_t kSubscriptionPollMs = 200;     // how soon a cancelled subscription notices
inline constexpr std::int64_t kReplicaWaitMs = 5000;         // a get waits this long for replicas being built

// Reorganization methods on the wire: 0 for none, else the Reorg value.
std::uint8_t encode_reorg(std::optional<Reorg> method) noexcept;
// Protocol error for a code that is not 0..4.
std::optional<Reorg> decode_reorg(std::uint8_t code);

// Metadata lookups. LatestIfAny answers at once, with found = false when
// the name has no version (instead of the error NotFound, whose exceptions
// cost more than the round trip after a pause).
enum class MetaMode : std::uint8_t { Exact = 0, Next = 1, Latest = 2, LatestIfAny = 3 };

// Peer roles in the hello.
enum class Role : std::uint8_t { Client = 1, Server = 2 };

// ---- replies ----

// An error reply carrying `message` (cut to the wire's string limit).
Bytes error_reply(std::uint16_t type, std::uint64_t request_id, Code code, const std::string& message);
// Throws the error an error reply carries; for an Ok reply, checks that it
// answers (expected_type, request_id) in this protocol version and returns
// its header.
Header check_reply(std::span<const std::byte> reply, std::uint16_t expected_type, std::uint64_t request_id);

}  // namespace cove::net
