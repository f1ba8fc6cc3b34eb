#include "store/hold.hpp"

#include <atomic>

namespace cove::store {

Hold::~Hold() {
  std::vector<std::function<void()>> waiting;
  {
    std::lock_guard lock(mutex_);
    waiting.swap(waiting_);
  }
  for (auto& fn : waiting) fn();
}

void Hold::on_release(std::function<void()> fn) {
  std::lock_guard lock(mutex_);
  waiting_.push_back(std::move(fn));
}

void when_unheld(std::vector<std::shared_ptr<Hold>> holds, std::function<void()> done) {
  struct Countdown {
    Countdown(std::size_t n, std::function<void()> fn) : left(n), done(std::move(fn)) {}
    std::atomic<std::size_t> left;
    std::function<void()> done;
    void tick() {
      if (left.fetch_sub(1) == 1) done();
    }
  };
  // One count per hold, and one for this call, so that `done` cannot run
  // before every hold has been given its callback.
  auto count = std::make_shared<Countdown>(holds.size() + 1, std::move(done));
  for (auto& h : holds) h->on_release([count] { count->tick(); });
  holds.clear();
  count->tick();
}

}  // namespace cove::store
