#include "store/buffer_pool.hpp"

#include "core/fail.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

namespace cove::store {

namespace {

std::byte* allocate(std::size_t bytes) {
  auto* p = static_cast<std::byte*>(std::malloc(bytes ? bytes : 1));
  if (!p) detail::fail(Code::NoMemory, "cannot allocate ", bytes, " bytes for a piece");
  return p;
}

}  // namespace

BufferPool::Block::~Block() {
  region.reset();  // unregister before the memory goes
  std::free(data);
}

BufferPool::BufferPool(net::Endpoint& endpoint, std::size_t max_cached)
    : endpoint_(endpoint), state_(std::make_shared<State>()) {
  state_->max_cached = max_cached;
}

BufferPool::~BufferPool() { clear(); }

std::shared_ptr<BufferPool::Block> BufferPool::acquire(std::size_t bytes) {
  std::unique_ptr<Block> block;
  {
    std::lock_guard lock(state_->mutex);
    auto it = state_->free.find(bytes);
    if (it != state_->free.end()) {
      block = std::move(it->second);
      state_->free.erase(it);
      state_->cached -= bytes;
    }
  }
  if (!block) {
    block = std::make_unique<Block>();
    block->data = allocate(bytes);
    block->size = bytes;
    block->region = endpoint_.expose(block->data, bytes);
  }
  // Back to the pool when the last user lets go, while the pool is open and has room.
  std::weak_ptr<State> pool = state_;
  return std::shared_ptr<Block>(block.release(), [pool](Block* b) {
    std::unique_ptr<Block> owned(b);
    if (auto s = pool.lock()) {
      std::lock_guard lock(s->mutex);
      if (s->open && s->cached + b->size <= s->max_cached) {
        s->cached += b->size;
        s->free.emplace(b->size, std::move(owned));
      }
    }
  });
}

void BufferPool::clear() {
  std::multimap<std::size_t, std::unique_ptr<Block>> drop;
  {
    std::lock_guard lock(state_->mutex);
    state_->open = false;
    drop.swap(state_->free);
    state_->cached = 0;
  }
}

std::size_t BufferPool::cached_bytes() const {
  std::lock_guard lock(state_->mutex);
  return state_->cached;
}

}  // namespace cove::store
