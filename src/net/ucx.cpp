// The UCX transport, for peers on other hosts (and, when forced, on this
// one). The UCP worker runs in serialized mode under worker_mutex_. A
// progress thread drives it; when idle it sleeps on the worker's event
// descriptor and an eventfd for commands, so an idle endpoint takes no CPU.
// A caller sends its own requests and operations, and progresses the
// worker itself for a short window while its answer should come soon
// (drive()), so that a round trip wakes no thread of this process;
// requests from peers are always served on the progress thread.
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
// refused above the endpoint's maximum before anything is allocated).
// Bulk data moves one of two ways (the reader or writer chooses, two_sided_bulk(); the exposer serves both):
//   - one-sided get and put against ucp_mem_map'ed regions, where the
//     transport does RDMA (rc, dc: hosts with RDMA ports);
//   - two-sided, where UCX would only emulate one-sided operations (TCP):
//     the reader asks the exposer for bytes (kAmRead) and the exposer sends
//     them as an active message straight from the region (rendezvous for
//     large ones), which lands straight in the reader's memory; a writer
//     sends its bytes (kAmWrite) and the exposer receives them straight
//     into the region, then acknowledges (kAmWriteDone). The exposer checks
//     region, token, range and (for writes) that the sender was granted the
//     region, as Cove's TCP path does, and a region withdrawn while bytes
//     move from or into it cuts the connections concerned before its
//     memory goes.
// A key is a KeyHeader, then this endpoint's region id and token
// (UcxKeyPart), then the packed rkey.
//
// Trust: UCX itself trusts the peers it is connected to (its own RMA and
// rendezvous packets carry addresses it does not check). Connect UCX only
// across a network of hosts you trust; docs/transport.md says more.
#include "net/transport.hpp"
#include "common/printable.hpp"

#include "common/log.hpp"
#include "core/fail.hpp"
#include "net/busy_poll.hpp"
#include "net/drop_log.hpp"
#include "net/inet.hpp"
#include "net/memory_key.hpp"
#include "net/protocol.hpp"

#include <ucp/api/ucp.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

namespace cove::net {

using detail::fail;

namespace {

constexpr const char* kScheme = "ucx:";
constexpr unsigned kAmRequest = 1;
constexpr unsigned kAmReply = 2;
constexpr unsigned kAmRead = 3;       // two-sided read: header BulkAsk, no data
constexpr unsigned kAmReadData = 4;   // its answer: header BulkAnswer, the bytes (none on error)
constexpr unsigned kAmWrite = 5;      // two-sided write: header BulkAsk, the bytes
constexpr unsigned kAmWriteDone = 6;  // its answer: header BulkAnswer, no data

// What a two-sided read or write asks for: `bytes` bytes at `address` of
// region `region`, whose token is `token`.
struct BulkAsk {
  std::uint64_t call, region, token, address, bytes;
};
// Its answer: Code::Ok (0) or why not.
struct BulkAnswer {
  std::uint64_t call;
  std::uint32_t code;
  std::uint32_t unused = 0;
};
// The UCX part of a key, after its KeyHeader (the local transport's header
// when the region is also exposed locally: endpoint.cpp joins the keys).
struct UcxKeyPart {
  std::uint64_t region, token;
};

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

// The host's RDMA ports ("mlx5_0:1", ...), from /sys/class/infiniband.
std::vector<std::string> rdma_ports() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& dev : std::filesystem::directory_iterator("/sys/class/infiniband", ec)) {
    std::error_code ports_ec;
    for (const auto& port : std::filesystem::directory_iterator(dev.path() / "ports", ports_ec))
      out.push_back(dev.path().filename().string() + ":" + port.path().filename().string());
  }
  return out;
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
  for (const std::string& port : rdma_ports()) device += "," + port;
  return device;
}

// Whether this endpoint reads and writes its peers' memory two-sided
// (active messages) rather than one-sided: COVE_UCX_BULK = "am" or "rma",
// by default "rma" only where the host has RDMA ports and UCX_TLS does not
// confine UCX to tcp (UCX emulates one-sided operations over TCP, at a
// quarter of the link's speed here: docs/transport.md).
bool two_sided_bulk(const std::string& tls) {
  const char* env = std::getenv("COVE_UCX_BULK");
  const std::string mode = env ? env : "";
  if (mode == "am") return true;
  if (mode == "rma") return false;
  if (!mode.empty())
    fail(Code::InvalidArgument, "COVE_UCX_BULK = '", mode, "': expected 'am' (two-sided), 'rma' (one-sided) or unset");
  return tls == "tcp" || rdma_ports().empty();
}

class UcxEndpoint;

struct UcxPeer final : PeerHandle {
  ucp_ep_h ep = nullptr;
  std::string addr;
  std::string from_ip;  // accepted connections: the IP the peer connected from
  bool incoming = false;
  std::atomic<bool> failed{false};
  std::map<std::string, ucp_rkey_h> rkeys;  // under the endpoint's worker_mutex_
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
  UcxRegion(UcxEndpoint* ep, std::uint64_t id, ucp_mem_h memh, Bytes key, std::size_t n)
      : ep_(ep), id_(id), memh_(memh), key_(std::move(key)), size_(n) {}
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
  void allow_write(const Peer& peer) override;

 private:
  UcxEndpoint* ep_;
  std::uint64_t id_;
  ucp_mem_h memh_;
  Bytes key_;
  std::size_t size_;
};

// Completion of a batch of one-sided operations, or of two-sided ones and
// their answers. The first error is the batch's.
struct Batch {
  int outstanding = 0;
  std::exception_ptr error;
  std::promise<void> done;
  void finish_one(ucs_status_t s) {
    if (s == UCS_OK) return finish_one(Code::Ok, {});
    finish_one(unreachable(s) ? Code::Unavailable : Code::Internal,
               std::string("remote memory access failed: ") + ucs_status_string(s));
  }
  void finish_one(Code code, const std::string& why) {
    if (code != Code::Ok && !error) error = std::make_exception_ptr(Error(code, why));
    if (--outstanding > 0) return;
    if (error)
      done.set_exception(error);
    else
      done.set_value();
  }
};

class UcxEndpoint final : public Endpoint {
 public:
  // The worker is made and destroyed on the progress thread.
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
      std::lock_guard worker(worker_mutex_);
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
    if (driver_fd_ >= 0) ::close(driver_fd_);
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
      wake();  // the progress thread carries the connection on
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
    try {
      run([&] {
        if (p->failed) fail(Code::Unavailable, "peer ", p->address(), " has failed");
        send_am(p->ep, kAmRequest, shared, true, id);
      });
    } catch (...) {
      std::lock_guard lock(pending_mutex_);
      pending_.erase(id);
      throw;
    }
    drive(answer, deadline, false);
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
      if (bytes == 0) return std::make_unique<UcxRegion>(this, 0, nullptr, make_key(kh), 0);
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
      const UcxKeyPart part{next_region_++, random_token()};
      Bytes extra(sizeof part + rkey_size);
      std::memcpy(extra.data(), &part, sizeof part);
      std::memcpy(extra.data() + sizeof part, rkey, rkey_size);
      ucp_rkey_buffer_release(rkey);
      exposed_[part.region] = Exposed{static_cast<std::byte*>(data), bytes, part.token};
      return std::make_unique<UcxRegion>(this, part.region, memh, make_key(kh, extra), bytes);
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
    if (key.size() <= sizeof kh + sizeof(UcxKeyPart))
      fail(Code::InvalidArgument, "memory key has no UCX part: the region is not exposed over UCX");
    UcxKeyPart part;
    std::memcpy(&part, key.data() + sizeof kh, sizeof part);
    auto batch = std::make_shared<Batch>();
    auto done = batch->done.get_future();
    run([&] {
      if (p->failed) fail(Code::Unavailable, "peer ", p->address(), " has failed");
      batch->outstanding = 1;  // held until every operation has been posted
      if (two_sided_)
        post_two_sided(p->ep, kh, part, ops, write, batch);
      else
        post_one_sided(*p, key, kh, ops, write, batch);
      batch->finish_one(UCS_OK);
    });
    drive(done, deadline, true);
    if (deadline != kNoDeadline && done.wait_until(deadline) != std::future_status::ready) {
      // The operations still target `ops`' memory: they must end before we
      // return. Failing the peer cancels them.
      run([&] { drop_peer(p->ep, write ? "a write passed its deadline" : "a read passed its deadline"); });
      done.wait();
      fail(Code::Timeout, write ? "a write to " : "a read from ", common::shown_address(p->address()),
           " did not finish before the deadline");
    }
    done.get();
  }

  // Worker held: UCX's one-sided get or put for each op, and for puts a
  // flush, which completes when every put is in place at the peer.
  void post_one_sided(UcxPeer& p, std::span<const std::byte> key, const KeyHeader& kh, std::span<const RemoteOp> ops,
                      bool write, const std::shared_ptr<Batch>& batch) {
    const std::string k(reinterpret_cast<const char*>(key.data()), key.size());
    auto it = p.rkeys.find(k);
    if (it == p.rkeys.end()) {
      if (p.rkeys.size() >= 4096) {  // keys of long-gone regions: start afresh
        for (auto& [old, r] : p.rkeys) ucp_rkey_destroy(r);
        p.rkeys.clear();
      }
      ucp_rkey_h rkey = nullptr;
      const ucs_status_t s = ucp_ep_rkey_unpack(p.ep, key.data() + sizeof kh + sizeof(UcxKeyPart), &rkey);
      if (s != UCS_OK) fail_ucs("unpacking a UCX memory key", s);
      it = p.rkeys.emplace(k, rkey).first;
    }
    for (const auto& op : ops) {
      if (op.bytes == 0) continue;
      ucp_request_param_t param = batch_param(batch);
      const std::uint64_t remote = kh.address + op.offset;
      ucs_status_ptr_t r = write ? ucp_put_nbx(p.ep, op.local, op.bytes, remote, it->second, &param)
                                 : ucp_get_nbx(p.ep, op.local, op.bytes, remote, it->second, &param);
      complete_now_if_done(r, param.user_data);
    }
    if (write) {
      ucp_request_param_t param = batch_param(batch);
      complete_now_if_done(ucp_ep_flush_nbx(p.ep, &param), param.user_data);
    }
  }

  // Worker held: one kAmRead or kAmWrite per op. Each op's answer
  // (kAmReadData, kAmWriteDone) finishes it; a write also waits for its own
  // send to complete, since the send reads op.local until then.
  void post_two_sided(ucp_ep_h ep, const KeyHeader& kh, const UcxKeyPart& part, std::span<const RemoteOp> ops,
                      bool write, const std::shared_ptr<Batch>& batch) {
    for (const auto& op : ops) {
      if (op.bytes == 0) continue;
      const std::uint64_t call = next_call_++;
      bulk_[call] = BulkOp{ep, static_cast<std::byte*>(op.local), op.bytes, batch};
      ++batch->outstanding;  // the answer
      auto* keep = new BulkSend{BulkAsk{call, part.region, part.token, kh.address + op.offset, op.bytes},
                                write ? batch : nullptr};
      if (write) ++batch->outstanding;  // the send
      ucp_request_param_t param{};
      param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
      param.flags = UCP_AM_SEND_FLAG_REPLY;
      param.cb.send = [](void* request, ucs_status_t status, void* user_data) {
        static_cast<BulkSend*>(user_data)->finish(status);
        ucp_request_free(request);
      };
      param.user_data = keep;
      ucs_status_ptr_t r = ucp_am_send_nbx(ep, write ? kAmWrite : kAmRead, &keep->ask, sizeof keep->ask,
                                           write ? op.local : nullptr, write ? op.bytes : 0, &param);
      if (!UCS_PTR_IS_PTR(r)) keep->finish(UCS_PTR_STATUS(r));
    }
  }

  // A region leaves; bytes still moving from or into it
  // (two-sided answers and writes) are stopped by cutting their
  // connections, and waited for, before its memory can go.
  void withdraw(std::uint64_t id, ucp_mem_h memh) {
    run([&] {
      auto it = exposed_.find(id);
      if (it != exposed_.end()) {
        it->second.withdrawn = true;
        if (!it->second.busy_on.empty()) {
          const std::set<ucp_ep_h> cut(it->second.busy_on.begin(), it->second.busy_on.end());
          for (ucp_ep_h ep : cut) drop_peer(ep, "a region it was moving bytes of was withdrawn");
          while (!it->second.busy_on.empty()) ucp_worker_progress(worker_);
        }
        exposed_.erase(it);
      }
      if (memh) ucp_mem_unmap(context_, memh);
    });
  }

  void allow_write(std::uint64_t id, const Peer& peer) {
    auto* p = as_ucx(peer);
    run([&] {
      auto it = exposed_.find(id);
      if (it != exposed_.end() && !p->failed) it->second.writers.insert(p->ep);
    });
  }

 private:
  struct Pending {
    std::promise<Bytes> promise;
    ucp_ep_h ep = nullptr;
  };
  // A region exposed by this endpoint, for two-sided reads and writes.
  struct Exposed {
    std::byte* base;
    std::uint64_t length;
    std::uint64_t token;
    std::set<ucp_ep_h> writers = {};        // the peers it was granted to (allow_write)
    std::multiset<ucp_ep_h> busy_on = {};  // one entry per send or receive in flight
    bool withdrawn = false;
  };
  // A two-sided read or write of this endpoint, waiting for its answer.
  struct BulkOp {
    ucp_ep_h ep;
    std::byte* local;
    std::size_t bytes;
    std::shared_ptr<Batch> batch;
  };
  // What a kAmRead or kAmWrite send keeps alive until it completes.
  struct BulkSend {
    BulkAsk ask;
    std::shared_ptr<Batch> batch;  // a write's, which waits for the send
    void finish(ucs_status_t s) {
      if (batch) batch->finish_one(s);
      delete this;
    }
  };

  static ucp_request_param_t batch_param(const std::shared_ptr<Batch>& batch) {
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    param.cb.send = &UcxEndpoint::on_batch_op;
    param.user_data = new std::shared_ptr<Batch>(batch);
    ++batch->outstanding;
    return param;
  }


  // Runs f on the calling thread with the worker to itself (UCX's
  // serialized mode: any thread, one at a time) and returns its result (or
  // rethrows). Unavailable once the endpoint has closed.
  template <typename F>
  auto run(F&& f) -> decltype(f()) {
    std::lock_guard worker(worker_mutex_);
    {
      std::lock_guard lock(command_mutex_);
      if (closed_) fail(Code::Unavailable, "the UCX endpoint ", address_, " is closed");
    }
    return f();
  }

  // A caller waiting for its answer drives the worker itself, so that no
  // other thread of this process has to wake up to hand the answer over
  // (a process bound to one core, as MPI binds its ranks, would pay two
  // wake-ups a round trip). It polls for its window (busy_poll.hpp; during
  // a `transfer` of bulk bytes, a new one after each progress, since the
  // next event of a transfer comes soon), then sleeps on the worker's event
  // descriptor itself, until the answer is there or `deadline`. One caller at a time
  // drives; meanwhile the progress thread does not watch the worker (it
  // would only take a core from the driver), and others wait for their
  // answers, which the driver delivers like any. Returns at once when
  // another caller drives.
  template <typename F>
  void drive(const F& answer, Deadline deadline, bool transfer) {
    const auto ready = [&] { return answer.wait_for(std::chrono::seconds(0)) == std::future_status::ready; };
    bool expected = false;
    if (ready() || !driving_.compare_exchange_strong(expected, true)) return;
    watch_worker(false);
    BusyPoll spin;
    while (!ready() && Clock::now() < deadline) {
      std::unique_lock worker(worker_mutex_, std::try_to_lock);
      if (!worker.owns_lock()) {  // the progress thread serves something
        std::this_thread::yield();
        continue;
      }
      if (!worker_) break;  // closed
      if (ucp_worker_progress(worker_) != 0) {
        if (transfer) spin = BusyPoll();
        continue;
      }
      if (spin.poll()) continue;
      if (ucp_worker_arm(worker_) != UCS_OK) continue;  // events came meanwhile
      worker.unlock();
      pollfd fds[2] = {{worker_efd_, POLLIN, 0}, {driver_fd_, POLLIN, 0}};
      ::poll(fds, 2, remaining_ms(deadline));
      if (fds[1].revents) {
        std::uint64_t v;
        [[maybe_unused]] auto r = ::read(driver_fd_, &v, sizeof v);
      }
    }
    // The worker armed again for the progress thread, which watches it again.
    bool events = false;
    {
      std::lock_guard worker(worker_mutex_);
      events = worker_ && ucp_worker_arm(worker_) != UCS_OK;
    }
    watch_worker(true);
    driving_ = false;
    if (events) wake();
  }
  // Whether the progress thread wakes on the worker's events.
  void watch_worker(bool on) {
    epoll_event ev{};
    ev.events = on ? static_cast<std::uint32_t>(EPOLLIN) : 0u;
    ev.data.fd = worker_efd_;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, worker_efd_, &ev);
  }
  // The progress thread progressed the worker (serving a command) while a
  // caller drives: what it progressed may be the driver's answer, so the
  // driver, asleep on the worker, looks again.
  void nudge_driver() {
    if (!driving_ || std::this_thread::get_id() != progress_id_) return;
    const std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(driver_fd_, &one, sizeof one);
  }

  void wake() {
    const std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
  }

  // Queues f for the progress thread and returns at once. Posted from the
  // progress thread itself (a reply its handler gave), f runs before that
  // thread next looks for work, with no wake-up (progress_loop).
  void post(std::function<void()> f) {
    {
      std::lock_guard lock(command_mutex_);
      if (closed_) return;
      commands_.push_back(std::move(f));
    }
    if (std::this_thread::get_id() != progress_id_) wake();
  }
  // The commands queued so far, taken from the queue.
  std::deque<std::function<void()>> take_commands() {
    std::deque<std::function<void()>> todo;
    std::lock_guard lock(command_mutex_);
    todo.swap(commands_);
    return todo;
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
    wp.thread_mode = UCS_THREAD_MODE_SERIALIZED;  // callers take worker_mutex_
    if ((s = ucp_worker_create(context_, &wp, &worker_)) != UCS_OK) {
      destroy_worker();
      fail_ucs("creating a UCX worker", s);
    }
    two_sided_ = two_sided_bulk(tls);
    const std::pair<unsigned, ucp_am_recv_callback_t> handlers[] = {
        {kAmRequest, &UcxEndpoint::on_request},    {kAmReply, &UcxEndpoint::on_reply},
        {kAmRead, &UcxEndpoint::on_read},          {kAmReadData, &UcxEndpoint::on_read_data},
        {kAmWrite, &UcxEndpoint::on_write},        {kAmWriteDone, &UcxEndpoint::on_write_done}};
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
    worker_efd_ = efd;
    driver_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
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
    fail_bulk(nullptr, "the endpoint is closing");
    // Commands posted after the stop (replies to late requests) are dropped.
    {
      std::lock_guard lock(command_mutex_);
      commands_.clear();
      closed_ = true;
    }
    destroy_worker();
  }

  // Progresses until there is nothing to do, polls a little longer when
  // something just happened (busy_poll.hpp: the next message of a transfer,
  // or the answer to what was just sent, usually comes within
  // microseconds), then sleeps on the worker's event descriptor and the
  // command eventfd.
  void progress_loop() {
    std::optional<BusyPoll> spin;  // after work, a short poll before sleeping
    bool window_ran_out = false;
    while (!stopping_) {
      bool worked = false;
      std::deque<std::function<void()>> todo = take_commands();
      {
        std::lock_guard worker(worker_mutex_);
        while (ucp_worker_progress(worker_) != 0) worked = true;
        for (auto& c : todo) c();
        // What the handlers just posted (their replies) goes out now.
        if (worked)
          for (auto& c : take_commands()) c();
      }
      if (worked) nudge_driver();  // what it progressed may be the driver's answer
      if (worked || !todo.empty()) {
        spin.emplace();
        continue;
      }
      if (spin && spin->poll()) continue;
      window_ran_out = spin.has_value();
      spin.reset();
      {
        // Posted by this thread (no wake-up came with it): run it first.
        std::lock_guard lock(command_mutex_);
        if (!commands_.empty()) continue;
      }
      ucs_status_t s;
      {
        std::lock_guard worker(worker_mutex_);
        s = ucp_worker_arm(worker_);
      }
      if (s == UCS_ERR_BUSY) continue;  // events arrived meanwhile
      epoll_event events[4];
      const auto asleep = Clock::now();
      const int n = ::epoll_wait(epoll_fd_, events, 4, -1);
      if (n > 0 && window_ran_out) BusyPoll::slept(Clock::now() - asleep);  // woken after a window
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
    fail_bulk(ep, "peer failed: " + why);
    for (auto& [id, region] : exposed_) region.writers.erase(ep);  // UCX may reuse the handle
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
  // Two-sided operations of this endpoint still waiting for their answer
  // from `ep` (every peer's when null) fail. Those whose bytes are arriving
  // are not here: UCX completes their receives when the connection closes.
  void fail_bulk(ucp_ep_h ep, const std::string& why) {
    for (auto it = bulk_.begin(); it != bulk_.end();) {
      if (ep && it->second.ep != ep) {
        ++it;
        continue;
      }
      auto batch = std::move(it->second.batch);
      it = bulk_.erase(it);
      batch->finish_one(Code::Unavailable, why);
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
      if (length) std::memcpy(message->data(), data, length);  // (an empty message's data may be null)
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

  // --- two-sided bulk data (progress thread) ---

  // The exposer: the region `ask` names, if `from` may read it (or write
  // it), and the range lies inside it; otherwise why not.
  Code check_ask(const BulkAsk& ask, ucp_ep_h from, bool write, Exposed*& region) {
    auto peer = peers_.find(from);
    if (peer == peers_.end() || !peer->second->incoming) return Code::PermissionDenied;  // who reads whom
    auto it = exposed_.find(ask.region);
    if (it == exposed_.end() || it->second.withdrawn || it->second.token != ask.token) return Code::NotFound;
    const Exposed& r = it->second;
    const auto base = reinterpret_cast<std::uint64_t>(r.base);
    if (ask.address < base || ask.address - base > r.length || ask.bytes > r.length - (ask.address - base))
      return Code::InvalidArgument;
    if (write && !r.writers.count(from)) return Code::PermissionDenied;
    region = &it->second;
    return Code::Ok;
  }

  // Sends `answer` with `bytes` of region `id` (or none); the region is
  // busy on `ep` until the send completes.
  void send_answer(ucp_ep_h ep, unsigned am, BulkAnswer answer, std::uint64_t id, const std::byte* data,
                   std::size_t bytes) {
    struct Keep {
      UcxEndpoint* self;
      BulkAnswer answer;
      std::uint64_t region;
      ucp_ep_h ep;
    };
    auto* keep = new Keep{this, answer, data ? id : 0, ep};
    if (data) exposed_.at(id).busy_on.insert(ep);
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    param.cb.send = [](void* request, ucs_status_t, void* user_data) {
      auto* k = static_cast<Keep*>(user_data);
      k->self->not_busy(k->region, k->ep);
      delete k;
      ucp_request_free(request);
    };
    param.user_data = keep;
    ucs_status_ptr_t r = ucp_am_send_nbx(ep, am, &keep->answer, sizeof keep->answer, data, bytes, &param);
    if (!UCS_PTR_IS_PTR(r)) {
      not_busy(keep->region, ep);
      delete keep;
    }
  }
  void not_busy(std::uint64_t id, ucp_ep_h ep) {
    if (id == 0) return;
    auto it = exposed_.find(id);
    if (it == exposed_.end()) return;
    auto one = it->second.busy_on.find(ep);
    if (one != it->second.busy_on.end()) it->second.busy_on.erase(one);
  }

  // The exposer: a kAmRead or kAmWrite's ask and sender, when it is one of
  // ours on a connection this endpoint knows (anything else is dropped).
  bool take_ask(const void* header, std::size_t header_length, const ucp_am_recv_param_t* param, ucp_ep_h& from,
                BulkAsk& ask) {
    from = (param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) ? param->reply_ep : nullptr;
    if (!from || header_length != sizeof ask || peers_.find(from) == peers_.end()) return false;
    std::memcpy(&ask, header, sizeof ask);
    return true;
  }

  // The exposer, asked for bytes: sends them from the region in place.
  static ucs_status_t on_read(void* arg, const void* header, std::size_t header_length, void*, std::size_t,
                              const ucp_am_recv_param_t* param) {
    auto* self = static_cast<UcxEndpoint*>(arg);
    ucp_ep_h from;
    BulkAsk ask;
    if (!self->take_ask(header, header_length, param, from, ask)) return UCS_OK;
    Exposed* region = nullptr;
    const Code code = self->check_ask(ask, from, false, region);
    if (code != Code::Ok)
      self->send_answer(from, kAmReadData, {ask.call, static_cast<std::uint32_t>(code)}, 0, nullptr, 0);
    else
      self->send_answer(from, kAmReadData, {ask.call, 0}, ask.region, reinterpret_cast<const std::byte*>(ask.address),
                        ask.bytes);
    return UCS_OK;
  }

  // The exposer, sent bytes for a region: receives them in place, then
  // acknowledges.
  static ucs_status_t on_write(void* arg, const void* header, std::size_t header_length, void* data,
                               std::size_t length, const ucp_am_recv_param_t* param) {
    auto* self = static_cast<UcxEndpoint*>(arg);
    ucp_ep_h from;
    BulkAsk ask;
    if (!self->take_ask(header, header_length, param, from, ask)) return UCS_OK;
    Exposed* region = nullptr;
    Code code = self->check_ask(ask, from, true, region);
    if (code == Code::Ok && length != ask.bytes) code = Code::Protocol;
    if (code != Code::Ok) {
      self->send_answer(from, kAmWriteDone, {ask.call, static_cast<std::uint32_t>(code)}, 0, nullptr, 0);
      return UCS_OK;  // a rendezvous not received is dropped
    }
    auto* into = reinterpret_cast<std::byte*>(ask.address);
    if (!(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
      std::memcpy(into, data, length);
      self->send_answer(from, kAmWriteDone, {ask.call, 0}, 0, nullptr, 0);
      return UCS_OK;
    }
    struct Receive {
      UcxEndpoint* self;
      ucp_ep_h from;
      BulkAsk ask;
    };
    region->busy_on.insert(from);
    auto* rcv = new Receive{self, from, ask};
    ucp_request_param_t rp{};
    rp.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    rp.cb.recv_am = [](void* request, ucs_status_t status, std::size_t, void* user_data) {
      auto* r = static_cast<Receive*>(user_data);
      r->self->written(r->from, r->ask, status);
      delete r;
      ucp_request_free(request);
    };
    rp.user_data = rcv;
    ucs_status_ptr_t r = ucp_am_recv_data_nbx(self->worker_, data, into, length, &rp);
    if (!UCS_PTR_IS_PTR(r)) {
      self->written(from, ask, UCS_PTR_STATUS(r));
      delete rcv;
    }
    return UCS_OK;
  }
  void written(ucp_ep_h from, const BulkAsk& ask, ucs_status_t status) {
    not_busy(ask.region, from);
    if (peers_.find(from) == peers_.end()) return;  // the connection was cut
    const Code code = status == UCS_OK ? Code::Ok : Code::Unavailable;
    send_answer(from, kAmWriteDone, {ask.call, static_cast<std::uint32_t>(code)}, 0, nullptr, 0);
  }

  // The reader or writer: an answer to one of its operations.
  static ucs_status_t on_read_data(void* arg, const void* header, std::size_t header_length, void* data,
                                   std::size_t length, const ucp_am_recv_param_t* param) {
    auto* self = static_cast<UcxEndpoint*>(arg);
    BulkAnswer answer;
    if (header_length != sizeof answer) return UCS_OK;
    std::memcpy(&answer, header, sizeof answer);
    auto it = self->bulk_.find(answer.call);
    if (it == self->bulk_.end()) return UCS_OK;  // its reader gave up: the bytes are dropped
    BulkOp op = std::move(it->second);
    self->bulk_.erase(it);
    if (answer.code != 0) {
      op.batch->finish_one(static_cast<Code>(answer.code), refusal(answer.code, "read"));
      return UCS_OK;
    }
    if (length != op.bytes) {
      op.batch->finish_one(Code::Protocol, detail::concat("a two-sided read answered ", length, " bytes for ",
                                                          op.bytes, " asked"));
      return UCS_OK;
    }
    if (!(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
      std::memcpy(op.local, data, length);
      op.batch->finish_one(Code::Ok, {});
      return UCS_OK;
    }
    auto* keep = new std::shared_ptr<Batch>(op.batch);
    ucp_request_param_t rp{};
    rp.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    rp.cb.recv_am = [](void* request, ucs_status_t status, std::size_t, void* user_data) {
      auto* b = static_cast<std::shared_ptr<Batch>*>(user_data);
      (*b)->finish_one(status);
      delete b;
      ucp_request_free(request);
    };
    rp.user_data = keep;
    ucs_status_ptr_t r = ucp_am_recv_data_nbx(self->worker_, data, op.local, length, &rp);
    if (!UCS_PTR_IS_PTR(r)) {
      (*keep)->finish_one(UCS_PTR_STATUS(r));
      delete keep;
    }
    return UCS_OK;
  }
  static ucs_status_t on_write_done(void* arg, const void* header, std::size_t header_length, void*, std::size_t,
                                    const ucp_am_recv_param_t*) {
    auto* self = static_cast<UcxEndpoint*>(arg);
    BulkAnswer answer;
    if (header_length != sizeof answer) return UCS_OK;
    std::memcpy(&answer, header, sizeof answer);
    auto it = self->bulk_.find(answer.call);
    if (it == self->bulk_.end()) return UCS_OK;
    auto batch = std::move(it->second.batch);
    self->bulk_.erase(it);
    batch->finish_one(static_cast<Code>(answer.code), answer.code ? refusal(answer.code, "write") : std::string());
    return UCS_OK;
  }
  static std::string refusal(std::uint32_t code, const char* what) {
    switch (static_cast<Code>(code)) {
      case Code::NotFound:
        return detail::concat("a two-sided ", what, " names no region the peer exposes (withdrawn, or a wrong token)");
      case Code::PermissionDenied:
        return detail::concat("the peer refused a two-sided ", what, " (not a connection it accepted, or a region not granted to this peer)");
      case Code::InvalidArgument:
        return detail::concat("a two-sided ", what, " lies outside the region its key names");
      default:
        return detail::concat("a two-sided ", what, " failed at the peer: ", code_name(static_cast<Code>(code)));
    }
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
  int epoll_fd_ = -1, wake_fd_ = -1, worker_efd_ = -1, driver_fd_ = -1;
  std::atomic<bool> driving_{false};  // a caller drives the worker (drive())
  std::string address_;
  std::thread progress_;
  std::atomic<std::thread::id> progress_id_{};
  bool stopping_ = false;  // progress thread only
  // The worker and everything below that says so: held by the progress
  // thread while it progresses, by callers while they send and poll (UCX
  // runs its callbacks on whichever thread progresses). Recursive: a
  // callback may call run(). Taken before command_mutex_ and pending_mutex_.
  std::recursive_mutex worker_mutex_;
  std::mutex command_mutex_;
  std::deque<std::function<void()>> commands_;
  bool closed_ = false;  // under command_mutex_
  std::mutex pending_mutex_;
  std::map<std::uint64_t, Pending> pending_;
  std::map<ucp_ep_h, std::shared_ptr<UcxPeer>> peers_;  // every connection, ours and accepted; worker held
  bool two_sided_ = false;                              // two_sided_bulk(): set at init
  std::map<std::uint64_t, Exposed> exposed_;            // worker held
  std::uint64_t next_region_ = 1;                       // ids are never reused
  std::map<std::uint64_t, BulkOp> bulk_;                // by call id; worker held
  std::atomic<std::uint64_t> next_call_{1};
  RequestHandler handler_;  // worker held
  DisconnectHandler on_disconnect_;
  DropLog drops_;
};

UcxRegion::~UcxRegion() {
  if (id_ == 0 && !memh_) return;
  try {
    ep_->withdraw(id_, memh_);
  } catch (const Error& e) {  // the endpoint closed first: nothing moves any more
    log::debug("a UCX region outlived its endpoint: {}", e.what());
  }
}
void UcxRegion::allow_write(const Peer& peer) {
  if (id_ != 0) ep_->allow_write(id_, peer);
}

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
  if (std::this_thread::get_id() != progress_id_) {
    // A caller's thread progressed the worker: the request is served on the
    // progress thread, never inside a caller's wait (it may hold locks the
    // handler takes).
    auto kept = std::make_shared<Bytes>(std::move(message));
    post([this, call, kept, from] { deliver(true, call, std::move(*kept), from); });
    return;
  }
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
