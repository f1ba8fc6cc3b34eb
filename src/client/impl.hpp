// Internal: the state behind a cove::Client, shared by its parts:
//   client.cpp        connecting, definitions, puts, releases, metadata, administration
//   get.cpp           gets: querying the index shards and reading the pieces
//   subscription.cpp  put_async and subscriptions
//
// Thread-safety: `mutex` guards the caches; calls may run on any thread.
#pragma once

#include <cove/client.hpp>

#include "common/shard_map.hpp"
#include "core/fail.hpp"
#include "gpu/device_key.hpp"
#include "net/handshake.hpp"
#include "net/messages.hpp"
#include "net/transport.hpp"
#include "store/access_patterns.hpp"

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace cove {

struct Client::Impl {
  struct VarInfo {
    DType dtype;
    std::optional<Box> shape;
    int ndim = 0;
    std::vector<std::byte> fill;  // empty: none
  };

  std::unique_ptr<net::Endpoint> endpoint;
  std::vector<std::string> addresses;  // the servers, in group order
  std::vector<std::string> secrets;    // the secret each one was proven with
  std::optional<Reorg> reorg;  // COVE_REORG
  DeviceSendPath send_path = DeviceSendPath::automatic;  // ConnectOptions, COVE_GPU_SEND
  DeviceRecvPath recv_path = DeviceRecvPath::automatic;  // ConnectOptions, COVE_GPU_RECV

  std::mutex mutex;
  std::vector<std::uint64_t> read_bytes;  // by server: what gets read from each (bytes_read()), under mutex
  void count_read(std::optional<std::size_t> server, std::uint64_t bytes) {
    if (!server) return;
    std::lock_guard lock(mutex);
    if (read_bytes.size() < addresses.size()) read_bytes.resize(addresses.size());
    if (*server < read_bytes.size()) read_bytes[*server] += bytes;
  }
  // The task monitor by read intervals (Client::monitor_reads), under mutex:
  // the region of the last get and when it was asked for.
  struct LastRead {
    std::string var;
    Box region;
    std::chrono::steady_clock::time_point at;
  };
  bool monitor_reads = false;
  std::optional<LastRead> last_read;
  // Ends the last read's task at `now` (reports it to server 0); at most
  // once per read. A failed report is logged, not thrown.
  void end_read_task(std::chrono::steady_clock::time_point now);
  // Hands a dataflow graph's text (at most net::kMaxMetaBytes) to server 0;
  // `source` names it in errors.
  void send_dataflow(const std::string& source, bool toml, std::string text);
  // Runs `get` (a get of `region` of `var`); under monitor_reads it ends
  // the previous read's task first and, once it succeeds, starts its own.
  template <typename Get>
  auto monitored(const std::string& var, const Box& region, Get&& get) {
    bool on;
    {
      std::lock_guard lock(mutex);
      on = monitor_reads;
    }
    if (!on) return get();
    const auto asked = std::chrono::steady_clock::now();
    end_read_task(asked);
    auto result = get();
    std::lock_guard lock(mutex);
    if (monitor_reads) last_read = LastRead{var, region, asked};
    return result;
  }
  std::map<std::string, VarInfo> vars;  // definitions seen
  // Definitions made with_first_put that no server has been sent yet, under
  // mutex: each travels with this client's puts of its variable until one
  // succeeds, or is sent on its own first by any other call that names it.
  std::map<std::string, net::DefineRequest> undeclared;
  std::map<std::string, std::shared_ptr<const common::ShardMap>> maps;  // by variable; replaced, never changed
  net::PeerCache peers;                 // writers read from (put_local), by address
  store::AccessPatterns patterns;       // this client's gets (SAHR), under mutex
  // This client's put_local pieces until release: the memory exposed to
  // readers, and what holds it when it is not the caller's (the pinned
  // copy a put_local from device memory by the baseline path leaves).
  struct LocalPiece {
    std::shared_ptr<void> staging;  // declared first: outlives the region exposing it
    std::unique_ptr<net::MemoryRegion> region;
  };
  std::map<std::tuple<std::string, std::uint64_t, std::string>, LocalPiece> local;

  ~Impl();

  // Server s's connection, made again first when it has failed (the
  // server was restarted, or the link to it went down and came back): what
  // the server held for the old one (this client's put_local pieces, its
  // leases) ended with it. Unavailable when the server did not answer when
  // this client connected (a member of the group that died), or does not
  // answer now.
  net::Peer server(std::size_t s);
  // Server s's connection as it is (null for one that did not answer).
  net::Peer current(std::size_t s) const {
    std::lock_guard lock(servers_mutex_);
    return servers_.at(s);
  }
  bool reachable(std::size_t s) const { return current(s) != nullptr; }
  std::size_t server_count() const { return addresses.size(); }

  // Sends one request of message type M to server `s` (on connection
  // `peer`, when given: the one earlier steps of the same operation used);
  // transport failures name the request and the server.
  template <typename M>
  typename M::Reply call(std::size_t s, const typename M::Request& request, net::Deadline deadline,
                         net::Peer peer = nullptr) {
    try {
      return net::call<M>(*endpoint, peer ? peer : server(s), request, deadline);
    } catch (const Error& e) {
      if (e.code() != Code::Unavailable && e.code() != Code::Timeout) throw;
      detail_fail(e, net::op_name(M::op), s);
    }
  }
  template <typename M>
  typename M::Reply call(std::size_t s, const typename M::Request& request) {
    return call<M>(s, request, net::deadline_in(net::kControlTimeoutMs));
  }
  // The same request to every reachable server; the replies in server order.
  template <typename M>
  std::vector<typename M::Reply> call_all(const typename M::Request& request) {
    std::vector<typename M::Reply> replies;
    for (std::size_t s = 0; s < server_count(); ++s)
      if (reachable(s)) replies.push_back(call<M>(s, request));
    return replies;
  }
  net::Peer connect_server(const std::string& address, std::string& secret, net::Deadline deadline,
                           std::int64_t timeout_ms);
  // Connects to every server (connect()): those that do not answer by
  // `deadline` are left out; Unavailable when none answers.
  void connect_all(net::Deadline deadline, std::int64_t timeout_ms);
  [[noreturn]] static void detail_fail(const Error& e, const char* op, std::size_t server);

  void remember(const std::string& name, const VarInfo& info);
  // Drops what this client remembered of `name`'s definition (asked again next time).
  void forget(const std::string& name);
  // A variable's definition, asked of a server the first time. A reader
  // (get, definition) gives its timeout: the server waits for the
  // definition up to it (0: NotFound at once when it is not defined; < 0:
  // until it is), and the call's deadline follows the get's rule
  // (wait_deadline). Without one, it is a control call (NotFound at once).
  // Sends `var`'s definition to every server first if it was made
  // with_first_put and no put has carried it yet.
  VarInfo var_info(const std::string& var, std::optional<std::int64_t> timeout_ms = std::nullopt);
  // var_info() for a put, which carries an undeclared definition itself.
  VarInfo put_info(const std::string& var);
  // Sends `var`'s undeclared definition (if any) to every server now.
  void declare(const std::string& var);
  // The undeclared definition of `var` for a put's piece, if any.
  std::optional<net::DefineRequest> undeclared_definition(const std::string& var);
  // The deadline of a call that waits up to timeout_ms (< 0: forever) at
  // the server: the caller's own timeout and a short grace
  // (net::wait_grace_ms: 250 ms, or 10% of a timeout over 2.5 s).
  static net::Deadline wait_deadline(std::int64_t timeout_ms) {
    return timeout_ms < 0 ? net::kNoDeadline : net::deadline_in(timeout_ms + net::wait_grace_ms(timeout_ms));
  }
  // The checks the server makes too, made here first so that a bad region
  // is reported as such rather than by the shard map.
  static void check_region(const std::string& var, const VarInfo& info, const Box& box);
  // Shared and immutable: a concurrent define() may replace it, not change it.
  std::shared_ptr<const common::ShardMap> shard_map(const std::string& var);
  net::Peer peer_for(const std::string& address);
  std::vector<VariableInfo> list_server(std::size_t s, std::optional<net::Deadline> deadline = std::nullopt);
  // The same; none from a server that did not answer at connect() or is gone since.
  std::vector<VariableInfo> list_if_answers(std::size_t s);

  // A MetaGet of `name`'s metadata; nullopt only for LatestIfAny, when the name has none.
  std::optional<Metadata> meta_get(const std::string& name, net::MetaMode mode, std::uint64_t version,
                                   std::int64_t timeout_ms);
  // Client::seal, and with `then_meta` Client::seal_and_put_meta (its server asked last).
  std::vector<bool> seal(std::span<const std::string> names, std::uint64_t version,
                         std::optional<net::MetaPutRequest> then_meta);
  // The server a piece whose first shard is `home` goes to: `home`, or
  // when it is gone the next that answers.
  std::size_t put_target(std::size_t home);
  // `on`: the server chosen by the caller (put_on) instead of the sharding's.
  void send_put(net::Op op, const std::string& var, std::uint64_t version, const Box& box, const void* data,
                std::size_t bytes, const Layout& layout, MemorySpace memory,
                std::optional<std::size_t> on = std::nullopt);
  // The put of host memory to server `home` (after send_put's checks);
  // a put_local piece keeps `staging` until release.
  // `piece` names the region, its layout and size, and carries an
  // undeclared definition (PieceHeader::define).
  void send_host_put(net::Op op, net::PieceHeader piece, const void* data, const VarInfo& info, std::size_t home,
                     std::shared_ptr<void> staging = {});
  // device.cpp: the same from device memory, by the path cove/memory.hpp describes.
  void send_device_put(net::Op op, net::PieceHeader piece, const void* data, const VarInfo& info, std::size_t home);

  // get.cpp
  std::vector<std::uint64_t> locate(const std::string& var, std::uint64_t version, const Box& region,
                                    std::int64_t timeout_ms);
  // The leases a get holds on servers while it copies (the servers keep
  // the pieces' bytes for it until then): ended, with a notice to each
  // server, when this goes. Errors ending them are logged: a server that
  // is gone has ended them itself.
  class Leases {
   public:
    explicit Leases(Impl& impl) : impl_(impl) {}
    ~Leases() { end(); }
    Leases(const Leases&) = delete;
    Leases& operator=(const Leases&) = delete;
    void add(std::size_t server, std::uint64_t lease) {
      if (lease) held_.emplace_back(server, lease);
    }
    void end();

   private:
    Impl& impl_;
    std::vector<std::pair<std::size_t, std::uint64_t>> held_;  // server, lease
  };
  struct Answer {
    std::uint64_t version = 0;
    std::vector<net::QueryPiece> pieces;  // holders resolved
    std::optional<net::Bytes> data;       // the region itself, when a server answered with it
    Reorg method = Reorg::Rad;            // the method in force (the first server's answer)
    // Pieces held by servers other than the shard that answered with them:
    // their ids, by holder, to lease there before they are read.
    std::map<std::size_t, std::vector<std::uint64_t>> elsewhere;
    std::size_t server = 0;               // the server that answered (with `data`)
    // A sealed version: the parts of the region no put covers, read as
    // `fill`.
    std::vector<Box> holes;
    net::Bytes fill;
  };
  // Asks `server` for the pieces of index shard `shard` (-1: its own).
  // latest: the newest version at or after `version` that covers the
  // region (with oldest: the oldest such); else exactly `version`.
  Answer query(std::size_t server, int shard, const std::string& var, std::uint64_t version, bool latest,
               const Box& region, std::int64_t timeout_ms, const DType& dtype, const Layout& layout,
               std::uint32_t eager_max, Leases& leases, bool oldest = false);
  // Asks shard `s`; when its server is gone, the next server, which keeps
  // the shard's entries too in a group with replicas = 2.
  Answer query_shard(std::size_t s, const std::string& var, std::uint64_t version, bool latest, const Box& region,
                     std::int64_t timeout_ms, const DType& dtype, const Layout& layout, std::uint32_t eager_max,
                     Leases& leases, bool oldest = false);
  std::optional<std::size_t> server_index(const std::string& address) const;
  // Leases the pieces of `a` held by servers other than the shards that
  // answered; NotFound when one is gone. Pieces of a server that is gone
  // are read from their second copies (replicas = 2), if they have them.
  void lease_elsewhere(const std::string& var, Answer& a, Leases& leases);
  Answer gather(const std::string& var, std::uint64_t version, bool latest, const Box& region, std::int64_t timeout_ms,
                const DType& dtype, Leases& leases, const Layout& layout = Layout::c(), bool oldest = false);
  std::uint64_t get(const std::string& var, std::uint64_t version, bool latest, const Box& region, void* data,
                    std::size_t bytes, std::int64_t timeout_ms, const Layout& layout, MemorySpace memory);
  void record_pattern(const std::string& var, std::uint64_t version, const Box& region, const Layout& layout);
  // Reads `part` of piece `p` (one of its visible parts, inside `region`)
  // into `data`, which holds `region` in `layout`.
  void read_piece(const net::QueryPiece& p, const Box& part, const Box& region, void* data, std::size_t bytes,
                  const Layout& layout, std::size_t elem);
  void read_runs(const net::Peer& peer, const net::Bytes& key, std::span<const net::RemoteOp> ops);
  // device.cpp: a piece in another process's device memory, read to the
  // host; and a get's pieces assembled in device memory.
  void read_device_piece(const net::QueryPiece& p, const Box& part, const Box& region, void* data,
                         std::size_t bytes, const Layout& layout, std::size_t elem);
  void read_pieces_to_device(const Answer& a, const Box& region, void* data, std::size_t bytes,
                             const Layout& layout, std::size_t elem);
  // The key of a piece in another process's GPU memory; Unsupported when
  // its writer is on another host.
  gpu::DeviceKey device_key_of(const net::QueryPiece& p);
 private:
  mutable std::mutex servers_mutex_;  // guards servers_ (a failed connection is replaced)
  std::vector<net::Peer> servers_;    // by group order; null: did not answer at connect()
  // After a failed attempt to connect again, no other before this time
  // (a server that is gone costs one attempt per kRetryMs, not one per call).
  std::vector<net::Clock::time_point> retry_after_;
  static constexpr std::int64_t kRetryMs = 1000;
  // A server answered that it cannot read device memory: direct puts stop.
  std::atomic<bool> direct_refused_{false};
};

}  // namespace cove
