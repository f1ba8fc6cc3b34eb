// The server's pool of piece memory (store/buffer_pool.hpp): the reserve
// made ahead of use and cut into blocks, and the rule that a block somebody
// still holds (a reader's lease) is never handed out again.
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

bool disjoint(const BufferPool::Block& a, const BufferPool::Block& b) {
  return a.data + a.size <= b.data || b.data + b.size <= a.data;
}

// The reserve is made when the pool is, before any piece, and blocks of any
// size are cut from it: nothing is made on a put's path.
TEST(BufferPool, TheReserveIsMadeAheadOfUseAndCutIntoBlocks) {
  auto ep = endpoint("pool-reserve");
  BufferPool pool(*ep, 0, 8 * kBlock);
  pool.settle();
  auto s = pool.stats();
  EXPECT_EQ(s.prefaulted, 1u) << "the reserve was not made ahead of use";
  EXPECT_EQ(s.cached_bytes, 8 * kBlock);
  auto a = pool.acquire(kBlock, 1000);
  auto b = pool.acquire(kBlock + 100, 1000);  // any size
  s = pool.stats();
  EXPECT_EQ(s.fresh, 0u);
  EXPECT_EQ(s.spares_used, 2u);
  ASSERT_TRUE(disjoint(*a, *b));
  EXPECT_NE(a->key, b->key);
  std::memset(a->data, 0x11, a->size);
  std::memset(b->data, 0x22, b->size);
  EXPECT_TRUE(all_bytes(*a, 0x11));
  EXPECT_TRUE(all_bytes(*b, 0x22));
  // The chunk is user 1000's now: another user's piece never gets any of it.
  auto c = pool.acquire(kBlock, 1001);
  EXPECT_EQ(pool.stats().fresh, 1u);
  EXPECT_TRUE(disjoint(*a, *c) && disjoint(*b, *c));
  pool.settle();  // that asked for another chunk, which that user's next piece is cut from
  EXPECT_EQ(pool.stats().prefaulted, 2u);
  auto d = pool.acquire(kBlock, 1001);
  EXPECT_EQ(pool.stats().fresh, 1u);
  EXPECT_EQ(pool.stats().spares_used, 3u);
  // However many pieces come, more chunks are made as they are cut; once
  // every block is back, the chunks beyond the reserve are freed.
  std::vector<std::shared_ptr<BufferPool::Block>> held;
  for (int i = 0; i < 20; ++i) {
    held.push_back(pool.acquire(kBlock, 1000));
    pool.settle();
    for (std::size_t j = 0; j + 1 < held.size(); ++j)
      ASSERT_TRUE(disjoint(*held[j], *held.back())) << "two blocks out share bytes";
  }
  EXPECT_LE(pool.stats().fresh, 3u) << "pieces were made on their path while the reserve kept up";
  held.clear();
  a.reset(), b.reset(), c.reset(), d.reset();
  EXPECT_EQ(pool.stats().chunk_bytes, 8 * kBlock);
  pool.clear();
}

// A released block goes back to its chunk and is cut again; a piece larger
// than any chunk makes its own block, and the next chunk holds its size.
TEST(BufferPool, ReleasedBlocksGoBackToTheirChunk) {
  auto ep = endpoint("pool-back");
  BufferPool pool(*ep, 0, 8 * kBlock);
  pool.settle();
  auto a = pool.acquire(2 * kBlock, 1000);
  auto b = pool.acquire(2 * kBlock, 1000);
  const std::byte* first = a->data;
  a.reset();
  auto c = pool.acquire(kBlock, 1000);
  EXPECT_EQ(c->data, first) << "a released block's bytes were not cut again";
  pool.settle();
  EXPECT_EQ(pool.stats().prefaulted, 1u) << "a chunk was made while the reserve held more than half";
  auto big = pool.acquire(16 * kBlock, 1000);
  EXPECT_EQ(pool.stats().fresh, 1u);
  pool.settle();
  auto big2 = pool.acquire(16 * kBlock, 1000);
  EXPECT_EQ(pool.stats().fresh, 1u) << "the chunk made after a large piece does not hold its size";
  EXPECT_TRUE(disjoint(*big, *big2));
  // A retired block (someone outside may still write to it) is never cut again.
  const std::byte* retired = c->data;
  c->retire();
  c.reset();
  std::vector<std::shared_ptr<BufferPool::Block>> more;
  for (int i = 0; i < 6; ++i) {
    more.push_back(pool.acquire(kBlock, 1000));
    EXPECT_NE(more.back()->data, retired) << "a retired block was cut again";
  }
  more.clear();
  b.reset(), big.reset(), big2.reset();
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
