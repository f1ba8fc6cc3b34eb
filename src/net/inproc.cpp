// The in-process transport: endpoints in one process find each other in a
// registry by name; a call runs the callee's request handler on the
// caller's own thread (the handler answers at once, or hands the request
// to its own workers and the caller waits for the answer), and one-sided
// reads are memcpy within bounds-checked regions (no writes: those are
// UCX's alone, see transport.hpp). Stopping an endpoint waits for the
// calls running its handler.
// Used by unit tests and by a server embedded in its client's process.
#include "net/transport.hpp"

#include "core/fail.hpp"
#include "net/protocol.hpp"
#include "net/region_table.hpp"

#include <condition_variable>
#include <cstring>
#include <optional>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <atomic>
#include <thread>  // sleep_for

namespace cove::net {

using detail::fail;

namespace {

constexpr const char* kScheme = "inproc://";

class InprocEndpoint;

struct Registry {
  std::mutex mutex;
  std::map<std::string, std::weak_ptr<InprocEndpoint>> by_name;
};
Registry& registry() {
  // Never destroyed: endpoints held by static objects go after it at exit.
  static Registry& r = *new Registry;
  return r;
}

struct InprocPeer final : PeerHandle {
  std::weak_ptr<InprocEndpoint> target;
  std::string name;
  std::string address() const override { return name.empty() ? "" : kScheme + name; }
  const char* transport() const override { return "inproc"; }
  bool may_claim(const std::string&) const override { return true; }  // one process: nobody to impersonate
};

// Key of an exposed region: its id in the exposing endpoint's table.
struct Key {
  std::uint64_t region;
  std::uint64_t owner;  // the exposing endpoint's serial, so a key cannot be used against another endpoint
  std::uint64_t offset;  // a window of the region: [offset, offset + length)
  std::uint64_t length;
};

class InprocRegion final : public MemoryRegion {
 public:
  InprocRegion(std::shared_ptr<RegionTable> table, void* data, std::size_t n, std::uint64_t owner)
      : table_(std::move(table)), size_(n) {
    std::unique_lock lock(table_->mutex);
    key_.region = table_->next++;
    key_.owner = owner;
    key_.offset = 0;
    key_.length = n;
    table_->regions[key_.region] = {static_cast<std::byte*>(data), n};
  }
  ~InprocRegion() override {
    std::unique_lock lock(table_->mutex);
    table_->regions.erase(key_.region);
  }
  std::span<const std::byte> key() const override { return {reinterpret_cast<const std::byte*>(&key_), sizeof key_}; }
  std::size_t size() const override { return size_; }
  Bytes window_key(std::size_t offset, std::size_t length) const override {
    if (offset > size_ || length > size_ - offset)
      fail(Code::InvalidArgument, "window [", offset, ", +", length, ") is outside the ", size_, "-byte region");
    Key k = key_;
    k.offset = offset;
    k.length = length;
    Bytes out(sizeof k);
    std::memcpy(out.data(), &k, sizeof k);
    return out;
  }

 private:
  std::shared_ptr<RegionTable> table_;
  Key key_;
  std::size_t size_;
};

// Where a call's answer lands. A handler usually answers before the
// caller waits (it runs on the caller's thread), so this is a mutex and a
// condition variable, which cost no system call when nobody waits, rather
// than a promise (whose set_value always wakes a futex).
struct Answer {
  std::mutex mutex;
  std::condition_variable ready;
  std::optional<Bytes> message;  // set by reply()
  bool dropped = false;          // the request went unanswered
};

class InprocRequest final : public Request {
 public:
  InprocRequest(Bytes message, Peer from, std::shared_ptr<Answer> answer)
      : message_(std::move(message)), peer_(std::move(from)), answer_(std::move(answer)) {}
  ~InprocRequest() override {
    if (answer_) settle([](Answer& a) { a.dropped = true; });
  }
  std::span<const std::byte> message() const override { return message_; }
  const Peer& peer() const override { return peer_; }
  void reply(Bytes message) override {
    if (!answer_) fail(Code::Internal, "request answered twice");
    settle([&](Answer& a) { a.message = std::move(message); });
  }

 private:
  template <typename Set>
  void settle(Set set) {
    {
      std::lock_guard lock(answer_->mutex);
      set(*answer_);
    }
    answer_->ready.notify_one();
    answer_.reset();
  }

  Bytes message_;
  Peer peer_;
  std::shared_ptr<Answer> answer_;
};

class InprocEndpoint final : public Endpoint, public std::enable_shared_from_this<InprocEndpoint> {
 public:
  InprocEndpoint(std::string name, std::uint64_t serial) : name_(std::move(name)), serial_(serial) {}
  ~InprocEndpoint() override { stop(); }

  void stop() {
    std::map<std::uint64_t, std::pair<std::weak_ptr<InprocEndpoint>, std::shared_ptr<InprocPeer>>> callees;
    {
      std::unique_lock lock(mutex_);
      stopping_ = true;
      callees.swap(as_caller_);
      // Calls running the handler finish first (unless this thread is one).
      idle_.wait(lock, [&] { return running_ == handling_here(); });
    }
    // The endpoints this one called hear that their connection from it closed.
    for (auto& [serial, entry] : callees)
      if (auto callee = entry.first.lock()) callee->closed(entry.second);
  }

  std::string address() const override { return kScheme + name_; }

  void serve(RequestHandler handler, DisconnectHandler on_disconnect) override {
    std::lock_guard lock(mutex_);
    if (handler_) fail(Code::InvalidArgument, "endpoint ", address(), " is already serving");
    handler_ = std::move(handler);
    on_disconnect_ = std::move(on_disconnect);
  }

  // A caller's connection to this endpoint closed.
  void closed(const Peer& from) {
    DisconnectHandler notify;
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      notify = on_disconnect_;
    }
    if (notify) notify(from);
  }

  Peer connect(const std::string& address, Deadline deadline) override {
    if (address.rfind(kScheme, 0) != 0)
      fail(Code::InvalidArgument, "address '", address, "' is not an in-process address (inproc://NAME)");
    const std::string name = address.substr(std::strlen(kScheme));
    for (;;) {
      {
        std::lock_guard lock(registry().mutex);
        auto it = registry().by_name.find(name);
        if (it != registry().by_name.end())
          if (auto target = it->second.lock()) {
            auto peer = std::make_shared<InprocPeer>();
            peer->target = target;
            peer->name = name;
            return peer;
          }
      }
      if (Clock::now() >= deadline) fail(Code::Unavailable, "no endpoint at ", address);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }

  Bytes call(const Peer& peer, Bytes request, Deadline deadline) override {
    auto target = lock_target(peer);
    auto answer = std::make_shared<Answer>();
    target->handle(std::make_shared<InprocRequest>(std::move(request), as_caller_of(*target), answer));
    target.reset();  // do not keep the callee alive while waiting
    std::unique_lock lock(answer->mutex);
    const auto settled = [&] { return answer->message || answer->dropped; };
    if (deadline == kNoDeadline)
      answer->ready.wait(lock, settled);
    else if (!answer->ready.wait_until(lock, deadline, settled))
      fail(Code::Timeout, "no answer from ", peer->address(), " before the deadline");
    if (!answer->message) fail(Code::Unavailable, peer->address(), " went away before answering (request dropped unanswered)");
    return std::move(*answer->message);
  }

  std::unique_ptr<MemoryRegion> expose(void* data, std::size_t bytes) override {
    return std::make_unique<InprocRegion>(regions_, data, bytes, serial_);
  }

  void read(const Peer& peer, std::span<const std::byte> key, std::span<const RemoteOp> ops, Deadline) override {
    auto target = lock_target(peer);
    target->access(key, ops, [](std::byte* remote, const RemoteOp& op) { std::memcpy(op.local, remote, op.bytes); });
  }


  template <typename Copy>
  void access(std::span<const std::byte> key, std::span<const RemoteOp> ops, Copy copy) {
    Key k;
    if (key.size() != sizeof k) fail(Code::InvalidArgument, "memory key of ", key.size(), " bytes is malformed");
    std::memcpy(&k, key.data(), sizeof k);
    if (k.owner != serial_) fail(Code::InvalidArgument, "memory key was not issued by ", address());
    std::shared_lock lock(regions_->mutex);
    auto it = regions_->regions.find(k.region);
    if (it == regions_->regions.end())
      fail(Code::NotFound, "memory region ", k.region, " of ", address(), " has been withdrawn");
    const auto& r = it->second;
    if (k.offset > r.length || k.length > r.length - k.offset)
      fail(Code::InvalidArgument, "memory key window lies outside its region");
    for (const auto& op : ops)
      if (op.offset > k.length || op.bytes > k.length - op.offset)
        fail(Code::InvalidArgument, "remote access [", op.offset, ", +", op.bytes, ") is outside the ", k.length,
             "-byte region");
    for (const auto& op : ops) copy(r.base + k.offset + op.offset, op);
  }

  // Runs the handler on this (the caller's) thread; a request that comes
  // when the endpoint is stopping or not serving is dropped, which fails
  // its caller.
  void handle(std::shared_ptr<Request> r) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_ || !handler_) return;  // r's destructor fails the caller
      ++running_;
    }
    ++handling_[serial_];
    struct Done {
      InprocEndpoint& e;
      ~Done() {
        if (--handling_[e.serial_] == 0) handling_.erase(e.serial_);
        std::lock_guard lock(e.mutex_);
        --e.running_;
        e.idle_.notify_all();
      }
    } done{*this};
    handler_(std::move(r));  // set once by serve(), before any call could come
  }

 private:
  // This endpoint as `callee` sees it: one peer (one connection) per callee.
  Peer as_caller_of(InprocEndpoint& callee) {
    std::lock_guard lock(mutex_);
    auto& entry = as_caller_[callee.serial_];
    if (!entry.second) {
      entry.first = callee.weak_from_this();
      entry.second = std::make_shared<InprocPeer>();
      entry.second->target = weak_from_this();
      entry.second->name = name_;
    }
    return entry.second;
  }

  static std::shared_ptr<InprocEndpoint> lock_target(const Peer& peer) {
    auto* p = dynamic_cast<const InprocPeer*>(peer.get());
    if (!p) fail(Code::InvalidArgument, "peer does not belong to the in-process transport");
    auto target = p->target.lock();
    if (!target) fail(Code::Unavailable, "in-process peer ", p->address(), " is gone");
    return target;
  }

  // How many of the calls running this endpoint's handler are this thread's.
  int handling_here() const {
    auto it = handling_.find(serial_);
    return it == handling_.end() ? 0 : it->second;
  }

  std::string name_;
  std::uint64_t serial_;
  std::shared_ptr<RegionTable> regions_ = std::make_shared<RegionTable>();
  std::mutex mutex_;
  std::condition_variable idle_;  // running_ went down
  int running_ = 0;               // calls running the handler now
  // Per thread: how many calls it is running in each endpoint's handler (by serial).
  static thread_local std::map<std::uint64_t, int> handling_;
  RequestHandler handler_;
  DisconnectHandler on_disconnect_;
  // The endpoints this one has called, by serial, and the peer each sees.
  std::map<std::uint64_t, std::pair<std::weak_ptr<InprocEndpoint>, std::shared_ptr<InprocPeer>>> as_caller_;
  bool stopping_ = false;
};

thread_local std::map<std::uint64_t, int> InprocEndpoint::handling_;

// Unregisters the name when the endpoint is destroyed by its owner.
class InprocOwner final : public Endpoint {
 public:
  explicit InprocOwner(std::shared_ptr<InprocEndpoint> ep) : ep_(std::move(ep)) {}
  ~InprocOwner() override {
    {
      std::lock_guard lock(registry().mutex);
      auto it = registry().by_name.find(name_of(*ep_));
      if (it != registry().by_name.end() && it->second.lock() == ep_) registry().by_name.erase(it);
    }
    ep_->stop();
  }
  std::string address() const override { return ep_->address(); }
  void serve(RequestHandler h, DisconnectHandler d) override { ep_->serve(std::move(h), std::move(d)); }
  Peer connect(const std::string& a, Deadline d) override { return ep_->connect(a, d); }
  Bytes call(const Peer& p, Bytes r, Deadline d) override { return ep_->call(p, std::move(r), d); }
  std::unique_ptr<MemoryRegion> expose(void* data, std::size_t n) override { return ep_->expose(data, n); }
  void read(const Peer& p, std::span<const std::byte> k, std::span<const RemoteOp> ops, Deadline d) override {
    ep_->read(p, k, ops, d);
  }

 private:
  static std::string name_of(const InprocEndpoint& ep) { return ep.address().substr(std::strlen(kScheme)); }
  std::shared_ptr<InprocEndpoint> ep_;
};

}  // namespace

std::unique_ptr<Endpoint> make_inproc_endpoint(const std::string& name) {
  static std::atomic<std::uint64_t> serial{1};
  if (name.empty() || name.find('/') != std::string::npos)
    fail(Code::InvalidArgument, "in-process endpoint name '", name, "' must be non-empty and contain no '/'");
  auto ep = std::make_shared<InprocEndpoint>(name, serial++);
  std::lock_guard lock(registry().mutex);
  auto& slot = registry().by_name[name];
  if (slot.lock()) fail(Code::AlreadyExists, "an in-process endpoint named '", name, "' exists");
  slot = ep;
  return std::make_unique<InprocOwner>(ep);
}

}  // namespace cove::net
