// Internal: the server's request dispatcher. Every message type has one
// handler, registered in a table with where it runs:
//   - inline, on the transport's thread, for requests that never wait on a
//     transfer or another server (a hand-off to a worker costs more than
//     they do);
//   - on a worker thread, for puts that forward index entries and grants.
// (Puts whose bytes the server reads from the writer run on threads of
// their own: transfers.hpp.)
//
// Before anything is decoded, the dispatcher checks who sent the message
// (net::kOps says who may): Hello first on every connection, then Join,
// which proves the group's secret; every other request only from a
// connection that proved it, and the servers' own messages only from a
// server that did.
// Every request gets exactly one reply: its handler's, or an error reply
// built from the exception the handler threw.
//
// Thread-safety: register handlers before start(); deliver() may be called
// from any thread.
#pragma once

#include "net/messages.hpp"
#include "net/transport.hpp"
#include "server/session.hpp"

#include <array>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace cove::server {

// Answers one request, exactly once (later ones are ignored), from any thread.
class Responder {
 public:
  Responder(std::shared_ptr<net::Request> request, const net::Header& header, std::atomic<std::uint64_t>* answered)
      : request_(std::move(request)), type_(header.type), id_(header.request_id), answered_(answered) {}

  template <typename M>
  void reply(const typename M::Reply& reply) {
    send(net::encode_reply<M>(reply, id_));
  }
  void fail(Code code, const std::string& message) { send(net::error_reply(type_, id_, code, message)); }
  // The error an exception carries (Internal for one that is not a cove::Error).
  void fail(const std::exception_ptr& error);
  const net::Peer& peer() const { return request_->peer(); }

 private:
  void send(net::Bytes message);
  std::shared_ptr<net::Request> request_;
  std::uint16_t type_;
  std::uint64_t id_;
  std::atomic<std::uint64_t>* answered_;
  std::shared_ptr<std::atomic<bool>> done_ = std::make_shared<std::atomic<bool>>(false);
};

class Dispatcher {
 public:
  // Where a handler runs; evaluated per request (a put runs inline while
  // there is no other server to forward to).
  using RunsInline = std::function<bool()>;
  static RunsInline always() {
    return [] { return true; };
  }
  static RunsInline never() {
    return [] { return false; };
  }

  explicit Dispatcher(int workers) : workers_(workers) {}
  ~Dispatcher() { stop(); }

  // A handler that answers at once: Reply fn(Session&, Request&&).
  template <net::Op op, typename Fn>
  void on(RunsInline runs_inline, Fn fn) {
    using M = net::Message<op>;
    add(op, std::move(runs_inline), [fn = std::move(fn)](Session& s, const net::Request& r, Responder answer) mutable {
      answer.template reply<M>(fn(s, net::decode_body<typename M::Request>(r.message())));
    });
  }
  // A handler that answers now or later through its Responder:
  // void fn(Session&, Request&&, Responder).
  template <net::Op op, typename Fn>
  void on_async(RunsInline runs_inline, Fn fn) {
    using M = net::Message<op>;
    add(op, std::move(runs_inline), [fn = std::move(fn)](Session& s, const net::Request& r, Responder answer) mutable {
      fn(s, net::decode_body<typename M::Request>(r.message()), std::move(answer));
    });
  }

  // Starts the worker threads.
  void start();
  // Routes one request (from the transport's thread).
  void deliver(std::shared_ptr<net::Request> request);
  // Joins the workers and waits for the handlers running on other threads
  // (inline ones run on the transport's or, in process, on the caller's
  // thread), so that nothing a handler touches goes while it runs; queued
  // and later requests are dropped (their callers see the connection
  // fail). Idempotent; a handler may call it (its own run is not waited for).
  void stop();
  bool is_worker(std::thread::id id) const;

  std::uint64_t answered() const noexcept { return answered_; }

 private:
  using Handler = std::function<void(Session&, const net::Request&, Responder)>;
  struct Entry {
    RunsInline runs_inline;
    Handler handler;
  };
  void add(net::Op op, RunsInline runs_inline, Handler handler);
  void run(const std::shared_ptr<net::Request>& request);     // counted in running_, none after stop()
  void handle(const std::shared_ptr<net::Request>& request);  // checks the sender, then the handler
  void work();

  int workers_;
  std::array<Entry, net::kOps.size() + 1> table_{};  // by type
  std::atomic<std::uint64_t> answered_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<net::Request>> queue_;
  bool stopped_ = false;
  int running_ = 0;              // run()s in progress, on any thread
  std::condition_variable idle_;  // running_ went down
  std::vector<std::thread> threads_;
};

}  // namespace cove::server
