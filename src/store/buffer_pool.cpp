#include "store/buffer_pool.hpp"

#include "core/fail.hpp"

#include <bit>

namespace cove::store {

namespace {

constexpr std::size_t kMinClass = 256;

}  // namespace

BufferPool::Block::~Block() = default;

BufferPool::BufferPool(net::Endpoint& endpoint, std::size_t max_cached)
    : endpoint_(endpoint), state_(std::make_shared<State>()) {
  state_->max_cached = max_cached;
}

BufferPool::~BufferPool() { clear(); }

std::shared_ptr<BufferPool::Block> BufferPool::wrap_slot(const Slot& s, std::size_t size_class, std::size_t bytes) {
  auto block = std::make_unique<Block>();
  block->data = s.arena->data + s.offset;
  block->size = bytes;
  block->key = s.arena->region->window_key(s.offset, bytes);
  block->slot = true;
  std::weak_ptr<State> pool = state_;
  return std::shared_ptr<Block>(block.release(), [pool, s, size_class](Block* b) {
    const bool retired = b->retired;
    delete b;
    if (retired) return;  // the slot stays out of use
    if (auto st = pool.lock()) {
      std::lock_guard lock(st->mutex);
      if (st->open) st->free_slots[size_class].push_back(s);
    }
  });
}

std::shared_ptr<BufferPool::Block> BufferPool::acquire_slot(std::size_t bytes) {
  const std::size_t size_class = std::max(kMinClass, std::bit_ceil(bytes));
  for (;;) {
    {
      std::lock_guard lock(state_->mutex);
      auto& list = state_->free_slots[size_class];
      if (!list.empty()) {
        const Slot s = list.back();
        list.pop_back();
        return wrap_slot(s, size_class, bytes);
      }
      if (!state_->arenas.empty() && state_->arenas.back()->used + size_class <= kArenaBytes) {
        Arena* a = state_->arenas.back().get();
        const Slot s{a, a->used};
        a->used += size_class;
        return wrap_slot(s, size_class, bytes);
      }
    }
    // A new arena, registered outside the lock: releasing a slot may happen
    // on the transport's own thread, which registration may need.
    auto arena = std::make_unique<Arena>();
    arena->region = endpoint_.allocate(kArenaBytes);
    arena->data = arena->region->data();
    std::lock_guard lock(state_->mutex);
    state_->arenas.push_back(std::move(arena));
  }
}

std::shared_ptr<BufferPool::Block> BufferPool::acquire(std::size_t bytes, std::int64_t writer) {
  if (bytes <= kSmallMax) {
    if (writer != kServerOnly)
      detail::fail(Code::InvalidArgument, "a piece of ", bytes, " bytes is sent inline, not granted space");
    return acquire_slot(bytes);
  }
  std::unique_ptr<Block> block;
  {
    std::lock_guard lock(state_->mutex);
    auto it = state_->free.find({writer, bytes});
    if (it != state_->free.end()) {
      block = std::move(it->second);
      state_->free.erase(it);
      state_->cached -= bytes;
    }
  }
  if (!block) {
    block = std::make_unique<Block>();
    block->region = endpoint_.allocate(bytes);
    block->data = block->region->data();
    block->size = bytes;
    block->writer = writer;
    const auto k = block->region->key();
    block->key.assign(k.begin(), k.end());
  }
  // Back to the pool when the last user lets go, while the pool is open and has room.
  std::weak_ptr<State> pool = state_;
  return std::shared_ptr<Block>(block.release(), [pool](Block* b) {
    std::unique_ptr<Block> owned(b);
    if (auto s = pool.lock()) {
      std::lock_guard lock(s->mutex);
      if (s->open && !b->retired && s->cached + b->size <= s->max_cached) {
        s->cached += b->size;
        s->free.emplace(std::pair{b->writer, b->size}, std::move(owned));
      }
    }
  });
}

void BufferPool::clear() {
  std::multimap<std::pair<std::int64_t, std::size_t>, std::unique_ptr<Block>> drop;
  std::vector<std::unique_ptr<Arena>> arenas;
  {
    std::lock_guard lock(state_->mutex);
    state_->open = false;
    drop.swap(state_->free);
    arenas.swap(state_->arenas);
    state_->free_slots.clear();
    state_->cached = 0;
  }
}

}  // namespace cove::store
