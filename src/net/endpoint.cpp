// Choosing a transport: make_endpoint(), and the endpoint that speaks the
// local transport and TCP or UCX at once (a server reached from its own
// host and from others; a client whose servers are on several hosts).
//
// Addresses list their alternatives separated by '|'. connect() takes the
// local one when it answers (the peer is on this host), and TCP or UCX
// otherwise; COVE_TRANSPORT=tcp or ucx prefers that one. A client listens
// on TCP or UCX only once it first connects to a peer by it, on the
// address that reaches that peer. Memory keys carry the local key's header
// (which TCP reads too) and, once UCX runs, the UCX rkey after it: each
// transport reads the part it knows.
#include "net/memory_key.hpp"
#include "common/printable.hpp"
#include "net/protocol.hpp"
#include "net/transport.hpp"

#include "core/fail.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>

namespace cove::net {

using detail::fail;

namespace {

std::vector<std::string> alternatives(const std::string& address) {
  std::vector<std::string> out;
  std::stringstream in(address);
  std::string a;
  while (std::getline(in, a, '|'))
    if (!a.empty()) out.push_back(a);
  return out;
}

// COVE_TRANSPORT: "" (or local), tcp or ucx.
std::string preferred_transport() {
  const char* v = std::getenv("COVE_TRANSPORT");
  if (!v || !*v || std::strcmp(v, "local") == 0) return "local";
  if (std::strcmp(v, "ucx") == 0 || std::strcmp(v, "tcp") == 0) return v;
  fail(Code::InvalidArgument, "COVE_TRANSPORT = '", v, "'; expected local, tcp or ucx");
}

// The local IPv4 address this host reaches `address` (tcp:IP:PORT or
// ucx:IP:PORT) from.
std::string source_address_for(const std::string& address) {
  const std::string rest = address.substr(4);
  const std::string host = rest.substr(0, rest.rfind(':'));
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(9);
  if (::inet_pton(AF_INET, host.c_str(), &to.sin_addr) != 1) return "";
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "";
  sockaddr_in from{};
  socklen_t len = sizeof from;
  std::string out;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&from), &len) == 0) {
    char text[INET_ADDRSTRLEN] = {0};
    ::inet_ntop(AF_INET, &from.sin_addr, text, sizeof text);
    out = text;
  }
  ::close(fd);
  return out;
}

// Private anonymous memory, exposed: what allocate() gives where a
// transport has nothing better. Its pages are faulted in when it is mapped
// (MAP_POPULATE), in one pass, not one fault per page by the first piece
// copied into it.
class HeapRegion final : public MemoryRegion {
 public:
  HeapRegion(Endpoint& endpoint, std::size_t bytes) : size_(std::max<std::size_t>(bytes, 1)) {
    void* p = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED) fail(Code::NoMemory, "cannot map ", bytes, " bytes: ", std::strerror(errno));
    data_ = static_cast<std::byte*>(p);
    try {
      region_ = endpoint.expose(data_, bytes);
    } catch (...) {
      ::munmap(data_, size_);
      throw;
    }
  }
  ~HeapRegion() override {
    region_.reset();  // withdrawn before the memory goes
    ::munmap(data_, size_);
  }
  std::span<const std::byte> key() const override { return region_->key(); }
  std::size_t size() const override { return region_->size(); }
  Bytes window_key(std::size_t offset, std::size_t length) const override { return region_->window_key(offset, length); }
  std::byte* data() const override { return data_; }

 private:
  std::size_t size_;
  std::byte* data_ = nullptr;
  std::unique_ptr<MemoryRegion> region_;
};

class DualRegion final : public MemoryRegion {
 public:
  DualRegion(std::unique_ptr<MemoryRegion> local, std::unique_ptr<MemoryRegion> ucx)
      : local_(std::move(local)), ucx_(std::move(ucx)) {
    key_ = join(local_->key(), ucx_ ? Bytes(ucx_->key().begin(), ucx_->key().end()) : Bytes{});
  }
  std::span<const std::byte> key() const override { return key_; }
  std::size_t size() const override { return local_->size(); }
  Bytes window_key(std::size_t offset, std::size_t length) const override {
    return join(local_->window_key(offset, length), ucx_ ? ucx_->window_key(offset, length) : Bytes{});
  }
  std::byte* data() const override { return local_->data(); }
  void allow_write(const Peer& peer) override {
    if (std::strcmp(peer->transport(), "ucx") == 0) {
      if (ucx_) ucx_->allow_write(peer);
    } else {
      local_->allow_write(peer);
    }
  }

 private:
  // The local key's header, then the UCX rkey.
  static Bytes join(std::span<const std::byte> local, const Bytes& ucx) {
    Bytes k(local.begin(), local.end());
    if (ucx.size() > sizeof(KeyHeader)) k.insert(k.end(), ucx.begin() + sizeof(KeyHeader), ucx.end());
    return k;
  }
  std::unique_ptr<MemoryRegion> local_, ucx_;
  Bytes key_;
};

class DualEndpoint final : public Endpoint {
 public:
  // `network`: "" (this host only until a peer elsewhere is reached), "tcp" or "ucx".
  DualEndpoint(const EndpointOptions& options, const std::string& network) : options_(options) {
    local_ = make_local_endpoint(options.max_request_bytes);
    if (network == "tcp") listen_tcp(*local_, options.listen);
    if (network == "ucx") ucx_ = make_ucx_endpoint(options.listen, options.max_request_bytes);
  }

  std::string address() const override {
    std::lock_guard lock(mutex_);
    return ucx_ ? local_->address() + "|" + ucx_->address() : local_->address();
  }

  void serve(RequestHandler handler, DisconnectHandler on_disconnect) override {
    std::lock_guard lock(mutex_);
    handler_ = handler;
    on_disconnect_ = on_disconnect;
    local_->serve(std::move(handler), std::move(on_disconnect));
    if (ucx_) ucx_->serve(handler_, on_disconnect_);
  }

  Peer connect(const std::string& address, Deadline deadline) override {
    std::vector<std::string> local, tcp, ucx;
    for (const std::string& a : alternatives(address)) {
      if (a.rfind("local:", 0) == 0) local.push_back(a);
      else if (a.rfind("tcp:", 0) == 0) tcp.push_back(a);
      else if (a.rfind("ucx:", 0) == 0) ucx.push_back(a);
      else fail(Code::InvalidArgument, "address '", common::shown_address(a), "' is not local:@NAME, tcp:IP:PORT or ucx:IP:PORT");
    }
    if (local.empty() && tcp.empty() && ucx.empty())
      fail(Code::InvalidArgument, "address '", common::shown_address(address), "' is empty");
    const std::string preferred = preferred_transport();
    const bool remote_first = (preferred == "tcp" && !tcp.empty()) || (preferred == "ucx" && !ucx.empty());
    const bool remote = !tcp.empty() || !ucx.empty();
    if (!remote_first && !local.empty()) {
      try {
        // With another alternative, a local one that does not answer at once is on another host.
        return local_->connect(local.front(), remote ? Clock::now() : deadline);
      } catch (const Error& e) {
        if (!remote) throw;
      }
    }
    if (!tcp.empty() && (preferred != "ucx" || ucx.empty())) {
      // Readers on that side may connect back (put_local): listen where they reach this host.
      if (!listens_tcp(*local_)) listen_tcp(*local_, options_.listen.empty() ? source_address_for(tcp.front()) : options_.listen);
      return local_->connect(tcp.front(), deadline);
    }
    return ucx_for(ucx.front()).connect(ucx.front(), deadline);
  }

  Bytes call(const Peer& peer, Bytes request, Deadline deadline) override {
    return backend(peer).call(peer, std::move(request), deadline);
  }

  std::unique_ptr<MemoryRegion> expose(void* data, std::size_t bytes) override {
    Endpoint* ucx = nullptr;
    {
      std::lock_guard lock(mutex_);
      ucx = ucx_.get();
    }
    return std::make_unique<DualRegion>(local_->expose(data, bytes), ucx ? ucx->expose(data, bytes) : nullptr);
  }

  std::unique_ptr<MemoryRegion> allocate(std::size_t bytes) override {
    Endpoint* ucx = nullptr;
    {
      std::lock_guard lock(mutex_);
      ucx = ucx_.get();
    }
    auto local = local_->allocate(bytes);
    auto remote = ucx ? ucx->expose(local->data(), bytes) : nullptr;
    return std::make_unique<DualRegion>(std::move(local), std::move(remote));
  }

  std::optional<MappedWindow> map(const Peer& peer, std::span<const std::byte> key, bool writable,
                                  Deadline deadline) override {
    return backend(peer).map(peer, key, writable, deadline);
  }

  void notify(const Peer& peer, Bytes request, Deadline deadline) override {
    backend(peer).notify(peer, std::move(request), deadline);
  }

  bool reads_in_place(const Peer& peer) override { return backend(peer).reads_in_place(peer); }
  void read(const Peer& peer, std::span<const std::byte> key, std::span<const RemoteOp> ops,
            Deadline deadline) override {
    backend(peer).read(peer, key, ops, deadline);
  }
  void write(const Peer& peer, std::span<const std::byte> key, std::span<const RemoteOp> ops,
             Deadline deadline) override {
    backend(peer).write(peer, key, ops, deadline);
  }

 private:
  Endpoint& backend(const Peer& peer) {
    if (std::strcmp(peer->transport(), "ucx") == 0) {
      std::lock_guard lock(mutex_);
      if (!ucx_) fail(Code::InvalidArgument, "a UCX peer on an endpoint without UCX");
      return *ucx_;
    }
    return *local_;
  }

  // The UCX part, started on first use, listening where `peer` can reach it.
  Endpoint& ucx_for(const std::string& peer) {
    std::lock_guard lock(mutex_);
    if (!ucx_) {
      EndpointOptions o = options_;
      if (o.listen.empty()) o.listen = source_address_for(peer);
      ucx_ = make_ucx_endpoint(o.listen, o.max_request_bytes);
      if (handler_) ucx_->serve(handler_, on_disconnect_);
    }
    return *ucx_;
  }

  const EndpointOptions options_;
  mutable std::mutex mutex_;
  std::unique_ptr<Endpoint> local_;
  std::unique_ptr<Endpoint> ucx_;
  RequestHandler handler_;
  DisconnectHandler on_disconnect_;
};

}  // namespace

std::unique_ptr<MemoryRegion> Endpoint::allocate(std::size_t bytes) { return std::make_unique<HeapRegion>(*this, bytes); }

std::unique_ptr<Endpoint> make_endpoint(const std::string& transport, const EndpointOptions& options) {
  EndpointOptions o = options;
  if (o.max_request_bytes == 0) o.max_request_bytes = kDefaultMaxRequestBytes;
  if (transport.rfind("inproc://", 0) == 0) return make_inproc_endpoint(transport.substr(std::strlen("inproc://")));
  if (transport == "local") return std::make_unique<DualEndpoint>(o, "");
  if (transport == "tcp" || transport == "ucx") return std::make_unique<DualEndpoint>(o, transport);
  fail(Code::InvalidArgument, "transport '", transport, "' is unknown; expected local, tcp, ucx or inproc://NAME");
}

std::unique_ptr<Endpoint> make_endpoint_for(const std::string& address) {
  static std::atomic<std::uint64_t> counter{0};
  if (address.rfind("inproc://", 0) == 0)
    return make_endpoint("inproc://client-" + std::to_string(::getpid()) + "-" + std::to_string(++counter));
  if (address.rfind("ucx:", 0) == 0 || address.rfind("local:", 0) == 0 || address.rfind("tcp:", 0) == 0)
    return make_endpoint("local");  // TCP and UCX start when a peer is reached by them
  fail(Code::InvalidArgument, "server address '", address.substr(0, 48),
       "' has an unknown scheme; expected local:@NAME, tcp:..., ucx:... or inproc://NAME");
}

}  // namespace cove::net
