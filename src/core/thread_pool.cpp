#include <cove/detail/thread_pool.hpp>

#include "core/fail.hpp"

#include <atomic>
#include <charconv>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace cove::detail {

namespace {

struct Job {
  FunctionRef<void(int)>* fn;
  std::atomic<int> remaining;
  std::mutex mutex;
  std::condition_variable done;
  std::exception_ptr error;

  // The decrement happens under `mutex` so that the waiting caller, which
  // takes the same mutex before returning, cannot destroy the job while the
  // last worker still holds it.
  void run(int i) {
    std::exception_ptr err;
    try {
      (*fn)(i);
    } catch (...) {
      err = std::current_exception();
    }
    std::lock_guard lock(mutex);
    if (err && !error) error = err;
    if (remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) done.notify_all();
  }
};

struct Task {
  Job* job;
  int index;
};

}  // namespace

struct ThreadPool::Impl {
  int size;
  std::mutex mutex;
  std::condition_variable wake;
  std::deque<Task> queue;
  bool stopping = false;
  std::vector<std::thread> workers;

  bool try_pop(Task& t) {
    std::lock_guard lock(mutex);
    if (queue.empty()) return false;
    t = queue.front();
    queue.pop_front();
    return true;
  }

  void worker_loop() {
    for (;;) {
      Task t;
      {
        std::unique_lock lock(mutex);
        wake.wait(lock, [&] { return stopping || !queue.empty(); });
        if (queue.empty()) return;  // stopping and drained
        t = queue.front();
        queue.pop_front();
      }
      t.job->run(t.index);
    }
  }
};

ThreadPool::ThreadPool(int threads) : impl_(std::make_unique<Impl>()) {
  if (threads < 1) detail::fail(Code::InvalidArgument, "thread pool size = ", threads, " must be >= 1");
  impl_->size = threads;
  impl_->workers.reserve(threads - 1);
  for (int i = 1; i < threads; ++i) impl_->workers.emplace_back([this] { impl_->worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->stopping = true;
  }
  impl_->wake.notify_all();
  for (auto& w : impl_->workers) w.join();
}

int ThreadPool::size() const noexcept { return impl_->size; }

void ThreadPool::parallel_for(int n, FunctionRef<void(int)> fn) {
  if (n <= 0) return;
  Job job;
  job.fn = &fn;
  job.remaining.store(n, std::memory_order_relaxed);
  if (n > 1) {
    {
      std::lock_guard lock(impl_->mutex);
      for (int i = 1; i < n; ++i) impl_->queue.push_back({&job, i});
    }
    impl_->wake.notify_all();
  }
  job.run(0);
  // Help with queued work (ours or anyone's) until our job is done.
  Task t;
  while (job.remaining.load(std::memory_order_acquire) > 0 && impl_->try_pop(t)) t.job->run(t.index);
  {
    std::unique_lock lock(job.mutex);
    job.done.wait(lock, [&] { return job.remaining.load(std::memory_order_acquire) == 0; });
  }
  if (job.error) std::rethrow_exception(job.error);
}

ThreadPool& ThreadPool::shared() {
  static ThreadPool pool([] {
    if (const char* env = std::getenv("COVE_NUM_THREADS")) {
      int n = 0;
      const char* end = env + std::strlen(env);
      auto [ptr, ec] = std::from_chars(env, end, n);
      if (ec != std::errc{} || ptr != end || n < 1 || n > 4096)
        detail::fail(Code::InvalidArgument, "COVE_NUM_THREADS = '", env, "' is not an integer in 1..4096");
      return n;
    }
    return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }());
  return pool;
}

}  // namespace cove::detail
