#include <cove/error.hpp>
#include <cove/detail/thread_pool.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

namespace {

TEST(ThreadPool, RunsEveryIndexOnce) {
  cove::detail::ThreadPool pool(4);
  EXPECT_EQ(pool.size(), 4);
  for (int n : {0, 1, 3, 4, 100}) {
    std::vector<std::atomic<int>> hits(static_cast<std::size_t>(n));
    pool.parallel_for(n, [&](int i) { hits[static_cast<std::size_t>(i)]++; });
    for (auto& h : hits) EXPECT_EQ(h.load(), 1);
  }
}

TEST(ThreadPool, RethrowsTheFirstErrorAfterAllTasksFinish) {
  cove::detail::ThreadPool pool(3);
  std::atomic<int> done{0};
  EXPECT_THROW(pool.parallel_for(20,
                                 [&](int i) {
                                   if (i == 7) throw std::runtime_error("task 7");
                                   done++;
                                 }),
               std::runtime_error);
  EXPECT_EQ(done.load(), 19);
}

TEST(ThreadPool, NestedAndConcurrentCallsComplete) {
  cove::detail::ThreadPool pool(2);
  std::atomic<int> total{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 3; ++t)
    callers.emplace_back([&] {
      pool.parallel_for(4, [&](int) { pool.parallel_for(5, [&](int) { total++; }); });
    });
  for (auto& c : callers) c.join();
  EXPECT_EQ(total.load(), 3 * 4 * 5);
}

TEST(ThreadPool, RejectsZeroThreads) { EXPECT_THROW(cove::detail::ThreadPool(0), cove::Error); }

}  // namespace
