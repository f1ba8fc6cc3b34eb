#include "server/parked.hpp"

#include "common/log.hpp"

namespace cove::server {

Parked::Parked(std::mutex& mutex) : mutex_(mutex) {
  timer_ = std::thread([this] { run_timer(); });
}

void Parked::park(std::unique_ptr<ParkedRequest> request) {
  parked_.push_back(std::move(request));
  wake_.notify_all();
}

void Parked::retry(const std::string& key, store::Store::Freed& freed) {
  for (auto it = parked_.begin(); it != parked_.end();) {
    if ((*it)->key() != key) {
      ++it;
      continue;
    }
    const net::Deadline before = (*it)->deadline;
    const bool answered = (*it)->retry(freed);
    if ((*it)->deadline != before) wake_.notify_all();
    it = answered ? parked_.erase(it) : std::next(it);
  }
}

void Parked::stop() {
  std::list<std::unique_ptr<ParkedRequest>> cancelled;
  {
    std::lock_guard lock(mutex_);
    if (stopped_) return;
    stopped_ = true;
    cancelled.swap(parked_);
    for (auto& r : cancelled) r->cancel();
  }
  wake_.notify_all();
  if (timer_.joinable()) timer_.join();
}

void Parked::run_timer() {
  std::unique_lock lock(mutex_);
  while (!stopped_) {
    net::Deadline next = net::kNoDeadline;
    const auto now = net::Clock::now();
    for (auto it = parked_.begin(); it != parked_.end();) {
      if ((*it)->deadline <= now) {
        try {
          (*it)->expire();
        } catch (...) {
          log::dropped("answering a request whose deadline passed");
        }
        it = parked_.erase(it);
      } else {
        next = std::min(next, (*it)->deadline);
        ++it;
      }
    }
    if (next == net::kNoDeadline)
      wake_.wait(lock);
    else
      wake_.wait_until(lock, next);
  }
}

}  // namespace cove::server
