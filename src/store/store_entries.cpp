// Store: index entries that arrive again or come from another member, for
// shards whose owners changed after members died (store.hpp; the server's
// shard_backups.cpp says when).
#include "store/store.hpp"

#include <map>

namespace cove::store {

namespace {

// Whether `p` is the piece `entry` names (its holder's piece id, or for a
// piece in a writer's memory, which has none, its key and box).
bool names(const Piece& p, const net::IndexAddRequest& entry) {
  return p.owner == entry.holder && p.holder_id == entry.piece_id && p.box == entry.piece.box &&
         (entry.piece_id != 0 || p.key == entry.key);
}

// `from` without `take`.
std::vector<Box> minus(std::vector<Box> from, const std::vector<Box>& take) {
  for (const Box& t : take) {
    std::vector<Box> left;
    for (const Box& f : from)
      for (Box& rest : subtract(f, t)) left.push_back(std::move(rest));
    from.swap(left);
  }
  return from;
}

// The parts of `boxes` inside `region`.
std::vector<Box> within(const std::vector<Box>& boxes, const std::vector<Box>& region) {
  std::vector<Box> out;
  for (const Box& b : boxes)
    for (const Box& r : region)
      if (Box common = b.intersection(r); !common.empty()) out.push_back(std::move(common));
  return out;
}

}  // namespace

std::unique_ptr<Piece> Store::entry_piece(const net::IndexAddRequest& entry) {
  auto piece = std::make_unique<Piece>();
  piece->box = entry.piece.box;
  piece->layout = entry.piece.layout;
  piece->bytes = entry.piece.bytes;
  piece->owner = entry.holder;
  piece->key = entry.key;
  piece->holder_id = entry.piece_id;
  piece->copy = entry.copy;
  return piece;
}

Piece* Store::find_entry(const std::string& var, std::uint64_t version, const net::IndexAddRequest& entry,
                         const std::string& self) {
  if (entry.holder == self) return piece(var, version, entry.piece_id);
  auto vit = vars_.find(var);
  if (vit == vars_.end()) return nullptr;
  auto it = vit->second.versions.find(version);
  if (it == vit->second.versions.end()) return nullptr;
  Version& ver = it->second;
  Piece* found = nullptr;
  ver.index.query(entry.piece.box, [&](const Box&, std::uint64_t id) {
    Piece& p = *ver.pieces.at(id);
    if (!found && names(p, entry)) found = &p;
  });
  return found;
}

void Store::renew(const std::string& var, std::uint64_t version, Piece& p,
                  std::vector<std::unique_ptr<Piece>>& evicted) {
  Version& ver = variable(var).versions.at(version);
  if (p.indexed)
    for (const Box& b : p.visible) ver.index.remove(b, p.id);
  p.visible.clear();
  cover(ver, p.box, evicted);  // `p` is out of the index: it stays
  p.indexed = true;
  p.visible = {p.box};
  p.seq = next_seq_++;
  index_visible(ver, p);
}

void Store::adopt(const std::string& var, std::uint64_t version,
                  const std::function<std::vector<Box>(const Box&)>& region_of, std::span<const Adopted> entries,
                  std::uint64_t mark, const std::string& self, std::vector<std::unique_ptr<Piece>>& out) {
  Variable& v = variable(var);
  Version& ver = v.versions.try_emplace(version, v.def.ndim).first->second;
  // The entries sent, each matched to the piece here (by holder and id:
  // hidden entries are not in the index) or added.
  std::multimap<std::pair<std::string, std::uint64_t>, Piece*> known;
  for (auto& [id, q] : ver.pieces)
    if (!q->owner.empty()) known.emplace(std::pair{q->owner, q->holder_id}, q.get());
  std::map<std::uint64_t, std::vector<Box>> listed;  // piece id -> its visible parts in the region, as sent
  for (const Adopted& a : entries) {
    Piece* p = nullptr;
    if (a.entry.holder == self) {
      auto it = ver.pieces.find(a.entry.piece_id);
      if (it == ver.pieces.end() || !it->second->owner.empty() || it->second->is_copy) continue;  // gone since
      p = it->second.get();
    } else {
      const auto [first, last] = known.equal_range({a.entry.holder, a.entry.piece_id});
      for (auto k = first; k != last && !p; ++k)
        if (names(*k->second, a.entry)) p = k->second;
    }
    if (!p) {
      auto piece = entry_piece(a.entry);
      piece->id = next_id_++;
      piece->indexed = false;  // indexed below, with its parts
      if (piece->holder_id == 0) local_ += piece->bytes;  // in a writer's memory
      p = piece.get();
      known.emplace(std::pair{p->owner, p->holder_id}, p);
      ver.pieces.emplace(p->id, std::move(piece));
    } else if (!p->copy) {
      p->copy = a.entry.copy;
    }
    auto& parts = listed[p->id];
    parts.insert(parts.end(), a.visible.begin(), a.visible.end());
  }
  // What each piece shows in the region now: the sent parts for those
  // listed, nothing for older ones, and newer ones stay as they are and
  // cover the others.
  std::vector<Box> newer;
  std::vector<std::pair<Piece*, std::vector<Box>>> changes;
  for (auto& [id, p] : ver.pieces) {
    if (p->is_copy) continue;
    const auto l = listed.find(id);
    if (l == listed.end() && !p->indexed) continue;
    const std::vector<Box> region = region_of(p->box);
    if (l == listed.end() && region.empty()) continue;
    if (l == listed.end() && p->seq >= mark) {
      for (Box& b : within({p->box}, region)) newer.push_back(std::move(b));
      continue;
    }
    std::vector<Box> shown = minus(p->visible, region);
    if (l != listed.end())
      for (Box& b : within(l->second, region)) shown.push_back(std::move(b));
    changes.emplace_back(p.get(), std::move(shown));
  }
  std::vector<std::uint64_t> hidden;
  for (auto& [p, shown] : changes) {
    if (listed.count(p->id)) shown = minus(std::move(shown), newer);
    if (p->indexed)
      for (const Box& b : p->visible) ver.index.remove(b, p->id);
    p->visible = std::move(shown);
    // A piece held here that shows nothing stays for the shards that
    // index it elsewhere; an entry of another server's piece goes, as
    // cover() drops it (one in a writer's memory stays for its release).
    p->indexed = !p->visible.empty() || !p->owner.empty();
    index_visible(ver, *p);
    if (p->visible.empty() && !p->owner.empty() && p->holder_id != 0) hidden.push_back(p->id);
  }
  for (const std::uint64_t id : hidden) drop_piece(ver, ver.pieces.find(id), out);
}

}  // namespace cove::store
