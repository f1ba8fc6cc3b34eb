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
// The reserve (`reserve` > 0, ServerOptions::pool_reserve): a fresh block
// costs making its memory, the kernel allocating and zeroing every page,
// on the put's path. With a reserve, a thread of the pool makes `reserve`
// bytes of memory ahead of use, faulted in, when the pool is made: chunks
// of kChunkBytes (or of the reserve, if smaller), each a region of its own.
// A large block is then cut from a chunk, a window of it (its key is a
// window of the chunk's key): no memory is made on the put's path, whatever
// the piece's size, and a client maps a chunk once for all the blocks it
// holds. A chunk is bound to the first user a block of it goes to
// (kServerOnly included) and serves only that user afterwards, as a
// recycled block does. A released window goes back to its chunk. When
// the chunks' uncut bytes fall below half the reserve, the thread makes
// more, at the lowest priority, on idle cores, up to the reserve again; a
// piece that fits no chunk makes its own block on its path, and the next
// chunk made is at least its size. A chunk none of whose windows is out is
// freed once the uncut bytes exceed the reserve without it. The chunks'
// uncut bytes are cached memory: they do not count against the budget.
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

  static constexpr std::size_t kChunkBytes = std::size_t{256} << 20;

  struct Block {
    std::byte* data = nullptr;
    std::size_t size = 0;
    net::Bytes key;                             // for peers' one-sided reads
    // Large blocks only: the region the key belongs to (their own memory,
    // or, for a block cut from the reserve, its chunk's, which it keeps).
    std::shared_ptr<net::MemoryRegion> region;
    std::int64_t writer = kServerOnly;          // the user it may be granted to (see above)
    bool slot = false;                          // a slot of an arena (the arena owns the memory)
    bool retired = false;                       // freed when released, never reused for another piece
    // Keeps this block out of the pool: someone outside may still write to it.
    void retire() { retired = true; }
    ~Block();
  };

  // What the pool has done (large blocks only), for tests and statistics.
  struct Stats {
    std::uint64_t fresh = 0;       // made on the acquiring path
    std::uint64_t reused = 0;      // recycled blocks taken from the cache
    std::uint64_t prefaulted = 0;  // chunks of the reserve made ahead of use
    std::uint64_t spares_used = 0; // blocks cut from them
    std::size_t cached_bytes = 0;  // in the cache now: recycled blocks and the chunks' uncut bytes
    std::size_t chunk_bytes = 0;   // in chunks now, cut or not
  };

  BufferPool(net::Endpoint& endpoint, std::size_t max_cached, std::size_t reserve = 0);
  ~BufferPool();

  // A block of exactly `bytes` bytes, for the server's own use, or to be
  // granted to a writer of user `writer` (only blocks larger than kSmallMax
  // may be). Throws NoMemory.
  std::shared_ptr<Block> acquire(std::size_t bytes, std::int64_t writer = kServerOnly);
  // Waits until the reserve's thread has made what it has been asked for
  // (or was refused memory).
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
  struct Chunk;
  struct State {
    std::mutex mutex;
    std::multimap<std::pair<std::int64_t, std::size_t>, std::unique_ptr<Block>> free;  // large, by writer and size
    std::map<std::size_t, std::vector<Slot>> free_slots;      // small, by size class
    std::vector<std::unique_ptr<Arena>> arenas;
    std::size_t cached = 0, max_cached = 0;
    bool open = true;
    // The reserve: its chunks, their uncut bytes, and the size of the next
    // chunk (the largest piece that fitted none, if larger than a chunk).
    std::size_t reserve = 0, uncut = 0, next_chunk = 0;
    std::vector<std::shared_ptr<Chunk>> chunks;
    std::condition_variable wake, settled;
    bool making = false;
    bool filling = true;    // making chunks up to the reserve (from below half of it)
    bool refused = false;   // no memory for the last chunk: tried again on a fresh block
    Stats stats;
    bool wants_chunk() const {
      return open && !refused && (next_chunk > 0 || uncut < (filling ? reserve : reserve / 2));
    }
    // After the uncut bytes or the next chunk's size changed: wakes the maker if it has work.
    void changed() {
      if (uncut < reserve / 2) filling = true;
      if (wants_chunk()) wake.notify_one();
    }
  };

  std::shared_ptr<Block> acquire_slot(std::size_t bytes);
  std::shared_ptr<Block> wrap_slot(const Slot& slot, std::size_t size_class, std::size_t bytes);
  std::unique_ptr<Block> make_block(std::size_t bytes, std::int64_t writer);
  // A block cut from a chunk of `writer`'s (or of none yet), or null; under the lock.
  std::shared_ptr<Block> cut(std::size_t bytes, std::int64_t writer);
  void make_chunks();

  net::Endpoint& endpoint_;
  std::shared_ptr<State> state_;
  std::thread maker_;  // with a reserve only
};

}  // namespace cove::store
