// Internal: a staging server's service: its state, and one handler per
// message type (registered in service.cpp, each defined in the handlers_*
// file of its concern):
//   handlers_session.cpp  Hello, Join, Disconnect, Stop
//   handlers_put.cpp      Define, Undefine, Put, PutInline, PutGrant, PutPublish, PutLocal, IndexAdd, Release, Delete
//   handlers_query.cpp    Query (parked until covered), Lease, LeaseEnd, Latest, Pattern
//   handlers_meta.cpp     MetaPut, MetaGet (parked until the version exists)
//   handlers_admin.cpp    List, Stat
// The parts it is made of each do one thing: Dispatcher (routing, who may
// send what), Parked (waiting requests and their deadlines), ReplicaPlanner
// and Reorganizer (replicas), GroupLink (the other servers), store::Store
// and store::MetadataStore (what is held).
//
// Locking: `mutex` guards the store, the metadata, the access patterns, the
// shard maps and the parked requests. Transfers (reading a writer's bytes)
// and calls to other servers happen outside it.
#pragma once

#include <cove/server.hpp>

#include "common/shard_map.hpp"
#include "net/messages.hpp"
#include "net/transport.hpp"
#include "server/dispatch.hpp"
#include "server/group.hpp"
#include "server/parked.hpp"
#include "server/placement_service.hpp"
#include "server/replicas.hpp"
#include "server/reorganizer.hpp"
#include "server/session.hpp"
#include "server/transfers.hpp"
#include "store/access_patterns.hpp"
#include "store/buffer_pool.hpp"
#include "store/metadata.hpp"
#include "store/lock_table.hpp"
#include "store/store.hpp"

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace cove::server {

class Service : public std::enable_shared_from_this<Service> {
 public:
  explicit Service(const ServerOptions& options);
  ~Service();
  // Registers the handlers and starts serving.
  void start();

  const std::string& address() const { return address_; }
  std::string secret() const { return group_->secret(); }
  void join_group(const std::vector<std::string>& addresses, int rank, const std::string& secret);
  // Server::write_connection_file: the group's addresses and secret, a
  // file that stop() removes while it still holds this group's secret.
  void write_connection_file(const std::string& path);
  ServerStats stats();
  std::size_t members_lost() {
    std::lock_guard lock(mutex);
    return dead_members_.size();
  }
  // Stops serving: parked requests are answered with Unavailable. Idempotent.
  void stop();
  void wait();

 private:
  void remove_connection_files();
  // Handlers.
  net::HelloReply hello(Session& s, net::HelloRequest&& r);
  net::Empty join(Session& s, net::JoinRequest&& r);
  void disconnect(Session& s, net::DisconnectRequest&& r, Responder answer);
  void stop_request(Responder answer);

  net::Empty define(net::DefineRequest&& r);
  net::VarsReply undefine(net::UndefineRequest&& r);
  net::Empty put(const net::Peer& from, net::PieceHeader&& h, const net::Bytes* key, const net::Bytes* data,
                 std::optional<Reorg> reorg);
  net::Empty put_local(Session& s, net::PutLocalRequest&& r);
  net::CopyReply copy(const net::Peer& from, net::CopyRequest&& r);
  net::PutGrantReply put_grant(Session& s, net::PutGrantRequest&& r);
  bool pulls(const net::Peer& from, const net::PutGrantRequest& r);
  net::Empty put_publish(Session& s, net::PutPublishRequest&& r);
  void connection_closed(Session& s);
  // Members of the group that die (members.cpp).
  void member_connection_closed(const std::string& member);
  void member_died(const std::string& member);   // drops what it held, counts it
  void restore_copies();                         // second copies for pieces that lost theirs
  void recopy(net::RecopyRequest&& r, Responder answer);  // an entry's piece has a new second copy (relayed, shard_backups.cpp)
  static constexpr std::uint64_t kRestoreBytesPerS = std::uint64_t{1} << 30;  // second copies restored at most this fast
  bool member_alive(const std::string& member);  // a fresh connection to it answers
  void watch_members();                          // the watch's loop, until stop()
  static constexpr std::int64_t kMemberWatchMs = 2000;
  static constexpr int kMemberWatchMisses = 3;  // rounds without an answer that make a member dead
  // Drops the pieces indexed here that `owner` (a writer) held, counting
  // them as lost.
  void drop_lost(const std::string& owner, const char* who);
  static constexpr std::int64_t kMemberProbeMs = 1000;
  // Indexes another server's entry; relayed to new second owners
  // (shard_backups.cpp) before it is answered, away from the transport's thread.
  void index_add(net::IndexAddRequest&& r, Responder answer);
  void release(Session& s, net::ReleaseRequest&& r, Responder answer);
  // Answers `answer` with the count of `gone` once no reader's lease holds
  // any of those pieces (put_local memory goes back to its writer then).
  template <typename M>
  static void answer_when_unleased(std::vector<std::unique_ptr<store::Piece>> gone, Responder answer) {
    const auto count = static_cast<std::uint32_t>(gone.size());
    std::vector<std::shared_ptr<store::Hold>> holds;
    for (auto& p : gone) holds.push_back(std::move(p->token));
    gone.clear();
    store::when_unheld(std::move(holds),
                       [answer = std::move(answer), count]() mutable { answer.reply<M>(net::CountReply{count}); });
  }
  net::DeleteReply remove(net::DeleteRequest&& r);

  void query(net::QueryRequest&& r, Responder answer);
  net::LeaseReply lease(Session& s, net::LeaseRequest&& r);
  net::Empty lease_end(Session& s, net::LeaseEndRequest&& r);
  net::LatestReply latest(net::VarRequest&& r);
  net::Empty pattern(net::PatternRequest&& r);

  net::Empty meta_put(net::MetaPutRequest&& r);
  void meta_get(net::MetaGetRequest&& r, Responder answer);

  // Locks (handlers_lock.cpp); the holder is the connection.
  class LockWait;
  void lock(Session& s, net::LockRequest&& r, Responder answer);
  net::Empty unlock(Session& s, net::UnlockRequest&& r);
  void answer_locks(const store::LockOutcome& outcome);  // under mutex
  void release_locks(Session& s);                        // the connection closed
  // handlers_worker.cpp: in-staging consumer workers (worker slots).
  net::WorkerReply register_worker(Session& s, net::WorkerRequest&& r);
  void release_worker(Session& s);                       // the connection closed
  void place(net::PlaceRequest&& r, Responder answer);
  // Places the requests held in the prioritization window and answers them
  // (the window's deadline passed); with the state lock held.
  void place_window();
  class PlaceWindow;
  net::Empty task_done(net::TaskDoneRequest&& r);
  net::Empty dataflow(net::DataflowRequest&& r);
  net::PlacementsReply placements(net::PlacementsRequest&& r);

  net::ListReply list();

  // handlers_version.cpp: definitions waited for, sealed and derived versions.
  class LookupWait;
  void lookup(net::LookupRequest&& r, Responder answer);
  net::SealReply seal(net::SealRequest&& r);
  net::VarsReply derive(net::DeriveRequest&& r);

  // Query support (handlers_query.cpp); callers hold `mutex`.
  class QueryWait;
  enum class Cover { No, Answered, Preparing };
  Cover try_cover(const net::QueryRequest& q, bool sources_only, Responder& answer, store::Store::Freed& freed);
  const common::ShardMap& shard_map(const store::VariableDef& def);
  void check_shard(std::int32_t shard) const;
  std::vector<int> admit(const net::PieceHeader& h, bool held_here, store::Store::Freed& freed);
  void define_carried(const net::PieceHeader& h);  // h.define, here and on every other live member
  void unreserve(std::uint64_t bytes);
  void store_piece(net::PieceHeader&& h, std::unique_ptr<store::Piece> piece, const std::vector<int>& shards,
                   std::optional<Reorg> reorg, store::Store::Freed& freed);
  std::unique_ptr<store::Piece> receive(const net::Peer& from, const net::PieceHeader& h, const net::Bytes* key,
                                        const net::Bytes* data);
  // replicas = 2 (handlers_put.cpp): whether pieces get second copies here,
  // making one, which members index a piece, and sending them its entry.
  bool waits_on_members(const net::PieceHeader& h);  // a put of h forwards or copies: on a worker
  bool replicated() const;
  // `restored`: made again after a member died (CopyRequest::restored).
  net::CopyRef second_copy(const net::PieceHeader& h, const store::BufferPool::Block& bytes, std::uint64_t id,
                           bool restored = false);
  // The members that index `shards` (their owners), none found dead in `dead`.
  std::vector<int> index_targets(const std::vector<int>& shards, const std::set<std::string>& dead) const;
  void forward_entry(const std::vector<int>& shards, const std::vector<int>& targets,
                     const net::IndexAddRequest& entry, const std::set<std::string>& dead);
  // Index entries after members die (shard_backups.cpp). A shard's owners:
  // its first two live members walking the ring from it (replicas = 2), or
  // itself alone.
  std::vector<int> index_owners(int shard, const std::set<std::string>& dead) const;
  // A member died: shards whose second owner changed get the new one
  // (send_backup, one at a time, on the calling thread).
  void rechain();
  void send_backup(int shard, int to);   // the entries of `shard`, to member `to`, then relays
  net::Empty backup(net::BackupRequest&& r);
  // Adds an entry from another member, or makes the one already here the
  // newest (an entry that arrives twice: direct and relayed). Under mutex.
  void index_entry(const net::IndexAddRequest& entry, store::Store::Freed& freed);
  // The members this server relays an entry of (var, box) to (under mutex).
  std::vector<std::pair<int, int>> relay_targets(const std::string& var, const Box& box);
  void relay(const std::vector<std::pair<int, int>>& to, net::BackupRequest::Stage stage,
             const net::IndexAddRequest& entry);
  // Answers `answer` (an Empty reply of message M) now, or, with relays to
  // make, on a thread of its own once they are made (IndexAdd, Recopy).
  template <typename M>
  void answer_after_relay(Responder answer, std::vector<std::pair<int, int>> to, net::BackupRequest::Stage stage,
                          net::IndexAddRequest entry) {
    if (to.empty()) {
      answer.reply<M>({});
      return;
    }
    transfers_.run(std::move(answer), [this, to = std::move(to), stage, entry = std::move(entry)](Responder& a) {
      relay(to, stage, entry);
      a.reply<M>({});
    });
  }
  std::mutex backup_sends_;  // held by a snapshot being sent: relays wait for it (they must follow it)
  // Checks a piece's header against its variable: dtype, layout rank, byte count.
  const store::VariableDef& check_header(const net::PieceHeader& h);
  // Called by a reorganizer thread when a replica is done.
  void replica_built(const ReorgJob& job, std::shared_ptr<store::BufferPool::Block> bytes);

  static std::string var_key(const std::string& var) { return "v:" + var; }
  static std::string meta_key(const std::string& name) { return "m:" + name; }

  ServerOptions options_;
  std::string address_;
  const net::Clock::time_point started_ = net::Clock::now();

  std::mutex mutex;  // see the header comment
  store::Store store_;
  store::MetadataStore metadata_;
  store::AccessPatterns patterns_;
  store::LockTable locks_;
  std::map<std::uint64_t, Responder> lock_waiters_;  // waiting lock requests, by id
  // Place requests held in the prioritization window (placement_window_ms),
  // and whether a PlaceWindow is parked to close it.
  std::vector<std::pair<net::PlaceRequest, Responder>> place_waiters_;
  bool place_window_open_ = false;
  std::map<const Session*, std::pair<std::uint32_t, std::string>> workers_;  // slot and name, by connection
  std::uint64_t next_lock_ = 1;
  std::map<std::string, common::ShardMap> shard_maps_;  // by variable, for the current group
  struct Grant {
    const Session* session = nullptr;  // the connection it belongs to
    net::PieceHeader piece;
    std::optional<Reorg> reorg;
    std::vector<int> shards;
    std::shared_ptr<store::BufferPool::Block> block;
  };
  std::map<std::uint64_t, Grant> grants_;
  // The grant `grant` of connection `s`, taken out of grants_ (NotFound).
  Grant take_grant(const Session& s, std::uint64_t grant);
  std::uint64_t next_grant_ = 1;

  std::unique_ptr<net::Endpoint> endpoint_;
  std::unique_ptr<store::BufferPool> pool_;          // after endpoint_: destroyed before it
  std::unique_ptr<Reorganizer> reorganizer_;         // after pool_: stopped and destroyed before it
  std::unique_ptr<ReplicaPlanner> replicas_;
  std::unique_ptr<GroupLink> group_;
  std::unique_ptr<Parked> parked_;
  std::unique_ptr<PlacementService> placement_;  // answers Place on server 0
  std::unique_ptr<Dispatcher> dispatcher_;
  Transfers transfers_;  // puts whose bytes are read from their writers

  std::atomic<std::uint64_t> bytes_in_{0}, bytes_out_{0}, replica_answers_{0}, connections_{0};
  std::uint64_t lost_pieces_ = 0;  // pieces of writers or members that went without releasing them (under mutex)
  std::atomic<std::uint64_t> restored_copies_{0};  // second copies made again after members died
  // Shards' index entries after members died (shard_backups.cpp; under mutex):
  std::map<int, int> relays_;  // shard -> the new second owner this server relays its new entries to
  struct Adoption {
    std::uint64_t mark = 0;  // the store's next_seq() at Begin
    std::set<std::pair<std::string, std::uint64_t>> seen;  // (var, version) snapshots received
  };
  std::map<int, Adoption> adopting_;  // shard -> a backup being received
  std::set<int> adopted_;             // shards whose entries this server received whole
  std::atomic<std::uint64_t> backups_sent_{0};  // shards' entries sent to new second owners
  std::uint64_t moved_pieces_ = 0;  // pieces of members that died, read from their second copies since (under mutex)
  std::map<std::string, int> member_connections_;  // open, by member address (under mutex)
  std::set<std::string> dead_members_;              // found dead (under mutex)
  std::set<std::string> suspects_;  // their connections closed but a probe answered: watched until they answer it (under mutex)
  std::mutex probes_mutex_;
  std::vector<std::thread> probes_;  // checks that a member died; joined by stop() (under probes_mutex_)
  bool probes_closed_ = false;       // stop() has begun (under probes_mutex_)
  std::condition_variable watch_cv_;  // wakes the watch at stop() (with probes_mutex_)
  std::thread watch_;                 // watch_members(), started when a group is joined
  std::condition_variable done_cv_;
  bool stopping_ = false, done_ = false;  // under mutex
  std::vector<std::pair<std::string, std::string>> connection_files_;  // (path, secret) written (under mutex)
};

}  // namespace cove::server
