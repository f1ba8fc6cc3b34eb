#include "server/transfers.hpp"

#include <exception>

namespace cove::server {

void Transfers::run(Responder answer, std::function<void(Responder&)> task) {
  std::list<Running> finished;  // joined after the lock
  std::lock_guard lock(mutex_);
  if (stopped_) {
    answer.fail(Code::Unavailable, "the server is stopping");
    return;
  }
  for (auto it = running_.begin(); it != running_.end();) {
    auto next = std::next(it);
    if (it->done) finished.splice(finished.end(), running_, it);
    it = next;
  }
  auto& slot = running_.emplace_back();
  slot.thread = std::thread([this, &slot, answer = std::move(answer), task = std::move(task)]() mutable {
    try {
      task(answer);
    } catch (...) {
      answer.fail(std::current_exception());
    }
    std::lock_guard done(mutex_);
    slot.done = true;
  });
  for (auto& f : finished) f.thread.join();  // done: returns at once
}

void Transfers::stop() {
  std::list<Running> all;
  {
    std::lock_guard lock(mutex_);
    stopped_ = true;
    all.swap(running_);
  }
  for (auto& r : all) r.thread.join();
}

}  // namespace cove::server
