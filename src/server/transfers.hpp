// Internal: threads for puts whose bytes the server reads from the writer
// (Op::Put: over a socket when neither shared memory nor process_vm_readv
// serves, or over UCX). Such a read waits on the writer, up to its
// transfer deadline (net::transfer_ms): on the dispatcher's few workers, a
// handful of stopped writers would hold up every other request that needs
// a worker. Each read gets a thread of its own instead. So does an index
// entry relayed to a shard's new second owner before its IndexAdd is
// answered (shard_backups.cpp), which waits on that member.
//
// Thread-safety: run() from any thread; stop() once, after which run()
// answers Unavailable.
#pragma once

#include "server/dispatch.hpp"

#include <functional>
#include <list>
#include <mutex>
#include <thread>

namespace cove::server {

class Transfers {
 public:
  ~Transfers() { stop(); }
  // Runs `task` on a thread of its own; a task that throws fails `answer`
  // with its error (the task answers it otherwise).
  void run(Responder answer, std::function<void(Responder&)> task);
  // Waits for every running task (each ends by its transfer deadline).
  void stop();

 private:
  struct Running {
    std::thread thread;
    bool done = false;
  };
  std::mutex mutex_;
  std::list<Running> running_;  // finished ones are joined by the next run()
  bool stopped_ = false;
};

}  // namespace cove::server
