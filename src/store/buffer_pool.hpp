// Internal: memory for the pieces a server holds, reused.
//
// A fresh buffer costs a page fault and a zeroed page on first touch, and
// a registration with the transport; staging workflows put pieces of the
// same sizes every step. Buffers whose piece is gone (deleted, evicted)
// wait here, still registered, for the next piece of the same size, up to
// max_cached bytes; the rest are freed. (Transparent huge pages for piece
// buffers were tried and measured no faster here.)
//
// Thread-safety: acquire() and the release of blocks are thread-safe.
// Blocks may outlive the pool (they are then freed, not cached); clear()
// frees the cache, and must run before the endpoint that registered the
// blocks goes.
#pragma once

#include "net/transport.hpp"

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>

namespace cove::store {

class BufferPool {
 public:
  struct Block {
    std::byte* data = nullptr;
    std::size_t size = 0;
    std::unique_ptr<net::MemoryRegion> region;
    ~Block();
  };

  BufferPool(net::Endpoint& endpoint, std::size_t max_cached);
  ~BufferPool();

  // A registered block of exactly `bytes` bytes. Throws NoMemory.
  std::shared_ptr<Block> acquire(std::size_t bytes);
  void clear();
  std::size_t cached_bytes() const;

 private:
  struct State {
    std::mutex mutex;
    std::multimap<std::size_t, std::unique_ptr<Block>> free;
    std::size_t cached = 0, max_cached = 0;
    bool open = true;
  };
  net::Endpoint& endpoint_;
  std::shared_ptr<State> state_;
};

}  // namespace cove::store
