// Internal (cove/detail/: not part of Cove's supported API; it may change
// without notice). A fixed pool of worker threads for splitting large copies.
//
// The pool is explicit: it is created by whoever owns it (or lazily, by
// ThreadPool::shared(), the first time a large copy asks for it) and joins
// its threads when destroyed. Core functions never start threads otherwise.
//
// Thread-safety: parallel_for may be called from several threads at once,
// and from inside a task (the caller helps run queued tasks while it waits,
// so nesting cannot deadlock).
#pragma once

#include <cove/export.hpp>
#include <cove/detail/function_ref.hpp>

#include <memory>

namespace cove::detail {

class COVE_EXPORT ThreadPool {
 public:
  // `threads` participants in total: the calling thread plus threads-1
  // workers. threads >= 1, else InvalidArgument.
  explicit ThreadPool(int threads);
  ~ThreadPool();  // blocks until the workers have finished and joined
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const noexcept;

  // Runs fn(0) ... fn(n-1), spread over the workers and the caller, and
  // blocks until all have returned. If any throw, the first exception is
  // rethrown after all tasks have finished. `fn` is used only during the call.
  void parallel_for(int n, FunctionRef<void(int)> fn);

  // The process-wide pool: COVE_NUM_THREADS threads if that environment
  // variable is set (a positive integer, else InvalidArgument naming it),
  // otherwise one per hardware thread. Created on first use.
  static ThreadPool& shared();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cove::detail
