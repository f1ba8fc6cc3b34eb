// A Cove staging server: holds a shared, versioned space of N-dimensional
// array pieces in memory and answers clients' put, get and metadata
// requests.
//
// A Server object runs the service inside this process until stop() or
// destruction: worker threads handle requests, a timer thread answers gets
// whose timeout passes. The `cove-server` program wraps it (tools/cove.cpp).
//
// Ownership: a Server is a handle; copies share one service, which stops
// when the last copy goes. Blocking: the constructor returns once the
// server is listening; stop() returns once it has shut down.
// Thread-safety: all member functions may be called from any thread.
// Errors: the constructor throws InvalidArgument for a bad option (naming
// it) and Unavailable / AlreadyExists when it cannot listen at the address.
#pragma once

#include <cove/export.hpp>
#include <cove/layout.hpp>
#include <cove/reorg.hpp>

#include <cstdint>
#include <memory>
#include <map>
#include <string>
#include <vector>

namespace cove {

namespace server {
class Service;
}

struct ServerOptions {
  // The transport: "tcp" (clients on this host over Unix-domain sockets,
  // and on other hosts over Cove's own TCP path), "ucx" (other hosts over
  // UCX: RDMA fabrics; docs/transport.md says what reaches UCX), "local"
  // (this host only), or "inproc://NAME" (clients in this process only).
  std::string transport = "inproc://cove";
  // Where TCP or UCX listens: an interface name (e.g. "ib0") or an IP address.
  // Empty: loopback only, so that no other host can reach the server.
  std::string listen;
  // The largest request accepted, in bytes; larger ones are refused before
  // anything is allocated for them. 0: the protocol's default (1 MiB of
  // metadata or 64 KiB of inline data, with their fields); else 1 KiB..1 GiB.
  std::size_t max_message_bytes = 0;
  // Bytes of array data the server may hold; 0 means no limit, at most
  // 1 PiB. A put that would exceed it fails with NoMemory and the server
  // keeps what it had.
  std::uint64_t memory_budget = 0;
  // Versions kept per variable; older ones are evicted. 0 keeps all.
  int max_versions = 0;
  // Bytes of piece memory the server makes and faults in ahead of use, off
  // the puts' path: each large piece received asks for a spare block of its
  // size, made by a thread of the server while its spare and recycled
  // blocks hold less than this; blocks of dropped versions are recycled
  // (docs/staging.md, "Pre-faulted pool"). Not counted against
  // memory_budget. 0 (the default): blocks are made when a put needs them.
  std::uint64_t pool_reserve = 0;
  // Copies of each piece a server of a group receives: 1, or 2 (the second
  // on the next member of the group, with the index entries, so that what
  // was acknowledged survives one member's death). Every member of a group
  // must be given the same value.
  int replicas = 1;
  // Threads handling requests (each may wait on a client transfer).
  int workers = 2;
  // Where layouts are reorganized for readers (cove/reorg.hpp), unless a
  // variable or a client says otherwise.
  Reorg reorg = Reorg::Rad;
  // The layouts RASIA prepares every piece in (those that differ from the
  // piece's); empty means C and F. A variable may list its own.
  std::vector<Layout> layouts;
  // Threads that build replicas (each also splits large copies over the
  // region engine's thread pool). 1..64.
  int reorg_threads = 1;
  // Consumer worker slots (the in-staging placement paper's staging
  // cores): processes that Client::become_worker of this server. 0..4096.
  int worker_slots = 4;
  // In-staging placement (docs/placement.md): the policy server 0 (the
  // master) places the pieces of Client::put_placed with: "" (off: the
  // sharding's server), "rr-blocking", "rr-nonblocking", "time", "data" or
  // "hybrid"; placement_variables overrides it per variable. The resources
  // are the worker slots of every server of the group.
  std::string placement;
  std::map<std::string, std::string> placement_variables;
  // The prioritization window, in ms (0..1000): Place requests arriving
  // within it of the first one not yet placed wait for it to close, then
  // are placed together, longest expected execution time first. 0: each
  // is placed when it arrives.
  int placement_window_ms = 0;
};

struct ServerStats {
  std::uint64_t variables = 0, versions = 0, pieces = 0;
  std::uint64_t owned_bytes = 0;  // array bytes held in server memory
  std::uint64_t local_bytes = 0;  // bytes indexed here but left in writers' memory (put_local)
  std::uint64_t memory_budget = 0;
  std::uint64_t requests = 0;   // requests answered
  std::uint64_t bytes_in = 0;   // bytes read from writers by puts
  std::uint64_t bytes_out = 0;  // bytes of the regions handed to readers from memory held here
  std::uint64_t replicas = 0;         // parts of pieces held in other layouts (ready or being built)
  std::uint64_t replica_bytes = 0;    // their bytes, counted against the budget too
  std::uint64_t reorganizations = 0;  // replicas built so far
  std::uint64_t replica_answers = 0;  // pieces answered by a replica so far
  std::uint64_t patterns = 0;         // access-pattern records (SAHR)
  std::uint64_t metadata = 0;         // metadata versions kept (put_meta)
  std::uint64_t metadata_bytes = 0;   // their memory, counted against the budget too
  std::uint64_t lost_pieces = 0;      // pieces lost with writers (put_local) or group members that died
  std::uint64_t replication = 1;      // copies kept of each piece (ServerOptions.replicas)
  std::uint64_t copies = 0;           // second copies held here of other servers' pieces (replicas = 2)
  std::uint64_t copy_bytes = 0;       // their bytes (in owned_bytes)
  std::uint64_t single_copies = 0;    // replicas = 2: pieces held here with no second copy (none could be made)
  std::uint64_t moved_pieces = 0;     // index entries moved to a second copy when their holder died
  std::uint64_t lost_members = 0;     // members of the group this server found dead
  std::uint64_t restored_copies = 0;  // second copies made again, after members died, of pieces held here
  std::uint64_t restored_backups = 0;  // shards whose index entries this server sent to a new second owner, after members died
  // Pieces indexed here that later puts into their version partly (or, for
  // put_local ones not yet released, wholly) cover, and their bytes: held
  // until the piece goes, though reads see only their visible parts.
  std::uint64_t partly_covered = 0;
  std::uint64_t partly_covered_bytes = 0;
  std::uint64_t worker_slots = 0;     // consumer worker slots (ServerOptions.worker_slots)
  std::uint64_t workers = 0;          // workers registered now (Client::become_worker)
  std::uint64_t placements = 0;       // placement decisions made here (server 0, put_placed)
  std::uint64_t placement_fallbacks = 0;  // of them, data/hybrid placed as time (no affinity)
  std::uint64_t task_reports = 0;     // task execution times reported to the task monitor (Client::task_done)
  std::uint64_t parked_gets = 0;      // gets and metadata gets waiting for data now
  std::uint64_t clients = 0;          // connections open now (clients and other servers)
  std::uint64_t uptime_ms = 0;        // since the server started
  bool reachable = true;              // false: a member of the group that did not answer (Client::stat_each)
  Reorg reorg = Reorg::Rad;           // the server's method
  std::vector<Layout> layouts;        // the server's expected layouts (empty: C and F)
};

class COVE_EXPORT Server {
 public:
  explicit Server(const ServerOptions& options);
  ~Server();
  Server(const Server&) = default;
  Server& operator=(const Server&) = default;

  // The address clients connect to.
  std::string address() const;
  // The secret a client must prove it holds before any request is served
  // (docs/security.md): 256 random bits of this server's own, until
  // join_group() gives the group's. A client in this process proves it
  // without being told; one in another process reads it from the group's
  // connection file (cove-server writes it there, mode 0600), or is given
  // it (ConnectOptions::secret, COVE_SECRET). Hand it only to processes
  // that may read and delete everything this server holds.
  std::string secret() const;
  // Makes this server member `rank` of a group whose members have the
  // given addresses (addresses[rank] must be this server's): the index of
  // every variable with a global shape is then split across the group
  // along a Hilbert curve, and data stays on the server that received it.
  // `secret` (at least 16 bytes, the same on every member) replaces this
  // server's own: the members prove it to each other before one accepts
  // another's server-to-server messages, and clients prove it to each of
  // them. Call on every member, before clients connect. InvalidArgument if
  // addresses[rank] is not this server or the secret is too short.
  void join_group(const std::vector<std::string>& addresses, int rank, const std::string& secret);
  // Writes a connection file at `path` naming this server (after
  // join_group(), every member of its group) and the group's secret, so
  // that clients in other processes connect with Client::connect(path).
  // The file is created mode 0600 and atomically (the format of
  // cove-server's, docs/security.md); stop() removes it unless another
  // group's file has replaced it. Blocks on the file system only.
  // Errors: InvalidArgument for an inproc server (it serves this process
  // only), AlreadyExists when anything is at `path`, Unavailable when the
  // file cannot be written or the server has stopped.
  void write_connection_file(const std::string& path);
  ServerStats stats() const;
  // How many members of its group this server has found dead (they stopped
  // answering it, and a fresh connection failed too).
  std::size_t members_lost() const;
  // Stops serving: pending requests are answered with Unavailable. Idempotent.
  void stop();
  // Blocks until the server has stopped (by stop() or a client's Stop request).
  void wait();

 private:
  std::shared_ptr<server::Service> impl_;
};

}  // namespace cove
