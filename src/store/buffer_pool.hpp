// Internal: memory for the pieces a server holds, reused.
//
// Memory comes from the endpoint (Endpoint::allocate): on one host, a
// shared-memory segment per large block, which clients map once and copy in
// and out of directly. A fresh block costs page faults on every side that
// maps it, while workflows put pieces of the same sizes every step: blocks
// whose piece is gone (deleted, evicted) and that nobody still reads wait
// here, still mapped, for the next piece of the same size, up to
// max_cached bytes; the rest are freed. (Transparent huge pages for piece
// buffers were tried and measured no faster here.)
//
// A block granted to a writer (PutGrant) may be mapped writable by it for
// good: it is reused only for pieces granted to the same user (`writer`,
// the user id the kernel gave), never for another user's or the server's
// own (replicas).
//
// Small pieces (at most kSmallMax bytes) take slots of power-of-two size
// classes in arenas allocated once, so that a small put allocates nothing:
// a slot's key is a window of its arena's key. Slots are never granted.
//
// Pre-faulting (`reserve` > 0, ServerOptions::pool_reserve): a fresh block
// costs making and faulting in its memory on the put's path. With a
// reserve, every large block handed out asks a thread of the pool to make
// another of the same size for the same user, faulted in, while the cache
// holds less than `reserve` bytes (that thread runs at the lowest
// priority, on idle cores; a recycled block asks for none: the
// workflow's dropped versions feed it): the next step's pieces of the same sizes
// find one ready. Those spares wait in the cache like recycled blocks, and
// blocks whose versions are dropped come back to it as before (the cache
// then holds up to the larger of max_cached and reserve). A block is in the
// cache only while nobody holds it: a reader's lease keeps it out.
//
// Thread-safety: acquire() and the release of blocks are thread-safe.
// Blocks may outlive the pool (they are then freed, not cached); clear()
// frees the cache and the arenas, and must run before the endpoint that
// registered them goes and after every block is released.
#pragma once

#include "net/transport.hpp"

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace cove::store {

class BufferPool {
 public:
  static constexpr std::size_t kSmallMax = std::size_t{64} << 10;
  static constexpr std::int64_t kServerOnly = -2;  // a block never granted to a writer
  static constexpr std::size_t kArenaBytes = std::size_t{4} << 20;

  struct Block {
    std::byte* data = nullptr;
    std::size_t size = 0;
    net::Bytes key;                             // for peers' one-sided reads
    std::unique_ptr<net::MemoryRegion> region;  // large blocks only: their own memory
    std::int64_t writer = kServerOnly;          // the user it may be granted to (see above)
    bool slot = false;                          // a slot of an arena (the arena owns the memory)
    bool retired = false;                       // freed when released, never reused for another piece
    bool spare = false;                         // made ahead of use, not yet handed out
    // Keeps this block out of the pool: someone outside may still write to it.
    void retire() { retired = true; }
    ~Block();
  };

  // What the pool has done (large blocks only), for tests and statistics.
  struct Stats {
    std::uint64_t fresh = 0;       // made on the acquiring path
    std::uint64_t reused = 0;      // taken from the cache (recycled or spare)
    std::uint64_t prefaulted = 0;  // spares made ahead of use
    std::uint64_t spares_used = 0; // spares handed out
    std::size_t cached_bytes = 0;  // in the cache now
  };

  BufferPool(net::Endpoint& endpoint, std::size_t max_cached, std::size_t reserve = 0);
  ~BufferPool();

  // A block of exactly `bytes` bytes, for the server's own use, or to be
  // granted to a writer of user `writer` (only blocks larger than kSmallMax
  // may be). Throws NoMemory.
  std::shared_ptr<Block> acquire(std::size_t bytes, std::int64_t writer = kServerOnly);
  // Waits until the spares asked for so far are made (or refused).
  void settle();
  Stats stats() const;
  void clear();

 private:
  struct Arena {
    std::byte* data = nullptr;
    std::unique_ptr<net::MemoryRegion> region;  // owns the memory
    std::size_t used = 0;
  };
  struct Slot {
    Arena* arena;
    std::size_t offset;
  };
  struct State {
    std::mutex mutex;
    std::multimap<std::pair<std::int64_t, std::size_t>, std::unique_ptr<Block>> free;  // large, by writer and size
    std::map<std::size_t, std::vector<Slot>> free_slots;      // small, by size class
    std::vector<std::unique_ptr<Arena>> arenas;
    std::size_t cached = 0, max_cached = 0;
    bool open = true;
    // Pre-faulting: spares asked for, by writer and size, and their bytes.
    std::size_t reserve = 0, pending = 0;
    std::deque<std::pair<std::int64_t, std::size_t>> wanted;
    std::condition_variable wake, settled;
    bool making = false;
    Stats stats;
  };

  std::shared_ptr<Block> acquire_slot(std::size_t bytes);
  std::shared_ptr<Block> wrap_slot(const Slot& slot, std::size_t size_class, std::size_t bytes);
  std::unique_ptr<Block> make_block(std::size_t bytes, std::int64_t writer);
  void make_spares();

  net::Endpoint& endpoint_;
  std::shared_ptr<State> state_;
  std::thread spares_;  // with a reserve only
};

}  // namespace cove::store
