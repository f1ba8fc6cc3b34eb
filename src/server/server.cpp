#include <cove/server.hpp>

#include <cove/region_copy.hpp>

#include "core/copy_plan.hpp"
#include "core/fail.hpp"
#include "net/protocol.hpp"
#include "net/transport.hpp"
#include "server/reorganizer.hpp"
#include "store/access_patterns.hpp"
#include "common/shard_map.hpp"
#include "store/store.hpp"

#include <atomic>
#include <cstring>
#include <condition_variable>
#include <deque>
#include <algorithm>
#include <list>
#include <map>
#include <mutex>
#include <thread>

namespace cove {

using detail::fail;
using net::Op;

namespace {

// A query that could not be answered yet: answered when a put covers its
// region, or with Timeout at its deadline.
struct Waiter {
  Waiter(std::shared_ptr<net::Request> r, std::uint64_t id, std::string name)
      : request(std::move(r)), request_id(id), var(std::move(name)) {}

  std::shared_ptr<net::Request> request;
  std::uint64_t request_id = 0;
  std::string var;  // or metadata name
  std::uint64_t version = 0;
  bool latest = false;
  Box region;
  net::Deadline deadline{};
  bool meta = false;
  int meta_mode = 0;
  Layout layout;               // the reader's
  std::uint32_t eager_max = 0;  // 0: never answer with the data itself
  std::uint8_t reorg = 0;       // the reader's method, 0: none of its own
  bool sources_only = false;    // replicas took too long: answer with the pieces themselves
};

// What trying to answer a waiter came to.
enum class Cover { No, Answered, Preparing };

// How long a get waits for replicas being built before it takes the
// pieces themselves (and reorganizes at the reader).
constexpr std::int64_t kReplicaWaitMs = 5000;

// True when reading `part` of a piece stored over (box, layout) into a
// buffer over (dst_box, dst_layout) needs a reorganization: the two do not
// share their fastest-varying axis over the part, so the bytes cannot be
// moved as runs.
bool needs_reorg(const Box& box, const Layout& layout, const Box& dst_box, const Layout& dst_layout, const Box& part,
                 std::size_t elem) {
  return !detail::make_copy_plan(box, layout, dst_box, dst_layout, part, elem).innermost_contiguous();
}

}  // namespace

struct Server::Impl : std::enable_shared_from_this<Server::Impl> {
  explicit Impl(const ServerOptions& o) : options(o), store(o.memory_budget, o.max_versions) {
    if (o.workers < 1 || o.workers > 256)
      fail(Code::InvalidArgument, "ServerOptions.workers = ", o.workers, " must be 1..256");
    if (o.reorg_threads < 1 || o.reorg_threads > 64)
      fail(Code::InvalidArgument, "ServerOptions.reorg_threads = ", o.reorg_threads, " must be 1..64");
    if (static_cast<int>(o.reorg) < 1 || static_cast<int>(o.reorg) > 4)
      fail(Code::InvalidArgument, "ServerOptions.reorg = ", static_cast<int>(o.reorg), " is not a method");
    endpoint = net::make_endpoint(o.listen);
    address = endpoint->address();
    // Freed piece buffers are kept for reuse up to a quarter of the budget
    // (1 GiB without one); they do not count against it.
    pool = std::make_unique<store::BufferPool>(
        *endpoint, o.memory_budget ? o.memory_budget / 4 : std::size_t{1} << 30);
    group = {address};
    reorganizer = std::make_unique<server::Reorganizer>(
        o.reorg_threads, *pool, [this](const server::ReorgJob& job, std::shared_ptr<store::BufferPool::Block> bytes) {
          replica_built(job, std::move(bytes));
        });
    for (int i = 0; i < o.workers; ++i) workers.emplace_back([this] { work(); });
    timer = std::thread([this] { expire_waiters(); });
    endpoint->serve([this](std::shared_ptr<net::Request> r) { enqueue(std::move(r)); });
  }

  ~Impl() { stop(); }

  void stop() {
    {
      std::unique_lock lock(mutex);
      if (stopped) {  // someone else is stopping it: wait for them, unless we are one of its threads
        if (!is_own_thread()) done_cv.wait(lock, [&] { return done; });
        return;
      }
      stopped = true;
      for (auto& w : waiters)
        w.request->reply(net::error_reply(static_cast<std::uint16_t>(w.meta ? Op::MetaGet : Op::Query), w.request_id,
                                          Code::Unavailable, "the server is shutting down"));
      waiters.clear();
    }
    wake.notify_all();
    timer_wake.notify_all();
    for (auto& w : workers)
      if (w.get_id() != std::this_thread::get_id()) w.join();
    if (timer.joinable()) timer.join();
    reorganizer->stop();
    {
      // The store's pieces must go before the endpoint that registered their
      // memory, and after the lock: unregistering may need the transport's
      // thread, which may be waiting for this lock.
      std::vector<std::unique_ptr<store::Piece>> dropped;
      {
        std::lock_guard lock(mutex);
        dropped = store.clear();
        server_peers.clear();
      }
    }
    pool.reset();
    endpoint.reset();  // fails requests still queued in the transport
    std::lock_guard lock(mutex);
    queue.clear();
    done = true;
    done_cv.notify_all();
  }

  bool is_own_thread() const {
    const auto me = std::this_thread::get_id();
    if (timer.get_id() == me) return true;
    for (const auto& w : workers)
      if (w.get_id() == me) return true;
    return false;
  }

  void wait() {
    std::unique_lock lock(mutex);
    done_cv.wait(lock, [&] { return done; });
  }

  void enqueue(std::shared_ptr<net::Request> r) {
    // Requests that never wait on a transfer or another server are answered
    // at once on the transport's thread: a hand-off to a worker costs more
    // than they do. Puts that pull data (or forward index entries to other
    // servers) go to the workers. Index entries from other servers must not
    // queue behind a worker that is itself forwarding to that server.
    try {
      if (runs_inline(net::read_header(r->message()).type)) {
        handle(std::move(r));
        return;
      }
    } catch (const Error&) {
      // Malformed: a worker answers it with the error.
    }
    {
      std::lock_guard lock(mutex);
      if (stopped) return;  // dropping it fails the caller
      queue.push_back(std::move(r));
    }
    wake.notify_one();
  }

  bool runs_inline(std::uint16_t type) {
    switch (static_cast<Op>(type)) {
      case Op::Define: case Op::Query: case Op::Latest: case Op::Delete: case Op::List: case Op::Stat:
      case Op::Release: case Op::Disconnect: case Op::MetaPut: case Op::MetaGet: case Op::IndexAdd:
      case Op::Pattern:
        return true;
      case Op::PutInline: {
        std::lock_guard lock(mutex);
        return group.size() == 1;  // nothing to forward
      }
      default:
        return false;
    }
  }

  void work() {
    for (;;) {
      std::shared_ptr<net::Request> r;
      {
        std::unique_lock lock(mutex);
        wake.wait(lock, [&] { return stopped || !queue.empty(); });
        if (stopped) return;
        r = std::move(queue.front());
        queue.pop_front();
      }
      handle(std::move(r));
    }
  }

  // Every request gets exactly one reply: the handler's, or an error reply
  // built from the exception it threw. Nothing stored changes on an error.
  void handle(std::shared_ptr<net::Request> r) {
    std::uint16_t type = 0;
    std::uint64_t id = 0;
    try {
      const net::Header h = net::read_header(r->message());
      type = h.type;
      id = h.request_id;
      if (type < 1 || type > net::kLastOp) fail(Code::Protocol, "unknown request type ", type);
      net::WireReader in(r->message());
      net::WireWriter out(type, id);
      const bool answered = dispatch(static_cast<Op>(type), id, in, out, r);
      if (!answered) {
        ++requests;
        r->reply(std::move(out).finish());
      }
    } catch (const Error& e) {
      ++requests;
      r->reply(net::error_reply(type, id, e.code(), e.what()));
    } catch (const std::exception& e) {
      ++requests;
      r->reply(net::error_reply(type, id, Code::Internal, e.what()));
    }
  }

  // Fills `out` and returns false, or returns true when it has answered (or
  // parked) the request itself.
  bool dispatch(Op op, std::uint64_t id, net::WireReader& in, net::WireWriter& out,
                const std::shared_ptr<net::Request>& r) {
    switch (op) {
      case Op::Define: {
        store::VariableDef def;
        def.name = in.str();
        def.dtype = DType::parse(in.str());
        def.ndim = in.u8();
        if (in.u8()) def.shape = in.box();
        if (const std::uint8_t m = in.u8()) def.reorg = to_reorg(m);
        def.layouts.resize(in.u32());
        for (auto& l : def.layouts) l = Layout::parse(in.str());
        in.expect_end();
        std::lock_guard lock(mutex);
        store.define(def);
        return false;
      }
      case Op::Put:
      case Op::PutLocal:
      case Op::PutInline:
        put(op, in, r);
        return false;
      case Op::Release: {
        const std::string var = in.str();
        const std::uint64_t version = in.u64();
        const Box box = in.box();
        const std::string owner = in.str();
        in.expect_end();
        std::vector<std::unique_ptr<store::Piece>> gone;
        {
          std::lock_guard lock(mutex);
          gone = store.remove_pieces(var, version, box, owner);
        }
        out.u32(static_cast<std::uint32_t>(gone.size()));
        return false;
      }
      case Op::Query: {
        Waiter w(r, id, in.str());
        w.version = in.u64();
        w.latest = in.u8() != 0;
        w.region = in.box();
        const std::int64_t timeout_ms = in.i64();
        w.layout = Layout::parse(in.str());
        w.eager_max = in.u32();
        w.reorg = in.u8();
        in.expect_end();
        if (w.reorg) to_reorg(w.reorg);
        w.deadline = net::deadline_in(timeout_ms);
        store::Store::Freed freed;  // replicas dropped to make room: released after the lock
        std::lock_guard lock(mutex);
        if (store.find(w.var)) {  // a bad region or layout fails now, not when a put arrives
          const store::VariableDef& def = store.check_piece(w.var, w.region);
          w.layout.axis_order(def.ndim);
        }
        const Cover c = try_answer(w, freed);
        if (c == Cover::Answered) return true;
        if (c == Cover::Preparing) {
          w.deadline = std::max(w.deadline, net::deadline_in(kReplicaWaitMs));
        } else if (timeout_ms == 0) {
          if (!store.find(w.var)) fail(Code::NotFound, "variable '", w.var, "' is not defined");
          if (w.latest) fail(Code::NotFound, "variable '", w.var, "' has no version covering ", w.region.to_string());
          fail(Code::NotFound, "version ", w.version, " of variable '", w.var, "' does not cover ",
               w.region.to_string(), " (yet)");
        }
        waiters.push_back(std::move(w));
        timer_wake.notify_all();
        return true;
      }
      case Op::Latest: {
        const std::string var = in.str();
        in.expect_end();
        std::lock_guard lock(mutex);
        if (!store.find(var)) fail(Code::NotFound, "variable '", var, "' is not defined");
        auto v = store.latest(var);
        if (!v) fail(Code::NotFound, "variable '", var, "' has no versions");
        out.u64(*v);
        return false;
      }
      case Op::Delete: {
        const std::string var = in.str();
        const std::uint64_t version = in.u64();
        in.expect_end();
        std::vector<std::unique_ptr<store::Piece>> gone;
        std::lock_guard lock(mutex);
        gone = store.remove_version(var, version);
        return false;
      }
      case Op::List: {
        in.expect_end();
        std::lock_guard lock(mutex);
        const auto vars = store.list();
        out.u32(static_cast<std::uint32_t>(vars.size()));
        for (const auto& v : vars) {
          out.str(v.def->name).str(v.def->dtype.name()).u8(static_cast<std::uint8_t>(v.def->ndim));
          out.u8(v.def->shape ? 1 : 0);
          if (v.def->shape) out.box(*v.def->shape);
          out.u8(v.def->reorg ? static_cast<std::uint8_t>(*v.def->reorg) : 0);
          out.u32(static_cast<std::uint32_t>(v.def->layouts.size()));
          for (const Layout& l : v.def->layouts) out.str(l.to_string());
          out.u32(static_cast<std::uint32_t>(v.versions.size()));
          for (const auto& ver : v.versions) {
            out.u64(ver.version).u32(static_cast<std::uint32_t>(ver.pieces.size()));
            for (const auto* p : ver.pieces) {
              out.box(p->box).u64(p->bytes).str(p->owner);
              std::uint32_t n = 0;
              for (const auto& rep : p->replicas) n += rep->state != store::Replica::State::Failed;
              out.u32(n);
              for (const auto& rep : p->replicas)
                if (rep->state != store::Replica::State::Failed)
                  out.box(rep->box).str(rep->layout.to_string()).u64(rep->bytes).u8(rep->state == store::Replica::State::Ready);
            }
          }
        }
        return false;
      }
      case Op::Stat: {
        in.expect_end();
        net::write_stats(out, stats());
        return false;
      }
      case Op::Disconnect: {
        const std::string owner = in.str();
        in.expect_end();
        std::vector<std::unique_ptr<store::Piece>> gone;
        {
          std::lock_guard lock(mutex);
          gone = store.remove_owner(owner);
        }
        out.u32(static_cast<std::uint32_t>(gone.size()));
        return false;
      }
      case Op::IndexAdd:
        index_add(in);
        return false;
      case Op::Pattern: {
        const std::string var = in.str();
        const Layout layout = Layout::parse(in.str());
        const Box box = in.box();
        const std::uint64_t gets = in.u64();
        const std::uint64_t read = in.u64();
        in.expect_end();
        store::Store::Freed freed;
        std::lock_guard lock(mutex);
        store.check_piece(var, box);
        layout.axis_order(box.ndim);
        if (patterns.update(var, layout, box, gets))
          // A writer may be ahead of this reader: the versions after the one
          // it read are what it gets next.
          for (std::uint64_t v : store.versions_newest_first(var)) {
            if (v <= read) break;
            for (store::Piece* p : store.pieces_of(var, v)) prepare_patterns(var, v, *p, freed);
          }
        return false;
      }
      case Op::MetaPut: {
        const std::string name = in.str();
        const std::uint64_t version = in.u64();
        const auto blob = in.bytes();
        in.expect_end();
        if (name.empty()) fail(Code::InvalidArgument, "metadata name is empty");
        if (blob.size() > net::kMaxMetaBytes)
          fail(Code::InvalidArgument, "metadata '", name, "' of ", blob.size(), " bytes exceeds ", net::kMaxMetaBytes);
        std::lock_guard lock(mutex);
        auto& versions = metadata[name];
        versions[version].assign(blob.begin(), blob.end());
        if (options.max_versions > 0)
          while (versions.size() > static_cast<std::size_t>(options.max_versions)) versions.erase(versions.begin());
        store::Store::Freed none;  // metadata drops no replicas
        answer_waiters(name, none, true);
        return false;
      }
      case Op::MetaGet: {
        Waiter w(r, id, in.str());
        w.meta = true;
        w.meta_mode = in.u8();
        w.version = in.u64();
        const std::int64_t timeout_ms = in.i64();
        in.expect_end();
        if (w.meta_mode > 2) fail(Code::InvalidArgument, "metadata get mode ", w.meta_mode, " is not 0, 1 or 2");
        w.deadline = net::deadline_in(timeout_ms);
        store::Store::Freed none;
        std::lock_guard lock(mutex);
        if (try_answer(w, none) == Cover::Answered) return true;
        if (timeout_ms == 0) fail(Code::NotFound, "metadata '", w.var, "' has no such version (yet)");
        waiters.push_back(std::move(w));
        timer_wake.notify_all();
        return true;
      }
      case Op::Stop: {
        in.expect_end();
        ++requests;
        r->reply(std::move(out).finish());
        std::thread([self = shared_from_this()] { self->stop(); }).detach();
        return true;
      }
    }
    fail(Code::Protocol, "unknown request type ", static_cast<int>(op));
  }

  // The fields Put, PutLocal, PutInline and IndexAdd start with:
  // var, version, box, layout, dtype, bytes.
  struct PieceHeader {
    std::string var;
    std::uint64_t version;
    DType dtype;
    std::unique_ptr<store::Piece> piece;
  };
  static PieceHeader read_piece_header(net::WireReader& in) {
    PieceHeader h{in.str(), in.u64(), {}, std::make_unique<store::Piece>()};
    h.piece->box = in.box();
    h.piece->layout = Layout::parse(in.str());
    h.dtype = DType::parse(in.str());
    h.piece->bytes = in.u64();
    return h;
  }

  void put(Op op, net::WireReader& in, const std::shared_ptr<net::Request>& r) {
    auto [var, version, dtype, piece] = read_piece_header(in);
    if (op == Op::PutLocal) {
      piece->owner = in.str();
      if (piece->owner.empty()) fail(Code::InvalidArgument, "put_local without the writer's address");
    }
    const auto key_or_data = in.bytes();
    if (op == Op::PutInline) {
      if (key_or_data.size() != piece->bytes)
        fail(Code::Protocol, "inline put announces ", piece->bytes, " bytes but carries ", key_or_data.size());
    } else {
      piece->key.assign(key_or_data.begin(), key_or_data.end());
    }
    const std::uint8_t reorg = in.u8();
    in.expect_end();
    if (reorg) to_reorg(reorg);
    std::vector<int> shards;
    store::Store::Freed freed;  // replicas dropped to make room: released after the lock
    {
      std::lock_guard lock(mutex);
      const store::VariableDef& def = store.check_piece(var, piece->box);
      if (!(def.dtype == dtype))
        fail(Code::InvalidArgument, "variable '", var, "' has dtype ", def.dtype.name(), " but the put sends ",
             dtype.name());
      piece->layout.axis_order(def.ndim);  // a permutation of another rank is an error
      const auto need = static_cast<std::uint64_t>(piece->box.volume()) * def.dtype.size();
      if (piece->bytes != need)
        fail(Code::InvalidArgument, "put of ", piece->box.to_string(), " in '", var, "' sends ", piece->bytes,
             " bytes; the region holds ", need);
      shards = shard_map(def).shards_for(piece->box);
      if (op != Op::PutLocal) store.reserve(piece->bytes, freed);
    }
    const bool mine = std::find(shards.begin(), shards.end(), my_rank) != shards.end();
    if (op != Op::PutLocal) {
      try {
        piece->buffer = pool->acquire(piece->bytes);
        if (op == Op::PutInline) {
          std::memcpy(piece->buffer->data, key_or_data.data(), piece->bytes);
        } else {
          const net::RemoteOp read{0, piece->buffer->data, piece->bytes};
          endpoint->read(r->peer(), piece->key, {&read, 1}, net::kNoDeadline);
        }
        piece->key = piece->buffer->key;
      } catch (...) {
        std::lock_guard lock(mutex);
        store.unreserve(piece->bytes);  // the partial piece is dropped; nothing else changed
        throw;
      }
      bytes_in += piece->bytes;
      piece->indexed = mine;  // held here either way; indexed here if this shard covers part of it
    }
    // What the other shards need, copied: once stored, the piece may be
    // evicted by a concurrent put of a newer version.
    const IndexEntry entry{piece->box, piece->layout, piece->bytes, piece->key,
                           op == Op::PutLocal ? piece->owner : address};
    std::vector<std::unique_ptr<store::Piece>> evicted;
    if (op != Op::PutLocal || mine) {
      std::lock_guard lock(mutex);
      const std::uint64_t id = store.add(var, version, std::move(piece), evicted);
      prepare_on_put(var, version, *store.piece(var, version, id), reorg, freed);
      answer_waiters(var, freed);
    }
    // The other shards learn of it after it is stored here, so a reader they answer finds it.
    forward(shards, var, version, entry, dtype);
  }

  // Answers `w` if the store now covers its region, or with the error that
  // checking it raised. Caller holds the mutex.
  Cover try_answer(const Waiter& w, store::Store::Freed& freed) {
    try {
      if (w.meta) return try_meta(w) ? Cover::Answered : Cover::No;
      return try_cover(w, freed);
    } catch (const Error& e) {
      ++requests;
      w.request->reply(net::error_reply(static_cast<std::uint16_t>(Op::Query), w.request_id, e.code(), e.what()));
      return Cover::Answered;
    }
  }

  static Reorg to_reorg(std::uint8_t m) {
    if (m < 1 || m > 4) fail(Code::InvalidArgument, "reorganization method ", int{m}, " is not one this server knows");
    return static_cast<Reorg>(m);
  }
  // The method in force: the client's, else the variable's, else the server's.
  Reorg method_for(const store::VariableDef& def, std::uint8_t client) const {
    return client ? static_cast<Reorg>(client) : def.reorg ? *def.reorg : options.reorg;
  }
  std::vector<Layout> expected_layouts(const store::VariableDef& def) const {
    if (!def.layouts.empty()) return def.layouts;
    if (!options.layouts.empty()) return options.layouts;
    return {Layout::c(), Layout::f()};
  }

  // Starts building a replica of `box` of piece `p` in `layout`, unless the
  // bytes can be read without one, or one exists or is being built.
  // Returns the replica (null when none is needed). Caller holds the mutex.
  store::Replica* schedule(const std::string& var, std::uint64_t version, store::Piece& p, const Box& box,
                           const Layout& layout, std::size_t elem, store::Store::Freed& freed) {
    if (!p.owner.empty() || !needs_reorg(p.box, p.layout, box, layout, box, elem)) return nullptr;
    if (store::Replica* r = store.find_replica(p, layout, box)) return r;
    store::Replica& r = store.add_replica(p, box, layout, elem, freed);
    if (r.state == store::Replica::State::Building)
      reorganizer->submit({var, version, p.id, r.id, p.buffer, p.box, p.layout, box, layout, elem});
    return &r;
  }

  // In the background, for a piece just put: RASIA, every expected layout
  // of the whole piece; and the recorded access patterns (whatever the
  // writer's method: records exist only because readers asked for SAHR).
  void prepare_on_put(const std::string& var, std::uint64_t version, store::Piece& p, std::uint8_t client,
                      store::Store::Freed& freed) {
    const store::VariableDef& def = *store.find(var);
    if (method_for(def, client) == Reorg::Rasia)
      for (const Layout& l : expected_layouts(def)) schedule(var, version, p, p.box, l, def.dtype.size(), freed);
    prepare_patterns(var, version, p, freed);
  }

  // SAHR: the recorded regions of `var` that meet piece `p`, in their layouts.
  void prepare_patterns(const std::string& var, std::uint64_t version, store::Piece& p, store::Store::Freed& freed) {
    const store::VariableDef& def = *store.find(var);
    const std::size_t elem = def.dtype.size();
    for (const store::AccessPattern& rec : patterns.of(var)) {
      if (rec.box.ndim != def.ndim) continue;
      const Box part = p.box.intersection(rec.box);
      if (!part.empty()) schedule(var, version, p, part, rec.layout, elem, freed);
    }
  }

  // The replica that answers for piece `p` in `w`, or null for the piece
  // itself; sets `preparing` when the answer must wait for one being built.
  const store::Replica* replica_for(Reorg method, const Waiter& w, std::uint64_t version, store::Piece& p,
                                    std::size_t elem, bool& preparing, store::Store::Freed& freed) {
    if (method == Reorg::Rad || !p.owner.empty()) return nullptr;  // held elsewhere: its holder answers with one
    const Box part = p.box.intersection(w.region);
    if (!needs_reorg(p.box, p.layout, w.region, w.layout, part, elem)) return nullptr;
    store::Replica* r = store.find_replica(p, w.layout, part);
    if (!r && method == Reorg::Rasar) r = schedule(w.var, version, p, part, w.layout, elem, freed);
    if (!r || r->state == store::Replica::State::Failed) return nullptr;
    if (r->state == store::Replica::State::Ready) return r;
    if (method != Reorg::Sahr) preparing = true;  // SAHR never waits: a replica not ready means a busy server
    return nullptr;
  }

  // A reorganizer finished (or failed) a replica.
  void replica_built(const server::ReorgJob& job, std::shared_ptr<store::BufferPool::Block> bytes) {
    store::Store::Freed freed;
    std::lock_guard lock(mutex);
    store::Piece* p = store.piece(job.var, job.version, job.piece);
    if (!p) {  // evicted meanwhile: the bytes go back to the pool
      freed.push_back(std::move(bytes));
      return;
    }
    for (auto& r : p->replicas)
      if (r->id == job.replica) {
        if (bytes) {
          store.replica_ready(*r, std::move(bytes));
          ++reorganizations;
        } else {
          store.replica_failed(*r);
        }
      }
    answer_waiters(job.var, freed);
  }

  Cover try_cover(const Waiter& w, store::Store::Freed& freed) {
    const store::VariableDef* def = store.find(w.var);
    if (!def) return Cover::No;
    const std::vector<Box> parts = shard_map(*def).parts_of(my_rank, w.region);
    std::optional<std::vector<store::Piece*>> pieces;
    std::uint64_t version = w.version;
    if (w.latest) {
      for (std::uint64_t v : store.versions_newest_first(w.var))
        if (v >= w.version && (pieces = store.covering(w.var, v, parts))) {
          version = v;
          break;
        }
    } else {
      pieces = store.covering(w.var, version, parts);
    }
    if (!pieces) return Cover::No;
    const Reorg method = method_for(*def, w.reorg);
    net::WireWriter out(static_cast<std::uint16_t>(Op::Query), w.request_id);
    out.u64(version).str(def->dtype.name()).u8(static_cast<std::uint8_t>(method));
    const std::size_t elem = def->dtype.size();
    const std::uint64_t region_bytes = static_cast<std::uint64_t>(w.region.volume()) * elem;
    const bool all_here = std::all_of(pieces->begin(), pieces->end(), [](const store::Piece* p) { return p->owner.empty(); });
    if (all_here && region_bytes <= w.eager_max && parts.size() == 1 && parts[0] == w.region) {
      // Small, and all ours: answer with the bytes, assembled in the reader's layout.
      std::vector<std::byte> data(region_bytes);
      for (const store::Piece* p : *pieces)
        copy_region({p->buffer->data, p->bytes, p->box, p->layout}, {data.data(), data.size(), w.region, w.layout},
                    p->box.intersection(w.region), def->dtype.size());
      out.u8(1).bytes(data);
    } else {
      bool preparing = false;
      std::vector<const store::Replica*> replicas;
      for (store::Piece* p : *pieces)
        replicas.push_back(w.sources_only ? nullptr : replica_for(method, w, version, *p, elem, preparing, freed));
      if (preparing) return Cover::Preparing;
      out.u8(0).u32(static_cast<std::uint32_t>(pieces->size()));
      for (std::size_t i = 0; i < pieces->size(); ++i) {
        const store::Piece* p = (*pieces)[i];
        if (const store::Replica* r = replicas[i]) {
          out.box(r->box).str(r->layout.to_string()).str("").bytes(r->buffer->key).u8(1).bytes(p->key);
          ++replica_answers;
        } else {
          out.box(p->box).str(p->layout.to_string()).str(p->owner).bytes(p->key).u8(0);
        }
      }
    }
    ++requests;
    w.request->reply(std::move(out).finish());
    return Cover::Answered;
  }

  // The shard map of a variable for the current group. Caller holds the mutex.
  const common::ShardMap& shard_map(const store::VariableDef& def) {
    auto it = shard_maps.find(def.name);
    if (it == shard_maps.end())
      it = shard_maps.emplace(def.name, common::ShardMap(def.shape, static_cast<int>(group.size()), def.name)).first;
    return it->second;
  }

  // Adds an index entry for a piece held elsewhere (forwarded by another server).
  void index_add(net::WireReader& in) {
    auto [var, version, dtype, piece] = read_piece_header(in);
    piece->owner = in.str();
    const auto key = in.bytes();
    piece->key.assign(key.begin(), key.end());
    in.expect_end();
    if (piece->owner.empty()) fail(Code::Protocol, "index entry without the holder's address");
    std::vector<std::unique_ptr<store::Piece>> evicted;
    store::Store::Freed freed;
    std::lock_guard lock(mutex);
    const store::VariableDef& def = store.check_piece(var, piece->box);
    if (!(def.dtype == dtype)) fail(Code::InvalidArgument, "index entry for '", var, "' has dtype ", dtype.name());
    store.add(var, version, std::move(piece), evicted);
    answer_waiters(var, freed);
  }

  net::Peer server_peer(const std::string& peer_address) { return server_peers.get(*endpoint, peer_address, 30000); }

  struct IndexEntry {
    Box box;
    Layout layout;
    std::uint64_t bytes;
    net::Bytes key;
    std::string holder;
  };

  // Sends an index entry for a piece to the other shards that index part of it.
  void forward(const std::vector<int>& shards, const std::string& var, std::uint64_t version, const IndexEntry& e,
               const DType& dtype) {
    for (int s : shards) {
      if (s == my_rank) continue;
      net::WireWriter w(static_cast<std::uint16_t>(Op::IndexAdd), next_forward++);
      w.str(var).u64(version).box(e.box).str(e.layout.to_string()).str(dtype.name()).u64(e.bytes).str(e.holder);
      w.bytes(e.key);
      net::Bytes request = std::move(w).finish();
      const std::uint64_t id = net::read_header(request).request_id;
      net::Bytes reply = endpoint->call(server_peer(group[s]), std::move(request), net::deadline_in(30000));
      net::check_reply(reply, static_cast<std::uint16_t>(Op::IndexAdd), id);
    }
  }

  // Caller holds the mutex.
  void answer_waiters(const std::string& var, store::Store::Freed& freed, bool meta = false) {
    for (auto it = waiters.begin(); it != waiters.end();) {
      if (it->meta != meta || it->var != var) {
        ++it;
        continue;
      }
      const Cover c = try_answer(*it, freed);
      if (c == Cover::Preparing) it->deadline = std::max(it->deadline, net::deadline_in(kReplicaWaitMs));
      it = c == Cover::Answered ? waiters.erase(it) : std::next(it);
    }
  }

  // Metadata: small named blobs by version, kept on this server.
  bool try_meta(const Waiter& w) {
    auto it = metadata.find(w.var);
    if (it == metadata.end() || it->second.empty()) return false;
    const auto& versions = it->second;
    std::map<std::uint64_t, net::Bytes>::const_iterator found;
    if (w.meta_mode == 0)
      found = versions.find(w.version);
    else if (w.meta_mode == 1)
      found = versions.upper_bound(w.version);
    else
      found = std::prev(versions.end());
    if (found == versions.end()) return false;
    net::WireWriter out(static_cast<std::uint16_t>(Op::MetaGet), w.request_id);
    out.u64(found->first).bytes(found->second);
    ++requests;
    w.request->reply(std::move(out).finish());
    return true;
  }

  void expire_waiters() {
    std::unique_lock lock(mutex);
    while (!stopped) {
      net::Deadline next = net::kNoDeadline;
      const auto now = net::Clock::now();
      for (auto it = waiters.begin(); it != waiters.end();) {
        if (it->deadline <= now && !it->meta && !it->sources_only) {
          // Waiting for replicas took too long: the pieces themselves, if they cover it.
          it->sources_only = true;
          store::Store::Freed none;
          if (try_answer(*it, none) == Cover::Answered) {
            it = waiters.erase(it);
            continue;
          }
        }
        if (it->deadline <= now) {
          ++requests;
          it->request->reply(net::error_reply(
              static_cast<std::uint16_t>(it->meta ? Op::MetaGet : Op::Query), it->request_id, Code::Timeout,
              it->meta ? detail::concat("metadata '", it->var, "' had no such version before the timeout")
                       : detail::concat("variable '", it->var, "': region ", it->region.to_string(),
                                        " was not covered before the timeout")));
          it = waiters.erase(it);
        } else {
          next = std::min(next, it->deadline);
          ++it;
        }
      }
      if (next == net::kNoDeadline)
        timer_wake.wait(lock);
      else
        timer_wake.wait_until(lock, next);
    }
  }

  ServerStats stats() {
    std::lock_guard lock(mutex);
    const store::StoreStats s = store.stats();
    ServerStats out;
    out.variables = s.variables;
    out.versions = s.versions;
    out.pieces = s.pieces;
    out.owned_bytes = s.owned_bytes;
    out.local_bytes = s.local_bytes;
    out.memory_budget = s.budget;
    out.requests = requests;
    out.bytes_in = bytes_in;
    out.replicas = s.replicas;
    out.replica_bytes = s.replica_bytes;
    out.reorganizations = reorganizations;
    out.replica_answers = replica_answers;
    out.patterns = patterns.size();
    out.reorg = options.reorg;
    out.layouts = options.layouts;
    return out;
  }

  ServerOptions options;
  std::string address;
  store::Store store;
  std::unique_ptr<net::Endpoint> endpoint;
  std::unique_ptr<store::BufferPool> pool;  // after endpoint: destroyed before it
  std::unique_ptr<server::Reorganizer> reorganizer;  // after pool: stopped and destroyed before it
  store::AccessPatterns patterns;
  std::mutex mutex;
  std::condition_variable wake, timer_wake, done_cv;
  std::deque<std::shared_ptr<net::Request>> queue;
  std::list<Waiter> waiters;
  std::vector<std::string> group;  // every server's address; ours at my_rank
  int my_rank = 0;
  std::map<std::string, common::ShardMap> shard_maps;  // by variable, for the current group
  net::PeerCache server_peers;
  std::map<std::string, std::map<std::uint64_t, net::Bytes>> metadata;  // name -> version -> blob
  std::atomic<std::uint64_t> next_forward{1};
  std::vector<std::thread> workers;
  std::thread timer;
  bool stopped = false, done = false;
  std::atomic<std::uint64_t> requests{0}, bytes_in{0}, reorganizations{0}, replica_answers{0};
};

Server::Server(const ServerOptions& options) : impl_(std::make_shared<Impl>(options)) {}
Server::~Server() = default;
std::string Server::address() const { return impl_->address; }

void Server::join_group(const std::vector<std::string>& addresses, int rank) {
  if (rank < 0 || static_cast<std::size_t>(rank) >= addresses.size() || addresses[rank] != impl_->address)
    fail(Code::InvalidArgument, "join_group: member ", rank, " of ", addresses.size(),
         " is not this server's address");
  std::lock_guard lock(impl_->mutex);
  impl_->group = addresses;
  impl_->my_rank = rank;
  impl_->shard_maps.clear();
}
ServerStats Server::stats() const { return impl_->stats(); }
void Server::stop() { impl_->stop(); }
void Server::wait() { impl_->wait(); }

}  // namespace cove
