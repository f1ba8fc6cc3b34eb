#include "store/buffer_pool.hpp"

#include "core/fail.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <iterator>
#include <string>
#include <vector>

namespace cove::store {

namespace {

constexpr std::size_t kMinClass = 256;

std::size_t page_size() {
  static const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return page;
}

std::size_t page_rounded(std::size_t bytes) { return (bytes + page_size() - 1) / page_size() * page_size(); }

}  // namespace

// Memory of the reserve: its uncut extents (offset -> length, neighbours
// merged), under the pool's lock.
struct BufferPool::Chunk {
  std::unique_ptr<net::MemoryRegion> region;
  std::byte* data = nullptr;
  std::size_t size = 0;
  std::int64_t writer = kServerOnly;
  bool bound = false;      // to `writer`, by the first block cut from it
  std::size_t out = 0;     // blocks cut from it and not yet released
  std::size_t lost = 0;    // bytes of retired blocks: never cut again
  std::map<std::size_t, std::size_t> uncut;

  // The first extent of at least `bytes` bytes, or npos.
  std::size_t take(std::size_t bytes) {
    for (auto it = uncut.begin(); it != uncut.end(); ++it) {
      if (it->second < bytes) continue;
      const std::size_t at = it->first, left = it->second - bytes;
      uncut.erase(it);
      if (left > 0) uncut.emplace(at + bytes, left);
      return at;
    }
    return std::string::npos;
  }
  void give_back(std::size_t at, std::size_t bytes) {
    auto next = uncut.lower_bound(at);
    if (next != uncut.end() && at + bytes == next->first) {
      bytes += next->second;
      next = uncut.erase(next);
    }
    if (next != uncut.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == at) {
        prev->second += bytes;
        return;
      }
    }
    uncut.emplace(at, bytes);
  }
};

BufferPool::Block::~Block() = default;

BufferPool::BufferPool(net::Endpoint& endpoint, std::size_t max_cached, std::size_t reserve)
    : endpoint_(endpoint), state_(std::make_shared<State>()) {
  state_->max_cached = max_cached;
  state_->reserve = reserve;
  if (reserve > 0) maker_ = std::thread([this] { make_chunks(); });
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

std::shared_ptr<BufferPool::Block> BufferPool::cut(std::size_t bytes, std::int64_t writer) {
  State& st = *state_;
  const std::size_t need = page_rounded(bytes);  // windows start on pages of their own
  // A chunk already this user's first, then one bound to nobody yet.
  std::shared_ptr<Chunk> chunk;
  std::size_t at = std::string::npos;
  for (int pass = 0; pass < 2 && !chunk; ++pass)
    for (const auto& c : st.chunks)
      if ((pass == 0 ? c->bound && c->writer == writer : !c->bound) && (at = c->take(need)) != std::string::npos) {
        chunk = c;
        break;
      }
  if (!chunk) return nullptr;
  chunk->bound = true;
  chunk->writer = writer;
  ++chunk->out;
  st.uncut -= need;
  ++st.stats.spares_used;
  st.changed();
  auto block = std::make_unique<Block>();
  block->data = chunk->data + at;
  block->size = bytes;
  block->writer = writer;
  block->region = std::shared_ptr<net::MemoryRegion>(chunk, chunk->region.get());  // keeps the chunk
  block->key = chunk->region->window_key(at, bytes);
  std::weak_ptr<State> pool = state_;
  std::weak_ptr<Chunk> home = chunk;
  return std::shared_ptr<Block>(block.release(), [pool, home, at, need](Block* b) {
    const bool retired = b->retired;
    std::shared_ptr<Chunk> dropped;  // freed outside the lock: its region leaves the endpoint's table
    {
      auto s = pool.lock();
      auto c = home.lock();
      std::unique_lock<std::mutex> lock;
      if (s) lock = std::unique_lock(s->mutex);
      delete b;  // under the lock, while `c` keeps the chunk
      if (!s || !c || !s->open) return;
      --c->out;
      if (retired) {
        c->lost += need;  // someone outside may still write there
      } else {
        c->give_back(at, need);
        s->uncut += need;
      }
      // A chunk with nothing out goes when it has lost bytes, or when the
      // others hold the reserve without it.
      const std::size_t left = c->size - c->lost;
      if (c->out == 0 && (c->lost > 0 || s->uncut - left >= s->reserve)) {
        s->uncut -= left;
        std::erase(s->chunks, c);
        dropped = std::move(c);
        s->changed();
      }
    }
  });
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
    // A recycled block of this size and user, then a cut of the reserve.
    const auto it = state_->free.find({writer, bytes});
    if (it != state_->free.end()) {
      block = std::move(it->second);
      state_->free.erase(it);
      state_->cached -= bytes;
      ++state_->stats.reused;
    } else if (state_->reserve > 0) {
      if (auto window = cut(bytes, writer)) return window;
    }
  }
  if (!block) {
    block = make_block(bytes, writer);
    std::lock_guard lock(state_->mutex);
    ++state_->stats.fresh;
    if (state_->reserve > 0) {  // it fitted no chunk: the next one will hold it
      state_->next_chunk = std::max(state_->next_chunk, bytes);
      state_->refused = false;
      state_->changed();
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

void BufferPool::make_chunks() {
  // The reserve is made on idle cores only: this thread yields to the puts
  // it works for (Linux: a thread's nice value is its own).
  (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 19);
  State& st = *state_;
  std::unique_lock lock(st.mutex);
  for (;;) {
    st.wake.wait(lock, [&] { return !st.open || st.wants_chunk(); });
    if (!st.open) return;
    const std::size_t bytes = page_rounded(std::max(std::min(kChunkBytes, st.reserve), st.next_chunk));
    st.making = true;
    lock.unlock();
    auto chunk = std::make_shared<Chunk>();
    try {
      chunk->region = endpoint_.allocate(bytes);
      chunk->data = chunk->region->data();
      chunk->size = bytes;
      chunk->uncut.emplace(0, bytes);
      // Every page faulted in now (a segment's already are: MAP_POPULATE).
      volatile std::byte* p = chunk->data;
      for (std::size_t at = 0; at < bytes; at += page_size()) p[at] = std::byte{0};
    } catch (const std::exception&) {
      chunk.reset();  // no memory now: pieces make their own blocks, or say why not
    }
    lock.lock();
    st.making = false;
    if (!chunk) {
      st.refused = true;
    } else if (st.open) {
      if (st.next_chunk <= bytes) st.next_chunk = 0;
      st.uncut += bytes;
      ++st.stats.prefaulted;
      st.chunks.push_back(std::move(chunk));
      if (st.uncut >= st.reserve) st.filling = false;
    }
    st.settled.notify_all();
    if (chunk) {  // the pool closed meanwhile: freed outside the lock
      lock.unlock();
      chunk.reset();
      lock.lock();
    }
  }
}

void BufferPool::settle() {
  std::unique_lock lock(state_->mutex);
  state_->settled.wait(lock, [this] { return !state_->open || (!state_->wants_chunk() && !state_->making); });
}

BufferPool::Stats BufferPool::stats() const {
  std::lock_guard lock(state_->mutex);
  Stats s = state_->stats;
  s.cached_bytes = state_->cached + state_->uncut;
  for (const auto& c : state_->chunks) s.chunk_bytes += c->size;
  return s;
}

void BufferPool::clear() {
  std::multimap<std::pair<std::int64_t, std::size_t>, std::unique_ptr<Block>> drop;
  std::vector<std::unique_ptr<Arena>> arenas;
  std::vector<std::shared_ptr<Chunk>> chunks;
  {
    std::lock_guard lock(state_->mutex);
    state_->open = false;
    state_->wake.notify_all();
    state_->settled.notify_all();
  }
  if (maker_.joinable()) maker_.join();
  {
    std::lock_guard lock(state_->mutex);
    chunks.swap(state_->chunks);
    state_->uncut = 0;
    drop.swap(state_->free);
    arenas.swap(state_->arenas);
    state_->free_slots.clear();
    state_->cached = 0;
  }
}

}  // namespace cove::store
