// The UCX transport. One progress thread owns the UCP worker (single-thread
// mode) and sleeps on the worker's event fd and an eventfd for commands;
// every other thread hands it commands and waits for their results.
// Requests and replies are active messages (ids kAmRequest / kAmReply;
// large ones arrive by rendezvous); bulk data moves by one-sided get/put
// against ucp_mem_map'ed regions, whose key is [address, length, packed rkey].
//
// Addresses are "ucx:" + the hex of the UCP worker address. Peers connect by
// worker address rather than UCX's sockaddr mode: with sockaddr wireup, UCX
// 1.13 here selects TCP lanes only, even between processes on one host, and
// crashes when UCX_TLS has no TCP; by worker address it uses shared memory
// (posix/sysv + cma) where it can. A connecting endpoint sends a hello with
// its own address; the receiver makes its own endpoint back (with error
// handling) and uses it for replies and one-sided access.
#include "net/transport.hpp"

#include "core/fail.hpp"

#include <cove/thread_pool.hpp>

#include <ucp/api/ucp.h>

#include <arpa/inet.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/prctl.h>
#include <netinet/in.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <thread>

namespace cove::net {

using detail::fail;

namespace {

constexpr const char* kScheme = "ucx:";
constexpr unsigned kAmRequest = 1;
constexpr unsigned kAmReply = 2;
constexpr unsigned kAmHello = 3;     // u64 hello id + the sender's address
constexpr unsigned kAmHelloAck = 4;  // u64 hello id

[[noreturn]] void fail_ucs(const char* what, ucs_status_t s) {
  fail(s == UCS_ERR_UNREACHABLE || s == UCS_ERR_CONNECTION_RESET || s == UCS_ERR_ENDPOINT_TIMEOUT ||
               s == UCS_ERR_REJECTED || s == UCS_ERR_NOT_CONNECTED || s == UCS_ERR_CANCELED
           ? Code::Unavailable
           : Code::Internal,
       what, ": ", ucs_status_string(s));
}

std::string to_hex(const void* data, std::size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto b = static_cast<const unsigned char*>(data)[i];
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

// "ucx:HEX" -> the worker address bytes.
Bytes parse_address(const std::string& address) {
  if (address.rfind(kScheme, 0) != 0) fail(Code::InvalidArgument, "address '", address, "' is not a UCX address (ucx:HEX)");
  const std::string hex = address.substr(std::strlen(kScheme));
  auto nibble = [&](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    fail(Code::InvalidArgument, "UCX address '", address.substr(0, 40), "...' has a bad character '", c, "'");
  };
  if (hex.empty() || hex.size() % 2) fail(Code::InvalidArgument, "UCX address '", address.substr(0, 40), "' is malformed");
  Bytes out(hex.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<std::byte>(nibble(hex[2 * i]) * 16 + nibble(hex[2 * i + 1]));
  return out;
}

class UcxEndpoint;

struct UcxPeer final : PeerHandle {
  ucp_ep_h ep = nullptr;
  std::string addr;
  std::atomic<bool> failed{false};
  std::map<std::string, ucp_rkey_h> rkeys;  // progress thread only
  std::string address() const override { return addr; }
  ~UcxPeer() override {
    for (auto& [k, r] : rkeys) ucp_rkey_destroy(r);
  }
};

// The head of a memory key; the packed UCX rkey follows it. The identity
// fields let a reader on the same host copy the bytes itself, by
// process_vm_readv (see SameHost below).
struct KeyHeader {
  std::uint64_t address;
  std::uint64_t length;
  std::uint64_t pid;
  std::uint64_t start_time;  // the owner's start time (clock ticks since boot): pids are reused
  std::uint64_t host[2];     // boot id: same kernel
  std::uint64_t pid_ns;      // pid namespace: the pid means the same process to us
};

// Who this process is, for memory keys, and whether another key's owner is
// reachable by process_vm_readv/writev: same kernel, same pid namespace.
// That path moves bulk data in one kernel copy without the progress thread
// and whatever UCX_TLS says; a dead owner is a clean ESRCH. COVE_CMA=0
// turns it off (UCX then moves the bytes).
struct SameHost {
  std::uint64_t pid = 0, start_time = 0, host[2] = {0, 0}, pid_ns = 0;
  bool enabled = false;

  static std::uint64_t start_time_of(std::uint64_t pid) {
    std::FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
    if (!f) return 0;
    char buf[1024];
    const std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    buf[n] = '\0';
    const char* p = std::strrchr(buf, ')');  // the command name may contain spaces
    if (!p) return 0;
    // Field 22 is starttime; after ')' come fields 3, 4, ...
    for (int field = 2; field < 22 && p; ++field) p = std::strchr(p + 1, ' ');
    return p ? std::strtoull(p + 1, nullptr, 10) : 0;
  }

  SameHost() {
    const char* env = std::getenv("COVE_CMA");
    if (env && std::strcmp(env, "0") == 0) return;
    pid = static_cast<std::uint64_t>(::getpid());
    start_time = start_time_of(pid);
    if (std::FILE* f = std::fopen("/proc/sys/kernel/random/boot_id", "r")) {
      char id[64] = {0};
      if (std::fgets(id, sizeof id, f)) {
        std::string hex;
        for (char c : std::string(id)) if (std::isxdigit(static_cast<unsigned char>(c))) hex += c;
        if (hex.size() == 32) {
          host[0] = std::stoull(hex.substr(0, 16), nullptr, 16);
          host[1] = std::stoull(hex.substr(16), nullptr, 16);
        }
      }
      std::fclose(f);
    }
    struct stat st {};
    if (::stat("/proc/self/ns/pid", &st) == 0) pid_ns = st.st_ino;
    enabled = start_time && (host[0] || host[1]) && pid_ns;
  }

  void stamp(KeyHeader& k) const {
    k.pid = pid;
    k.start_time = start_time;
    k.host[0] = host[0];
    k.host[1] = host[1];
    k.pid_ns = pid_ns;
  }
  bool reaches(const KeyHeader& k) const {
    return enabled && k.pid && k.host[0] == host[0] && k.host[1] == host[1] && k.pid_ns == pid_ns;
  }
};

const SameHost& same_host() {
  static const SameHost s;
  return s;
}

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
    Bytes k = key_;
    KeyHeader kh;
    std::memcpy(&kh, k.data(), sizeof kh);
    kh.address += offset;
    kh.length = length;
    std::memcpy(k.data(), &kh, sizeof kh);
    return k;
  }

 private:
  UcxEndpoint* ep_;
  ucp_mem_h memh_;
  Bytes key_;
  std::size_t size_;
};

// Completion state of a batch of non-blocking operations.
struct Batch {
  int outstanding = 0;
  ucs_status_t status = UCS_OK;
  std::promise<void> done;
  void finish_one(ucs_status_t s) {
    if (s != UCS_OK && status == UCS_OK) status = s;
    if (--outstanding == 0) {
      if (status == UCS_OK)
        done.set_value();
      else
        done.set_exception(std::make_exception_ptr(Error(
            status == UCS_ERR_CANCELED || status == UCS_ERR_CONNECTION_RESET || status == UCS_ERR_ENDPOINT_TIMEOUT ||
                    status == UCS_ERR_UNREACHABLE
                ? Code::Unavailable
                : Code::Internal,
            std::string("remote memory access failed: ") + ucs_status_string(status))));
    }
  }
};

// UCX's error-handling mode for our endpoints: COVE_UCX_ERR_MODE=peer
// (default) detects failed peers, which UCX 1.13 supports only over TCP
// here; "none" lets UCX use shared memory (posix/sysv + cma) but a peer
// that dies is not noticed. See docs/transport.md.
ucp_err_handling_mode_t err_mode_from_env() {
  const char* v = std::getenv("COVE_UCX_ERR_MODE");
  if (!v || std::strcmp(v, "peer") == 0) return UCP_ERR_HANDLING_MODE_PEER;
  if (std::strcmp(v, "none") == 0) return UCP_ERR_HANDLING_MODE_NONE;
  fail(Code::InvalidArgument, "COVE_UCX_ERR_MODE = '", v, "'; expected 'peer' or 'none'");
}

// How long the progress thread keeps polling after activity:
// COVE_UCX_SPIN_US (microseconds), default 200.
std::chrono::microseconds spin_from_env() {
  if (const char* v = std::getenv("COVE_UCX_SPIN_US")) {
    char* end = nullptr;
    const long us = std::strtol(v, &end, 10);
    if (*v && *end == '\0' && us >= 0 && us <= 10'000'000) return std::chrono::microseconds(us);
    fail(Code::InvalidArgument, "COVE_UCX_SPIN_US = '", v, "' is not a number of microseconds in 0..10000000");
  }
  return std::chrono::microseconds(200);
}

class UcxEndpoint final : public Endpoint {
 public:
  // Everything UCX happens on the progress thread, creation and teardown
  // included: with some transports (e.g. UCX_TLS=sm) the worker's async
  // context is signal-driven and must be used from the thread that made it.
  UcxEndpoint() {
    std::promise<void> ready;
    auto started = ready.get_future();
    progress_ = std::thread([this, &ready] {
      progress_id_ = std::this_thread::get_id();
      try {
        init();
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
  }

  std::string address() const override { return address_; }

  void serve(RequestHandler handler, DisconnectHandler on_disconnect) override {
    run([&] {
      if (handler_) fail(Code::InvalidArgument, "endpoint ", address_, " is already serving");
      handler_ = std::move(handler);
      on_disconnect_ = std::move(on_disconnect);
    });
  }

  // Makes an endpoint to `address` and says hello: the answer proves the
  // peer is there and has an endpoint back to us.
  Peer connect(const std::string& address, Deadline deadline) override {
    const Bytes worker_address = parse_address(address);
    const InFlight counted(in_flight_);
    for (;;) {
      const std::uint64_t hello = next_hello_++;
      std::future<void> acked;
      {
        std::lock_guard lock(pending_mutex_);
        acked = hellos_[hello].get_future();
      }
      auto peer = run([&] {
        auto p = create_ep(worker_address, address);
        auto message = std::make_shared<Bytes>(sizeof hello + address_.size());
        std::memcpy(message->data(), &hello, sizeof hello);
        std::memcpy(message->data() + sizeof hello, address_.data(), address_.size());
        send_am(p->ep, kAmHello, message, true);
        return p;
      });
      const auto wait_until = std::min(deadline, Clock::now() + std::chrono::milliseconds(500));
      bool ok = false;
      std::string why = "no answer";
      if (acked.wait_until(wait_until) == std::future_status::ready) {
        try {
          acked.get();
          ok = true;
        } catch (const Error& e) {
          why = e.what();
        }
      }
      if (ok) return peer;
      {
        std::lock_guard lock(pending_mutex_);
        hellos_.erase(hello);
      }
      run([&] { drop_peer(peer->ep); });
      if (Clock::now() >= deadline) fail(Code::Unavailable, "no endpoint answers at ", address.substr(0, 48), "... (", why, ")");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  // Replies are matched by a call id carried in the active-message header
  // and echoed back, never by parsing the message: even a garbage request
  // gets its (error) answer to the right caller.
  Bytes call(const Peer& peer, Bytes request, Deadline deadline) override {
    auto* p = as_ucx(peer);
    if (p->failed) fail(Code::Unavailable, "peer ", p->address(), " has failed");
    const InFlight counted(in_flight_);
    const std::uint64_t id = next_call_++;
    std::future<Bytes> answer;
    {
      std::lock_guard lock(pending_mutex_);
      auto& slot = pending_[id];
      slot.ep = p->ep;
      answer = slot.promise.get_future();
    }
    auto shared = std::make_shared<Bytes>(std::move(request));
    run([&] { send_am(p->ep, kAmRequest, shared, true, id); });
    if (deadline != kNoDeadline && answer.wait_until(deadline) != std::future_status::ready) {
      std::lock_guard lock(pending_mutex_);
      pending_.erase(id);
      fail(Code::Timeout, "no answer from ", p->address().substr(0, 48), " before the deadline");
    }
    return answer.get();
  }

  std::unique_ptr<MemoryRegion> expose(void* data, std::size_t bytes) override {
    return run([&]() -> std::unique_ptr<MemoryRegion> {
      KeyHeader kh{reinterpret_cast<std::uint64_t>(data), bytes, 0, 0, {0, 0}, 0};
      same_host().stamp(kh);
      Bytes key(sizeof kh);
      std::memcpy(key.data(), &kh, sizeof kh);
      if (bytes == 0) return std::make_unique<UcxRegion>(this, nullptr, std::move(key), 0);
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
      key.insert(key.end(), static_cast<std::byte*>(rkey), static_cast<std::byte*>(rkey) + rkey_size);
      ucp_rkey_buffer_release(rkey);
      return std::make_unique<UcxRegion>(this, memh, std::move(key), bytes);
    });
  }

  void read(const Peer& peer, std::span<const std::byte> key, std::span<const RemoteOp> ops, Deadline) override {
    rma(peer, key, ops, false);
  }
  void write(const Peer& peer, std::span<const std::byte> key, std::span<const RemoteOp> ops, Deadline) override {
    rma(peer, key, ops, true);
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

  // Queues f for the progress thread and returns at once: for callers that
  // may hold locks the progress thread can need (a server answering under
  // its own mutex), and for work that must not run inside ucp_worker_progress.
  void post(std::function<void()> f) {
    {
      std::lock_guard lock(command_mutex_);
      if (closed_) return;
      commands_.push_back(std::move(f));
      has_commands_.store(true, std::memory_order_release);
    }
    command_posted_.notify_one();
  }

  void init() {
    ucp_params_t params{};
    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    // No UCP_FEATURE_WAKEUP: UCX would then pick only transports that can
    // raise events, which excludes shared memory. The progress thread polls.
    params.features = UCP_FEATURE_AM | UCP_FEATURE_RMA;
    ucp_config_t* config = nullptr;
    ucs_status_t s = ucp_config_read(nullptr, nullptr, &config);
    if (s != UCS_OK) fail_ucs("reading the UCX configuration", s);
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
                                                                     {kAmReply, &UcxEndpoint::on_reply},
                                                                     {kAmHello, &UcxEndpoint::on_hello},
                                                                     {kAmHelloAck, &UcxEndpoint::on_hello_ack}};
    for (const auto& [id, cb] : handlers) {
      ucp_am_handler_param_t hp{};
      hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
      hp.id = id;
      hp.cb = cb;
      hp.arg = this;
      ucp_worker_set_am_recv_handler(worker_, &hp);
    }
    ucp_address_t* addr = nullptr;
    std::size_t len = 0;
    if ((s = ucp_worker_get_address(worker_, &addr, &len)) != UCS_OK) {
      destroy_worker();
      fail_ucs("getting the UCX worker address", s);
    }
    address_ = kScheme + to_hex(addr, len);
    ucp_worker_release_address(worker_, addr);
  }

  void teardown() {
    for (auto& [ep, peer] : peers_) {
      peer->failed = true;
      for (auto& [k, r] : peer->rkeys) ucp_rkey_destroy(r);  // peers may outlive the worker
      peer->rkeys.clear();
      close_ep(ep);
    }
    peers_.clear();
    by_reply_ep_.clear();
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

  // Polls the worker. It spins for spin_ after any activity (up to
  // kWaitSpin while this endpoint waits on the network: calls, one-sided
  // batches, hellos in flight), so an exchange in progress pays no wake-up
  // latency; otherwise
  // it sleeps in short waits that a posted command cuts short, so an idle
  // endpoint leaves the cores to others. Messages arriving while it sleeps
  // wait at most about kIdleWait, or kDormantWait after kDormantAfter
  // without activity or anything awaited.
  void progress_loop() {
    static constexpr auto kIdleWait = std::chrono::microseconds(50);
    static constexpr auto kWaitSpin = std::chrono::microseconds(1000);
    static constexpr auto kDormantAfter = std::chrono::milliseconds(20);
    static constexpr auto kDormantWait = std::chrono::microseconds(1000);
    prctl(PR_SET_TIMERSLACK, 1000UL);  // 1 us: short sleeps should be short
    auto last_activity = Clock::now();
    unsigned idle_spins = 0;
    while (!stopping_) {
      bool active = ucp_worker_progress(worker_) != 0;
      if (has_commands_.load(std::memory_order_acquire)) {
        std::deque<std::function<void()>> todo;
        {
          std::lock_guard lock(command_mutex_);
          todo.swap(commands_);
          has_commands_.store(false, std::memory_order_release);
        }
        for (auto& c : todo) c();
        active = true;
      }
      if (active) {
        idle_spins = 0;
        continue;
      }
      if (++idle_spins % 64 != 0) continue;  // reading the clock costs more than a poll
      const auto now = Clock::now();
      if (idle_spins == 64) last_activity = now;
      // Waiting on the network keeps it spinning longer, but not forever: a
      // get parked at the server for seconds must not hold a core meanwhile.
      const auto budget = in_flight_.load(std::memory_order_acquire) > 0 ? std::max(spin_, kWaitSpin) : spin_;
      if (now - last_activity > budget) {
        // Long idle and waiting on nothing: longer naps. Each nap is a
        // wake-up and a poll of the sockets; many idle processes napping
        // 50 us took the cores from the ones copying (kokkos 4->2+2 in
        // docs/bench-compare.md). A posted command still cuts a nap short.
        const bool dormant = in_flight_.load(std::memory_order_acquire) == 0 && now - last_activity > kDormantAfter;
        std::unique_lock lock(command_mutex_);
        command_posted_.wait_for(lock, dormant ? kDormantWait : kIdleWait, [&] { return !commands_.empty(); });
      }
    }
  }

  // Counts an operation this endpoint waits on, for the progress policy.
  struct InFlight {
    std::atomic<int>& n;
    explicit InFlight(std::atomic<int>& c) : n(c) { n.fetch_add(1, std::memory_order_acq_rel); }
    ~InFlight() { n.fetch_sub(1, std::memory_order_acq_rel); }
  };

  std::shared_ptr<UcxPeer> create_ep(const Bytes& worker_address, const std::string& address) {
    ucp_ep_params_t ep{};
    ep.field_mask =
        UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLER | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
    ep.address = reinterpret_cast<const ucp_address_t*>(worker_address.data());
    ep.err_mode = err_mode_;
    ep.err_handler.cb = &UcxEndpoint::on_ep_error;
    ep.err_handler.arg = this;
    ucp_ep_h h = nullptr;
    const ucs_status_t s = ucp_ep_create(worker_, &ep, &h);
    if (s != UCS_OK) fail_ucs("creating a UCX endpoint", s);
    auto peer = std::make_shared<UcxPeer>();
    peer->ep = h;
    peer->addr = address;
    peers_[h] = peer;
    return peer;
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

  void rma(const Peer& peer, std::span<const std::byte> key, std::span<const RemoteOp> ops, bool write) {
    auto* p = as_ucx(peer);
    KeyHeader kh;
    if (key.size() < sizeof kh) fail(Code::InvalidArgument, "memory key of ", key.size(), " bytes is malformed");
    std::memcpy(&kh, key.data(), sizeof kh);
    for (const auto& op : ops)
      if (op.offset > kh.length || op.bytes > kh.length - op.offset)
        fail(Code::InvalidArgument, "remote access [", op.offset, ", +", op.bytes, ") is outside the ", kh.length,
             "-byte region");
    if (cma_ok_ && same_host().reaches(kh) && copy_direct(kh, ops, write)) return;
    const InFlight counted(in_flight_);
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
      batch->finish_one(UCS_OK);
    });
    done.get();
  }

  // Sends `message` with `call_id` as the active-message header.
  // Copies the ops' bytes straight from (or to) the owner process. Returns
  // false when the kernel refuses (then UCX moves them, now and from then on).
  // One process_vm_readv moves about half of what memcpy does here (it pins
  // every page and copies on one core), so copies of kParallelBytes and more
  // are cut into equal shares run on the shared thread pool.
  bool copy_direct(const KeyHeader& kh, std::span<const RemoteOp> ops, bool write) {
    if (SameHost::start_time_of(kh.pid) != kh.start_time)
      fail(Code::Unavailable, "the process that owns this memory (pid ", kh.pid, ") is gone");
    constexpr std::size_t kParallelBytes = std::size_t{8} << 20;
    std::size_t total = 0;
    for (const auto& op : ops) total += op.bytes;
    ThreadPool* pool = total >= kParallelBytes ? &ThreadPool::shared() : nullptr;
    const int shares = pool ? std::min(pool->size(), 4) : 1;
    if (shares <= 1) {
      const int e = copy_share(kh, ops, 0, total, write);
      return e == 0 || refused(e, kh);
    }
    std::atomic<int> error{0};
    pool->parallel_for(shares, [&](int i) {
      const std::size_t from = total * static_cast<std::size_t>(i) / static_cast<std::size_t>(shares);
      const std::size_t to = total * static_cast<std::size_t>(i + 1) / static_cast<std::size_t>(shares);
      int expected = 0;
      if (const int e = copy_share(kh, ops, from, to, write)) error.compare_exchange_strong(expected, e);
    });
    return error == 0 || refused(error, kh);
  }

  // After a copy failed with errno `e`: false if the kernel refused (the
  // caller falls back to UCX); throws for the other failures.
  bool refused(int e, const KeyHeader& kh) {
    if (e == EPERM || e == ENOSYS) {
      cma_ok_ = false;
      return false;
    }
    if (e == ESRCH) fail(Code::Unavailable, "the process that owns this memory (pid ", kh.pid, ") is gone");
    fail(Code::NotFound, "remote memory of pid ", kh.pid, " cannot be accessed: ", std::strerror(e));
  }

  // Copies bytes [from, to) of the ops taken end to end. Returns 0, or the
  // errno of the failed call.
  int copy_share(const KeyHeader& kh, std::span<const RemoteOp> ops, std::size_t from, std::size_t to, bool write) {
    const auto pid = static_cast<pid_t>(kh.pid);
    constexpr std::size_t kIov = 512;  // well under IOV_MAX
    std::vector<iovec> local, remote;
    auto flush = [&]() -> int {
      std::size_t i = 0;
      while (i < local.size()) {
        const std::size_t n = std::min(kIov, local.size() - i);
        const ssize_t done = write ? ::process_vm_writev(pid, &local[i], n, &remote[i], n, 0)
                                   : ::process_vm_readv(pid, &local[i], n, &remote[i], n, 0);
        if (done < 0) return errno;
        // A partial transfer ends inside some iovec: skip what was done and go on from there.
        auto left = static_cast<std::size_t>(done);
        while (i < local.size() && left >= local[i].iov_len) left -= local[i++].iov_len;
        if (left > 0) {
          local[i].iov_base = static_cast<char*>(local[i].iov_base) + left;
          local[i].iov_len -= left;
          remote[i].iov_base = static_cast<char*>(remote[i].iov_base) + left;
          remote[i].iov_len -= left;
        }
      }
      local.clear();
      remote.clear();
      return 0;
    };
    std::size_t at = 0;  // bytes of the ops before `op`
    for (const auto& op : ops) {
      const std::size_t lo = std::max(at, from), hi = std::min(at + op.bytes, to);
      if (lo < hi) {
        const std::size_t skip = lo - at;
        local.push_back({static_cast<char*>(op.local) + skip, hi - lo});
        remote.push_back({reinterpret_cast<void*>(kh.address + op.offset + skip), hi - lo});
        if (local.size() == kIov)
          if (const int e = flush()) return e;
      }
      at += op.bytes;
      if (at >= to) break;
    }
    return flush();
  }

  void send_am(ucp_ep_h ep, unsigned id, const std::shared_ptr<Bytes>& message, bool want_reply,
               std::uint64_t call_id = 0) {
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

  // A peer says hello: make (or reuse) our endpoint to it, remember which
  // UCX reply endpoint its messages arrive on, and acknowledge.
  static ucs_status_t on_hello(void* arg, const void*, std::size_t, void* data, std::size_t length,
                               const ucp_am_recv_param_t* param) {
    auto* self = static_cast<UcxEndpoint*>(arg);
    std::uint64_t hello = 0;
    if (length < sizeof hello || (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) ||
        !(param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP))
      return UCS_OK;  // not a hello we can answer
    std::memcpy(&hello, data, sizeof hello);
    const std::string from(static_cast<const char*>(data) + sizeof hello, length - sizeof hello);
    try {
      std::shared_ptr<UcxPeer> peer;
      for (auto& [ep, p] : self->peers_)
        if (p->addr == from && !p->failed) peer = p;
      if (!peer) peer = self->create_ep(parse_address(from), from);
      self->by_reply_ep_[param->reply_ep] = peer;
      auto ack = std::make_shared<Bytes>(sizeof hello);
      std::memcpy(ack->data(), &hello, sizeof hello);
      self->send_am(peer->ep, kAmHelloAck, ack, false);
    } catch (const Error&) {
      // A malformed address: no answer, the caller times out.
    }
    return UCS_OK;
  }

  static ucs_status_t on_hello_ack(void* arg, const void*, std::size_t, void* data, std::size_t length,
                                   const ucp_am_recv_param_t*) {
    auto* self = static_cast<UcxEndpoint*>(arg);
    std::uint64_t hello = 0;
    if (length != sizeof hello) return UCS_OK;
    std::memcpy(&hello, data, sizeof hello);
    std::lock_guard lock(self->pending_mutex_);
    auto it = self->hellos_.find(hello);
    if (it != self->hellos_.end()) {
      it->second.set_value();
      self->hellos_.erase(it);
    }
    return UCS_OK;
  }

  static void on_ep_error(void* arg, ucp_ep_h ep, ucs_status_t status) {
    auto* self = static_cast<UcxEndpoint*>(arg);
    auto it = self->peers_.find(ep);
    if (it != self->peers_.end()) it->second->failed = true;
    self->fail_pending(ep, std::string("peer failed: ") + ucs_status_string(status));
    self->post([self, ep] { self->drop_peer(ep); });  // closing drives progress: not from inside it
  }

  void drop_peer(ucp_ep_h ep) {
    auto it = peers_.find(ep);
    if (it == peers_.end()) return;
    it->second->failed = true;
    bool served = false;
    for (auto r = by_reply_ep_.begin(); r != by_reply_ep_.end();) {
      served |= r->second == it->second;
      r = r->second == it->second ? by_reply_ep_.erase(r) : std::next(r);
    }
    if (served && on_disconnect_) on_disconnect_(it->second);
    close_ep(ep);
    peers_.erase(it);
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
  // ones by rendezvous, fetched here before delivery.
  static ucs_status_t receive(UcxEndpoint* self, bool is_request, const void* header, std::size_t header_length,
                              void* data, std::size_t length, const ucp_am_recv_param_t* param) {
    ucp_ep_h from = (param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) ? param->reply_ep : nullptr;
    std::uint64_t call = 0;
    if (header_length != sizeof call) return UCS_OK;  // not one of ours
    std::memcpy(&call, header, sizeof call);
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

  static UcxPeer* as_ucx(const Peer& peer) {
    auto* p = dynamic_cast<UcxPeer*>(peer.get());
    if (!p) fail(Code::InvalidArgument, "peer does not belong to the UCX transport");
    return p;
  }

  void destroy_worker() {
    if (worker_) ucp_worker_destroy(worker_);
    if (context_) ucp_cleanup(context_);
    worker_ = nullptr;
    context_ = nullptr;
  }

  friend class UcxRequest;

  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  std::chrono::microseconds spin_ = spin_from_env();
  ucp_err_handling_mode_t err_mode_ = err_mode_from_env();
  std::atomic<bool> cma_ok_{true};  // false once the kernel has refused process_vm_readv
  std::string address_;
  std::thread progress_;
  std::atomic<std::thread::id> progress_id_{};
  bool stopping_ = false;  // progress thread only
  std::mutex command_mutex_;
  std::deque<std::function<void()>> commands_;
  std::condition_variable command_posted_;
  std::atomic<bool> has_commands_{false};
  std::atomic<int> in_flight_{0};
  bool closed_ = false;  // under command_mutex_
  std::mutex pending_mutex_;
  std::map<std::uint64_t, Pending> pending_;
  std::map<ucp_ep_h, std::shared_ptr<UcxPeer>> peers_;         // our endpoints; progress thread only
  std::map<ucp_ep_h, std::shared_ptr<UcxPeer>> by_reply_ep_;   // UCX reply endpoint -> the peer who said hello
  std::map<std::uint64_t, std::promise<void>> hellos_;         // under pending_mutex_
  std::atomic<std::uint64_t> next_hello_{1};
  std::atomic<std::uint64_t> next_call_{1};
  RequestHandler handler_;                             // set on the progress thread
  DisconnectHandler on_disconnect_;
};

UcxRegion::~UcxRegion() { ep_->unmap(memh_); }

class UcxRequest final : public Request {
 public:
  UcxRequest(UcxEndpoint* ep, std::uint64_t call, Bytes message, Peer peer)
      : ep_(ep), call_(call), message_(std::move(message)), peer_(std::move(peer)) {}
  std::span<const std::byte> message() const override { return message_; }
  const Peer& peer() const override { return peer_; }
  // Never blocks: the server answers while holding its own lock.
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
    {
      std::lock_guard lock(pending_mutex_);
      auto it = pending_.find(call);
      if (it == pending_.end()) return;  // its caller gave up
      it->second.promise.set_value(std::move(message));
      pending_.erase(it);
    }
    // Let the caller we just woke have this core: with few cores, spinning
    // on would keep it waiting for a time slice.
    std::this_thread::yield();
    return;
  }
  if (!handler_ || !from) return;
  auto it = by_reply_ep_.find(from);
  if (it == by_reply_ep_.end()) return;  // a request from a peer that never said hello
  handler_(std::make_shared<UcxRequest>(this, call, std::move(message), it->second));
}

}  // namespace

std::unique_ptr<Endpoint> make_ucx_endpoint() { return std::make_unique<UcxEndpoint>(); }

}  // namespace cove::net
