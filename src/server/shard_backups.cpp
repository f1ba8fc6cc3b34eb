// Index entries after members die (replicas = 2). Each shard's entries
// live on its owners: its first two live members walking the group's ring
// from it (the shard's server and the next, until one dies). When a death
// changes a shard's second owner, the first owner sends the new one every
// entry it holds of the shard (Backup: Begin, one snapshot per version,
// End), and from the snapshot on relays each entry it indexes for the
// shard (Backup Relay) before it answers the IndexAdd that brought it, so
// that a put is acknowledged only once both owners have its entry. The new
// owner answers queries for the shard once the snapshot is whole; clients
// whose shard server is gone walk the ring until a member answers.
//
// Order: the new owner takes the snapshot's visible parts for the shard's
// region (the first owner's order), hides there what it indexed before
// Begin and the snapshot does not list, and keeps on top what it indexed
// since (newer puts, sent by writers that know the new owners). An entry
// that arrives twice (direct and relayed) becomes the newest where it
// lands: its put is answered only after both arrived, so nothing that
// must be newer can have come before.
#include "common/log.hpp"
#include "core/fail.hpp"
#include "server/service.hpp"

#include <algorithm>

namespace cove::server {

using detail::fail;
using net::BackupRequest;
using Stage = net::BackupRequest::Stage;

std::vector<int> Service::index_owners(int shard, const std::set<std::string>& dead) const {
  if (!replicated()) return {shard};
  std::vector<int> owners;
  const int n = group_->size();
  for (int i = 0; i < n && owners.size() < 2; ++i) {
    const int member = (shard + i) % n;
    if (!dead.count(group_->address_of(member))) owners.push_back(member);
  }
  if (owners.empty()) owners.push_back(shard);  // all gone: the shard's own, which fails
  return owners;
}

void Service::rechain() {
  std::vector<std::pair<int, int>> starts;  // shard, new second owner
  {
    std::lock_guard state(mutex);
    if (stopping_) return;
    const int me = group_->rank();
    for (int shard = 0; shard < group_->size(); ++shard) {
      const std::vector<int> owners = index_owners(shard, dead_members_);
      const bool first = owners.size() == 2 && owners[0] == me;
      const bool original = first && owners[0] == shard && owners[1] == group_->successor(shard);
      if (!first || original) {
        relays_.erase(shard);
        continue;
      }
      if (const auto it = relays_.find(shard); it != relays_.end() && it->second == owners[1]) continue;
      relays_.erase(shard);  // until its snapshot is taken
      starts.emplace_back(shard, owners[1]);
    }
  }
  for (const auto& [shard, to] : starts) {
    {
      std::lock_guard lock(probes_mutex_);
      if (probes_closed_) return;  // stopping
    }
    send_backup(shard, to);
  }
}

void Service::send_backup(int shard, int to) {
  const std::set<std::string> none;
  const auto send = [&](const BackupRequest& r) {
    const auto failed = group_->send<net::Message<net::Op::Backup>>({to}, r, none);
    if (failed.empty()) return true;
    try {
      std::rethrow_exception(failed.front().second);
    } catch (const std::exception& e) {
      log::warn("the index entries of server {} did not reach server {}, its new second owner: {}", shard, to,
                e.what());
    }
    return false;
  };
  // Relays of entries indexed after the snapshot is taken wait until it
  // is sent: the new owner must see them after it.
  std::lock_guard sending(backup_sends_);
  if (!send({shard, Stage::Begin, {}, 0, {}})) return;
  std::vector<BackupRequest> snapshot;
  {
    std::lock_guard state(mutex);
    if (stopping_) return;
    // From here on, entries indexed for the shard are relayed: what the
    // snapshot misses arrives that way.
    relays_[shard] = to;
    for (const store::Store::VariableListing& v : store_.list()) {
      const common::ShardMap& map = shard_map(*v.def);
      for (const store::Store::VersionListing& version : v.versions) {
        BackupRequest r{shard, Stage::Snapshot, v.def->name, version.version, {}};
        std::vector<const store::Piece*> pieces = version.pieces;
        std::sort(pieces.begin(), pieces.end(), [](auto* a, auto* b) { return a->seq < b->seq; });
        for (const store::Piece* p : pieces) {
          if (!p->indexed || p->is_copy) continue;
          net::BackupEntry e;
          for (const Box& part : map.parts_of(shard, p->box))
            for (const Box& b : p->visible)
              if (Box common = b.intersection(part); !common.empty()) e.visible.push_back(std::move(common));
          if (e.visible.empty()) continue;
          const bool held_here = p->owner.empty();
          e.entry = {{v.def->name, version.version, p->box, p->layout, v.def->dtype, p->bytes, std::nullopt},
                     held_here ? address_ : p->owner,
                     p->key,
                     held_here ? p->id : p->holder_id,
                     p->copy};
          r.entries.push_back(std::move(e));
        }
        snapshot.push_back(std::move(r));
      }
    }
  }
  std::size_t entries = 0;
  for (const BackupRequest& r : snapshot) {
    if (!send(r)) return;
    entries += r.entries.size();
  }
  if (!send({shard, Stage::End, {}, 0, {}})) return;
  ++backups_sent_;
  log::info("the index entries of server {} ({} in {} versions) went to server {}, its new second owner", shard,
            entries, snapshot.size(), to);
}

net::Empty Service::backup(BackupRequest&& r) {
  store::Store::Freed freed;
  std::vector<std::unique_ptr<store::Piece>> dropped;  // released after the lock
  std::lock_guard state(mutex);
  if (r.shard >= group_->size()) fail(Code::InvalidArgument, "backup of shard ", r.shard, " of a group of ", group_->size());
  const auto adoption = [&]() -> Adoption& {
    const auto it = adopting_.find(r.shard);
    if (it == adopting_.end()) fail(Code::InvalidArgument, "a backup of shard ", r.shard, " that did not begin");
    return it->second;
  };
  const auto adopt = [&](const std::string& var, std::uint64_t version, std::span<const store::Store::Adopted> entries,
                         std::uint64_t mark) {
    const common::ShardMap& map = shard_map(*store_.find(var));
    store_.adopt(var, version, [&](const Box& b) { return map.parts_of(r.shard, b); }, entries, mark, address_,
                 dropped);
    parked_->retry(var_key(var), freed);
  };
  switch (r.stage) {
    case Stage::Begin:
      adopting_[r.shard] = {store_.next_seq(), {}};
      adopted_.erase(r.shard);
      break;
    case Stage::Snapshot: {
      Adoption& a = adoption();
      if (!store_.find(r.var)) {  // undefined meanwhile
        log::debug("backup of shard {}: variable '{}' is not defined here", r.shard, r.var);
        break;
      }
      std::vector<store::Store::Adopted> entries;
      entries.reserve(r.entries.size());
      for (net::BackupEntry& e : r.entries) {
        check_header(e.entry.piece);
        entries.push_back({std::move(e.entry), std::move(e.visible)});
      }
      adopt(r.var, r.version, entries, a.mark);
      a.seen.emplace(r.var, r.version);
      break;
    }
    case Stage::End: {
      // Versions the snapshot did not name hold nothing of the shard there:
      // what was indexed here before Begin is hidden in its region.
      const Adoption a = adoption();
      for (const store::Store::VariableListing& v : store_.list())
        for (const store::Store::VersionListing& version : v.versions)
          if (!a.seen.count({v.def->name, version.version})) adopt(v.def->name, version.version, {}, a.mark);
      adopting_.erase(r.shard);
      adopted_.insert(r.shard);
      log::info("this server keeps the index entries of server {} now", r.shard);
      break;
    }
    case Stage::Relay:
      check_header(r.entries.front().entry.piece);
      index_entry(r.entries.front().entry, freed);
      break;
    case Stage::Recopy: {
      const net::IndexAddRequest& e = r.entries.front().entry;
      store_.set_copy(e.piece.var, e.piece.version, e.holder, e.piece_id, e.copy);
      break;
    }
  }
  return {};
}

void Service::index_entry(const net::IndexAddRequest& entry, store::Store::Freed& freed) {
  std::vector<std::unique_ptr<store::Piece>> evicted;
  const std::string& var = entry.piece.var;
  if (store::Piece* p = store_.find_entry(var, entry.piece.version, entry, address_)) {
    store_.renew(var, entry.piece.version, *p, evicted);
  } else if (entry.holder != address_) {
    store_.add(var, entry.piece.version, store::Store::entry_piece(entry), evicted);
  }  // else: a piece held here that went meanwhile
  parked_->retry(var_key(var), freed);
}

std::vector<std::pair<int, int>> Service::relay_targets(const std::string& var, const Box& box) {
  std::vector<std::pair<int, int>> out;  // shard, member
  if (relays_.empty()) return out;
  const common::ShardMap& map = shard_map(*store_.find(var));
  for (const auto& [shard, member] : relays_) {
    const int to = member;  // a copy: clang before 16 captures no structured binding
    if (to != group_->rank() && !map.parts_of(shard, box).empty() &&
        std::none_of(out.begin(), out.end(), [&](const auto& o) { return o.second == to; }))
      out.emplace_back(shard, to);
  }
  return out;
}

void Service::relay(const std::vector<std::pair<int, int>>& to, Stage stage, const net::IndexAddRequest& entry) {
  const std::set<std::string> none;
  std::lock_guard sending(backup_sends_);
  for (const auto& [shard, member] : to)
    for (const auto& [rank, why] :
         group_->send<net::Message<net::Op::Backup>>({member}, {shard, stage, {}, 0, {{entry, {}}}}, none))
      log::debug("an index entry of '{}' was not relayed to server {}, second owner of shard {}", entry.piece.var,
                 rank, shard);
}

}  // namespace cove::server
