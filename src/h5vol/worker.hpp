#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

namespace cove::h5vol {

// One thread that runs tasks in order, started once: a task costs a queue
// push and a wake-up, not a thread start (which, with more processes than
// cores, took longer than the request it ran).
class Worker {
 public:
  Worker() = default;
  ~Worker() { stop(); }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  template <class T>
  std::future<T> run(std::function<T()> fn) {
    auto task = std::make_shared<std::packaged_task<T()>>(std::move(fn));
    auto result = task->get_future();
    {
      std::lock_guard lock(mutex_);
      if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
      tasks_.emplace_back([task] { (*task)(); });
    }
    wake_.notify_one();
    return result;
  }

  // Runs what is queued, then ends the thread.
  void stop() {
    {
      std::lock_guard lock(mutex_);
      if (!thread_.joinable()) return;
      stopping_ = true;
    }
    wake_.notify_one();
    thread_.join();
    stopping_ = false;
  }

 private:
  void loop() {
    std::unique_lock lock(mutex_);
    while (true) {
      wake_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;
      auto task = std::move(tasks_.front());
      tasks_.pop_front();
      lock.unlock();
      task();
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  std::thread thread_;
  bool stopping_ = false;
};

}  // namespace cove::h5vol
