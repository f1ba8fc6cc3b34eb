// Cove's own socket transport: processes on one host over Unix-domain
// stream sockets in the abstract namespace ("local:@NAME"; NAME is random,
// so nobody can plant a listener in advance, and it vanishes with its
// process), and processes on other hosts over TCP ("tcp:IP:PORT", when the
// endpoint listens on TCP too). The frames are the same on both; what only
// the kernel of one host can give (shared-memory segments, process_vm_readv,
// the peer's pid and user) is used on Unix connections alone.
//
// Every endpoint listens, so that readers can connect to a writer's
// endpoint for its put_local memory; one I/O thread per endpoint serves the
// connections it accepted (epoll; it sleeps when nothing arrives). A caller
// drives its own outgoing connection: it sends its request and reads the
// reply itself, with no hand-off to another thread (when several threads
// call on one connection, one reads for all: leader and followers).
//
// Frames on a connection: a 16-byte header (kind, payload length, call id)
// and the payload. Requests and replies carry Cove messages (a Notice is a
// request that is not answered); ReadRequest / ReadReply move bytes of
// exposed memory when the kernel does not let the reader copy them itself;
// MapRequest / MapReply hand the connecting side a descriptor of a
// shared-memory segment (SCM_RIGHTS), which it maps once and keeps.
//
// Memory: a region in a shared-memory segment (allocate(); its id has
// RegionTable::kSegmentBit) is mapped by its readers, read-only, and by
// the writers it was granted to (allow_write), read-write; they copy with
// memcpy. The bytes of other exposed regions are read with
// process_vm_readv from the process the kernel bound to the connection
// (SO_PEERCRED and SO_PEERPIDFD), never from a pid a key names: a key
// naming another process is refused. Without that right (another user, no
// pidfd, COVE_CMA=0) the reader asks the exposer, which checks region,
// window and length against its own table before it sends anything.
//
// Over TCP every byte of exposed memory goes through the socket: a reader
// asks (ReadRequest) with a key, and the exposer serves it only when the
// key's token matches the region's (memory_key.hpp): keys are handed out
// only to processes that proved the group's secret to a server, so the
// token is the capability.
//
// A read's answer through the socket (over TCP, and on one host when the
// kernel does not let the reader copy) is sent from the exposed memory in
// place, only while its region stays exposed (a withdrawn one cuts the
// connection), and received straight into the reader's destination; a
// reader that gives up waits until the bytes it asked for stop arriving
// (it cuts the connection first), so no answer lands in memory that was
// handed back.
//
// Sizes: a request's payload is refused (the connection closed) when it
// exceeds the endpoint's maximum, before anything is allocated for it.
#include "net/transport.hpp"
#include "common/printable.hpp"

#include "common/auth.hpp"
#include "common/log.hpp"
#include "core/fail.hpp"
#include "net/busy_poll.hpp"
#include "net/drop_log.hpp"
#include "net/inet.hpp"
#include "net/memory_key.hpp"
#include "net/process_memory.hpp"
#include "net/protocol.hpp"
#include "net/region_table.hpp"
#include "net/segment.hpp"

#include <poll.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/eventfd.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <thread>

namespace cove::net {


using detail::fail;

namespace {

constexpr const char* kScheme = "local:@";
constexpr const char* kTcpScheme = "tcp:";

enum class Kind : std::uint32_t {
  Request = 1,
  Reply = 2,
  ReadRequest = 3,
  ReadReply = 4,
  ReadFailed = 5,  // the answer to a ReadRequest or MapRequest that failed: code, message
  MapRequest = 6,  // region id, writable
  MapReply = 7,    // the region's address and length in the exposer; a descriptor rides along
  Notice = 8,      // a request that wants no reply
};
constexpr std::size_t kMapRequestBytes = 64, kMapReplyBytes = 64;  // with their wire header
// Mappings a connection keeps (least recently used ones go beyond these).
constexpr std::size_t kMaxMappings = 256;
constexpr std::size_t kMaxMappedBytes = std::size_t{8} << 30;

struct FrameHeader {
  std::uint32_t kind = 0;
  std::uint32_t length = 0;
  std::uint64_t id = 0;
};
static_assert(sizeof(FrameHeader) == 16);

// A read another endpoint asks this one to serve: a window of an exposed
// region (as its key gave it) and the parts wanted, offsets from the window.
struct ReadAsk {
  KeyHeader key;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> parts;  // offset, bytes
};
constexpr std::size_t kMaxReadBytes = std::size_t{16} << 20;  // per ReadRequest
constexpr std::size_t kMaxReadParts = 4096;
constexpr std::size_t kReadsAhead = 4;  // pieces of one read asked for before the first is answered
// How long the rest of a frame may take once its first bytes arrived.
constexpr auto kFrameRest = std::chrono::seconds(30);
constexpr std::size_t kReceiveBuffer = std::size_t{16} << 10;
// Bytes queued for a peer that does not read before it is dropped.
constexpr std::size_t kMaxQueued = std::size_t{256} << 20;

sockaddr_un abstract_address(const std::string& name, socklen_t& len) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (name.size() + 1 > sizeof a.sun_path) fail(Code::InvalidArgument, "local socket name '", name, "' is too long");
  a.sun_path[0] = '\0';
  std::memcpy(a.sun_path + 1, name.data(), name.size());
  len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  return a;
}

// "local:@NAME" -> NAME. Names are [A-Za-z0-9._-]{1,100}.
std::string parse_local_address(const std::string& address) {
  if (address.rfind(kScheme, 0) != 0)
    fail(Code::InvalidArgument, "address '", common::shown_address(address), "' is not a local address (local:@NAME)");
  const std::string name = address.substr(std::strlen(kScheme));
  if (name.empty() || name.size() > 100)
    fail(Code::InvalidArgument, "local address '", common::shown_address(address), "' has a name of ", name.size(),
         " characters (1..100)");
  for (const char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-')
      fail(Code::InvalidArgument, "local address '", common::shown_address(address), "' has a bad character");
  return name;
}

Bytes encode_read_ask(const KeyHeader& key, std::span<const RemoteOp> ops) {
  WireWriter w(0, 0);
  w.u64(key.address).u64(key.length).u64(key.region).u64(key.pid).u64(key.token);
  w.u32(static_cast<std::uint32_t>(ops.size()));
  for (const auto& op : ops) w.u64(op.offset).u64(op.bytes);
  return std::move(w).finish();
}

ReadAsk decode_read_ask(std::span<const std::byte> payload) {
  read_header(payload);
  WireReader r(payload);
  ReadAsk a;
  a.key.address = r.u64();
  a.key.length = r.u64();
  a.key.region = r.u64();
  a.key.pid = r.u64();
  a.key.token = r.u64();
  a.parts.resize(r.count("read parts", 16, kMaxReadParts));
  for (auto& [offset, bytes] : a.parts) {
    offset = r.u64();
    bytes = r.u64();
  }
  r.expect_end();
  return a;
}

// ---- one connection ----

struct Conn {
  Conn(int f, bool out, std::string addr, bool over_tcp = false)
      : fd(f), outgoing(out), tcp(over_tcp), address(std::move(addr)) {}
  ~Conn() {
    ::close(fd);
    for (int f : fds_in) ::close(f);
    for (auto& q : queued)
      if (q.fd >= 0) ::close(q.fd);
  }

  const int fd;
  const bool outgoing;     // we connected (callers read replies), or we accepted (the I/O thread reads)
  const bool tcp;          // over TCP (else a Unix socket)
  const std::string address;  // the peer's, for outgoing connections
  PeerProcess process;     // as the kernel names it (Unix sockets)
  std::string from;        // who it is for limits and logs: "pid N", or the IP over TCP
  std::weak_ptr<PeerHandle> peer;

  // Sending, from any thread.
  struct Queued {
    Bytes bytes;
    int fd = -1;  // sent with the frame's first byte, then closed
    // A read's answer sent in place: after `bytes` (its frame header), these
    // runs of exposed region `region` (whose token is `token`), sent only
    // while the region stays exposed.
    std::vector<iovec> in_place{};
    std::uint64_t region = 0, token = 0;
    std::size_t size() const {
      std::size_t n = bytes.size();
      for (const iovec& v : in_place) n += v.iov_len;
      return n;
    }
  };
  std::mutex send_mutex;
  std::deque<Queued> queued;  // accepted connections: what the socket did not take yet
  std::size_t queued_offset = 0, queued_bytes = 0;

  // Replies awaited, by call id: calls (outgoing) and reads served by the peer.
  struct Awaited {
    bool done = false;
    Kind kind = Kind::Reply;
    Bytes payload;
    int fd = -1;  // a MapReply's descriptor
    bool landed = false;  // a ReadReply received straight into the reader's memory
  };
  std::mutex mutex;
  std::condition_variable cv;
  std::map<std::uint64_t, Awaited> awaited;
  bool leader = false;  // a caller is reading the socket (outgoing)
  // Reads awaited: the bytes each may bring, and where they go. While the
  // receiving thread writes into `into` (receiving), the reader waits.
  struct ExpectedRead {
    std::size_t bytes = 0;
    std::vector<RemoteOp> into;
    bool receiving = false;
  };
  std::map<std::uint64_t, ExpectedRead> expected_reads;
  bool broken = false;
  std::string why;
  std::deque<int> fds_in;  // descriptors received, not yet claimed by their MapReply (the leader's)
  // When read_exact last received bytes (steady clock ticks): whether the
  // peer may still be polling (BusyPoll::awaiting).
  std::atomic<Clock::rep> heard{0};

  // Segments of the peer mapped here (outgoing connections), by region id
  // and writability; under `mutex`.
  struct Mapped {
    std::shared_ptr<Mapping> mapping;
    std::uint64_t base = 0;    // the region's address in the peer (keys count from it)
    std::uint64_t length = 0;  // the region's length
    std::uint64_t used = 0;    // when last used, for eviction
  };
  std::map<std::pair<std::uint64_t, bool>, Mapped> mappings;
  std::uint64_t uses = 0;

  // Receiving: accepted connections by the I/O thread, outgoing ones by
  // the leading caller. One recv takes what the socket has into `in_buf`,
  // usually a whole frame (a small one's header and payload together);
  // the rest of a large payload goes straight to where it belongs.
  std::array<std::byte, kReceiveBuffer> in_buf;
  std::size_t in_begin = 0, in_end = 0;  // what in_buf holds, not yet taken
  bool in_drained = false;               // the last recv left the socket empty
  std::size_t buffered() const { return in_end - in_begin; }
  std::size_t take_buffered(void* out, std::size_t n) {
    const std::size_t k = std::min(n, buffered());
    std::memcpy(out, in_buf.data() + in_begin, k);
    in_begin += k;
    if (in_begin == in_end) in_begin = in_end = 0;
    return k;
  }
  // Accepted connections: the frame being received; a read's answer goes
  // straight to the reader's destination (in_into, op at in_into_at).
  bool in_have_header = false;
  FrameHeader in_header{};
  Bytes in_payload;
  std::size_t in_payload_got = 0;
  bool in_direct = false;
  std::vector<RemoteOp> in_into;
  std::size_t in_into_at = 0, in_into_got = 0;

  void fail_all(const std::string& reason) {
    std::lock_guard lock(mutex);
    if (broken) return;
    broken = true;
    why = reason;
    cv.notify_all();
  }
};

// The bytes of read `id` stopped arriving (all came, or the connection failed).
void end_receiving(Conn& c, std::uint64_t id) {
  std::lock_guard lock(c.mutex);
  auto it = c.expected_reads.find(id);
  if (it != c.expected_reads.end()) it->second.receiving = false;
  c.cv.notify_all();
}

struct LocalPeer final : PeerHandle {
  explicit LocalPeer(std::shared_ptr<Conn> c) : conn(std::move(c)) {}
  std::string address() const override { return conn->address; }
  const char* transport() const override { return conn->tcp ? "tcp" : "local"; }
  // Local names are "cove-PID-RANDOM" (the listener's pid, see the
  // constructor); the kernel gave this connection's pid. Over TCP, only
  // the host: a tcp:IP:PORT alternative with the IP the connection came from.
  std::int64_t user() const override { return conn->process.pid() > 0 ? conn->process.uid() : -1; }
  bool broken() const override {
    std::lock_guard lock(conn->mutex);
    return conn->broken;
  }
  bool may_claim(const std::string& claimed) const override {
    if (claimed.empty()) return true;
    if (conn->tcp) return conn->outgoing ? claimed == conn->address : claims_host(claimed, kTcpScheme, conn->from);
    if (conn->process.pid() <= 0) return false;
    return has_alternative(claimed, std::string(kScheme) + "cove-" + std::to_string(conn->process.pid()) + "-");
  }
  std::shared_ptr<Conn> conn;
};

// ---- the exposed regions ----

// A region in this endpoint's table: memory exposed as it is, memory in a
// segment of its own (allocate()), or a window of such a segment exposed
// again (a put_local of allocated memory), which registers nothing.
class LocalRegion final : public MemoryRegion {
 public:
  LocalRegion(std::shared_ptr<RegionTable> table, void* data, std::size_t n, std::unique_ptr<Segment> segment = nullptr)
      : table_(std::move(table)), segment_(std::move(segment)), registered_(true) {
    if (segment_) data = segment_->data();
    std::unique_lock lock(table_->mutex);
    key_.region = table_->next++;
    if (segment_) key_.region |= RegionTable::kSegmentBit;
    key_.address = reinterpret_cast<std::uint64_t>(data);
    key_.length = n;
    key_.pid = static_cast<std::uint64_t>(::getpid());
    key_.token = random_token();
    table_->regions[key_.region] = {static_cast<std::byte*>(data), n, segment_.get(), key_.token};
    bytes_ = make_key(key_);
  }
  // A window of a registered region.
  LocalRegion(std::shared_ptr<RegionTable> table, const KeyHeader& window)
      : table_(std::move(table)), key_(window), bytes_(make_key(window)), registered_(false) {}
  ~LocalRegion() override {
    if (!registered_) return;
    std::unique_lock lock(table_->mutex);
    table_->regions.erase(key_.region);
  }
  std::span<const std::byte> key() const override { return bytes_; }
  std::size_t size() const override { return key_.length; }
  Bytes window_key(std::size_t offset, std::size_t length) const override {
    if (offset > key_.length || length > key_.length - offset)
      fail(Code::InvalidArgument, "window [", offset, ", +", length, ") is outside the ", key_.length, "-byte region");
    KeyHeader k = key_;
    k.address += offset;
    k.length = length;
    return make_key(k);
  }
  std::byte* data() const override { return segment_ ? segment_->data() : nullptr; }
  void allow_write(const Peer& peer) override {
    auto* p = dynamic_cast<LocalPeer*>(peer.get());
    if (!segment_ || !p || p->conn->tcp) return;
    // The latest grants' writers: a chunk of a server's reserve holds the
    // pieces of every writer process on the host.
    constexpr std::size_t kMaxWriters = 1024;
    const std::pair writer{p->conn->process.pid(), p->conn->process.uid()};
    std::unique_lock lock(table_->mutex);
    auto& writers = table_->regions.at(key_.region).writers;
    if (std::find(writers.begin(), writers.end(), writer) != writers.end()) return;
    if (writers.size() == kMaxWriters) writers.erase(writers.begin());
    writers.push_back(writer);
  }

 private:
  std::shared_ptr<RegionTable> table_;
  std::unique_ptr<Segment> segment_;
  KeyHeader key_;
  Bytes bytes_;
  bool registered_;
};

class LocalEndpoint final : public Endpoint {
 public:
  explicit LocalEndpoint(std::size_t max_request_bytes);
  ~LocalEndpoint() override;

  // Listens on TCP too, where `where` says (listen_address()); once.
  void listen_tcp(const std::string& where);
  bool listens_tcp() const {
    std::lock_guard lock(mutex_);
    return tcp_fd_ >= 0;
  }

  std::string address() const override;
  void serve(RequestHandler handler, DisconnectHandler on_disconnect) override;
  Peer connect(const std::string& address, Deadline deadline) override;
  Bytes call(const Peer& peer, Bytes request, Deadline deadline) override;
  void notify(const Peer& peer, Bytes request, Deadline deadline) override;
  std::unique_ptr<MemoryRegion> expose(void* data, std::size_t bytes) override;
  std::unique_ptr<MemoryRegion> allocate(std::size_t bytes) override;
  std::optional<MappedWindow> map(const Peer& peer, std::span<const std::byte> key, bool writable,
                                  Deadline deadline) override;
  bool reads_in_place(const Peer& peer) override {
    const Conn& c = conn_of(peer);
    return !c.tcp && c.process.readable();
  }
  void read(const Peer& peer, std::span<const std::byte> key, std::span<const RemoteOp> ops,
            Deadline deadline) override;
  void write(const Peer& peer, std::span<const std::byte> key, std::span<const RemoteOp> ops,
             Deadline deadline) override;

  // Sends a frame on an accepted connection without blocking; `fd` (closed
  // here) rides along with its first byte.
  void queue_frame(Conn& c, Kind kind, std::uint64_t id, Bytes payload, int fd = -1);

 private:
  static Conn& conn_of(const Peer& peer);
  void send_frame(Conn& c, Kind kind, std::uint64_t id, std::span<const std::byte> payload, Deadline deadline);
  void flush_queued(Conn& c);
  Conn::Awaited await(Conn& c, std::uint64_t id, Deadline deadline);
  Conn::Awaited round_trip(Conn& c, Kind kind, std::span<const std::byte> payload, Kind answer, Deadline deadline);
  void read_one(Conn& c, Deadline deadline);
  void deliver_answer(Conn& c, Kind kind, std::uint64_t id, Bytes payload, int fd = -1, bool landed = false);
  std::uint64_t ask_read(Conn& c, const KeyHeader& k, std::span<const RemoteOp> ops, Deadline deadline);
  void await_read(Conn& c, std::uint64_t id, std::span<const RemoteOp> ops, Deadline deadline);
  void serve_read(Conn& c, std::uint64_t id, std::span<const std::byte> payload);
  void serve_map(Conn& c, std::uint64_t id, std::span<const std::byte> payload);
  std::optional<MappedWindow> mapped(Conn& c, const KeyHeader& k, bool writable, Deadline deadline);
  Peer connect_tcp(const std::string& address, Deadline deadline);
  void serve_read_direct(Conn& c, std::uint64_t id, const ReadAsk& ask, const std::byte* base);
  void queue_in_place(Conn& c, Conn::Queued answer);
  void flush_locked(Conn& c);
  void forget_read(Conn& c, std::uint64_t id);
  void run_io();
  void accept_all(int listen_fd, bool tcp);
  void receive(const std::shared_ptr<Conn>& conn);
  void handle_frame(const std::shared_ptr<Conn>& conn, const FrameHeader& h, Bytes payload);
  void close_accepted(const std::shared_ptr<Conn>& conn, const std::string& why, bool dropped = false);
  void note_drop(const std::string& peer, const std::string& why);

  // Connections one process may hold open to this endpoint; more are
  // closed as they come (a client needs one, a reader one per writer). An
  // accepted connection costs two descriptors (its socket and its peer's
  // pidfd): one process may take an eighth of this process's limit, 16 to
  // 1024 connections. Over TCP the kernel names no process, only a host,
  // which may run many: one host may take half the limit.
  static std::size_t max_connections_per_process();
  static std::size_t max_connections_per_host();

  const std::string name_;
  const std::size_t max_request_bytes_;
  std::shared_ptr<RegionTable> table_;
  int listen_fd_ = -1, epoll_fd_ = -1, wake_fd_ = -1;
  int tcp_fd_ = -1;          // the TCP listener, once listen_tcp() ran; under mutex_
  std::string tcp_address_;  // "tcp:IP:PORT"; under mutex_
  int reserve_fd_ = -1;  // closed to accept (and close) a connection when out of descriptors
  DropLog drops_;
  std::map<std::string, std::size_t> per_peer_;  // accepted connections by Conn::from; under mutex_
  const std::size_t max_per_process_ = max_connections_per_process();
  const std::size_t max_per_host_ = max_connections_per_host();
  std::atomic<std::uint64_t> next_id_{1};
  mutable std::mutex mutex_;
  bool stopping_ = false;
  RequestHandler handler_;
  DisconnectHandler on_disconnect_;
  std::map<Conn*, std::shared_ptr<Conn>> accepted_;
  std::map<Conn*, Peer> peers_;  // the peer handle each accepted connection was given
  std::thread io_;
};

class LocalRequest final : public Request {
 public:
  LocalRequest(LocalEndpoint* ep, std::shared_ptr<Conn> conn, Peer peer, std::uint64_t id, Bytes m, bool answered)
      : ep_(ep), conn_(std::move(conn)), peer_(std::move(peer)), id_(id), message_(std::move(m)), answered_(answered) {}
  std::span<const std::byte> message() const override { return message_; }
  const Peer& peer() const override { return peer_; }
  void reply(Bytes message) override {
    if (answered_) ep_->queue_frame(*conn_, Kind::Reply, id_, std::move(message));
  }

 private:
  LocalEndpoint* ep_;
  std::shared_ptr<Conn> conn_;
  Peer peer_;
  std::uint64_t id_;
  Bytes message_;
  bool answered_;  // false for a notice: the reply goes nowhere
};

// ---- the endpoint ----

LocalEndpoint::LocalEndpoint(std::size_t max_request_bytes)
    : name_("cove-" + std::to_string(::getpid()) + "-" + common::random_hex(16)),
      max_request_bytes_(max_request_bytes),
      table_(std::make_shared<RegionTable>()) {
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) fail(Code::Unavailable, "cannot make a Unix socket: ", std::strerror(errno));
  socklen_t len = 0;
  const sockaddr_un a = abstract_address(name_, len);
  if (::bind(listen_fd_, reinterpret_cast<const sockaddr*>(&a), len) != 0 || ::listen(listen_fd_, 512) != 0) {
    const int e = errno;
    ::close(listen_fd_);
    fail(Code::Unavailable, "cannot listen on local:@", name_, ": ", std::strerror(e));
  }
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.ptr = nullptr;  // the listening socket
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &ev);
  ev.data.ptr = &wake_fd_;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
  reserve_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  io_ = std::thread([this] { run_io(); });
}

LocalEndpoint::~LocalEndpoint() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  const std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
  io_.join();
  std::map<Conn*, std::shared_ptr<Conn>> conns;
  {
    std::lock_guard lock(mutex_);
    conns.swap(accepted_);
  }
  for (auto& [p, c] : conns) {
    ::shutdown(c->fd, SHUT_RDWR);
    c->fail_all("the endpoint is closing");
  }
  ::close(listen_fd_);
  if (tcp_fd_ >= 0) ::close(tcp_fd_);
  ::close(epoll_fd_);
  ::close(wake_fd_);
  if (reserve_fd_ >= 0) ::close(reserve_fd_);
}

std::string LocalEndpoint::address() const {
  std::lock_guard lock(mutex_);
  return tcp_address_.empty() ? kScheme + name_ : kScheme + name_ + "|" + tcp_address_;
}

void LocalEndpoint::listen_tcp(const std::string& where) {
  const sockaddr_storage at = listen_address(where);
  std::lock_guard lock(mutex_);
  if (tcp_fd_ >= 0) return;
  const int fd = ::socket(at.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) fail(Code::Unavailable, "cannot make a TCP socket: ", std::strerror(errno));
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  const socklen_t len = at.ss_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
  sockaddr_storage bound{};
  socklen_t bound_len = sizeof bound;
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&at), len) != 0 || ::listen(fd, 512) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &bound_len) != 0) {
    const int e = errno;
    ::close(fd);
    fail(e == EADDRNOTAVAIL ? Code::InvalidArgument : Code::Unavailable, "cannot listen on TCP at ", to_string(at), ": ",
         std::strerror(e));
  }
  tcp_fd_ = fd;
  tcp_address_ = kTcpScheme + to_string(bound);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.ptr = &tcp_fd_;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, tcp_fd_, &ev);
}

void LocalEndpoint::serve(RequestHandler handler, DisconnectHandler on_disconnect) {
  std::lock_guard lock(mutex_);
  if (handler_) fail(Code::InvalidArgument, "endpoint ", address(), " is already serving");
  handler_ = std::move(handler);
  on_disconnect_ = std::move(on_disconnect);
}

namespace {

// A socket connected to `address` by `attempt` (which makes the socket in
// its argument, and gives 0 or the errno of the failure), tried again while
// nobody answers there yet or its backlog is full, until `deadline`.
template <typename Attempt>
int connect_retrying(const std::string& address, Deadline deadline, Attempt&& attempt) {
  for (;;) {
    int fd = -1;
    const int e = attempt(fd);
    if (e == 0) return fd;
    if (fd >= 0) ::close(fd);
    if (e != ECONNREFUSED && e != ENOENT && e != EAGAIN && e != ETIMEDOUT)
      fail(Code::Unavailable, "cannot connect to ", common::shown_address(address), ": ", std::strerror(e));
    if (Clock::now() >= deadline)
      fail(Code::Unavailable, "no endpoint answers at ", common::shown_address(address), " (", std::strerror(e), ")");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// A new non-blocking stream socket of `family`.
int stream_socket(int family) {
  const int fd = ::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) fail(Code::Unavailable, "cannot make a ", family == AF_UNIX ? "Unix" : "TCP", " socket: ", std::strerror(errno));
  return fd;
}

}  // namespace

Peer LocalEndpoint::connect(const std::string& address, Deadline deadline) {
  if (address.rfind(kTcpScheme, 0) == 0) return connect_tcp(address, deadline);
  const std::string name = parse_local_address(address);
  socklen_t len = 0;
  const sockaddr_un a = abstract_address(name, len);
  const int fd = connect_retrying(address, deadline, [&](int& s) {
    s = stream_socket(AF_UNIX);
    return ::connect(s, reinterpret_cast<const sockaddr*>(&a), len) == 0 ? 0 : errno;
  });
  auto conn = std::make_shared<Conn>(fd, true, address);
  conn->process = PeerProcess::of_socket(fd);
  auto peer = std::make_shared<LocalPeer>(conn);
  conn->peer = peer;
  return peer;
}

namespace {

// A TCP connection's settings: no Nagle delay (a request is one frame), and
// a dead peer found within kDeadPeerMs whether this side sends (bytes
// unacknowledged that long: TCP_USER_TIMEOUT) or waits (keepalive probes
// from kKeepIdleS of silence on): its callers then fail with Unavailable
// instead of waiting out their deadlines, as UCX's peer-failure mode does.
constexpr int kKeepIdleS = 5, kKeepIntervalS = 2, kKeepProbes = 5;
constexpr unsigned kDeadPeerMs = 15000;
void tune_tcp(int fd) {
  const int one = 1, idle = kKeepIdleS, interval = kKeepIntervalS, probes = kKeepProbes;
  const unsigned dead = kDeadPeerMs;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes);
  ::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &dead, sizeof dead);
}

// Connects `fd` to `to` within `deadline`: 0, or the errno of the failure.
int connect_by(int fd, const sockaddr_storage& to, Deadline deadline) {
  const socklen_t len = to.ss_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&to), len) == 0) return 0;
  if (errno != EINPROGRESS) return errno;
  pollfd p{fd, POLLOUT, 0};
  const int r = ::poll(&p, 1, remaining_ms(deadline));
  if (r == 0) return ETIMEDOUT;
  if (r < 0) return errno;
  int e = 0;
  socklen_t el = sizeof e;
  ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el);
  return e;
}

}  // namespace

Peer LocalEndpoint::connect_tcp(const std::string& address, Deadline deadline) {
  const sockaddr_storage to = parse_inet_address(address, kTcpScheme, "TCP");
  const int fd = connect_retrying(address, deadline, [&](int& s) {
    s = stream_socket(to.ss_family);
    return connect_by(s, to, deadline);
  });
  tune_tcp(fd);
  auto conn = std::make_shared<Conn>(fd, true, address, true);
  conn->from = host_of(to);
  auto peer = std::make_shared<LocalPeer>(conn);
  conn->peer = peer;
  return peer;
}

std::unique_ptr<MemoryRegion> LocalEndpoint::expose(void* data, std::size_t bytes) {
  {
    // Memory of a segment of ours is exposed as a window of it, which readers map.
    std::shared_lock lock(table_->mutex);
    const auto at = reinterpret_cast<std::uint64_t>(data);
    for (auto it = table_->regions.lower_bound(RegionTable::kSegmentBit); it != table_->regions.end(); ++it) {
      const auto base = reinterpret_cast<std::uint64_t>(it->second.base);
      if (at >= base && at - base <= it->second.length && bytes <= it->second.length - (at - base))
        return std::make_unique<LocalRegion>(
            table_, KeyHeader{at, bytes, it->first, static_cast<std::uint64_t>(::getpid()), it->second.token});
    }
  }
  return std::make_unique<LocalRegion>(table_, data, bytes);
}

std::unique_ptr<MemoryRegion> LocalEndpoint::allocate(std::size_t bytes) {
  if (!segments_enabled()) return Endpoint::allocate(bytes);
  return std::make_unique<LocalRegion>(table_, nullptr, bytes, std::make_unique<Segment>(bytes));
}

Conn& LocalEndpoint::conn_of(const Peer& peer) {
  auto* p = dynamic_cast<LocalPeer*>(peer.get());
  if (!p) fail(Code::InvalidArgument, "peer does not belong to the local transport");
  return *p->conn;
}

// ---- sending ----

namespace {

// Puts descriptor `pass` in `m`'s control data (SCM_RIGHTS).
void attach_descriptor(msghdr& m, char (&control)[CMSG_SPACE(sizeof(int))], int pass) {
  std::memset(control, 0, sizeof control);
  m.msg_control = control;
  m.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&m);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &pass, sizeof pass);
}

// Sends what it can of [header, payload] from `offset`; returns the bytes
// taken, or -1 with errno.
ssize_t send_some(int fd, const FrameHeader& h, std::span<const std::byte> payload, std::size_t offset,
                  int pass = -1) {
  iovec iov[2];
  int n = 0;
  if (offset < sizeof h) {
    iov[n++] = {const_cast<char*>(reinterpret_cast<const char*>(&h)) + offset, sizeof h - offset};
    if (!payload.empty()) iov[n++] = {const_cast<std::byte*>(payload.data()), payload.size()};
  } else {
    const std::size_t at = offset - sizeof h;
    iov[n++] = {const_cast<std::byte*>(payload.data()) + at, payload.size() - at};
  }
  msghdr m{};
  m.msg_iov = iov;
  m.msg_iovlen = static_cast<std::size_t>(n);
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  if (pass >= 0 && offset == 0) attach_descriptor(m, control, pass);
  return ::sendmsg(fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
}

Bytes frame_bytes(Kind kind, std::uint64_t id, std::span<const std::byte> payload) {
  FrameHeader h{static_cast<std::uint32_t>(kind), static_cast<std::uint32_t>(payload.size()), id};
  Bytes out(sizeof h + payload.size());
  std::memcpy(out.data(), &h, sizeof h);
  if (!payload.empty()) std::memcpy(out.data() + sizeof h, payload.data(), payload.size());
  return out;
}

}  // namespace

// Outgoing connections: the caller waits until the socket takes the frame.
void LocalEndpoint::send_frame(Conn& c, Kind kind, std::uint64_t id, std::span<const std::byte> payload,
                               Deadline deadline) {
  if (payload.size() > UINT32_MAX) fail(Code::InvalidArgument, "a message of ", payload.size(), " bytes is too large");
  const FrameHeader h{static_cast<std::uint32_t>(kind), static_cast<std::uint32_t>(payload.size()), id};
  const std::size_t total = sizeof h + payload.size();
  std::lock_guard lock(c.send_mutex);
  std::size_t sent = 0;
  while (sent < total) {
    const ssize_t n = send_some(c.fd, h, payload, sent);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      // Once a frame has started it must be finished, or the stream is lost.
      const Deadline until = sent == 0 ? deadline : std::max(deadline, Clock::now() + kFrameRest);
      pollfd p{c.fd, POLLOUT, 0};
      const int r = ::poll(&p, 1, remaining_ms(until));
      if (r == 0) {
        if (sent == 0) fail(Code::Timeout, "no room to send to ", common::shown_address(c.address), " before the deadline");
        c.fail_all("a peer stopped reading");
        ::shutdown(c.fd, SHUT_RDWR);
        fail(Code::Unavailable, "peer ", common::shown_address(c.address), " stopped reading");
      }
      continue;
    }
    c.fail_all(std::string("sending failed: ") + std::strerror(errno));
    fail(Code::Unavailable, "peer ", common::shown_address(c.address), " went away (", std::strerror(errno), ")");
  }
}

// Accepted connections: never blocks; what the socket does not take waits
// for the I/O thread.
void LocalEndpoint::queue_frame(Conn& c, Kind kind, std::uint64_t id, Bytes payload, int fd) {
  struct Closer {
    int& fd;
    ~Closer() {
      if (fd >= 0) ::close(fd);
    }
  } closer{fd};
  std::lock_guard lock(c.send_mutex);
  if (c.outgoing) {
    // A read served by a caller on its own connection: it is the only sender.
    const FrameHeader h{static_cast<std::uint32_t>(kind), static_cast<std::uint32_t>(payload.size()), id};
    std::size_t sent = 0;
    const std::size_t total = sizeof h + payload.size();
    while (sent < total) {
      const ssize_t n = send_some(c.fd, h, payload, sent);
      if (n > 0) {
        sent += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
        pollfd p{c.fd, POLLOUT, 0};
        if (::poll(&p, 1, static_cast<int>(std::chrono::milliseconds(kFrameRest).count())) <= 0) return;
        continue;
      }
      return;
    }
    return;
  }
  if (c.queued.empty()) {
    const FrameHeader h{static_cast<std::uint32_t>(kind), static_cast<std::uint32_t>(payload.size()), id};
    std::size_t sent = 0;
    for (;;) {
      const ssize_t n = send_some(c.fd, h, payload, sent, fd);
      if (n > 0) {
        if (sent == 0 && fd >= 0) {  // the descriptor went with the first byte
          ::close(fd);
          fd = -1;
        }
        sent += static_cast<std::size_t>(n);
        if (sent == sizeof h + payload.size()) return;
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      return;  // the peer is gone: the I/O thread will notice
    }
    c.queued_offset = sent;
  }
  c.queued.push_back({frame_bytes(kind, id, payload), std::exchange(fd, -1)});
  c.queued_bytes += sizeof(FrameHeader) + payload.size();
  if (c.queued_bytes > kMaxQueued) {
    log::warn("a peer of {} does not read its replies; its connection is closed", address());
    ::shutdown(c.fd, SHUT_RDWR);
    return;
  }
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLOUT;
  ev.data.ptr = &c;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev);
}

void LocalEndpoint::flush_queued(Conn& c) {
  std::lock_guard lock(c.send_mutex);
  flush_locked(c);
}

// Sends what the socket takes of the queue (c.send_mutex held). An answer
// sent in place goes out only under the table, and only while its region
// is exposed: once the region is withdrawn (its memory may hold other
// bytes soon) the connection is cut, and its reader gets an error, never
// bytes the region did not hold when it asked.
void LocalEndpoint::flush_locked(Conn& c) {
  const auto drop_all = [&] {
    for (auto& dropped : c.queued)
      if (dropped.fd >= 0) ::close(dropped.fd);
    c.queued.clear();
    c.queued_offset = c.queued_bytes = 0;
  };
  while (!c.queued.empty()) {
    Conn::Queued& q = c.queued.front();
    ssize_t n = 0;
    if (q.in_place.empty()) {
      iovec iov{q.bytes.data() + c.queued_offset, q.bytes.size() - c.queued_offset};
      msghdr m{};
      m.msg_iov = &iov;
      m.msg_iovlen = 1;
      alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
      if (q.fd >= 0 && c.queued_offset == 0) attach_descriptor(m, control, q.fd);
      n = ::sendmsg(c.fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
    } else {
      std::vector<iovec> iov;
      std::size_t skip = c.queued_offset;
      const auto add = [&](std::byte* at, std::size_t len) {
        if (skip >= len) {
          skip -= len;
          return;
        }
        if (iov.size() < IOV_MAX) iov.push_back({at + skip, len - skip});
        skip = 0;
      };
      add(q.bytes.data(), q.bytes.size());
      for (const iovec& v : q.in_place) add(static_cast<std::byte*>(v.iov_base), v.iov_len);
      msghdr m{};
      m.msg_iov = iov.data();
      m.msg_iovlen = iov.size();
      std::shared_lock table(table_->mutex);
      const auto it = table_->regions.find(q.region);
      if (it == table_->regions.end() || it->second.token != q.token) {
        table.unlock();
        log::debug("{}: a region was withdrawn while its bytes were being sent; the connection is cut", address());
        drop_all();
        ::shutdown(c.fd, SHUT_RDWR);
        return;
      }
      n = ::sendmsg(c.fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) return;
      drop_all();
      return;
    }
    if (q.fd >= 0) {
      ::close(q.fd);
      q.fd = -1;
    }
    c.queued_offset += static_cast<std::size_t>(n);
    if (c.queued_offset == q.size()) {
      c.queued_bytes -= q.bytes.size();
      c.queued.pop_front();
      c.queued_offset = 0;
    }
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.ptr = &c;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev);
}

// ---- receiving on outgoing connections: the callers themselves ----

namespace {

// Reads exactly n bytes; waits for the first until `deadline` (false when
// it passes with nothing read), for the rest up to kFrameRest. What was
// received ahead comes first; a short rest is received into the buffer,
// with whatever follows it, a long one straight into `out`.
// Descriptors that come along (a MapReply's) are kept in c.fds_in.
bool read_exact(Conn& c, void* out, std::size_t n, Deadline deadline) {
  const int fd = c.fd;
  auto* p = static_cast<char*>(out);
  std::size_t got = c.take_buffered(p, n);
  std::optional<BusyPoll> spin;  // started when the socket first has nothing
  while (got < n) {
    const bool into_buffer = n - got < c.in_buf.size() / 2;  // (the buffer is empty here)
    iovec iov = into_buffer ? iovec{c.in_buf.data(), c.in_buf.size()} : iovec{p + got, n - got};
    msghdr m{};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(4 * sizeof(int))];
    m.msg_control = control;
    m.msg_controllen = sizeof control;
    const ssize_t r = ::recvmsg(fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (r > 0)
      for (cmsghdr* cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm))
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
          for (std::size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); ++i) {
            int passed = -1;
            std::memcpy(&passed, CMSG_DATA(cm) + i * sizeof(int), sizeof passed);
            c.fds_in.push_back(passed);
          }
    if (r > 0) {
      c.heard.store(Clock::now().time_since_epoch().count(), std::memory_order_relaxed);
      if (into_buffer) {
        c.in_end = static_cast<std::size_t>(r);
        got += c.take_buffered(p + got, n - got);
      } else {
        got += static_cast<std::size_t>(r);
      }
      continue;
    }
    if (r == 0) fail(Code::Unavailable, "the peer closed the connection");
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) fail(Code::Unavailable, "receiving failed: ", std::strerror(errno));
    if (!spin) spin = BusyPoll::awaiting(Clock::time_point(Clock::duration(c.heard.load(std::memory_order_relaxed))));
    if (spin->poll()) continue;
    const Deadline until = got == 0 ? deadline : Clock::now() + kFrameRest;
    pollfd pf{fd, POLLIN, 0};
    const auto asleep = Clock::now();
    const int ready = ::poll(&pf, 1, remaining_ms(until));
    if (got == 0 && ready > 0) BusyPoll::slept(Clock::now() - asleep);
    if (ready == 0) {
      if (got == 0) return false;
      fail(Code::Unavailable, "the peer stopped in the middle of a message");
    }
  }
  return true;
}

}  // namespace

// The calling thread reads frames until the one awaited as `id` is there.
Conn::Awaited LocalEndpoint::await(Conn& c, std::uint64_t id, Deadline deadline) {
  std::unique_lock lock(c.mutex);
  for (;;) {
    auto it = c.awaited.find(id);
    if (it->second.done) {
      Conn::Awaited a = std::move(it->second);
      c.awaited.erase(it);
      return a;
    }
    if (c.broken) {
      c.awaited.erase(it);
      fail(Code::Unavailable, "connection to ", common::shown_address(c.address), " lost: ", c.why);
    }
    if (Clock::now() >= deadline) {
      c.awaited.erase(it);  // (not done: it holds no descriptor)
      fail(Code::Timeout, "no answer from ", common::shown_address(c.address), " before the deadline");
    }
    if (!c.outgoing || c.leader) {
      // Another thread reads (the I/O thread, or the leading caller).
      if (deadline == kNoDeadline)
        c.cv.wait(lock);
      else
        c.cv.wait_until(lock, deadline);
      continue;
    }
    c.leader = true;
    lock.unlock();
    try {
      read_one(c, deadline);
    } catch (const Error& e) {
      c.fail_all(detail::message_of(e));
    }
    lock.lock();
    c.leader = false;
    c.cv.notify_all();  // a follower may lead now, or find its answer
  }
}

// Reads one frame from an outgoing connection (the leader, without the lock).
void LocalEndpoint::read_one(Conn& c, Deadline deadline) {
  FrameHeader h;
  if (!read_exact(c, &h, sizeof h, deadline)) return;
  const auto kind = static_cast<Kind>(h.kind);
  if (kind == Kind::Request || kind == Kind::Notice || kind == Kind::MapRequest)
    fail(Code::Protocol, "a request arrived on a connection this endpoint made");
  std::size_t limit = kMaxReplyBytes;
  if (kind == Kind::ReadRequest) limit = 64 << 10;
  if (kind == Kind::MapReply) limit = kMapReplyBytes;
  std::vector<RemoteOp> into;  // a read's answer, received where its reader wants it
  if (kind == Kind::ReadReply) {
    std::lock_guard lock(c.mutex);
    auto it = c.expected_reads.find(h.id);
    limit = it == c.expected_reads.end() ? 0 : it->second.bytes;
    if (limit > 0 && h.length == limit) {
      it->second.receiving = true;
      into = it->second.into;
    }
  }
  if (h.length > limit) fail(Code::Protocol, "a frame of ", h.length, " bytes exceeds the limit of ", limit);
  if (!into.empty()) {
    try {
      for (const RemoteOp& op : into) read_exact(c, op.local, op.bytes, Clock::now() + kFrameRest);
    } catch (...) {
      end_receiving(c, h.id);
      throw;
    }
    deliver_answer(c, kind, h.id, {}, -1, true);
    return;
  }
  Bytes payload(h.length);
  if (h.length) read_exact(c, payload.data(), h.length, Clock::now() + kFrameRest);
  if (kind == Kind::ReadRequest) {
    serve_read(c, h.id, payload);
    return;
  }
  int fd = -1;
  if (kind == Kind::MapReply) {
    if (c.fds_in.empty()) fail(Code::Protocol, "a segment was answered without its descriptor");
    fd = c.fds_in.front();
    c.fds_in.pop_front();
  }
  // (A descriptor that came with a frame still buffered is that frame's.)
  if (!c.fds_in.empty() && c.buffered() == 0) fail(Code::Protocol, "the peer sent descriptors nobody asked for");
  deliver_answer(c, kind, h.id, std::move(payload), fd);
}

void LocalEndpoint::deliver_answer(Conn& c, Kind kind, std::uint64_t id, Bytes payload, int fd, bool landed) {
  std::lock_guard lock(c.mutex);
  if (landed) {
    auto read = c.expected_reads.find(id);
    if (read != c.expected_reads.end()) read->second.receiving = false;
  }
  auto it = c.awaited.find(id);
  if (it == c.awaited.end()) {  // its caller gave up
    if (fd >= 0) ::close(fd);
    return;
  }
  it->second.done = true;
  it->second.kind = kind;
  it->second.payload = std::move(payload);
  it->second.fd = fd;
  it->second.landed = landed;
  c.cv.notify_all();
}

// Sends a frame on an outgoing connection and waits for its answer, of
// kind `answer`; a ReadFailed answer throws the error it carries.
Conn::Awaited LocalEndpoint::round_trip(Conn& c, Kind kind, std::span<const std::byte> payload, Kind answer,
                                        Deadline deadline) {
  const std::uint64_t id = next_id_++;
  {
    std::lock_guard lock(c.mutex);
    if (c.broken) fail(Code::Unavailable, "connection to ", common::shown_address(c.address), " lost: ", c.why);
    c.awaited[id];
  }
  try {
    send_frame(c, kind, id, payload, deadline);
  } catch (...) {
    std::lock_guard lock(c.mutex);
    c.awaited.erase(id);
    throw;
  }
  Conn::Awaited a = await(c, id, deadline);
  if (a.kind == Kind::ReadFailed) {
    if (a.fd >= 0) ::close(a.fd);
    WireReader r(a.payload);
    const auto code = static_cast<Code>(r.u32());
    fail(code, r.str());
  }
  if (a.kind != answer) {
    if (a.fd >= 0) ::close(a.fd);
    fail(Code::Protocol, "a frame of kind ", int(kind), " was answered by one of kind ", int(a.kind));
  }
  return a;
}

Bytes LocalEndpoint::call(const Peer& peer, Bytes request, Deadline deadline) {
  Conn& c = conn_of(peer);
  if (!c.outgoing) fail(Code::InvalidArgument, "call on a connection this endpoint accepted");
  return std::move(round_trip(c, Kind::Request, request, Kind::Reply, deadline).payload);
}

// ---- one-sided reads ----

void LocalEndpoint::read(const Peer& peer, std::span<const std::byte> key, std::span<const RemoteOp> ops,
                         Deadline deadline) {
  Conn& c = conn_of(peer);
  const KeyHeader k = read_key_header(key);
  check_ops(k, ops);
  if (const auto w = mapped(c, k, false, deadline)) {
    for (const auto& op : ops) std::memcpy(op.local, w->data + op.offset, op.bytes);
    return;
  }
  if (!c.tcp) {
    if (k.pid != static_cast<std::uint64_t>(c.process.pid()))
      fail(Code::PermissionDenied, "a memory key names pid ", k.pid, " but this connection belongs to pid ",
           c.process.pid(), ": only the connection's own process's memory is read");
    if (c.process.read(k.address, ops)) return;
  }
  // The kernel does not let us copy: the peer sends the bytes, in pieces of
  // at most kMaxReadBytes, kReadsAhead of them asked for at once so that
  // the link never waits for the next question.
  std::vector<std::vector<RemoteOp>> pieces;
  for (std::size_t at = 0; at < ops.size();) {
    std::size_t end = at, bytes = 0;
    while (end < ops.size() && end - at < kMaxReadParts && bytes + ops[end].bytes <= kMaxReadBytes) bytes += ops[end++].bytes;
    if (end == at) {  // one op larger than a piece: cut it
      const RemoteOp& op = ops[at];
      for (std::size_t off = 0; off < op.bytes; off += kMaxReadBytes)
        pieces.push_back({{op.offset + off, static_cast<std::byte*>(op.local) + off, std::min(kMaxReadBytes, op.bytes - off)}});
      ++at;
      continue;
    }
    pieces.emplace_back(ops.begin() + static_cast<std::ptrdiff_t>(at), ops.begin() + static_cast<std::ptrdiff_t>(end));
    at = end;
  }
  std::deque<std::pair<std::uint64_t, std::size_t>> asked;  // read id, piece
  try {
    for (std::size_t i = 0; i < pieces.size() || !asked.empty();) {
      if (i < pieces.size() && asked.size() < kReadsAhead) {
        asked.emplace_back(ask_read(c, k, pieces[i], deadline), i);
        ++i;
        continue;
      }
      const auto [id, piece] = asked.front();
      asked.pop_front();
      await_read(c, id, pieces[piece], deadline);
    }
  } catch (...) {
    for (const auto& [id, piece] : asked) {
      {
        std::lock_guard lock(c.mutex);
        c.awaited.erase(id);
      }
      forget_read(c, id);
    }
    throw;
  }
}

// Asks the peer for the bytes of `ops` (one piece): the read's id.
std::uint64_t LocalEndpoint::ask_read(Conn& c, const KeyHeader& k, std::span<const RemoteOp> ops, Deadline deadline) {
  std::size_t total = 0;
  for (const auto& op : ops) total += op.bytes;
  const std::uint64_t id = next_id_++;
  {
    std::lock_guard lock(c.mutex);
    if (c.broken) fail(Code::Unavailable, "connection to ", common::shown_address(c.address), " lost: ", c.why);
    c.awaited[id];
    c.expected_reads[id] = {total, {ops.begin(), ops.end()}};
  }
  const Bytes ask = encode_read_ask(k, ops);
  try {
    if (c.outgoing)
      send_frame(c, Kind::ReadRequest, id, ask, deadline);
    else
      queue_frame(c, Kind::ReadRequest, id, ask);
  } catch (...) {
    std::lock_guard lock(c.mutex);
    c.awaited.erase(id);
    c.expected_reads.erase(id);
    throw;
  }
  return id;
}

// Waits for the answer to read `id`, which lands in `ops` (or is copied there).
void LocalEndpoint::await_read(Conn& c, std::uint64_t id, std::span<const RemoteOp> ops, Deadline deadline) {
  std::size_t total = 0;
  for (const auto& op : ops) total += op.bytes;
  Conn::Awaited a;
  try {
    a = await(c, id, deadline);
  } catch (...) {
    forget_read(c, id);
    throw;
  }
  forget_read(c, id);
  if (a.kind == Kind::ReadFailed) {
    WireReader r(a.payload);
    const auto code = static_cast<Code>(r.u32());
    fail(code, r.str());
  }
  if (a.kind == Kind::ReadReply && a.landed) return;
  if (a.kind != Kind::ReadReply || a.payload.size() != total)
    fail(Code::Protocol, "a read of ", total, " bytes was answered with ", a.payload.size());
  std::size_t at = 0;
  for (const auto& op : ops) {
    std::memcpy(op.local, a.payload.data() + at, op.bytes);
    at += op.bytes;
  }
}

// A read is over for its reader (answered, failed or given up): once no
// bytes of it are arriving into the reader's memory, which a reader that
// gives up mid-answer stops by cutting the connection.
void LocalEndpoint::forget_read(Conn& c, std::uint64_t id) {
  std::unique_lock lock(c.mutex);
  auto it = c.expected_reads.find(id);
  if (it == c.expected_reads.end()) return;
  if (it->second.receiving) {
    ::shutdown(c.fd, SHUT_RDWR);
    c.cv.wait(lock, [&] { return !it->second.receiving; });
  }
  c.expected_reads.erase(it);
}

// ---- shared-memory segments ----

void LocalEndpoint::notify(const Peer& peer, Bytes request, Deadline deadline) {
  Conn& c = conn_of(peer);
  if (!c.outgoing) fail(Code::InvalidArgument, "notice on a connection this endpoint accepted");
  {
    std::lock_guard lock(c.mutex);
    if (c.broken) fail(Code::Unavailable, "connection to ", common::shown_address(c.address), " lost: ", c.why);
  }
  send_frame(c, Kind::Notice, next_id_++, request, deadline);
}

std::optional<MappedWindow> LocalEndpoint::map(const Peer& peer, std::span<const std::byte> key, bool writable,
                                               Deadline deadline) {
  return mapped(conn_of(peer), read_key_header(key), writable, deadline);
}

namespace {

// Drops the least recently used mappings nobody is using, beyond the limits.
void evict_mappings(Conn& c) {
  for (;;) {
    std::size_t bytes = 0;
    auto oldest = c.mappings.end();
    for (auto it = c.mappings.begin(); it != c.mappings.end(); ++it) {
      bytes += it->second.mapping->size();
      if (it->second.mapping.use_count() == 1 && (oldest == c.mappings.end() || it->second.used < oldest->second.used))
        oldest = it;
    }
    if ((c.mappings.size() <= kMaxMappings && bytes <= kMaxMappedBytes) || oldest == c.mappings.end()) return;
    c.mappings.erase(oldest);
  }
}

}  // namespace

// The window `k` of a segment of the peer's, mapped here: from the
// connection's mappings, or asked for (MapRequest) and mapped once.
std::optional<MappedWindow> LocalEndpoint::mapped(Conn& c, const KeyHeader& k, bool writable, Deadline deadline) {
  if (!(k.region & RegionTable::kSegmentBit) || !c.outgoing || c.tcp) return std::nullopt;
  Conn::Mapped m;
  {
    std::lock_guard lock(c.mutex);
    auto it = c.mappings.find({k.region, writable});
    if (it != c.mappings.end()) {
      it->second.used = ++c.uses;
      m = it->second;
    }
  }
  if (!m.mapping) {
    WireWriter w(0, 0);
    w.u64(k.region).u32(writable ? 1 : 0);
    Conn::Awaited a = round_trip(c, Kind::MapRequest, std::move(w).finish(), Kind::MapReply, deadline);
    struct Closer {
      int fd;
      ~Closer() {
        if (fd >= 0) ::close(fd);
      }
    } closer{a.fd};
    read_header(a.payload);
    WireReader r(a.payload);
    m.base = r.u64();
    m.length = r.u64();
    r.expect_end();
    m.mapping = std::make_shared<Mapping>(std::exchange(closer.fd, -1), writable);
    if (m.length > m.mapping->size())
      fail(Code::Protocol, "a peer's region of ", m.length, " bytes came in a segment of ", m.mapping->size());
    std::lock_guard lock(c.mutex);
    auto [it, fresh] = c.mappings.try_emplace({k.region, writable}, m);
    if (!fresh) m = it->second;  // another thread mapped it meanwhile
    it->second.used = ++c.uses;
    evict_mappings(c);
  }
  if (k.address < m.base || k.address - m.base > m.length || k.length > m.length - (k.address - m.base))
    fail(Code::InvalidArgument, "memory key [0x", std::hex, k.address, ", +0x", k.length, std::dec,
         ") lies outside the peer's region ", k.region & ~RegionTable::kSegmentBit);
  m.mapping->populate(k.address - m.base, k.length);
  return MappedWindow{m.mapping, m.mapping->data() + (k.address - m.base), k.length, m.mapping->data(),
                      m.mapping->size()};
}

namespace {

// Exposed memory (segments mapped, bytes read through the socket) goes
// only to processes of this process's user, as the kernel names them
// (SO_PEERCRED): any local user can connect to an abstract socket, and
// before the group's secret is proven a peer gets nothing but the answer
// to its hello (docs/security.md). Segment ids and region ids are small
// counters, so a key is no secret.
void check_same_user(const PeerProcess& peer) {
  if (peer.pid() > 0 && peer.uid() == ::geteuid()) return;
  fail(Code::PermissionDenied, "memory is served only to processes of user ", ::geteuid(), "; this connection is from ",
       peer.pid() > 0 ? "user " + std::to_string(peer.uid()) : std::string("a process the kernel does not name"));
}

}  // namespace

// A peer asks for a descriptor of a segment of ours: read-only, or
// read-write for a process the region allows to write.
void LocalEndpoint::serve_map(Conn& c, std::uint64_t id, std::span<const std::byte> payload) {
  int fd = -1;
  Bytes out;
  try {
    read_header(payload);
    WireReader r(payload);
    const std::uint64_t region = r.u64();
    const bool writable = r.u32() != 0;
    r.expect_end();
    if (c.tcp) fail(Code::Unsupported, "shared-memory segments are not handed out over TCP");
    check_same_user(c.process);
    std::shared_lock lock(table_->mutex);
    auto it = table_->regions.find(region);
    if (it == table_->regions.end()) fail(Code::NotFound, "memory region ", region & ~RegionTable::kSegmentBit, " has been withdrawn");
    const RegionTable::Entry& e = it->second;
    if (!e.segment) fail(Code::InvalidArgument, "memory region ", region, " is not in a shared-memory segment");
    const std::pair requester{c.process.pid(), c.process.uid()};
    if (writable && std::find(e.writers.begin(), e.writers.end(), requester) == e.writers.end())
      fail(Code::PermissionDenied, "process ", c.process.pid(), " may not write to memory region ",
           region & ~RegionTable::kSegmentBit);
    fd = e.segment->descriptor(writable);
    if (fd < 0) fail(Code::Unavailable, "cannot hand out a segment: ", std::strerror(errno));
    WireWriter w(0, 0);
    w.u64(reinterpret_cast<std::uint64_t>(e.base)).u64(e.length);
    out = std::move(w).finish();
  } catch (const Error& e) {
    if (fd >= 0) ::close(fd);
    WireWriter w(0, 0);
    w.u32(static_cast<std::uint32_t>(e.code())).str(detail::message_of(e));
    queue_frame(c, Kind::ReadFailed, id, std::move(w).finish());
    return;
  }
  queue_frame(c, Kind::MapReply, id, std::move(out), fd);
}

void LocalEndpoint::write(const Peer& peer, std::span<const std::byte> key, std::span<const RemoteOp> ops,
                          Deadline deadline) {
  const KeyHeader k = read_key_header(key);
  check_ops(k, ops);
  const auto w = mapped(conn_of(peer), k, true, deadline);
  if (!w)
    fail(Code::Unsupported, "the local transport writes only into a peer's shared-memory segments, and ",
         common::shown_address(peer->address()), " granted other memory (does it run with COVE_SHM=0 while this process does not?)");
  for (const auto& op : ops) std::memcpy(w->data + op.offset, op.local, op.bytes);
}

// A peer asks for bytes of a region this endpoint exposed: checked against
// the table (region, token, window), and sent from the region itself, with
// no copy, only while it is exposed. On a connection this endpoint made,
// the caller sends them holding the table; on an accepted one the I/O
// thread sends them as the socket takes them (flush_locked).
void LocalEndpoint::serve_read(Conn& c, std::uint64_t id, std::span<const std::byte> payload) {
  try {
    const ReadAsk ask = decode_read_ask(payload);
    if (!c.tcp) check_same_user(c.process);
    std::size_t total = 0;
    for (const auto& [offset, bytes] : ask.parts) {
      if (offset > ask.key.length || bytes > ask.key.length - offset)
        fail(Code::InvalidArgument, "read of [", offset, ", +", bytes, ") outside its ", ask.key.length, "-byte window");
      total += bytes;
    }
    if (total > kMaxReadBytes) fail(Code::InvalidArgument, "a read of ", total, " bytes at once is too large");
    std::shared_lock lock(table_->mutex);
    auto it = table_->regions.find(ask.key.region);
    if (it == table_->regions.end() || it->second.token != ask.key.token)
      fail(Code::NotFound, "memory region ", ask.key.region & ~RegionTable::kSegmentBit,
           it == table_->regions.end() ? " has been withdrawn" : " is not what the key names");
    const auto base = reinterpret_cast<std::uint64_t>(it->second.base);
    if (ask.key.address < base || ask.key.address - base > it->second.length ||
        ask.key.length > it->second.length - (ask.key.address - base))
      fail(Code::InvalidArgument, "memory key window lies outside region ", ask.key.region);
    const auto* window = reinterpret_cast<const std::byte*>(ask.key.address);
    if (c.outgoing) {
      serve_read_direct(c, id, ask, window);
      return;
    }
    // Sent in place, by the I/O thread, while the region stays exposed.
    const FrameHeader h{static_cast<std::uint32_t>(Kind::ReadReply), static_cast<std::uint32_t>(total), id};
    Conn::Queued answer;
    const auto* hb = reinterpret_cast<const std::byte*>(&h);
    answer.bytes.assign(hb, hb + sizeof h);
    for (const auto& [offset, bytes] : ask.parts)
      if (bytes) answer.in_place.push_back({const_cast<std::byte*>(window + offset), bytes});
    answer.region = ask.key.region;
    answer.token = ask.key.token;
    lock.unlock();
    queue_in_place(c, std::move(answer));
  } catch (const Error& e) {
    WireWriter w(0, 0);
    w.u32(static_cast<std::uint32_t>(e.code())).str(detail::message_of(e));
    queue_frame(c, Kind::ReadFailed, id, std::move(w).finish());
  }
}

// Sends the parts of `ask` from `window` on a connection this endpoint
// made, with no copy; the caller holds the table, so the region stays.
// A peer that stops reading mid-frame loses the connection.
void LocalEndpoint::serve_read_direct(Conn& c, std::uint64_t id, const ReadAsk& ask, const std::byte* window) {
  std::size_t total = 0;
  for (const auto& part : ask.parts) total += part.second;
  const FrameHeader h{static_cast<std::uint32_t>(Kind::ReadReply), static_cast<std::uint32_t>(total), id};
  std::vector<iovec> iov;
  iov.reserve(ask.parts.size() + 1);
  iov.push_back({const_cast<FrameHeader*>(&h), sizeof h});
  for (const auto& [offset, bytes] : ask.parts)
    if (bytes) iov.push_back({const_cast<std::byte*>(window + offset), bytes});
  std::lock_guard lock(c.send_mutex);
  std::size_t first = 0;
  while (first < iov.size()) {
    msghdr m{};
    m.msg_iov = iov.data() + first;
    m.msg_iovlen = std::min<std::size_t>(iov.size() - first, IOV_MAX);
    ssize_t n = ::sendmsg(c.fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{c.fd, POLLOUT, 0};
      if (::poll(&p, 1, static_cast<int>(std::chrono::milliseconds(kFrameRest).count())) > 0) continue;
      n = -1;
    }
    if (n < 0) {
      c.fail_all("a peer stopped reading");
      ::shutdown(c.fd, SHUT_RDWR);
      return;
    }
    auto sent = static_cast<std::size_t>(n);
    while (sent > 0 && sent >= iov[first].iov_len) sent -= iov[first++].iov_len;
    if (sent > 0) {
      iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + sent;
      iov[first].iov_len -= sent;
    }
  }
}

// Queues a read's answer sent in place on an accepted connection, and
// sends what the socket takes now (the I/O thread sends the rest).
void LocalEndpoint::queue_in_place(Conn& c, Conn::Queued answer) {
  std::lock_guard lock(c.send_mutex);
  c.queued_bytes += answer.bytes.size();
  c.queued.push_back(std::move(answer));
  flush_locked(c);
  if (c.queued.empty()) return;
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLOUT;
  ev.data.ptr = &c;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev);
}

// ---- the I/O thread: accepted connections ----

void LocalEndpoint::run_io() {
  epoll_event events[64];
  std::optional<BusyPoll> spin;  // after serving, a short poll before sleeping
  for (;;) {
    const bool polling = spin && spin->poll();
    const auto asleep = Clock::now();
    const int n = ::epoll_wait(epoll_fd_, events, 64, polling ? 0 : -1);
    if (n < 0 && errno == EINTR) continue;
    if (n > 0 && !polling && spin) BusyPoll::slept(Clock::now() - asleep);  // woken after a window
    if (n <= 0 && !polling) spin.reset();
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
    }
    for (int i = 0; i < n; ++i) {
      void* tag = events[i].data.ptr;
      if (tag == nullptr) {
        accept_all(listen_fd_, false);
      } else if (tag == &tcp_fd_) {
        accept_all(tcp_fd_, true);
      } else if (tag == &wake_fd_) {
        std::uint64_t v;
        [[maybe_unused]] auto r = ::read(wake_fd_, &v, sizeof v);
      } else {
        auto* c = static_cast<Conn*>(tag);
        std::shared_ptr<Conn> conn;
        {
          std::lock_guard lock(mutex_);
          auto it = accepted_.find(c);
          if (it == accepted_.end()) continue;
          conn = it->second;
        }
        if (events[i].events & EPOLLOUT) flush_queued(*conn);
        if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) receive(conn);
      }
    }
    // The window starts once the requests are served: one served inline
    // may take longer than a window, and its caller's next request comes
    // a few microseconds after the answer.
    if (n > 0) spin.emplace();
  }
}

// Out of descriptors, a pending connection would keep the listening socket
// readable and this thread spinning: the reserve descriptor is given up to
// accept it, and it is closed at once.
void LocalEndpoint::accept_all(int listen_fd, bool tcp) {
  for (;;) {
    sockaddr_storage from{};
    socklen_t from_len = sizeof from;
    const int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&from), &from_len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      const int e = errno;
      if ((e == EMFILE || e == ENFILE) && reserve_fd_ >= 0) {
        ::close(reserve_fd_);
        const int shed = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&from), &from_len, SOCK_CLOEXEC);
        if (shed >= 0) {
          const std::string who = tcp ? host_of(from) : "pid " + std::to_string(PeerProcess::of_socket(shed).pid());
          ::close(shed);
          note_drop(who, "out of descriptors");
        }
        reserve_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (shed >= 0) continue;
      }
      note_drop("accept", std::string("accepting a connection failed: ") + std::strerror(e));
      return;
    }
    auto conn = std::make_shared<Conn>(fd, false, std::string(), tcp);
    if (tcp) {
      conn->from = host_of(from);
      tune_tcp(fd);
    } else {
      conn->process = PeerProcess::of_socket(fd);
      conn->from = "pid " + std::to_string(conn->process.pid());
    }
    const std::size_t most = tcp ? max_per_host_ : max_per_process_;
    const std::string who = conn->from;
    {
      std::lock_guard lock(mutex_);
      if (++per_peer_[who] > most) {
        if (--per_peer_[who] == 0) per_peer_.erase(who);
        conn.reset();  // closes fd
      }
    }
    if (!conn) {
      note_drop(who, "more than " + std::to_string(most) + " connections from one " + (tcp ? "host" : "process"));
      continue;
    }
    auto peer = std::make_shared<LocalPeer>(conn);
    conn->peer = peer;
    {
      std::lock_guard lock(mutex_);
      accepted_[conn.get()] = conn;
      peers_[conn.get()] = peer;
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.ptr = conn.get();
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
  }
}

std::size_t LocalEndpoint::max_connections_per_process() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return 1024;
  return std::clamp<std::size_t>(static_cast<std::size_t>(r.rlim_cur / 8), 16, 1024);
}

std::size_t LocalEndpoint::max_connections_per_host() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return 65536;
  return std::clamp<std::size_t>(static_cast<std::size_t>(r.rlim_cur / 2), 16, 65536);
}

void LocalEndpoint::note_drop(const std::string& peer, const std::string& why) {
  std::size_t suppressed = 0;
  if (!drops_.admit(peer, suppressed)) return;
  if (suppressed)
    log::warn("{}: dropped a connection from {}: {} ({} more dropped in the last second, not logged)", address(), peer,
              why, suppressed);
  else
    log::warn("{}: dropped a connection from {}: {}", address(), peer, why);
}

namespace {

// Receives the rest of a read's answer into its reader's destination
// (c.in_into): true once all of it is there, false when the socket is
// empty for now. Throws Unavailable when the connection fails.
bool receive_into(Conn& c) {
  while (c.in_into_at < c.in_into.size()) {
    const RemoteOp& op = c.in_into[c.in_into_at];
    if (c.in_into_got == op.bytes) {
      ++c.in_into_at;
      c.in_into_got = 0;
      continue;
    }
    auto* to = static_cast<std::byte*>(op.local) + c.in_into_got;
    std::size_t got = c.take_buffered(to, op.bytes - c.in_into_got);
    if (got == 0) {
      const ssize_t r = ::recv(c.fd, to, op.bytes - c.in_into_got, MSG_DONTWAIT);
      if (r == 0) fail(Code::Unavailable, "closed");
      if (r < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return false;
        fail(Code::Unavailable, std::strerror(errno));
      }
      got = static_cast<std::size_t>(r);
      c.in_drained = false;
    }
    c.in_into_got += got;
  }
  return true;
}

}  // namespace

// Reads what arrived on an accepted connection and handles each whole frame.
void LocalEndpoint::receive(const std::shared_ptr<Conn>& conn) {
  Conn& c = *conn;
  try {
    for (;;) {
      if (!c.in_have_header) {
        if (c.buffered() < sizeof c.in_header) {
          // The socket was empty a moment ago: epoll says when more comes.
          if (c.in_drained && c.buffered() == 0) {
            c.in_drained = false;
            return;
          }
          if (c.in_begin > 0) {  // keep a partial header at the front
            std::memmove(c.in_buf.data(), c.in_buf.data() + c.in_begin, c.buffered());
            c.in_end -= c.in_begin;
            c.in_begin = 0;
          }
          const std::size_t room = c.in_buf.size() - c.in_end;
          const ssize_t r = ::recv(c.fd, c.in_buf.data() + c.in_end, room, MSG_DONTWAIT);
          if (r == 0) fail(Code::Unavailable, "closed");
          if (r < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
            fail(Code::Unavailable, std::strerror(errno));
          }
          c.in_end += static_cast<std::size_t>(r);
          c.in_drained = static_cast<std::size_t>(r) < room;
          continue;
        }
        c.take_buffered(&c.in_header, sizeof c.in_header);
        const auto kind = static_cast<Kind>(c.in_header.kind);
        // The size is checked before anything is allocated for it.
        std::size_t limit = 0;
        switch (kind) {
          case Kind::Request:
          case Kind::Notice: limit = max_request_bytes_; break;
          case Kind::ReadRequest: limit = 64 << 10; break;
          case Kind::MapRequest: limit = kMapRequestBytes; break;
          case Kind::ReadReply: {
            std::lock_guard lock(c.mutex);
            auto it = c.expected_reads.find(c.in_header.id);
            limit = it == c.expected_reads.end() ? 0 : it->second.bytes;
            if (limit > 0 && c.in_header.length == limit) {  // received where its reader wants it
              it->second.receiving = true;
              c.in_direct = true;
              c.in_into = it->second.into;
              c.in_into_at = c.in_into_got = 0;
            }
            break;
          }
          case Kind::ReadFailed: limit = kMaxStringBytes + 64; break;
          default: fail(Code::Protocol, "a frame of unknown kind ", c.in_header.kind);
        }
        if (c.in_header.length > limit)
          fail(Code::Protocol, "a frame announces ", c.in_header.length, " bytes; at most ", limit, " are accepted");
        c.in_have_header = true;
        if (!c.in_direct) {
          c.in_payload.resize(c.in_header.length);
          c.in_payload_got = c.take_buffered(c.in_payload.data(), c.in_payload.size());
        }
      }
      if (c.in_direct) {
        if (!receive_into(c)) return;
        c.in_direct = false;
        c.in_have_header = false;
        c.in_into.clear();
        deliver_answer(c, Kind::ReadReply, c.in_header.id, {}, -1, true);
        continue;
      }
      if (c.in_payload_got < c.in_payload.size()) {  // the rest of a large payload
        const ssize_t r = ::recv(c.fd, c.in_payload.data() + c.in_payload_got, c.in_payload.size() - c.in_payload_got,
                                 MSG_DONTWAIT);
        if (r == 0) fail(Code::Unavailable, "closed");
        if (r < 0) {
          if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
          fail(Code::Unavailable, std::strerror(errno));
        }
        c.in_payload_got += static_cast<std::size_t>(r);
        c.in_drained = false;
        if (c.in_payload_got < c.in_payload.size()) continue;
      }
      // A whole frame.
      const FrameHeader h = c.in_header;
      Bytes payload = std::move(c.in_payload);
      c.in_have_header = false;
      c.in_payload.clear();
      c.in_payload_got = 0;
      handle_frame(conn, h, std::move(payload));
    }
  } catch (const Error& e) {
    if (c.in_direct) {  // the reader may go now
      c.in_direct = false;
      end_receiving(c, c.in_header.id);
    }
    close_accepted(conn, detail::message_of(e), e.code() != Code::Unavailable);
  }
}

void LocalEndpoint::handle_frame(const std::shared_ptr<Conn>& conn, const FrameHeader& h, Bytes payload) {
  switch (static_cast<Kind>(h.kind)) {
    case Kind::Request:
    case Kind::Notice: {
      RequestHandler handler;
      Peer peer;
      {
        std::lock_guard lock(mutex_);
        handler = handler_;
        auto it = peers_.find(conn.get());
        if (it != peers_.end()) peer = it->second;
      }
      if (!peer) return;
      const bool answered = static_cast<Kind>(h.kind) == Kind::Request;
      auto request = std::make_shared<LocalRequest>(this, conn, peer, h.id, std::move(payload), answered);
      if (!handler) {
        request->reply(error_reply(0, 0, Code::Unsupported, "this endpoint serves no requests"));
        return;
      }
      handler(std::move(request));
      return;
    }
    case Kind::ReadRequest:
      serve_read(*conn, h.id, payload);
      return;
    case Kind::MapRequest:
      serve_map(*conn, h.id, payload);
      return;
    case Kind::ReadReply:
    case Kind::ReadFailed:
      deliver_answer(*conn, static_cast<Kind>(h.kind), h.id, std::move(payload));
      return;
    default:
      fail(Code::Protocol, "unexpected frame kind ", h.kind);
  }
}

void LocalEndpoint::close_accepted(const std::shared_ptr<Conn>& conn, const std::string& why, bool dropped) {
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, conn->fd, nullptr);
  ::shutdown(conn->fd, SHUT_RDWR);
  conn->fail_all(why);
  Peer peer;
  DisconnectHandler notify;
  {
    std::lock_guard lock(mutex_);
    if (accepted_.erase(conn.get())) {
      auto n = per_peer_.find(conn->from);
      if (n != per_peer_.end() && --n->second == 0) per_peer_.erase(n);
    }
    auto it = peers_.find(conn.get());
    if (it != peers_.end()) {
      peer = it->second;
      peers_.erase(it);
    }
    notify = on_disconnect_;
  }
  if (dropped)
    note_drop(conn->from, why);
  else if (why != "closed")
    log::debug("{}: a connection closed: {}", address(), why);
  if (notify && peer) notify(peer);
}

}  // namespace

std::unique_ptr<Endpoint> make_local_endpoint(std::size_t max_request_bytes) {
  return std::make_unique<LocalEndpoint>(max_request_bytes);
}

void listen_tcp(Endpoint& local, const std::string& where) {
  auto* e = dynamic_cast<LocalEndpoint*>(&local);
  if (!e) fail(Code::InvalidArgument, "only the local transport's endpoint listens on TCP");
  e->listen_tcp(where);
}

bool listens_tcp(const Endpoint& local) {
  const auto* e = dynamic_cast<const LocalEndpoint*>(&local);
  return e && e->listens_tcp();
}

}  // namespace cove::net
