#include "store/buffer_pool.hpp"

#include "core/fail.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <bit>

namespace cove::store {

namespace {

constexpr std::size_t kMinClass = 256;

}  // namespace

BufferPool::Block::~Block() = default;

BufferPool::BufferPool(net::Endpoint& endpoint, std::size_t max_cached, std::size_t reserve)
    : endpoint_(endpoint), state_(std::make_shared<State>()) {
  state_->max_cached = std::max(max_cached, reserve);
  state_->reserve = reserve;
  if (reserve > 0) spares_ = std::thread([this] { make_spares(); });
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

std::unique_ptr<BufferPool::Block> BufferPool::make_block(std::size_t bytes, std::int64_t writer) {
  auto block = std::make_unique<Block>();
  block->region = endpoint_.allocate(bytes);
  block->data = block->region->data();
  block->size = bytes;
  block->writer = writer;
  const auto k = block->region->key();
  block->key.assign(k.begin(), k.end());
  return block;
}

std::shared_ptr<BufferPool::Block> BufferPool::acquire(std::size_t bytes, std::int64_t writer) {
  if (bytes <= kSmallMax) {
    if (writer != kServerOnly)
      detail::fail(Code::InvalidArgument, "a piece of ", bytes, " bytes is sent inline, not granted space");
    return acquire_slot(bytes);
  }
  std::unique_ptr<Block> block;
  bool recycled = false;  // a block of a dropped piece: the workflow recycles, no spare needed
  {
    std::lock_guard lock(state_->mutex);
    // A recycled block before a spare: taking a spare asks for another.
    const auto [lo, hi] = state_->free.equal_range({writer, bytes});
    auto it = lo;
    while (it != hi && it->second->spare) ++it;
    if (it == hi) it = lo;
    if (it != hi) {
      block = std::move(it->second);
      state_->free.erase(it);
      state_->cached -= bytes;
      ++state_->stats.reused;
      if (block->spare) ++state_->stats.spares_used;
      recycled = !block->spare;
      block->spare = false;
    }
  }
  if (!block) {
    block = make_block(bytes, writer);
    std::lock_guard lock(state_->mutex);
    ++state_->stats.fresh;
  }
  // A spare of the same size for the same user, made off this path, in
  // place of a fresh block or a spare taken, while the cache and the
  // spares under way stay within the reserve.
  if (state_->reserve > 0 && !recycled) {
    std::lock_guard lock(state_->mutex);
    if (state_->open && state_->cached + state_->pending + bytes <= state_->reserve) {
      state_->pending += bytes;
      state_->wanted.emplace_back(writer, bytes);
      state_->wake.notify_one();
    }
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

void BufferPool::make_spares() {
  // Spares use idle cores only: this thread yields to the puts it works for
  // (Linux: a thread's nice value is its own).
  (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 19);
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  std::unique_lock lock(state_->mutex);
  for (;;) {
    state_->wake.wait(lock, [this] { return !state_->open || !state_->wanted.empty(); });
    if (!state_->open) return;
    const auto [writer, bytes] = state_->wanted.front();
    state_->wanted.pop_front();
    state_->making = true;
    lock.unlock();
    std::unique_ptr<Block> block;
    try {
      block = make_block(bytes, writer);
      // Every page faulted in now (a segment's already are: MAP_POPULATE).
      volatile std::byte* p = block->data;
      for (std::size_t at = 0; at < bytes; at += page) p[at] = std::byte{0};
    } catch (const std::exception&) {
      // No memory for a spare now: the put that needs it makes its own, or says why not.
    }
    lock.lock();
    state_->making = false;
    state_->pending -= bytes;
    if (block && state_->open) {
      block->spare = true;
      state_->cached += bytes;
      ++state_->stats.prefaulted;
      state_->free.emplace(std::pair{writer, bytes}, std::move(block));
    }
    state_->settled.notify_all();
    if (block) {  // the pool closed meanwhile: freed outside the lock
      lock.unlock();
      block.reset();
      lock.lock();
    }
  }
}

void BufferPool::settle() {
  std::unique_lock lock(state_->mutex);
  state_->settled.wait(lock, [this] { return !state_->open || (state_->wanted.empty() && !state_->making); });
}

BufferPool::Stats BufferPool::stats() const {
  std::lock_guard lock(state_->mutex);
  Stats s = state_->stats;
  s.cached_bytes = state_->cached;
  return s;
}

void BufferPool::clear() {
  std::multimap<std::pair<std::int64_t, std::size_t>, std::unique_ptr<Block>> drop;
  std::vector<std::unique_ptr<Arena>> arenas;
  {
    std::lock_guard lock(state_->mutex);
    state_->open = false;
    state_->wake.notify_all();
    state_->settled.notify_all();
  }
  if (spares_.joinable()) spares_.join();
  {
    std::lock_guard lock(state_->mutex);
    state_->wanted.clear();
    drop.swap(state_->free);
    arenas.swap(state_->arenas);
    state_->free_slots.clear();
    state_->cached = 0;
  }
}

}  // namespace cove::store
