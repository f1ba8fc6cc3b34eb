#include "server/service.hpp"
#include "common/printable.hpp"

#include "common/auth.hpp"
#include "common/config.hpp"
#include "common/connection_file.hpp"
#include "common/log.hpp"
#include "core/fail.hpp"

#include <unistd.h>

namespace cove::server {

using detail::fail;
using net::Op;

Service::Service(const ServerOptions& o) : options_(o), store_(o.memory_budget, o.max_versions), metadata_(o.max_versions) {
  if (o.workers < 1 || o.workers > 256)
    fail(Code::InvalidArgument, "ServerOptions.workers = ", o.workers, " must be 1..256");
  common::check_range(o.memory_budget, "ServerOptions.memory_budget", 0, common::kMaxMemoryBudget);
  if (o.max_message_bytes != 0)
    common::check_range(o.max_message_bytes, "ServerOptions.max_message_bytes", common::kMinMessageBytes,
                        common::kMaxMessageBytes);
  if (o.reorg_threads < 1 || o.reorg_threads > 64)
    fail(Code::InvalidArgument, "ServerOptions.reorg_threads = ", o.reorg_threads, " must be 1..64");
  if (o.worker_slots < 0 || o.worker_slots > 4096)
    fail(Code::InvalidArgument, "ServerOptions.worker_slots = ", o.worker_slots, " must be 0..4096");
  if (o.placement_window_ms < 0 || o.placement_window_ms > 1000)
    fail(Code::InvalidArgument, "ServerOptions.placement_window_ms = ", o.placement_window_ms, " must be 0..1000");
  if (o.pool_reserve > common::kMaxMemoryBudget)
    fail(Code::InvalidArgument, "ServerOptions.pool_reserve = ", o.pool_reserve, " must be at most 1 PiB");
  if (o.replicas < 1 || o.replicas > 2)
    fail(Code::InvalidArgument, "ServerOptions.replicas = ", o.replicas, " must be 1 or 2");
  if (static_cast<int>(o.reorg) < 1 || static_cast<int>(o.reorg) > 4)
    fail(Code::InvalidArgument, "ServerOptions.reorg = ", static_cast<int>(o.reorg), " is not a method");
  endpoint_ = net::make_endpoint(o.transport, {o.listen, o.max_message_bytes});
  address_ = endpoint_->address();
  // Freed piece buffers are kept for reuse up to a quarter of the budget
  // (1 GiB without one); with pool_reserve, that much is made ahead of use
  // and pieces are cut from it. Neither counts against the budget.
  pool_ = std::make_unique<store::BufferPool>(
      *endpoint_, o.memory_budget ? o.memory_budget / 4 : std::size_t{1} << 30, o.pool_reserve);
  pool_->settle();  // the reserve is made before the server takes any request
  reorganizer_ = std::make_unique<Reorganizer>(
      o.reorg_threads, *pool_,
      [this](const ReorgJob& job, std::shared_ptr<store::BufferPool::Block> bytes) { replica_built(job, std::move(bytes)); });
  replicas_ = std::make_unique<ReplicaPlanner>(options_, store_, patterns_, *reorganizer_);
  group_ = std::make_unique<GroupLink>(*endpoint_, address_);
  parked_ = std::make_unique<Parked>(mutex);
  placement_ = std::make_unique<PlacementService>(o);
  dispatcher_ = std::make_unique<Dispatcher>(o.workers);
}

Service::~Service() { stop(); }

void Service::start() {
  using D = Dispatcher;
  auto& d = *dispatcher_;
  // Puts that pull data, and those that forward index entries to other
  // servers, run on workers: an index entry arriving from another server
  // must not queue behind a put that is itself forwarding to that server.
  // A put with bytes or a put_local decides by its piece: one that only
  // this server indexes is stored at once, on the transport's thread.
  const D::RunsInline unless_forwarding = [this] { return group_->alone(); };
  const auto inline_unless_forwarding = [this, &d](const net::PieceHeader& h, Responder answer, auto store) {
    if (!waits_on_members(h)) {
      store(answer);
      return;
    }
    d.post([answer = std::move(answer), store = std::move(store)]() mutable {
      try {
        store(answer);
      } catch (...) {
        answer.fail(std::current_exception());
      }
    });
  };
  d.on<Op::Hello>(D::always(), [this](Session& s, net::HelloRequest&& r) { return hello(s, std::move(r)); });
  d.on<Op::Join>(D::always(), [this](Session& s, net::JoinRequest&& r) { return join(s, std::move(r)); });
  d.on<Op::Define>(D::always(), [this](Session&, net::DefineRequest&& r) { return define(std::move(r)); });
  d.on<Op::Undefine>(D::always(), [this](Session&, net::UndefineRequest&& r) { return undefine(std::move(r)); });
  // A put whose bytes this server reads waits on its writer: on a thread of
  // its own, so that stopped writers hold up no worker (transfers.hpp).
  d.on_async<Op::Put>(D::always(), [this](Session&, net::PutRequest&& r, Responder answer) {
    transfers_.run(std::move(answer), [this, r = std::move(r)](Responder& a) mutable {
      a.reply<net::Message<Op::Put>>(put(a.peer(), std::move(r.piece), &r.key, nullptr, r.reorg));
    });
  });
  // So does a member's piece this server keeps a second copy of, when it
  // reads the bytes. One that came with them (at most 64 KiB) is stored
  // at once: never on a worker, where it could queue behind puts that wait
  // for copies themselves (around the group's ring, for ever).
  d.on_async<Op::Copy>(D::always(), [this](Session&, net::CopyRequest&& r, Responder answer) {
    if (r.key.empty()) {
      answer.reply<net::Message<Op::Copy>>(copy(answer.peer(), std::move(r)));
      return;
    }
    transfers_.run(std::move(answer), [this, r = std::move(r)](Responder& a) mutable {
      a.reply<net::Message<Op::Copy>>(copy(a.peer(), std::move(r)));
    });
  });
  d.on_async<Op::PutInline>(D::always(), [this, inline_unless_forwarding](Session&, net::PutInlineRequest&& r,
                                                                          Responder answer) {
    const net::PieceHeader h = r.piece;
    inline_unless_forwarding(h, std::move(answer), [this, r = std::move(r)](Responder& a) mutable {
      a.reply<net::Message<Op::PutInline>>(put(a.peer(), std::move(r.piece), nullptr, &r.data, r.reorg));
    });
  });
  d.on_async<Op::PutLocal>(D::always(), [this, inline_unless_forwarding](Session&, net::PutLocalRequest&& r,
                                                                        Responder answer) {
    const net::PieceHeader h = r.piece;
    inline_unless_forwarding(h, std::move(answer), [this, r = std::move(r)](Responder& a) mutable {
      a.reply<net::Message<Op::PutLocal>>(put_local(*session_of(a.peer()), std::move(r)));
    });
  });
  // A grant may make a new segment (its pages faulted in): not on the
  // transport's thread. Offered bytes the server reads into its reserve
  // (pulls()) are a Put, on a thread of their own.
  d.on_async<Op::PutGrant>(D::always(), [this, &d](Session&, net::PutGrantRequest&& r, Responder answer) {
    if (pulls(answer.peer(), r)) {
      transfers_.run(std::move(answer), [this, r = std::move(r)](Responder& a) mutable {
        put(a.peer(), std::move(r.piece), &r.key, nullptr, r.reorg);
        a.reply<net::Message<Op::PutGrant>>(net::PutGrantReply{});
      });
      return;
    }
    d.post([this, r = std::move(r), answer = std::move(answer)]() mutable {
      try {
        answer.reply<net::Message<Op::PutGrant>>(put_grant(*session_of(answer.peer()), std::move(r)));
      } catch (...) {
        answer.fail(std::current_exception());
      }
    });
  });
  d.on<Op::PutPublish>(unless_forwarding,
                       [this](Session& s, net::PutPublishRequest&& r) { return put_publish(s, std::move(r)); });
  d.on_async<Op::IndexAdd>(D::always(), [this](Session&, net::IndexAddRequest&& r, Responder answer) {
    index_add(std::move(r), std::move(answer));
  });
  d.on<Op::Backup>(D::always(), [this](Session&, net::BackupRequest&& r) { return backup(std::move(r)); });
  d.on_async<Op::Release>(D::always(), [this](Session& s, net::ReleaseRequest&& r, Responder answer) {
    release(s, std::move(r), std::move(answer));
  });
  d.on<Op::Delete>(D::always(), [this](Session&, net::DeleteRequest&& r) { return remove(std::move(r)); });
  d.on_async<Op::Query>(D::always(), [this](Session&, net::QueryRequest&& r, Responder answer) {
    query(std::move(r), std::move(answer));
  });
  d.on<Op::Latest>(D::always(), [this](Session&, net::VarRequest&& r) { return latest(std::move(r)); });
  d.on<Op::Pattern>(D::always(), [this](Session&, net::PatternRequest&& r) { return pattern(std::move(r)); });
  d.on<Op::MetaPut>(D::always(), [this](Session&, net::MetaPutRequest&& r) { return meta_put(std::move(r)); });
  d.on_async<Op::MetaGet>(D::always(), [this](Session&, net::MetaGetRequest&& r, Responder answer) {
    meta_get(std::move(r), std::move(answer));
  });
  d.on_async<Op::Lock>(D::always(), [this](Session& s, net::LockRequest&& r, Responder answer) {
    lock(s, std::move(r), std::move(answer));
  });
  d.on<Op::Unlock>(D::always(), [this](Session& s, net::UnlockRequest&& r) { return unlock(s, std::move(r)); });
  d.on<Op::List>(D::always(), [this](Session&, net::Empty&&) { return list(); });
  d.on<Op::Worker>(D::always(), [this](Session& s, net::WorkerRequest&& r) { return register_worker(s, std::move(r)); });
  d.on_async<Op::Place>(D::always(), [this](Session&, net::PlaceRequest&& r, Responder answer) {
    place(std::move(r), std::move(answer));
  });
  d.on<Op::Dataflow>(D::always(), [this](Session&, net::DataflowRequest&& r) { return dataflow(std::move(r)); });
  d.on<Op::Placements>(D::always(), [this](Session&, net::PlacementsRequest&& r) { return placements(std::move(r)); });
  d.on<Op::TaskDone>(D::always(), [this](Session&, net::TaskDoneRequest&& r) { return task_done(std::move(r)); });
  d.on_async<Op::Lookup>(D::always(), [this](Session&, net::LookupRequest&& r, Responder answer) {
    lookup(std::move(r), std::move(answer));
  });
  d.on<Op::Seal>(D::always(), [this](Session&, net::SealRequest&& r) { return seal(std::move(r)); });
  d.on_async<Op::Recopy>(D::always(), [this](Session&, net::RecopyRequest&& r, Responder answer) {
    recopy(std::move(r), std::move(answer));
  });
  d.on<Op::Derive>(D::always(), [this](Session&, net::DeriveRequest&& r) { return derive(std::move(r)); });
  d.on<Op::Stat>(D::always(), [this](Session&, net::Empty&&) { return net::StatReply{stats()}; });
  d.on_async<Op::Disconnect>(D::always(), [this](Session& s, net::DisconnectRequest&& r, Responder answer) {
    disconnect(s, std::move(r), std::move(answer));
  });
  d.on<Op::Lease>(D::always(), [this](Session& s, net::LeaseRequest&& r) { return lease(s, std::move(r)); });
  d.on<Op::LeaseEnd>(D::always(), [this](Session& s, net::LeaseEndRequest&& r) { return lease_end(s, std::move(r)); });
  d.on_async<Op::Stop>(D::always(), [this](Session&, net::Empty&&, Responder answer) { stop_request(std::move(answer)); });
  d.start();
  common::remember_local_secret(address_, group_->secret());
  endpoint_->serve([this](std::shared_ptr<net::Request> r) { dispatcher_->deliver(std::move(r)); },
                   [this](const net::Peer& peer) {
                     auto s = std::static_pointer_cast<Session>(peer->context());
                     if (!s) return;
                     connection_closed(*s);
                     if (s->is_greeted()) {
                       --connections_;
                       log::info("connection from {} closed", common::shown_address(s->peer_address()));
                     }
                   });
}

void Service::join_group(const std::vector<std::string>& addresses, int rank, const std::string& secret) {
  std::lock_guard lock(mutex);
  group_->join(addresses, rank, secret);
  common::remember_local_secret(address_, secret);
  shard_maps_.clear();
  std::lock_guard probes(probes_mutex_);
  if (addresses.size() > 1 && !watch_.joinable() && !probes_closed_) watch_ = std::thread([this] { watch_members(); });
}

const common::ShardMap& Service::shard_map(const store::VariableDef& def) {
  auto it = shard_maps_.find(def.name);
  if (it == shard_maps_.end()) it = shard_maps_.emplace(def.name, common::ShardMap(def.shape, def.dtype.size(), group_->size(), def.name)).first;
  return it->second;
}

void Service::replica_built(const ReorgJob& job, std::shared_ptr<store::BufferPool::Block> bytes) {
  store::Store::Freed freed;  // released after the lock
  std::lock_guard lock(mutex);
  if (replicas_->built(job, std::move(bytes), freed)) parked_->retry(var_key(job.var), freed);
}

void Service::stop() {
  {
    std::unique_lock lock(mutex);
    if (stopping_) {  // someone else is stopping it: wait for them, unless we are one of its threads
      if (!dispatcher_->is_worker(std::this_thread::get_id())) done_cv_.wait(lock, [&] { return done_; });
      return;
    }
    stopping_ = true;
  }
  log::info("server {} stopping", common::shown_address(address_));
  if (options_.pool_reserve > 0) {
    const auto p = pool_->stats();
    log::info("pool: {} large blocks made on a put's path, {} recycled, {} cut from the reserve ({} chunks made "
              "ahead of use, {} bytes held now)",
              p.fresh, p.reused, p.spares_used, p.prefaulted, p.chunk_bytes);
  }
  remove_connection_files();
  common::forget_local_secret(address_);
  parked_->stop();
  {
    std::vector<std::thread> probes;
    {
      std::lock_guard lock(probes_mutex_);
      probes_closed_ = true;
      probes.swap(probes_);
    }
    watch_cv_.notify_all();
    transfers_.stop();  // each ends by its transfer deadline
    if (watch_.joinable()) watch_.join();  // it ends within two kMemberProbeMs
    for (auto& t : probes) t.join();       // each ends within kMemberProbeMs
  }
  dispatcher_->stop();
  reorganizer_->stop();
  {
    // The store's pieces must go before the endpoint that registered their
    // memory, and after the lock: unregistering may need the transport's
    // thread, which may be waiting for this lock.
    std::vector<std::unique_ptr<store::Piece>> dropped;
    {
      std::lock_guard lock(mutex);
      dropped = store_.clear();
    }
  }
  pool_.reset();
  group_->close();    // its connections hold the endpoint's resources
  endpoint_.reset();  // fails requests still queued in the transport
  std::lock_guard lock(mutex);
  done_ = true;
  done_cv_.notify_all();
}

void Service::write_connection_file(const std::string& path) {
  if (address_.rfind("inproc://", 0) == 0)
    fail(Code::InvalidArgument, "a connection file is for other processes, but server ", address_,
         " serves this process only (transport inproc): give transport 'local' or 'ucx'");
  {
    std::lock_guard lock(mutex);
    if (stopping_) fail(Code::Unavailable, "server ", address_, " has stopped: no connection file written");
  }
  common::ConnectionInfo info;
  for (int r = 0; r < group_->size(); ++r) info.servers.push_back(group_->address_of(r));
  info.secret = group_->secret();
  common::create_connection_file(path, info);
  std::lock_guard lock(mutex);
  connection_files_.emplace_back(path, info.secret);
}

// Each file this server wrote, unless another group's replaced it since.
void Service::remove_connection_files() {
  std::vector<std::pair<std::string, std::string>> files;
  {
    std::lock_guard lock(mutex);
    files.swap(connection_files_);
  }
  for (const auto& [path, secret] : files) try {
      if (common::read_connection_file(path, 0).secret == secret) ::unlink(path.c_str());
    } catch (const Error&) {
      // Gone already, or no longer a Cove file: left as it is.
    }
}

void Service::wait() {
  std::unique_lock lock(mutex);
  done_cv_.wait(lock, [&] { return done_; });
}

ServerStats Service::stats() {
  std::lock_guard lock(mutex);
  const store::StoreStats s = store_.stats();
  ServerStats out;
  out.variables = s.variables;
  out.versions = s.versions;
  out.pieces = s.pieces;
  out.owned_bytes = s.owned_bytes;
  out.local_bytes = s.local_bytes;
  out.memory_budget = s.budget;
  out.requests = dispatcher_->answered();
  out.bytes_in = bytes_in_;
  out.bytes_out = bytes_out_;
  out.replicas = s.replicas;
  out.replica_bytes = s.replica_bytes;
  out.reorganizations = replicas_->built_count();
  out.replica_answers = replica_answers_;
  out.patterns = patterns_.size();
  out.metadata = metadata_.entries();
  out.metadata_bytes = s.metadata_bytes;
  out.lost_pieces = lost_pieces_;
  out.replication = static_cast<std::uint64_t>(options_.replicas);
  out.copies = s.copies;
  out.copy_bytes = s.copy_bytes;
  out.single_copies = options_.replicas > 1 ? s.single : 0;
  out.moved_pieces = moved_pieces_;
  out.restored_copies = restored_copies_;
  out.restored_backups = backups_sent_;
  out.partly_covered = s.partly_covered;
  out.partly_covered_bytes = s.partly_covered_bytes;
  out.lost_members = dead_members_.size();
  out.worker_slots = static_cast<std::uint64_t>(options_.worker_slots);
  out.workers = workers_.size();
  out.placements = placement_->decisions();
  out.placement_fallbacks = placement_->fallbacks();
  out.task_reports = placement_->reports();
  out.parked_gets = parked_->size();
  out.clients = connections_;
  out.uptime_ms = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(net::Clock::now() - started_).count());
  out.reorg = options_.reorg;
  out.layouts = options_.layouts;
  return out;
}

}  // namespace cove::server
