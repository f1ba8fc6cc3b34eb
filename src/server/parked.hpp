// Internal: requests the server could not answer yet (a get waiting for
// its data, a metadata get waiting for its version), and their deadlines.
//
// A parked request waits on a key (a variable, or a metadata name). When
// something changes under a key, the server calls retry(key): each request
// parked on it tries again and leaves when it has answered. A timer thread
// calls expire() on each request whose deadline passes; expire() answers
// it (with Timeout, or whatever it can still give) and it leaves.
//
// Thread-safety: every function except the constructor and stop() must be
// called with `mutex` (the server's state lock) held; the timer thread
// takes it itself. A request's retry() and expire() run under it too, and
// must not release buffers there (they pass them out in `freed`).
#pragma once

#include "net/transport.hpp"
#include "store/store.hpp"

#include <condition_variable>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace cove::server {

class ParkedRequest {
 public:
  ParkedRequest(std::string key, net::Deadline until) : deadline(until), key_(std::move(key)) {}
  virtual ~ParkedRequest() = default;
  const std::string& key() const { return key_; }
  // Tries to answer; true when it has (or has failed for good). May move
  // the deadline. Buffers it frees go to `freed`, released after the lock.
  virtual bool retry(store::Store::Freed& freed) = 0;
  // The deadline has passed: answer now, with an error if need be.
  virtual void expire() = 0;
  // The server is stopping: answer with Unavailable.
  virtual void cancel() = 0;

  net::Deadline deadline;

 private:
  std::string key_;
};

class Parked {
 public:
  explicit Parked(std::mutex& mutex);
  ~Parked() { stop(); }

  void park(std::unique_ptr<ParkedRequest> request);
  // Retries every request parked on `key`; buffers they free go to `freed`.
  void retry(const std::string& key, store::Store::Freed& freed);
  std::size_t size() const { return parked_.size(); }
  // Cancels every parked request and joins the timer. Call without the lock. Idempotent.
  void stop();

 private:
  void run_timer();

  std::mutex& mutex_;
  std::condition_variable wake_;
  std::list<std::unique_ptr<ParkedRequest>> parked_;
  bool stopped_ = false;
  std::thread timer_;
};

}  // namespace cove::server
