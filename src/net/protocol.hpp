// Internal: the requests a Cove client sends to a staging server.
//
// Each request is a wire message (wire.hpp) whose type is one of Op; the
// reply has the same type and request id, status Ok and the body described
// here, or an error status and a body holding one string (the message).
#pragma once

#include <cove/server.hpp>

#include "net/transport.hpp"
#include "net/wire.hpp"

#include <cstdint>

namespace cove::net {

enum class Op : std::uint16_t {
  // name, dtype (str), ndim (u8), has_shape (u8), [shape (box)], reorg (u8, 0: unset),
  // nlayouts (u32) x layout (str)  ->  (empty)
  Define = 1,
  // var, version (u64), box, layout (str), dtype (str), bytes (u64), key (blob), reorg (u8)  ->  (empty)
  // The server reads the bytes from the client's exposed memory. reorg is
  // the client's method (0: none of its own).
  Put = 2,
  // var, version, box, layout, dtype, bytes, owner address (str), key (blob), reorg  ->  (empty)
  // The bytes stay in the owner's memory; readers read them from there.
  PutLocal = 3,
  // var, version, box, owner address  ->  removed (u32)
  Release = 4,
  // var, version (u64), latest (u8), region (box), timeout_ms (i64), layout (str), eager_max (u32),
  // reorg (u8, the client's method or 0)
  //   ->  version (u64), dtype (str), reorg (u8: the method in force), eager (u8), then
  //       eager 0: count (u32), count x [box, layout (str), owner (str), key (blob)]
  //       eager 1: the region's bytes in `layout` (blob), when this server holds
  //                every piece, the region is all in its shard and at most eager_max bytes
  // With latest set, `version` is the oldest version that may answer (0: any).
  // owner "" means the answering server. A server answers for the part of
  // the region its index shard holds, when pieces cover that part, or with
  // Timeout / NotFound as the timeout says. With latest set, it answers with
  // the newest version covering its part. A piece may be answered by a
  // replica (a part of it in the reader's layout) as the method says.
  Query = 5,
  // var  ->  version (u64); NotFound when there is none
  Latest = 6,
  // var, version  ->  (empty)
  Delete = 7,
  // (empty)  ->  count (u32) x [name, dtype, ndim (u8), has_shape (u8), [shape], reorg (u8), nlayouts (u32) x layout,
  //                               nversions (u32) x [version (u64), npieces (u32) x [box, bytes (u64), owner,
  //                                 nreplicas (u32) x [box, layout, bytes (u64), state (u8)]]]]
  List = 8,
  // (empty)  ->  variables, versions, pieces, owned_bytes, local_bytes, budget, requests, bytes_in,
  //              replicas, replica_bytes, reorganizations, replica_answers, patterns (u64 each),
  //              reorg (str), nlayouts (u32) x layout (str)
  Stat = 9,
  // owner address  ->  released (u32): a writer leaving; its put_local pieces go
  Disconnect = 10,
  // (empty)  ->  (empty); the server shuts down after answering
  Stop = 11,
  // Server to server: var, version, box, layout, dtype, bytes, holder address (str), key
  //   ->  (empty). Adds an index entry for a piece another server or a writer holds.
  IndexAdd = 12,
  // name, version (u64), blob  ->  (empty). Stores a metadata blob.
  MetaPut = 13,
  // name, mode (u8: 0 exact, 1 next after version, 2 latest), version (u64), timeout_ms (i64)
  //   ->  version (u64), blob. Waits as Query does when there is none yet.
  MetaGet = 14,
  // var, version, box, layout, dtype, bytes, data (blob), reorg (u8)  ->  (empty). A put
  // whose bytes travel inside the request (small puts: no registration, no
  // one-sided read).
  PutInline = 15,
  // var, layout (str), region (box), gets (u64), version (u64)  ->  (empty).
  // A reader's access pattern (SAHR), sent when its own records changed;
  // version is the one its get read (newer ones held here are prepared).
  Pattern = 16,
};

inline constexpr std::uint16_t kLastOp = static_cast<std::uint16_t>(Op::Pattern);
// Puts and gets of at most this many bytes travel inside messages.
inline constexpr std::size_t kEagerBytes = std::size_t{64} << 10;
inline constexpr std::size_t kMaxMetaBytes = std::size_t{1} << 20;

const char* op_name(Op op) noexcept;

// The body of a Stat reply, written by the server and read by clients.
void write_stats(WireWriter& out, const ServerStats& s);
ServerStats read_stats(WireReader& in);

// An error reply carrying `message`.
Bytes error_reply(std::uint16_t type, std::uint64_t request_id, Code code, const std::string& message);
// Throws the error an error reply carries (any other reply passes through).
// Returns the reply's header.
Header check_reply(std::span<const std::byte> reply, std::uint16_t expected_type, std::uint64_t request_id);

}  // namespace cove::net
