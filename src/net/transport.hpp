// Internal: the transport interface every backend implements.
//
// Each participating process (client or server) owns one Endpoint. An
// endpoint can
//   - serve: take requests from peers and answer each exactly once, now or
//     later, from any thread (a get that waits for data answers later);
//   - call: send a request to a peer and block for its answer;
//   - expose memory for peers to read or write one-sided, described by a
//     key that travels inside messages;
//   - read/write a peer's exposed memory one-sided, in batches.
// Requests and replies are wire messages (wire.hpp); bulk data never
// travels inside them.
//
// Backends: Cove's own sockets (local.cpp; processes on one host,
// "local:@NAME", and on other hosts over TCP, "tcp:IP:PORT"), UCX (ucx.cpp;
// other hosts, "ucx:IP:PORT"), several at once (endpoint.cpp;
// "local:@NAME|tcp:IP:PORT", "local:@NAME|ucx:IP:PORT"), and in-process
// (inproc.cpp; "inproc://NAME").
//
// Errors: Unavailable when a peer cannot be reached or goes away, Timeout
// when a deadline passes, InvalidArgument for a key or range that does not
// describe exposed memory. Thread-safety: all Endpoint functions may be
// called from any thread.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "net/wire.hpp"

namespace cove::net {
using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;
inline constexpr Deadline kNoDeadline = Deadline::max();

// A deadline `ms` milliseconds from now; negative means none.
inline Deadline deadline_in(std::int64_t ms) {
  return ms < 0 ? kNoDeadline : Clock::now() + std::chrono::milliseconds(ms);
}
// The milliseconds left until `deadline`, for poll(): -1 for none, 0 once past.
inline int remaining_ms(Deadline deadline) {
  if (deadline == kNoDeadline) return -1;
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<std::int64_t>(left, 0, 1 << 30));
}

// A peer as seen by one endpoint: one connection. Backends derive from it.
class PeerHandle {
 public:
  virtual ~PeerHandle() = default;
  virtual std::string address() const = 0;  // the peer's own address, "" when it has none (a pure client)
  virtual const char* transport() const = 0;  // "local", "tcp", "ucx" or "inproc"
  // Whether the process at the other end can be the one listening on
  // `address` (what it says it is in its hello; "" claims nothing). Where
  // the kernel can tell, it decides: a local connection's pid must be the
  // pid that the address's local name carries. Over UCX the address's IP
  // must be the one the connection came from (which does not tell apart
  // two processes of one host: authentication does, see docs/transport.md).
  virtual bool may_claim(const std::string& address) const = 0;
  // Whether this connection has failed for good (the peer died or the link
  // to it broke): nothing more goes through it, and a new one must be made.
  virtual bool broken() const { return false; }
  // The peer's user id where the kernel tells it (local connections), -1
  // otherwise.
  virtual std::int64_t user() const { return -1; }

  // What the serving side keeps for this connection (a server's session),
  // set and read from any thread; dropped with the connection.
  std::shared_ptr<void> context() const {
    std::lock_guard lock(context_mutex_);
    return context_;
  }
  // The context, made by make() when there is none yet.
  template <typename Make>
  std::shared_ptr<void> context_or(Make&& make) {
    std::lock_guard lock(context_mutex_);
    if (!context_) context_ = make();
    return context_;
  }

 private:
  mutable std::mutex context_mutex_;
  std::shared_ptr<void> context_;
};
using Peer = std::shared_ptr<PeerHandle>;

// Memory exposed to peers until this object is destroyed.
class MemoryRegion {
 public:
  virtual ~MemoryRegion() = default;
  virtual std::span<const std::byte> key() const = 0;  // send this to peers
  virtual std::size_t size() const = 0;
  // A key for [offset, offset + length) of the region alone: offsets in
  // remote operations with it count from `offset`. Valid while the region lives.
  virtual Bytes window_key(std::size_t offset, std::size_t length) const = 0;
  // Memory the endpoint allocated (Endpoint::allocate): its first byte.
  // Null for memory exposed with expose().
  virtual std::byte* data() const { return nullptr; }
  // Lets `peer` map this region for writing (a piece granted to it).
  // Transports whose peers write by key alone (UCX) need no leave.
  virtual void allow_write(const Peer& peer) { (void)peer; }
};

// A window of a peer's memory mapped into this process: valid while this
// object lives (the mapping is shared by every window of the same region).
struct MappedWindow {
  std::shared_ptr<const void> keep;
  std::byte* data = nullptr;
  std::size_t size = 0;
  // The whole mapping the window lies in (what a GPU registers once).
  std::byte* mapping = nullptr;
  std::size_t mapping_size = 0;
};

// One piece of a batched one-sided read or write.
struct RemoteOp {
  std::uint64_t offset;  // within the exposed region
  void* local;           // destination of a read, source of a write
  std::size_t bytes;
};

// An incoming request. reply() must be called exactly once.
class Request {
 public:
  virtual ~Request() = default;
  virtual std::span<const std::byte> message() const = 0;
  virtual const Peer& peer() const = 0;
  virtual void reply(Bytes message) = 0;
};
using RequestHandler = std::function<void(std::shared_ptr<Request>)>;
// Called once when a connection that sent requests closes or fails.
using DisconnectHandler = std::function<void(const Peer&)>;

class Endpoint {
 public:
  virtual ~Endpoint() = default;

  virtual std::string address() const = 0;
  // Delivers every incoming request to `handler`, on a thread of the
  // endpoint's; the handler must not block (park the request instead).
  // `on_disconnect` hears of connections that close.
  virtual void serve(RequestHandler handler, DisconnectHandler on_disconnect = {}) = 0;

  virtual Peer connect(const std::string& address, Deadline deadline) = 0;
  virtual Bytes call(const Peer& peer, Bytes request, Deadline deadline) = 0;
  // Sends a request that is not answered (the server's handler replies to
  // nobody). Returns once it is sent. By default a call whose answer is
  // dropped.
  virtual void notify(const Peer& peer, Bytes request, Deadline deadline) { (void)call(peer, std::move(request), deadline); }

  virtual std::unique_ptr<MemoryRegion> expose(void* data, std::size_t bytes) = 0;
  // New memory of `bytes` bytes, exposed, that peers copy in and out of
  // with one copy where the transport can (the local transport: a
  // shared-memory segment they map). Freed with the region. NoMemory.
  virtual std::unique_ptr<MemoryRegion> allocate(std::size_t bytes);
  // The window `key` describes, mapped into this process (read-only unless
  // `writable`, which the exposer must have allowed), or nullopt when this
  // transport cannot map it: the caller reads or writes by key instead.
  // The first mapping of a region costs a round trip; later ones none.
  virtual std::optional<MappedWindow> map(const Peer& peer, std::span<const std::byte> key, bool writable,
                                          Deadline deadline) {
    (void)peer, (void)key, (void)writable, (void)deadline;
    return std::nullopt;
  }
  // Whether read() from `peer` copies straight out of its memory, one copy
  // by the kernel (the local transport's process reads, while the kernel
  // allows them), rather than through the connection.
  virtual bool reads_in_place(const Peer& peer) {
    (void)peer;
    return false;
  }
  // Reads the ops (offsets within the region `key` describes) from memory
  // `peer` exposed. Blocks until done or `deadline`.
  virtual void read(const Peer& peer, std::span<const std::byte> key, std::span<const RemoteOp> ops,
                    Deadline deadline) = 0;
  // Writes the ops into memory `peer` exposed (a server's granted space),
  // and returns when they are in place there. Only transports whose
  // writers cannot be read by the peer implement it (UCX); the others throw
  // Unsupported.
  virtual void write(const Peer& peer, std::span<const std::byte> key, std::span<const RemoteOp> ops,
                     Deadline deadline) {
    (void)peer, (void)key, (void)ops, (void)deadline;
    throw Error(Code::Unsupported, "this transport does not write to its peers' memory");
  }
};

// Peers an endpoint has connected to, by address: connect once, reuse.
// Thread-safe; connecting happens outside the lock (two threads may both
// connect to a new address; the first one stored wins).
class PeerCache {
 public:
  // The peer at `address`, made by connect() (which may also say hello) on first use.
  template <typename Connect>
  Peer get(const std::string& address, Connect&& connect) {
    {
      std::lock_guard lock(mutex_);
      auto it = peers_.find(address);
      if (it != peers_.end()) return it->second;
    }
    Peer p = connect();
    std::lock_guard lock(mutex_);
    return peers_.emplace(address, std::move(p)).first->second;
  }
  // Forgets a peer (it failed): the next get() connects again.
  void forget(const std::string& address) {
    std::lock_guard lock(mutex_);
    peers_.erase(address);
  }
  void clear() {
    std::lock_guard lock(mutex_);
    peers_.clear();
  }
  std::vector<std::string> addresses() {
    std::lock_guard lock(mutex_);
    std::vector<std::string> out;
    for (const auto& [address, peer] : peers_) out.push_back(address);
    return out;
  }

 private:
  std::mutex mutex_;
  std::map<std::string, Peer> peers_;
};

// How an endpoint listens.
struct EndpointOptions {
  // TCP and UCX: the interface name or IP address to listen on; "" is loopback.
  std::string listen;
  // Requests larger than this are refused before anything is allocated.
  std::size_t max_request_bytes = 0;  // 0: the protocol's default
};

// A new endpoint for a transport:
//   "local"          processes on this host, over Unix-domain sockets
//                    (address "local:@" + a random name);
//   "tcp"            the local transport, and TCP for peers on other hosts
//                    (address "local:@NAME|tcp:IP:PORT");
//   "ucx"            the local transport, and UCX for peers on other hosts
//                    (address "local:@NAME|ucx:IP:PORT");
//   "inproc://NAME"  one process (NAME must be free).
// A client reaching an address with several alternatives takes the local
// one when it is on this host, unless COVE_TRANSPORT=tcp or ucx asks for
// that one.
// Throws Unsupported for "ucx" when Cove was built without UCX.
std::unique_ptr<Endpoint> make_endpoint(const std::string& transport, const EndpointOptions& options = {});
// An endpoint that does not listen (a client's, or a probe's), in the
// transport that reaches `address`. InvalidArgument for an unknown scheme.
std::unique_ptr<Endpoint> make_endpoint_for(const std::string& address);

std::unique_ptr<Endpoint> make_local_endpoint(std::size_t max_request_bytes);
// Makes an endpoint of make_local_endpoint() listen on TCP too ("tcp:IP:PORT"
// joins its address), at `where` (EndpointOptions::listen); a second call
// does nothing. InvalidArgument for an address no interface holds,
// Unavailable when the socket cannot be made.
void listen_tcp(Endpoint& local, const std::string& where);
bool listens_tcp(const Endpoint& local);
std::unique_ptr<Endpoint> make_ucx_endpoint(const std::string& listen, std::size_t max_request_bytes);
std::unique_ptr<Endpoint> make_inproc_endpoint(const std::string& name);

}  // namespace cove::net
