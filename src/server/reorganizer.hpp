// Internal: the server's reorganizer threads, which build replicas (parts
// of pieces in other layouts) off the threads that answer requests.
//
// A job names the replica it builds (variable, version, piece id, replica
// id) and holds a reference to the source bytes, so a piece evicted while
// its replica is built stays readable until the job ends. The result goes
// to `done` (on the reorganizer thread): the replica's bytes, or null when
// the buffer could not be had or the copy failed. Jobs still queued at
// stop() are dropped without calling `done`.
//
// Thread-safety: submit() and stop() may be called from any thread.
#pragma once

#include <cove/box.hpp>
#include <cove/layout.hpp>

#include "store/buffer_pool.hpp"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace cove::server {

struct ReorgJob {
  std::string var;
  std::uint64_t version = 0, piece = 0, replica = 0;
  std::shared_ptr<store::BufferPool::Block> source;
  Box source_box;
  Layout source_layout;
  Box box;  // the replica's, inside source_box
  Layout layout;
  std::size_t elem = 0;
};

class Reorganizer {
 public:
  using Done = std::function<void(const ReorgJob&, std::shared_ptr<store::BufferPool::Block> replica)>;

  Reorganizer(int threads, store::BufferPool& pool, Done done);
  ~Reorganizer() { stop(); }
  void submit(ReorgJob job);
  // Joins the threads after the jobs running now; idempotent.
  void stop();

 private:
  void run();

  store::BufferPool& pool_;
  Done done_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<ReorgJob> jobs_;
  bool stopped_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace cove::server
