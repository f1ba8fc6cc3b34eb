// Internal: waiting for readers to finish with memory this server does not
// own (a put_local piece, left in its writer's memory).
//
// A reader's lease keeps a shared_ptr to a piece's Hold (and to the buffer
// of a piece held here, which returns to the pool only when the last
// shared_ptr goes). when_unheld() runs a callback once the last lease on a
// set of holds has ended: a writer's release is answered then, so the
// writer reuses its memory only when no reader can still be copying it.
//
// Thread-safety: all of it; callbacks run on the thread that drops the
// last reference, which must not hold locks the callback takes.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace cove::store {

class Hold {
 public:
  ~Hold();
  // Runs `fn` when this hold is destroyed.
  void on_release(std::function<void()> fn);

 private:
  std::mutex mutex_;
  std::vector<std::function<void()>> waiting_;
};

// Runs `done` once every hold of `holds` is destroyed (at once, on this
// thread, when the caller held the last references). Takes the caller's
// references.
void when_unheld(std::vector<std::shared_ptr<Hold>> holds, std::function<void()> done);

}  // namespace cove::store
