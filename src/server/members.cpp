// Members of the group that die: a survivor turns the index entries of
// pieces a dead member held to their second copies (replicas = 2), and
// drops the others from its index (readers get NotFound at once, not
// Unavailable for good), counting them as lost. A member is dead when a
// fresh connection to it fails. The question is asked when its last
// connection here closes, and every kMemberWatchMs of each member connected
// to this server either way, or whose connections closed while it still
// answered (stopping): a member whose host vanished (killed, unplugged)
// closes no connection.
#include "server/group.hpp"
#include "common/printable.hpp"
#include "server/service.hpp"

#include "common/log.hpp"
#include "net/handshake.hpp"

#include <chrono>
#include <map>
#include <set>
#include <thread>

namespace cove::server {

bool Service::member_alive(const std::string& member) {
  try {
    auto ep = net::make_endpoint_for(member);
    const net::Peer p = ep->connect(member, net::deadline_in(kMemberProbeMs));
    net::greet(*ep, p, net::Role::Client, ep->address(), secret(), net::deadline_in(kMemberProbeMs));
    return true;
  } catch (const Error& e) {
    return e.code() != Code::Unavailable && e.code() != Code::Timeout;  // it answered, if only to refuse
  }
}

// A member's connection closing does not mean it died (a connection is
// made again after a failure, or two are made at once and one is dropped):
// with none left, a fresh connection tells, away from the transport's thread.
void Service::member_connection_closed(const std::string& member) {
  {
    std::lock_guard lock(mutex);
    if (stopping_ || --member_connections_[member] > 0) return;
  }
  // The probe is joined by stop(), so that it never outlives the service.
  std::lock_guard lock(probes_mutex_);
  if (probes_closed_) return;  // stopping
  probes_.emplace_back([this, member] {
    if (member_alive(member)) {
      // It may be on its way out (a listener that still accepts while it
      // stops): the watch asks it again until it answers there.
      std::lock_guard state(mutex);
      suspects_.insert(member);
      return;
    }
    {
      std::lock_guard state(mutex);
      if (member_connections_[member] > 0) return;  // it came back
    }
    member_died(member);
  });
}

// What the dead member held is read from second copies where there are
// some (replicas = 2); the rest leaves the index and is counted as lost.
void Service::member_died(const std::string& member) {
  {
    std::vector<std::unique_ptr<store::Piece>> lost;  // dropped after the lock
    std::lock_guard state(mutex);
    member_connections_[member] = 0;  // what is still open to it leads nowhere
    if (!dead_members_.insert(member).second || stopping_) return;
    std::size_t moved = 0;
    lost = store_.fail_over(member, address_, moved);
    lost_pieces_ += lost.size();
    moved_pieces_ += moved;
    log::warn("server {} of the group died: {} pieces it held are read from their second copies now, {} are lost",
              common::shown_address(member), moved, lost.size());
    // What parked gets wait for is not covered any more than before (a
    // moved entry covers what it covered): they need no retry.
  }
  if (!replicated()) return;
  // In the background (joined by stop(), as the probes are): shards whose
  // second owner changed get the new one, then the pieces held here that
  // lost their second copy get a new one (whose Recopy the new second
  // owners then see).
  std::lock_guard lock(probes_mutex_);
  if (!probes_closed_)
    probes_.emplace_back([this] {
      rechain();
      restore_copies();
    });
}

// Each piece held here without a second copy gets one on the next live
// member, and every index entry of it learns where (Recopy), at most
// kRestoreBytesPerS so that serving goes on meanwhile. A piece gone or
// copied meanwhile is passed over; one whose copy cannot be made stays
// single (counted in single_copies) until the next member dies.
void Service::restore_copies() {
  std::vector<store::Store::PieceRef> todo;
  {
    std::lock_guard state(mutex);
    todo = store_.lacking_copies();
  }
  if (!todo.empty()) log::info("restoring the second copies of {} pieces", todo.size());
  for (const auto& ref : todo) {
    {
      std::lock_guard lock(probes_mutex_);
      if (probes_closed_) return;  // stopping
    }
    net::PieceHeader h;
    std::shared_ptr<store::BufferPool::Block> bytes;
    std::vector<int> targets;
    std::set<std::string> dead;
    {
      std::lock_guard state(mutex);
      const store::Piece* p = store_.piece(ref.var, ref.version, ref.id);
      const store::VariableDef* def = store_.find(ref.var);
      if (!p || !def || p->copy || p->is_copy || !p->buffer) continue;
      h = {ref.var, ref.version, p->box, p->layout, def->dtype, p->bytes, std::nullopt};
      bytes = p->buffer;
      dead = dead_members_;
      targets = index_targets(shard_map(*def).shards_for(p->box), dead);
    }
    const auto began = net::Clock::now();
    const net::CopyRef copy = second_copy(h, *bytes, ref.id, true);  // this server's entry, if any, takes it there
    if (!copy) continue;
    ++restored_copies_;
    for (const auto& [rank, why] : group_->send<net::Message<net::Op::Recopy>>(
             targets, {ref.var, ref.version, address_, ref.id, copy}, dead))
      log::debug("the new second copy of a piece of '{}' was not announced to server {}", ref.var, rank);
    const auto budget = std::chrono::microseconds(h.bytes * 1000000 / kRestoreBytesPerS);
    std::this_thread::sleep_until(began + budget);
  }
}

void Service::recopy(net::RecopyRequest&& r, Responder answer) {
  std::vector<std::pair<int, int>> relays;
  net::IndexAddRequest entry;
  {
    std::lock_guard state(mutex);
    const store::Piece* p = store_.set_copy(r.var, r.version, r.holder, r.piece_id, r.copy);
    if (p) {
      relays = relay_targets(r.var, p->box);
      entry = {{r.var, r.version, p->box, p->layout, store_.find(r.var)->dtype, p->bytes, std::nullopt}, r.holder, p->key,
               r.piece_id, r.copy};
    }
  }
  answer_after_relay<net::Message<net::Op::Recopy>>(std::move(answer), std::move(relays),
                                                    net::BackupRequest::Stage::Recopy, std::move(entry));
}

// A member that misses kMemberWatchMisses rounds in a row is dead: one
// stalled for a moment (paging, a debugger) is not given up at once.
void Service::watch_members() {
  std::map<std::string, int> misses;  // consecutive rounds without an answer
  std::unique_lock lock(probes_mutex_);
  while (!watch_cv_.wait_for(lock, std::chrono::milliseconds(kMemberWatchMs), [&] { return probes_closed_; })) {
    lock.unlock();
    // Those with connections here, or to which this server has one, and
    // those that missed a round (their connection is forgotten then).
    std::set<std::string> members;
    for (auto& member : group_->connected()) members.insert(std::move(member));
    for (const auto& [member, missed] : misses) members.insert(member);
    {
      std::lock_guard state(mutex);
      for (const auto& [member, open] : member_connections_)
        if (open > 0) members.insert(member);
      members.insert(suspects_.begin(), suspects_.end());
      for (const auto& dead : dead_members_) members.erase(dead);
    }
    for (const auto& member : members) {
      if (group_->answers(member, net::deadline_in(kMemberProbeMs)) || member_alive(member)) {
        {
          std::lock_guard state(mutex);
          suspects_.erase(member);  // it answered: watched as any member it is connected to
        }
        misses.erase(member);
      } else if (++misses[member] >= kMemberWatchMisses) {
        misses.erase(member);
        member_died(member);
      }
    }
    lock.lock();
  }
}

}  // namespace cove::server
