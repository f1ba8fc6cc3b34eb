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
// Backends: in-process (inproc.cpp; addresses "inproc://NAME") and UCX
// (ucx.cpp; addresses "ucx:" + hex worker address).
//
// Errors: Unavailable when a peer cannot be reached or goes away, Timeout
// when a deadline passes, InvalidArgument for a key or range that does not
// describe exposed memory. Thread-safety: all Endpoint functions may be
// called from any thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace cove::net {

using Bytes = std::vector<std::byte>;
using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;
inline constexpr Deadline kNoDeadline = Deadline::max();

// A deadline `ms` milliseconds from now; negative means none.
inline Deadline deadline_in(std::int64_t ms) {
  return ms < 0 ? kNoDeadline : Clock::now() + std::chrono::milliseconds(ms);
}

// A peer as seen by one endpoint. Backends derive from it.
class PeerHandle {
 public:
  virtual ~PeerHandle() = default;
  virtual std::string address() const = 0;  // the peer's own address, "" when it has none (a pure client)
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

class Endpoint {
 public:
  virtual ~Endpoint() = default;

  virtual std::string address() const = 0;
  // Delivers every incoming request to `handler`, on a thread of the
  // endpoint's; the handler must not block (park the request instead).
  virtual void serve(RequestHandler handler) = 0;

  virtual Peer connect(const std::string& address, Deadline deadline) = 0;
  virtual Bytes call(const Peer& peer, Bytes request, Deadline deadline) = 0;

  virtual std::unique_ptr<MemoryRegion> expose(void* data, std::size_t bytes) = 0;
  virtual void read(const Peer& peer, std::span<const std::byte> key, std::span<const RemoteOp> ops,
                    Deadline deadline) = 0;
  virtual void write(const Peer& peer, std::span<const std::byte> key, std::span<const RemoteOp> ops,
                     Deadline deadline) = 0;
};

// Peers an endpoint has connected to, by address: connect once, reuse.
// Thread-safe; connecting happens outside the lock (two threads may both
// connect to a new address; the first one stored wins).
class PeerCache {
 public:
  Peer get(Endpoint& endpoint, const std::string& address, std::int64_t timeout_ms) {
    {
      std::lock_guard lock(mutex_);
      auto it = peers_.find(address);
      if (it != peers_.end()) return it->second;
    }
    Peer p = endpoint.connect(address, deadline_in(timeout_ms));
    std::lock_guard lock(mutex_);
    return peers_.emplace(address, std::move(p)).first->second;
  }
  void clear() {
    std::lock_guard lock(mutex_);
    peers_.clear();
  }

 private:
  std::mutex mutex_;
  std::map<std::string, Peer> peers_;
};

// An in-process endpoint named `name` (address "inproc://name"); names are
// unique within the process while their endpoint lives.
std::unique_ptr<Endpoint> make_inproc_endpoint(const std::string& name);

// A UCX endpoint; its address() is "ucx:" + the hex of its worker address.
// UCX_TLS and the other UCX_* environment variables select the transports.
// Throws Unsupported when Cove was built without UCX.
std::unique_ptr<Endpoint> make_ucx_endpoint();

// A new endpoint for a transport: "inproc://NAME" (NAME must be free) or
// "ucx" (a UCX endpoint, whose address is chosen by UCX).
std::unique_ptr<Endpoint> make_endpoint(const std::string& transport);

}  // namespace cove::net
