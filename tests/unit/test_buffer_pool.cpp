// The server's pool of piece memory (store/buffer_pool.hpp): spares made
// ahead of use with a reserve, and the rule that a block somebody still
// holds (a reader's lease) is never handed out again.
#include "store/buffer_pool.hpp"

#include "staging_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

using cove::store::BufferPool;
using cove_test::across_processes;

constexpr std::size_t kBlock = std::size_t{1} << 20;  // large: granted and cached by size

std::unique_ptr<cove::net::Endpoint> endpoint(const char* name) {
  // Shared-memory segments where the tests run across processes, else the heap.
  return cove::net::make_endpoint(across_processes() ? "local"
                                                     : std::string("inproc://") + name + "-" + std::to_string(::getpid()));
}

bool all_bytes(const BufferPool::Block& b, unsigned char value) {
  return std::all_of(b.data, b.data + b.size, [value](std::byte x) { return x == std::byte{value}; });
}

TEST(BufferPool, SparesAreMadeAheadOfUseAndHandedOut) {
  auto ep = endpoint("pool-spares");
  BufferPool pool(*ep, 0, 8 * kBlock);
  auto a = pool.acquire(kBlock, 1000);
  pool.settle();
  auto s = pool.stats();
  EXPECT_EQ(s.fresh, 1u);
  EXPECT_EQ(s.prefaulted, 1u) << "no spare was made for the next piece of this size";
  EXPECT_EQ(s.cached_bytes, kBlock);
  // The next piece of that size for that user takes the spare: nothing made on its path.
  auto b = pool.acquire(kBlock, 1000);
  s = pool.stats();
  EXPECT_EQ(s.fresh, 1u);
  EXPECT_EQ(s.spares_used, 1u);
  EXPECT_NE(a->data, b->data);
  std::memset(b->data, 0x5a, b->size);
  EXPECT_TRUE(all_bytes(*b, 0x5a));
  // Another user's piece never gets it: a granted block stays its user's.
  pool.settle();
  auto c = pool.acquire(kBlock, 1001);
  EXPECT_EQ(pool.stats().fresh, 2u);
  EXPECT_EQ(pool.stats().spares_used, 1u);
  // The spares stay within the reserve, however many pieces come.
  std::vector<std::shared_ptr<BufferPool::Block>> held;
  for (int i = 0; i < 20; ++i) {
    held.push_back(pool.acquire(kBlock, 1000));
    pool.settle();
    EXPECT_LE(pool.stats().cached_bytes, 8 * kBlock);
  }
  held.clear();
  a.reset(), b.reset(), c.reset();
  pool.clear();
}

// A recycled block (of a dropped piece) goes out before a spare and asks for
// no spare: a workflow whose versions are dropped feeds itself, and spares
// are made only in place of fresh blocks and of spares taken.
TEST(BufferPool, RecycledBlocksGoFirstAndAskForNoSpare) {
  auto ep = endpoint("pool-recycled");
  BufferPool pool(*ep, 8 * kBlock, 8 * kBlock);
  auto a = pool.acquire(kBlock, 1000);  // fresh: one spare asked for
  pool.settle();
  ASSERT_EQ(pool.stats().prefaulted, 1u);
  const std::byte* recycled = a->data;
  a.reset();  // dropped: back in the pool beside the spare
  auto b = pool.acquire(kBlock, 1000);
  EXPECT_EQ(b->data, recycled) << "a spare went out before a recycled block";
  pool.settle();
  EXPECT_EQ(pool.stats().prefaulted, 1u) << "a recycled block asked for a spare";
  auto c = pool.acquire(kBlock, 1000);  // the spare: another is asked for
  EXPECT_EQ(pool.stats().spares_used, 1u);
  pool.settle();
  EXPECT_EQ(pool.stats().prefaulted, 2u);
  b.reset(), c.reset();
  pool.clear();
}

TEST(BufferPool, NoReserveMakesNoSpares) {
  auto ep = endpoint("pool-none");
  BufferPool pool(*ep, 4 * kBlock);
  auto a = pool.acquire(kBlock, 1000);
  pool.settle();
  EXPECT_EQ(pool.stats().prefaulted, 0u);
  EXPECT_EQ(pool.stats().cached_bytes, 0u);
  a.reset();  // recycled all the same
  auto b = pool.acquire(kBlock, 1000);
  EXPECT_EQ(pool.stats().reused, 1u);
  b.reset();
  pool.clear();
}

// A block comes back only when its last holder lets go: one kept by a lease
// is never handed out, and its bytes stay as they were while pieces of the
// same size come and go; once let go, it is recycled.
TEST(BufferPool, AHeldBlockIsNeverHandedOutAgain) {
  auto ep = endpoint("pool-held");
  BufferPool pool(*ep, 16 * kBlock, 4 * kBlock);
  auto piece = pool.acquire(kBlock, 1000);
  std::memset(piece->data, 0x11, piece->size);
  std::shared_ptr<BufferPool::Block> lease = piece;  // what a reader's lease keeps
  const std::byte* leased = lease->data;
  piece.reset();  // the version is dropped
  for (int step = 0; step < 8; ++step) {
    std::vector<std::shared_ptr<BufferPool::Block>> now;
    for (int i = 0; i < 3; ++i) {
      now.push_back(pool.acquire(kBlock, 1000));
      ASSERT_NE(now.back()->data, leased) << "a block a lease holds was handed out again";
      std::memset(now.back()->data, 0x20 + step, now.back()->size);
    }
    pool.settle();
    for (const auto& b : now) EXPECT_TRUE(all_bytes(*b, static_cast<unsigned char>(0x20 + step)));
    ASSERT_TRUE(all_bytes(*lease, 0x11)) << "the leased bytes changed at step " << step;
  }
  lease.reset();
  // Now it may come back (all the cached blocks of that size are taken).
  std::vector<std::shared_ptr<BufferPool::Block>> all;
  bool recycled = false;
  for (int i = 0; i < 24 && !recycled; ++i) {
    all.push_back(pool.acquire(kBlock, 1000));
    recycled = all.back()->data == leased;
  }
  EXPECT_TRUE(recycled) << "a released block was not recycled";
  all.clear();
  pool.clear();
}

}  // namespace
