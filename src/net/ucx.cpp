// The UCX transport, for peers on other hosts (and, when forced, on this
// one). One progress thread owns the UCP worker (single-thread mode); it
// sleeps on the worker's event descriptor and an eventfd for commands, so
// an idle endpoint takes no CPU. Other threads hand it commands and wait
// for their results.
//
// Connections use UCX's client-server model: every endpoint listens on a
// socket address (loopback unless told otherwise) and peers connect to
// "ucx:IP:PORT". No bytes a peer sends ever reach ucp_ep_create: the
// accepting side makes its endpoint from UCX's own connection request.
// UCX's TCP transport listens on every device it uses besides: the devices
// are set from the listen address (NET_DEVICES), never taken from the
// environment, so every port is where Cove listens. UCX's TCP code aborts
// the process on some malformed input from anyone who reaches those ports
// (docs/transport.md, "What reaches UCX").
// Endpoints use network transports only (UCX_TLS without its shared-memory
// ones): a memory key from a peer can then only name that peer's memory,
// never this process's or a third one's; same-host bulk data goes through
// the local transport instead.
//
// Requests and replies are active messages (ids kAmRequest / kAmReply,
// matched by a call id in the AM header; large ones arrive by rendezvous,
// refused above the endpoint's maximum before anything is allocated); bulk
// data moves by one-sided get against ucp_mem_map'ed regions, whose key is
// a KeyHeader followed by the packed rkey.
//
// Trust: UCX itself trusts the peers it is connected to (its own RMA and
// rendezvous packets carry addresses it does not check). Connect UCX only
// across a network of hosts you trust; docs/transport.md says more.
#include "net/transport.hpp"
#include "common/printable.hpp"

#include "common/log.hpp"
#include "core/fail.hpp"
#include "net/drop_log.hpp"
#include "net/inet.hpp"
#include "net/memory_key.hpp"
#include "net/protocol.hpp"

#include <ucp/api/ucp.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <future>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

namespace cove::net {

using detail::fail;

namespace {

constexpr const char* kScheme = "ucx:";
constexpr unsigned kAmRequest = 1;
constexpr unsigned kAmReply = 2;

bool unreachable(ucs_status_t s) {
  return s == UCS_ERR_UNREACHABLE || s == UCS_ERR_CONNECTION_RESET || s == UCS_ERR_ENDPOINT_TIMEOUT ||
         s == UCS_ERR_REJECTED || s == UCS_ERR_NOT_CONNECTED || s == UCS_ERR_CANCELED;
}

[[noreturn]] void fail_ucs(const char* what, ucs_status_t s) {
  fail(unreachable(s) ? Code::Unavailable : Code::Internal, what, ": ", ucs_status_string(s));
}

// "ucx:IP:PORT" -> its socket address. Everything is checked here, before
// any of it reaches UCX.
sockaddr_storage parse_address(const std::string& address) { return parse_inet_address(address, kScheme, "UCX"); }

// UCX_TLS without the shared-memory transports (see the header comment).
// "" when the user set nothing: then the default list, minus those.
std::string network_transports() {
  const char* env = std::getenv("UCX_TLS");
  if (!env || !*env) return "^sm";  // the alias covers posix, sysv, cma, knem and xpmem (naming those absent here makes UCX warn)
  static const char* shared[] = {"sm", "shm", "posix", "sysv", "cma", "knem", "xpmem"};
  std::stringstream in(env);
  std::string token, kept;
  while (std::getline(in, token, ',')) {
    bool drop = false;
    for (const char* s : shared) drop |= token == s;
    if (!drop && !token.empty()) kept += (kept.empty() ? "" : ",") + token;
  }
  if (kept.empty())
    fail(Code::InvalidArgument, "UCX_TLS = '", env,
         "' names only shared-memory transports; the UCX transport needs a network one (tcp, rc, ud, dc...). "
         "Processes on one host use the local transport.");
  return kept;
}

// UCX_NET_DEVICES for an endpoint listening on `where`: the interface that
// holds that address, so that UCX's own TCP listeners (one per interface
// it uses, besides the connection listener) open there and nowhere else,
// plus every RDMA port (they open no IP listener). Set from Cove's `listen`,
// over anything the user's environment says.
std::string net_devices(const sockaddr_storage& where) {
  std::string device;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) == 0) {
    for (ifaddrs* i = list; i && device.empty(); i = i->ifa_next) {
      if (!i->ifa_addr || i->ifa_addr->sa_family != where.ss_family) continue;
      if (where.ss_family == AF_INET) {
        if (reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr ==
            reinterpret_cast<const sockaddr_in*>(&where)->sin_addr.s_addr)
          device = i->ifa_name;
      } else if (std::memcmp(&reinterpret_cast<const sockaddr_in6*>(i->ifa_addr)->sin6_addr,
                             &reinterpret_cast<const sockaddr_in6*>(&where)->sin6_addr, sizeof(in6_addr)) == 0) {
        device = i->ifa_name;
      }
    }
    ::freeifaddrs(list);
  }
  if (device.empty())
    fail(Code::InvalidArgument, "no network interface of this host holds the listen address ", to_string(where));
  std::error_code ec;
  for (const auto& dev : std::filesystem::directory_iterator("/sys/class/infiniband", ec)) {
    std::error_code ports_ec;
    for (const auto& port : std::filesystem::directory_iterator(dev.path() / "ports", ports_ec))
      device += "," + dev.path().filename().string() + ":" + port.path().filename().string();
  }
  return device;
}

class UcxEndpoint;

struct UcxPeer final : PeerHandle {
  ucp_ep_h ep = nullptr;
  std::string addr;
  std::string from_ip;  // accepted connections: the IP the peer connected from
  bool incoming = false;
  std::atomic<bool> failed{false};
  std::map<std::string, ucp_rkey_h> rkeys;  // progress thread only
  std::string address() const override { return addr; }
  const char* transport() const override { return "ucx"; }
  bool broken() const override { return failed; }
  bool may_claim(const std::string& claimed) const override {
    if (claimed.empty()) return true;
    if (!incoming) return claimed == addr;
    return claims_host(claimed, kScheme, from_ip);
  }
  ~UcxPeer() override {
    for (auto& [k, r] : rkeys) ucp_rkey_destroy(r);
  }
};

class UcxRegion final : public MemoryRegion {
 public:
  UcxRegion(UcxEndpoint* ep, ucp_mem_h memh, Bytes key, std::size_t n) : ep_(ep), memh_(memh), key_(std::move(key)), size_(n) {}
  ~UcxRegion() override;
  std::span<const std::byte> key() const override { return key_; }
  std::size_t size() const override { return size_; }
  // The same rkey (it covers the whole region) under a header for the window.
  Bytes window_key(std::size_t offset, std::size_t length) const override {
    if (offset > size_ || length > size_ - offset)
      fail(Code::InvalidArgument, "window [", offset, ", +", length, ") is outside the ", size_, "-byte region");
    KeyHeader kh = read_key_header(key_);
    kh.address += offset;
    kh.length = length;
    Bytes k = key_;
    std::memcpy(k.data(), &kh, sizeof kh);
    return k;
  }

 private:
  UcxEndpoint* ep_;
  ucp_mem_h memh_;
  Bytes key_;
  std::size_t size_;
};

// Completion of a batch of one-sided operations.
struct Batch {
  int outstanding = 0;
  ucs_status_t status = UCS_OK;
  std::promise<void> done;
  void finish_one(ucs_status_t s) {
    if (s != UCS_OK && status == UCS_OK) status = s;
    if (--outstanding > 0) return;
    if (status == UCS_OK)
      done.set_value();
    else
      done.set_exception(std::make_exception_ptr(Error(unreachable(status) ? Code::Unavailable : Code::Internal,
                                                       std::string("remote memory access failed: ") +
                                                           ucs_status_string(status))));
  }
};

class UcxEndpoint final : public Endpoint {
 public:
  // Everything UCX happens on the progress thread, creation and teardown included.
  UcxEndpoint(const std::string& listen, std::size_t max_request_bytes) : max_request_(max_request_bytes) {
    std::promise<void> ready;
    auto started = ready.get_future();
    progress_ = std::thread([this, &ready, listen] {
      progress_id_ = std::this_thread::get_id();
      try {
        init(listen);
      } catch (...) {
        ready.set_exception(std::current_exception());
        return;
      }
      ready.set_value();
      progress_loop();
      teardown();
    });
    try {
      started.get();
    } catch (...) {
      progress_.join();
      throw;
    }
  }

  ~UcxEndpoint() override {
    post([this] { stopping_ = true; });
    progress_.join();
    fail_pending_all("the endpoint is closing");
    if (epoll_fd_ >= 0) ::close(epoll_fd_);
    if (wake_fd_ >= 0) ::close(wake_fd_);
  }

  std::string address() const override { return address_; }

  void serve(RequestHandler handler, DisconnectHandler on_disconnect) override {
    run([&] {
      if (handler_) fail(Code::InvalidArgument, "endpoint ", address_, " is already serving");
      handler_ = std::move(handler);
      on_disconnect_ = std::move(on_disconnect);
    });
  }

  // Never blocks: UCX completes the connection in the background, and the
  // first call's deadline bounds the wait for it (hence no deadline here).
  Peer connect(const std::string& address, Deadline) override {
    const sockaddr_storage a = parse_address(address);
    return run([&]() -> Peer {
      ucp_ep_params_t ep{};
      ep.field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR | UCP_EP_PARAM_FIELD_ERR_HANDLER |
                      UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
      ep.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
      ep.sockaddr.addr = reinterpret_cast<const sockaddr*>(&a);
      ep.sockaddr.addrlen = a.ss_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
      ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
      ep.err_handler.cb = &UcxEndpoint::on_ep_error;
      ep.err_handler.arg = this;
      ucp_ep_h h = nullptr;
      const ucs_status_t s = ucp_ep_create(worker_, &ep, &h);
      if (s != UCS_OK) fail_ucs("connecting to a UCX listener", s);
      auto peer = std::make_shared<UcxPeer>();
      peer->ep = h;
      peer->addr = address;
      peers_[h] = peer;
      return peer;
    });
  }

  // Replies are matched by a call id carried in the active-message header
  // and echoed back, never by parsing the message: even a garbage request
  // gets its (error) answer to the right caller.
  Bytes call(const Peer& peer, Bytes request, Deadline deadline) override {
    auto* p = as_ucx(peer);
    if (p->failed) fail(Code::Unavailable, "peer ", p->address(), " has failed");
    const std::uint64_t id = next_call_++;
    std::future<Bytes> answer;
    {
      std::lock_guard lock(pending_mutex_);
      auto& slot = pending_[id];
      slot.ep = p->ep;
      answer = slot.promise.get_future();
    }
    auto shared = std::make_shared<Bytes>(std::move(request));
    post([this, ep = p->ep, shared, id, peer] {
      if (!as_ucx(peer)->failed) send_am(ep, kAmRequest, shared, true, id);
    });
    if (deadline != kNoDeadline && answer.wait_until(deadline) != std::future_status::ready) {
      std::lock_guard lock(pending_mutex_);
      pending_.erase(id);
      fail(Code::Timeout, "no answer from ", common::shown_address(p->address()), " before the deadline");
    }
    return answer.get();
  }

  std::unique_ptr<MemoryRegion> expose(void* data, std::size_t bytes) override {
    return run([&]() -> std::unique_ptr<MemoryRegion> {
      const KeyHeader kh{reinterpret_cast<std::uint64_t>(data), bytes, 0, static_cast<std::uint64_t>(::getpid())};
      if (bytes == 0) return std::make_unique<UcxRegion>(this, nullptr, make_key(kh), 0);
      ucp_mem_map_params_t mp{};
      mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
      mp.address = data;
      mp.length = bytes;
      ucp_mem_h memh = nullptr;
      ucs_status_t s = ucp_mem_map(context_, &mp, &memh);
      if (s != UCS_OK) fail_ucs("registering memory with UCX", s);
      void* rkey = nullptr;
      std::size_t rkey_size = 0;
      s = ucp_rkey_pack(context_, memh, &rkey, &rkey_size);
      if (s != UCS_OK) {
        ucp_mem_unmap(context_, memh);
        fail_ucs("packing a UCX memory key", s);
      }
      Bytes key = make_key(kh, {static_cast<const std::byte*>(rkey), rkey_size});
      ucp_rkey_buffer_release(rkey);
      return std::make_unique<UcxRegion>(this, memh, std::move(key), bytes);
    });
  }

  // Reads from memory the peer exposed. Only from peers this endpoint
  // connected to: a server never acts on a key one of its clients sent
  // (they write their puts into granted space instead).
  void read(const Peer& peer, std::span<const std::byte> key, std::span<const RemoteOp> ops,
            Deadline deadline) override {
    if (as_ucx(peer)->incoming)
      fail(Code::PermissionDenied, "over UCX, memory is read only from peers this endpoint connected to");
    rma(peer, key, ops, deadline, false);
  }
  void write(const Peer& peer, std::span<const std::byte> key, std::span<const RemoteOp> ops,
             Deadline deadline) override {
    if (as_ucx(peer)->incoming)
      fail(Code::PermissionDenied, "over UCX, memory is written only to peers this endpoint connected to");
    rma(peer, key, ops, deadline, true);
  }

  void rma(const Peer& peer, std::span<const std::byte> key, std::span<const RemoteOp> ops, Deadline deadline,
           bool write) {
    auto* p = as_ucx(peer);
    const KeyHeader kh = read_key_header(key);
    check_ops(kh, ops);
    if (key.size() == sizeof kh) fail(Code::InvalidArgument, "memory key has no UCX part: the region is not exposed over UCX");
    auto batch = std::make_shared<Batch>();
    auto done = batch->done.get_future();
    run([&] {
      if (p->failed) fail(Code::Unavailable, "peer ", p->address(), " has failed");
      const std::string k(reinterpret_cast<const char*>(key.data()), key.size());
      auto it = p->rkeys.find(k);
      if (it == p->rkeys.end()) {
        if (p->rkeys.size() >= 4096) {  // keys of long-gone regions: start afresh
          for (auto& [old, r] : p->rkeys) ucp_rkey_destroy(r);
          p->rkeys.clear();
        }
        ucp_rkey_h rkey = nullptr;
        const ucs_status_t s = ucp_ep_rkey_unpack(p->ep, key.data() + sizeof kh, &rkey);
        if (s != UCS_OK) fail_ucs("unpacking a UCX memory key", s);
        it = p->rkeys.emplace(k, rkey).first;
      }
      batch->outstanding = 1;  // held until every operation has been posted
      for (const auto& op : ops) {
        if (op.bytes == 0) continue;
        ucp_request_param_t param{};
        param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
        param.cb.send = &UcxEndpoint::on_batch_op;
        param.user_data = new std::shared_ptr<Batch>(batch);
        ++batch->outstanding;
        const std::uint64_t remote = kh.address + op.offset;
        ucs_status_ptr_t r = write ? ucp_put_nbx(p->ep, op.local, op.bytes, remote, it->second, &param)
                                   : ucp_get_nbx(p->ep, op.local, op.bytes, remote, it->second, &param);
        complete_now_if_done(r, param.user_data);
      }
      if (write) {
        // A put completes locally; the flush completes when every put is in
        // place at the peer, before anything sent after it.
        ucp_request_param_t param{};
        param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
        param.cb.send = &UcxEndpoint::on_batch_op;
        param.user_data = new std::shared_ptr<Batch>(batch);
        ++batch->outstanding;
        complete_now_if_done(ucp_ep_flush_nbx(p->ep, &param), param.user_data);
      }
      batch->finish_one(UCS_OK);
    });
    if (deadline != kNoDeadline && done.wait_until(deadline) != std::future_status::ready) {
      // The operations still target `ops`' memory: they must end before we
      // return. Failing the peer cancels them.
      run([&] { drop_peer(p->ep, "a read passed its deadline"); });
      done.wait();
      fail(Code::Timeout, "a one-sided ", write ? "write to " : "read from ", common::shown_address(p->address()),
           " did not finish before the deadline");
    }
    done.get();
  }

  void unmap(ucp_mem_h memh) {
    if (memh) run([&] { ucp_mem_unmap(context_, memh); });
  }

 private:
  struct Pending {
    std::promise<Bytes> promise;
    ucp_ep_h ep = nullptr;
  };

  // Runs f on the progress thread and returns its result (or rethrows).
  template <typename F>
  auto run(F&& f) -> decltype(f()) {
    if (std::this_thread::get_id() == progress_id_) return f();
    std::packaged_task<decltype(f())()> task(std::forward<F>(f));
    auto result = task.get_future();
    {
      std::lock_guard lock(command_mutex_);
      if (closed_) fail(Code::Unavailable, "the UCX endpoint ", address_, " is closed");
    }
    post([&task] { task(); });
    return result.get();
  }

  // Queues f for the progress thread and returns at once.
  void post(std::function<void()> f) {
    {
      std::lock_guard lock(command_mutex_);
      if (closed_) return;
      commands_.push_back(std::move(f));
    }
    const std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
  }

  void init(const std::string& listen) {
    ucp_config_t* config = nullptr;
    ucs_status_t s = ucp_config_read(nullptr, nullptr, &config);
    if (s != UCS_OK) fail_ucs("reading the UCX configuration", s);
    const std::string tls = network_transports();
    s = ucp_config_modify(config, "TLS", tls.c_str());
    if (s != UCS_OK) {
      ucp_config_release(config);
      fail(Code::InvalidArgument, "UCX does not take TLS = '", tls, "': ", ucs_status_string(s));
    }
    const sockaddr_storage where = listen_address(listen);
    const std::string devices = net_devices(where);
    s = ucp_config_modify(config, "NET_DEVICES", devices.c_str());
    if (s != UCS_OK) {
      ucp_config_release(config);
      fail(Code::InvalidArgument, "UCX does not take NET_DEVICES = '", devices, "': ", ucs_status_string(s));
    }
    ucp_params_t params{};
    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features = UCP_FEATURE_AM | UCP_FEATURE_RMA | UCP_FEATURE_WAKEUP;
    s = ucp_init(&params, config, &context_);
    ucp_config_release(config);
    if (s != UCS_OK) fail_ucs("initialising UCX", s);
    ucp_worker_params_t wp{};
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wp.thread_mode = UCS_THREAD_MODE_SINGLE;
    if ((s = ucp_worker_create(context_, &wp, &worker_)) != UCS_OK) {
      destroy_worker();
      fail_ucs("creating a UCX worker", s);
    }
    const std::pair<unsigned, ucp_am_recv_callback_t> handlers[] = {{kAmRequest, &UcxEndpoint::on_request},
                                                                     {kAmReply, &UcxEndpoint::on_reply}};
    for (const auto& [id, cb] : handlers) {
      ucp_am_handler_param_t hp{};
      hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
      hp.id = id;
      hp.cb = cb;
      hp.arg = this;
      ucp_worker_set_am_recv_handler(worker_, &hp);
    }
    int efd = -1;
    if ((s = ucp_worker_get_efd(worker_, &efd)) != UCS_OK) {
      destroy_worker();
      fail_ucs("getting the UCX worker's event descriptor", s);
    }
    epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
    wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = efd;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, efd, &ev);
    ev.data.fd = wake_fd_;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);

    ucp_listener_params_t lp{};
    lp.field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR | UCP_LISTENER_PARAM_FIELD_CONN_HANDLER;
    lp.sockaddr.addr = reinterpret_cast<const sockaddr*>(&where);
    lp.sockaddr.addrlen = where.ss_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    lp.conn_handler.cb = &UcxEndpoint::on_connection;
    lp.conn_handler.arg = this;
    if ((s = ucp_listener_create(worker_, &lp, &listener_)) != UCS_OK) {
      destroy_worker();
      fail_ucs("listening with UCX", s);
    }
    ucp_listener_attr_t attr{};
    attr.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR;
    if ((s = ucp_listener_query(listener_, &attr)) != UCS_OK) {
      destroy_worker();
      fail_ucs("asking UCX where it listens", s);
    }
    address_ = kScheme + to_string(attr.sockaddr);
  }

  void teardown() {
    if (listener_) ucp_listener_destroy(listener_);
    listener_ = nullptr;
    for (auto& [ep, peer] : peers_) {
      peer->failed = true;
      for (auto& [k, r] : peer->rkeys) ucp_rkey_destroy(r);  // peers may outlive the worker
      peer->rkeys.clear();
      close_ep(ep);
    }
    peers_.clear();
    for (int i = 0; i < 100 && ucp_worker_progress(worker_) != 0; ++i) {
    }
    // Commands posted after the stop (replies to late requests) are dropped.
    {
      std::lock_guard lock(command_mutex_);
      commands_.clear();
      closed_ = true;
    }
    destroy_worker();
  }

  // Progresses until there is nothing to do, then sleeps on the worker's
  // event descriptor and the command eventfd.
  void progress_loop() {
    while (!stopping_) {
      while (ucp_worker_progress(worker_) != 0) {
      }
      std::deque<std::function<void()>> todo;
      {
        std::lock_guard lock(command_mutex_);
        todo.swap(commands_);
      }
      if (!todo.empty()) {
        for (auto& c : todo) c();
        continue;
      }
      const ucs_status_t s = ucp_worker_arm(worker_);
      if (s == UCS_ERR_BUSY) continue;  // events arrived meanwhile
      epoll_event events[4];
      const int n = ::epoll_wait(epoll_fd_, events, 4, -1);
      for (int i = 0; i < n; ++i)
        if (events[i].data.fd == wake_fd_) {
          std::uint64_t v;
          [[maybe_unused]] auto r = ::read(wake_fd_, &v, sizeof v);
        }
    }
  }

  // A peer connects: our endpoint comes from UCX's connection request.
  static void on_connection(ucp_conn_request_h request, void* arg) {
    auto* self = static_cast<UcxEndpoint*>(arg);
    std::string from = "a UCX peer", from_ip;
    ucp_conn_request_attr_t attr{};
    attr.field_mask = UCP_CONN_REQUEST_ATTR_FIELD_CLIENT_ADDR;
    if (ucp_conn_request_query(request, &attr) == UCS_OK) {
      from = to_string(attr.client_address);
      from_ip = from.substr(0, from.rfind(':'));
    }
    ucp_ep_params_t ep{};
    ep.field_mask = UCP_EP_PARAM_FIELD_CONN_REQUEST | UCP_EP_PARAM_FIELD_ERR_HANDLER | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
    ep.conn_request = request;
    ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    ep.err_handler.cb = &UcxEndpoint::on_ep_error;
    ep.err_handler.arg = self;
    ucp_ep_h h = nullptr;
    const ucs_status_t s = ucp_ep_create(self->worker_, &ep, &h);
    if (s != UCS_OK) {
      std::size_t suppressed = 0;
      if (self->drops_.admit(from_ip, suppressed))
        log::warn("{}: refusing a connection from {}: {} ({} more refused in the last second, not logged)",
                  self->address_, from, ucs_status_string(s), suppressed);
      return;
    }
    auto peer = std::make_shared<UcxPeer>();
    peer->ep = h;
    peer->addr = "";  // a connection we accepted: the peer says who it is in its hello
    peer->incoming = true;
    peer->from_ip = from_ip;
    self->peers_[h] = peer;
    log::debug("{}: connection from {}", self->address_, from);
  }

  static void complete_now_if_done(ucs_status_ptr_t r, void* user_data) {
    if (UCS_PTR_IS_PTR(r)) return;  // the callback will complete it
    auto* b = static_cast<std::shared_ptr<Batch>*>(user_data);
    (*b)->finish_one(UCS_PTR_STATUS(r));
    delete b;
  }

  static void on_batch_op(void* request, ucs_status_t status, void* user_data) {
    auto* b = static_cast<std::shared_ptr<Batch>*>(user_data);
    (*b)->finish_one(status);
    delete b;
    ucp_request_free(request);
  }

  // Sends `message` with `call_id` as the active-message header.
  void send_am(ucp_ep_h ep, unsigned id, const std::shared_ptr<Bytes>& message, bool want_reply, std::uint64_t call_id) {
    struct Keep {
      std::shared_ptr<Bytes> message;
      std::uint64_t header;
    };
    auto* keep = new Keep{message, call_id};  // both live until the send completes
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
    param.flags = want_reply ? UCP_AM_SEND_FLAG_REPLY : 0;
    param.cb.send = [](void* request, ucs_status_t, void* user_data) {
      delete static_cast<Keep*>(user_data);
      ucp_request_free(request);
    };
    param.user_data = keep;
    ucs_status_ptr_t r =
        ucp_am_send_nbx(ep, id, &keep->header, sizeof keep->header, message->data(), message->size(), &param);
    if (!UCS_PTR_IS_PTR(r)) delete keep;  // done (or failed: the peer's error handler reports it)
  }

  static void on_ep_error(void* arg, ucp_ep_h ep, ucs_status_t status) {
    auto* self = static_cast<UcxEndpoint*>(arg);
    self->post([self, ep, status] { self->drop_peer(ep, ucs_status_string(status)); });  // closing drives progress
  }

  void drop_peer(ucp_ep_h ep, const std::string& why) {
    auto it = peers_.find(ep);
    if (it == peers_.end()) return;
    auto peer = it->second;
    peer->failed = true;
    fail_pending(ep, "peer failed: " + why);
    peers_.erase(it);
    close_ep(ep);
    if (peer->incoming && on_disconnect_) on_disconnect_(peer);
  }

  void close_ep(ucp_ep_h ep) {
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags = UCP_EP_CLOSE_FLAG_FORCE;
    ucs_status_ptr_t r = ucp_ep_close_nbx(ep, &param);
    if (UCS_PTR_IS_PTR(r)) {
      while (ucp_request_check_status(r) == UCS_INPROGRESS) ucp_worker_progress(worker_);
      ucp_request_free(r);
    }
  }

  void fail_pending(ucp_ep_h ep, const std::string& why) {
    std::lock_guard lock(pending_mutex_);
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (it->second.ep == ep) {
        it->second.promise.set_exception(std::make_exception_ptr(Error(Code::Unavailable, why)));
        it = pending_.erase(it);
      } else {
        ++it;
      }
    }
  }
  void fail_pending_all(const std::string& why) {
    std::lock_guard lock(pending_mutex_);
    for (auto& [id, p] : pending_) p.promise.set_exception(std::make_exception_ptr(Error(Code::Unavailable, why)));
    pending_.clear();
  }

  // Active-message receipt: small messages arrive with their data; large
  // ones by rendezvous, fetched here before delivery, once their size has
  // been checked.
  static ucs_status_t receive(UcxEndpoint* self, bool is_request, const void* header, std::size_t header_length,
                              void* data, std::size_t length, const ucp_am_recv_param_t* param) {
    ucp_ep_h from = (param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) ? param->reply_ep : nullptr;
    std::uint64_t call = 0;
    if (header_length != sizeof call) return UCS_OK;  // not one of ours
    std::memcpy(&call, header, sizeof call);
    const std::size_t limit = is_request ? self->max_request_ : kMaxReplyBytes;
    if (length > limit) {
      log::warn("{}: a {} of {} bytes exceeds the limit of {}; dropped", self->address_,
                is_request ? "request" : "reply", length, limit);
      if (is_request && from) self->deliver_refusal(from, call, length, limit);
      return UCS_OK;
    }
    auto message = std::make_shared<Bytes>(length);
    if (!(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
      std::memcpy(message->data(), data, length);
      self->deliver(is_request, call, std::move(*message), from);
      return UCS_OK;
    }
    struct Fetch {
      UcxEndpoint* self;
      bool is_request;
      std::uint64_t call;
      std::shared_ptr<Bytes> message;
      ucp_ep_h from;
    };
    auto* fetch = new Fetch{self, is_request, call, message, from};
    ucp_request_param_t rp{};
    rp.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    rp.cb.recv_am = [](void* request, ucs_status_t status, std::size_t, void* user_data) {
      auto* f = static_cast<Fetch*>(user_data);
      if (status == UCS_OK) f->self->deliver(f->is_request, f->call, std::move(*f->message), f->from);
      delete f;
      ucp_request_free(request);
    };
    rp.user_data = fetch;
    ucs_status_ptr_t r = ucp_am_recv_data_nbx(self->worker_, data, message->data(), length, &rp);
    if (!UCS_PTR_IS_PTR(r)) {
      if (UCS_PTR_STATUS(r) == UCS_OK) self->deliver(is_request, call, std::move(*message), from);
      delete fetch;
    }
    return UCS_OK;
  }
  static ucs_status_t on_request(void* arg, const void* header, std::size_t header_length, void* data,
                                 std::size_t length, const ucp_am_recv_param_t* param) {
    return receive(static_cast<UcxEndpoint*>(arg), true, header, header_length, data, length, param);
  }
  static ucs_status_t on_reply(void* arg, const void* header, std::size_t header_length, void* data,
                               std::size_t length, const ucp_am_recv_param_t* param) {
    return receive(static_cast<UcxEndpoint*>(arg), false, header, header_length, data, length, param);
  }

  void deliver(bool is_request, std::uint64_t call, Bytes message, ucp_ep_h from);
  void deliver_refusal(ucp_ep_h from, std::uint64_t call, std::size_t length, std::size_t limit);

  static UcxPeer* as_ucx(const Peer& peer) {
    auto* p = dynamic_cast<UcxPeer*>(peer.get());
    if (!p) fail(Code::InvalidArgument, "peer does not belong to the UCX transport");
    return p;
  }

  void destroy_worker() {
    if (listener_) ucp_listener_destroy(listener_);
    listener_ = nullptr;
    if (worker_) ucp_worker_destroy(worker_);
    if (context_) ucp_cleanup(context_);
    worker_ = nullptr;
    context_ = nullptr;
  }

  friend class UcxRequest;

  const std::size_t max_request_;
  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  ucp_listener_h listener_ = nullptr;
  int epoll_fd_ = -1, wake_fd_ = -1;
  std::string address_;
  std::thread progress_;
  std::atomic<std::thread::id> progress_id_{};
  bool stopping_ = false;  // progress thread only
  std::mutex command_mutex_;
  std::deque<std::function<void()>> commands_;
  bool closed_ = false;  // under command_mutex_
  std::mutex pending_mutex_;
  std::map<std::uint64_t, Pending> pending_;
  std::map<ucp_ep_h, std::shared_ptr<UcxPeer>> peers_;  // every connection, ours and accepted; progress thread only
  std::atomic<std::uint64_t> next_call_{1};
  RequestHandler handler_;  // set on the progress thread
  DisconnectHandler on_disconnect_;
  DropLog drops_;
};

UcxRegion::~UcxRegion() { ep_->unmap(memh_); }

class UcxRequest final : public Request {
 public:
  UcxRequest(UcxEndpoint* ep, std::uint64_t call, Bytes message, Peer peer)
      : ep_(ep), call_(call), message_(std::move(message)), peer_(std::move(peer)) {}
  std::span<const std::byte> message() const override { return message_; }
  const Peer& peer() const override { return peer_; }
  // Never blocks: the server may answer while holding its own lock.
  void reply(Bytes message) override {
    auto* p = static_cast<UcxPeer*>(peer_.get());
    if (p->failed) return;  // nobody left to answer
    auto shared = std::make_shared<Bytes>(std::move(message));
    ep_->post([ep = ep_, peer = peer_, shared, call = call_] {
      auto* up = static_cast<UcxPeer*>(peer.get());
      if (!up->failed) ep->send_am(up->ep, kAmReply, shared, false, call);
    });
  }

 private:
  UcxEndpoint* ep_;
  std::uint64_t call_;
  Bytes message_;
  Peer peer_;
};

void UcxEndpoint::deliver(bool is_request, std::uint64_t call, Bytes message, ucp_ep_h from) {
  if (!is_request) {
    std::lock_guard lock(pending_mutex_);
    auto it = pending_.find(call);
    if (it == pending_.end()) return;  // its caller gave up
    it->second.promise.set_value(std::move(message));
    pending_.erase(it);
    return;
  }
  if (!from) return;
  auto it = peers_.find(from);
  if (it == peers_.end()) return;  // a request on a connection we do not know
  if (!handler_) {
    send_am(from, kAmReply, std::make_shared<Bytes>(error_reply(0, 0, Code::Unsupported, "this endpoint serves no requests")),
            false, call);
    return;
  }
  handler_(std::make_shared<UcxRequest>(this, call, std::move(message), it->second));
}

void UcxEndpoint::deliver_refusal(ucp_ep_h from, std::uint64_t call, std::size_t length, std::size_t limit) {
  if (peers_.find(from) == peers_.end()) return;
  send_am(from, kAmReply,
          std::make_shared<Bytes>(error_reply(0, 0, Code::InvalidArgument,
                                              detail::concat("a request of ", length, " bytes exceeds the server's limit of ",
                                                             limit))),
          false, call);
}

}  // namespace

std::unique_ptr<Endpoint> make_ucx_endpoint(const std::string& listen, std::size_t max_request_bytes) {
  return std::make_unique<UcxEndpoint>(listen, max_request_bytes);
}

}  // namespace cove::net
