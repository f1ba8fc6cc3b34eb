#include "store/store.hpp"

#include "core/box_checks.hpp"
#include "core/fail.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>
#include <utility>

namespace cove::store {

using detail::fail;

Store::Store(std::uint64_t memory_budget, int max_versions) : budget_(memory_budget), max_versions_(max_versions) {
  if (max_versions < 0) fail(Code::InvalidArgument, "max_versions = ", max_versions, " must be >= 0 (0: keep all)");
}

void Store::define(const VariableDef& def) {
  if (def.name.empty() || def.name.size() > 255)
    fail(Code::InvalidArgument, "variable name '", def.name, "' must have 1 to 255 characters");
  if (def.ndim < 1 || def.ndim > kMaxDims)
    fail(Code::InvalidArgument, "variable '", def.name, "': ndim = ", def.ndim, " must be 1..", kMaxDims);
  if (def.shape) {
    detail::validate_box(*def.shape, "global shape");
    if (def.shape->ndim != def.ndim)
      fail(Code::InvalidArgument, "variable '", def.name, "': global shape has ", def.shape->ndim,
           " dimensions but ndim = ", def.ndim);
  }
  for (const Layout& l : def.layouts) l.axis_order(def.ndim);  // a permutation of another rank is an error
  if (!def.fill.empty() && def.fill.size() != def.dtype.size())
    fail(Code::InvalidArgument, "variable '", def.name, "': a fill value of ", def.fill.size(), " bytes for dtype ",
         def.dtype.name(), ", whose elements have ", def.dtype.size());
  auto it = vars_.find(def.name);
  if (it == vars_.end()) {
    vars_.emplace(def.name, Variable{def, {}});
    return;
  }
  const VariableDef& old = it->second.def;
  if (!(old.dtype == def.dtype))
    fail(Code::InvalidArgument, "variable '", def.name, "' is defined with dtype ", old.dtype.name(), ", not ",
         def.dtype.name());
  if (old.ndim != def.ndim)
    fail(Code::InvalidArgument, "variable '", def.name, "' is defined with ndim ", old.ndim, ", not ", def.ndim);
  if (old.shape.has_value() != def.shape.has_value() || (old.shape && !(*old.shape == *def.shape)))
    fail(Code::InvalidArgument, "variable '", def.name, "' is defined with global shape ",
         old.shape ? old.shape->to_string() : "none", ", not ", def.shape ? def.shape->to_string() : "none");
  if (!def.fill.empty() && !old.fill.empty() && def.fill != old.fill)
    fail(Code::InvalidArgument, "variable '", def.name, "' is defined with another fill value");
  if (def.reorg) it->second.def.reorg = def.reorg;
  if (!def.layouts.empty()) it->second.def.layouts = def.layouts;
  if (!def.fill.empty()) it->second.def.fill = def.fill;
}

const VariableDef* Store::find(const std::string& name) const {
  auto it = vars_.find(name);
  return it == vars_.end() ? nullptr : &it->second.def;
}

Store::Variable& Store::variable(const std::string& name) {
  auto it = vars_.find(name);
  if (it == vars_.end()) fail(Code::NotFound, "variable '", name, "' is not defined");
  return it->second;
}
const Store::Variable& Store::variable(const std::string& name) const {
  return const_cast<Store*>(this)->variable(name);
}

const VariableDef& Store::check_piece(const std::string& var, const Box& box) const {
  const VariableDef& def = variable(var).def;
  if (box.ndim != def.ndim)
    fail(Code::InvalidArgument, "variable '", var, "' has ", def.ndim, " dimensions but the region ", box.to_string(),
         " has ", box.ndim);
  detail::validate_box(box, "region");
  if (box.empty()) fail(Code::InvalidArgument, "region ", box.to_string(), " of variable '", var, "' is empty");
  if (def.shape && !def.shape->contains(box))
    fail(Code::InvalidArgument, "region ", box.to_string(), " is outside the global shape ", def.shape->to_string(),
         " of variable '", var, "'");
  return def;
}

bool Store::fits(std::uint64_t bytes) const {
  return !budget_ || owned_ + replica_bytes_ + reserved_ + metadata_bytes_ + bytes <= budget_;
}

bool Store::make_room(std::uint64_t bytes, const Piece* keep, Freed& freed) {
  std::uint64_t droppable = 0;
  for (auto& [name, v] : vars_)
    for (auto& [num, ver] : v.versions)
      for (auto& [id, p] : ver.pieces)
        if (p.get() != keep)
          for (const auto& r : p->replicas)
            if (r->state == Replica::State::Ready) droppable += r->bytes;
  if (budget_ && owned_ + replica_bytes_ - droppable + reserved_ + metadata_bytes_ + bytes > budget_) return false;
  // Oldest versions first: of each variable, then across variables by version number.
  std::vector<std::pair<std::uint64_t, Version*>> order;
  for (auto& [name, v] : vars_)
    for (auto& [num, ver] : v.versions) order.emplace_back(num, &ver);
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [num, ver] : order)
    for (auto& [id, p] : ver->pieces) {
      if (p.get() == keep) continue;
      for (auto it = p->replicas.begin(); it != p->replicas.end() && !fits(bytes);) {
        if ((*it)->state != Replica::State::Ready) {
          ++it;
          continue;
        }
        replica_bytes_ -= (*it)->bytes;
        --replicas_;
        freed.push_back(std::move((*it)->buffer));
        it = p->replicas.erase(it);
      }
      if (fits(bytes)) return true;
    }
  return fits(bytes);
}

void Store::reserve(std::uint64_t bytes, Freed& freed) {
  if (!fits(bytes) && !make_room(bytes, nullptr, freed))
    fail(Code::NoMemory, "storing ", bytes, " more bytes would exceed the memory budget of ", budget_, " bytes (",
         owned_ + replica_bytes_ + reserved_ + metadata_bytes_, " in use, of which ", replica_bytes_,
         " by replicas and ", metadata_bytes_, " by metadata)");
  reserved_ += bytes;
}

void Store::unreserve(std::uint64_t bytes) { reserved_ -= std::min(bytes, reserved_); }

std::uint64_t Store::add(const std::string& var, std::uint64_t version, std::unique_ptr<Piece> piece,
                         std::vector<std::unique_ptr<Piece>>& evicted) {
  Variable& v = variable(var);
  auto [it, fresh] = v.versions.try_emplace(version, v.def.ndim);
  Version& ver = it->second;
  // The last write wins: the new piece's box leaves the visible parts of
  // the older ones (those it covers wholly go, under the readers' leases
  // like any other dropped piece, except pieces in a writer's memory
  // (put_local), which stay until the writer releases them, since only
  // that answer tells the writer no reader copies them).
  if (piece->indexed) cover(ver, piece->box, evicted);
  piece->id = next_id_++;
  if (piece->owner.empty()) {
    unreserve(piece->bytes);
    count_owned(*piece);
  } else if (piece->holder_id == 0) {  // in a writer's memory (an entry of another server's piece holds none)
    local_ += piece->bytes;
  }
  if (piece->indexed) {
    piece->visible = {piece->box};
    piece->seq = next_seq_++;
    index_visible(ver, *piece);
  }
  const std::uint64_t id = piece->id;
  ver.pieces.emplace(id, std::move(piece));
  if (fresh) evict_beyond_max(v, evicted);
  return id;
}

void Store::evict_beyond_max(Variable& v, std::vector<std::unique_ptr<Piece>>& evicted) {
  if (max_versions_ > 0)
    while (v.versions.size() > static_cast<std::size_t>(max_versions_)) drop_version(v, v.versions.begin(), evicted);
}

void Store::count_owned(const Piece& p) {
  if (!p.buffer || ++owners_of_block_[p.buffer.get()] == 1) owned_ += p.bytes;
}

void Store::uncount_owned(const Piece& p) {
  if (p.buffer) {
    auto it = owners_of_block_.find(p.buffer.get());
    if (it != owners_of_block_.end() && --it->second > 0) return;
    if (it != owners_of_block_.end()) owners_of_block_.erase(it);
  }
  owned_ -= p.bytes;
}

bool Store::seal(const std::string& var, std::uint64_t version, std::vector<std::unique_ptr<Piece>>& evicted) {
  Variable& v = variable(var);
  auto [it, fresh] = v.versions.try_emplace(version, v.def.ndim);
  const bool already = it->second.sealed;
  it->second.sealed = true;
  if (fresh) evict_beyond_max(v, evicted);
  return already;
}

bool Store::sealed(const std::string& var, std::uint64_t version) const {
  auto vit = vars_.find(var);
  if (vit == vars_.end()) return false;
  auto it = vit->second.versions.find(version);
  return it != vit->second.versions.end() && it->second.sealed;
}

void Store::check_open(const std::string& var, std::uint64_t version) const {
  if (sealed(var, version))
    fail(Code::InvalidArgument, "version ", version, " of variable '", var,
         "' is sealed: it takes no more puts (derive a new version from it to change it)");
}

std::size_t Store::derive(std::span<const std::string> vars, std::uint64_t from, std::uint64_t to, bool check_only,
                          std::vector<bool>& found, std::vector<std::unique_ptr<Piece>>& evicted) {
  if (from == to) fail(Code::InvalidArgument, "derive of version ", from, " from itself");
  found.assign(vars.size(), false);
  std::set<std::string_view> named;
  for (std::size_t i = 0; i < vars.size(); ++i) {
    const Variable& v = variable(vars[i]);
    if (v.versions.count(to))
      fail(Code::AlreadyExists, "variable '", vars[i], "' has a version ", to, " already: it cannot be derived from ",
           from);
    if (!named.insert(vars[i]).second) fail(Code::InvalidArgument, "derive names variable '", vars[i], "' twice");
    found[i] = v.versions.count(from) > 0;
  }
  if (check_only) return 0;
  std::size_t shared = 0;
  for (std::size_t i = 0; i < vars.size(); ++i) {
    if (!found[i]) continue;
    Variable& v = variable(vars[i]);
    const Version& source = v.versions.at(from);
    Version& target = v.versions.try_emplace(to, v.def.ndim).first->second;
    target.complete = source.sealed || source.complete;
    for (const auto& [id, p] : source.pieces) {
      auto copy = std::make_unique<Piece>();
      copy->id = p->id;
      copy->box = p->box;
      copy->layout = p->layout;
      copy->bytes = p->bytes;
      copy->owner = p->owner;
      copy->key = p->key;
      copy->indexed = p->indexed;
      copy->visible = p->visible;
      copy->holder_id = p->holder_id;
      copy->seq = p->seq;
      copy->copy = p->copy;
      copy->copy_after = p->copy_after;
      copy->is_copy = p->is_copy;
      copy->copy_of = p->copy_of;
      copy->buffer = p->buffer;
      if (copy->owner.empty())
        count_owned(*copy);
      else if (copy->holder_id == 0)
        local_ += copy->bytes;
      if (copy->indexed) index_visible(target, *copy);
      target.pieces.emplace(id, std::move(copy));
      ++shared;
    }
    evict_beyond_max(v, evicted);
  }
  return shared;
}

void Store::drop_covered_by(const std::string& var, std::uint64_t version, std::uint64_t id,
                            std::vector<std::unique_ptr<Piece>>& out) {
  auto vit = vars_.find(var);
  if (vit == vars_.end()) return;
  auto it = vit->second.versions.find(version);
  if (it == vit->second.versions.end()) return;
  Version& ver = it->second;
  const auto newer = ver.pieces.find(id);
  if (newer == ver.pieces.end()) return;
  const Piece& piece = *newer->second;
  for (auto p = ver.pieces.begin(); p != ver.pieces.end();) {
    const auto next = std::next(p);
    const Piece& old = *p->second;
    if (old.id != id && !old.indexed && old.owner.empty() && old.is_copy == piece.is_copy &&
        piece.box.contains(old.box))
      drop_piece(ver, p, out);
    p = next;
  }
}

void Store::cover(Version& v, const Box& box, std::vector<std::unique_ptr<Piece>>& out) {
  std::vector<std::uint64_t> hidden;  // pieces left with no visible part
  for (const SpatialIndex::Hit& hit : v.index.query(box)) {
    v.index.remove(hit.box, hit.payload);
    Piece& p = *v.pieces.at(hit.payload);
    p.visible.erase(std::find(p.visible.begin(), p.visible.end(), hit.box));
    for (const Box& rest : subtract(hit.box, box)) {
      v.index.insert(rest, p.id);
      p.visible.push_back(rest);
    }
    if (p.visible.empty()) hidden.push_back(p.id);
  }
  for (const std::uint64_t id : hidden)
    if (auto p = v.pieces.find(id); p->second->owner.empty() || p->second->holder_id != 0) drop_piece(v, p, out);
}

void Store::index_visible(Version& v, const Piece& p) {
  for (const Box& b : p.visible) v.index.insert(b, p.id);
}

void Store::drop_version(Variable& v, std::map<std::uint64_t, Version>::iterator it,
                         std::vector<std::unique_ptr<Piece>>& out) {
  std::vector<std::unique_ptr<Piece>> dropped;
  while (!it->second.pieces.empty()) drop_piece(it->second, it->second.pieces.begin(), dropped);
  for (auto& p : dropped) {
    if (!p->owner.empty() && p->holder_id == 0) {  // in a writer's memory: kept for its release
      std::string owner = p->owner;
      retired_.emplace(std::move(owner), Retired{v.def.name, it->first, std::move(p)});
    } else
      out.push_back(std::move(p));
  }
  v.versions.erase(it);
}

std::vector<std::unique_ptr<Piece>> Store::take_retired(const std::string& owner, const std::string* var,
                                                        std::uint64_t version, const Box* box) {
  std::vector<std::unique_ptr<Piece>> out;
  auto [first, last] = retired_.equal_range(owner);
  for (auto it = first; it != last;) {
    const Retired& r = it->second;
    if (!var || (r.var == *var && r.version == version && r.piece->box == *box)) {
      out.push_back(std::move(it->second.piece));
      it = retired_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

void Store::drop_piece(Version& v, std::map<std::uint64_t, std::unique_ptr<Piece>>::iterator it,
                       std::vector<std::unique_ptr<Piece>>& out) {
  Piece& p = *it->second;
  if (p.indexed)
    for (const Box& b : p.visible) v.index.remove(b, p.id);
  if (p.owner.empty())
    uncount_owned(p);
  else if (p.holder_id == 0)
    local_ -= p.bytes;
  for (const auto& r : p.replicas)
    if (r->state != Replica::State::Failed) {
      replica_bytes_ -= r->bytes;
      --replicas_;
    }
  out.push_back(std::move(it->second));
  v.pieces.erase(it);
}

std::optional<Coverage> Store::covering(const std::string& var, std::uint64_t version, std::span<const Box> parts) {
  auto vit = vars_.find(var);
  if (vit == vars_.end()) return std::nullopt;
  auto it = vit->second.versions.find(version);
  if (it == vit->second.versions.end()) return std::nullopt;
  Version& ver = it->second;
  Coverage out;
  out.sealed = ver.sealed;
  std::map<std::uint64_t, std::size_t> at;  // piece id -> its place in out.pieces
  for (const Box& part : parts) {
    std::vector<Box> missing{part};  // what the visible parts found so far leave
    ver.index.query(part, [&](const Box& b, std::uint64_t id) {
      const Box seen = b.intersection(part);
      const auto [slot, fresh] = at.try_emplace(id, out.pieces.size());
      if (fresh) out.pieces.push_back({ver.pieces.at(id).get(), {}});
      out.pieces[slot->second].boxes.push_back(seen);
      std::vector<Box> left;
      for (const Box& m : missing)
        for (const Box& rest : subtract(m, seen)) left.push_back(rest);
      missing.swap(left);
    });
    if (!missing.empty() && !ver.sealed && !ver.complete) return std::nullopt;
    out.holes.insert(out.holes.end(), missing.begin(), missing.end());
  }
  return out;
}

std::vector<Piece*> Store::pieces_of(const std::string& var, std::uint64_t version) {
  std::vector<Piece*> out;
  auto vit = vars_.find(var);
  if (vit == vars_.end()) return out;
  auto it = vit->second.versions.find(version);
  if (it == vit->second.versions.end()) return out;
  for (auto& [id, p] : it->second.pieces) out.push_back(p.get());
  return out;
}

Piece* Store::piece(const std::string& var, std::uint64_t version, std::uint64_t id) {
  auto vit = vars_.find(var);
  if (vit == vars_.end()) return nullptr;
  auto it = vit->second.versions.find(version);
  if (it == vit->second.versions.end()) return nullptr;
  auto p = it->second.pieces.find(id);
  return p == it->second.pieces.end() ? nullptr : p->second.get();
}

Replica* Store::find_replica(Piece& p, const Layout& layout, const Box& part) {
  Replica* found = nullptr;
  for (auto& r : p.replicas)
    if (r->layout.same_order(layout, p.box.ndim) && r->box.contains(part) &&
        (!found || r->state == Replica::State::Ready))
      found = r.get();
  return found;
}

Replica& Store::add_replica(Piece& p, const Box& box, const Layout& layout, std::size_t elem, Freed& freed) {
  auto r = std::make_unique<Replica>();
  r->id = next_id_++;
  r->box = box;
  r->layout = layout;
  r->bytes = static_cast<std::uint64_t>(box.volume()) * elem;
  if (fits(r->bytes) || make_room(r->bytes, &p, freed)) {
    replica_bytes_ += r->bytes;
    ++replicas_;
  } else {
    r->state = Replica::State::Failed;
  }
  p.replicas.push_back(std::move(r));
  return *p.replicas.back();
}

void Store::replica_ready(Replica& r, std::shared_ptr<BufferPool::Block> buffer) {
  r.buffer = std::move(buffer);
  r.state = Replica::State::Ready;
}

void Store::replica_failed(Replica& r) {
  if (r.state == Replica::State::Failed) return;
  replica_bytes_ -= r.bytes;
  --replicas_;
  r.state = Replica::State::Failed;
  r.buffer.reset();
}

std::optional<std::uint64_t> Store::latest(const std::string& var) const {
  auto it = vars_.find(var);
  if (it == vars_.end() || it->second.versions.empty()) return std::nullopt;
  return it->second.versions.rbegin()->first;
}

bool Store::has_version(const std::string& var, std::uint64_t version) const {
  auto it = vars_.find(var);
  return it != vars_.end() && it->second.versions.count(version) > 0;
}

std::vector<std::uint64_t> Store::versions_newest_first(const std::string& var) const {
  std::vector<std::uint64_t> out;
  auto it = vars_.find(var);
  if (it != vars_.end())
    for (auto v = it->second.versions.rbegin(); v != it->second.versions.rend(); ++v) out.push_back(v->first);
  return out;
}

std::vector<std::unique_ptr<Piece>> Store::remove_version(const std::string& var, std::uint64_t version) {
  Variable& v = variable(var);
  auto it = v.versions.find(version);
  if (it == v.versions.end()) fail(Code::NotFound, "variable '", var, "' has no version ", version);
  std::vector<std::unique_ptr<Piece>> out;
  drop_version(v, it, out);
  return out;
}

std::vector<std::unique_ptr<Piece>> Store::undefine(const std::string& var) {
  Variable& v = variable(var);
  std::vector<std::unique_ptr<Piece>> out;
  while (!v.versions.empty()) drop_version(v, v.versions.begin(), out);
  vars_.erase(var);
  return out;
}

std::vector<std::unique_ptr<Piece>> Store::remove_pieces(const std::string& var, std::uint64_t version,
                                                         const Box& box, const std::string& owner) {
  std::vector<std::unique_ptr<Piece>> out = take_retired(owner, &var, version, &box);
  auto vit = vars_.find(var);
  if (vit == vars_.end()) {
    if (out.empty()) fail(Code::NotFound, "variable '", var, "' is not defined");
    return out;
  }
  Variable& v = vit->second;
  auto it = v.versions.find(version);
  if (it == v.versions.end()) return out;
  Version& ver = it->second;
  for (auto p = ver.pieces.begin(); p != ver.pieces.end();) {
    auto next = std::next(p);
    if (p->second->owner == owner && p->second->box == box) drop_piece(ver, p, out);
    p = next;
  }
  if (ver.pieces.empty() && !ver.kept_empty()) v.versions.erase(it);
  // The writer may reuse its memory once this answer is given: versions
  // derived from this one, which share the piece (same id), lose it too.
  std::vector<std::uint64_t> ids;
  for (const auto& p : out) ids.push_back(p->id);
  const auto shared = [&](const Piece& p) {
    return p.owner == owner && p.holder_id == 0 && std::find(ids.begin(), ids.end(), p.id) != ids.end();
  };
  for (auto other = v.versions.begin(); other != v.versions.end();) {
    for (auto p = other->second.pieces.begin(); p != other->second.pieces.end();) {
      auto next = std::next(p);
      if (shared(*p->second)) drop_piece(other->second, p, out);
      p = next;
    }
    other = other->second.pieces.empty() && !other->second.kept_empty() ? v.versions.erase(other) : std::next(other);
  }
  auto [first, last] = retired_.equal_range(owner);
  for (auto r = first; r != last;) {
    if (r->second.var == var && shared(*r->second.piece)) {
      out.push_back(std::move(r->second.piece));
      r = retired_.erase(r);
    } else {
      ++r;
    }
  }
  return out;
}

std::vector<std::unique_ptr<Piece>> Store::remove_owner(const std::string& owner) {
  if (owner.empty()) return {};
  std::vector<std::unique_ptr<Piece>> out = take_retired(owner, nullptr, 0, nullptr);
  for (auto& [name, v] : vars_)
    for (auto it = v.versions.begin(); it != v.versions.end();) {
      for (auto p = it->second.pieces.begin(); p != it->second.pieces.end();) {
        auto next = std::next(p);
        if (p->second->owner == owner) drop_piece(it->second, p, out);
        p = next;
      }
      it = it->second.pieces.empty() && !it->second.kept_empty() ? v.versions.erase(it) : std::next(it);
    }
  return out;
}

std::vector<std::unique_ptr<Piece>> Store::fail_over(const std::string& dead, const std::string& self,
                                                     std::size_t& moved) {
  std::vector<std::unique_ptr<Piece>> lost;
  if (dead.empty()) return lost;
  for (auto& [name, v] : vars_)
    for (auto it = v.versions.begin(); it != v.versions.end();) {
      Version& ver = it->second;
      for (auto p = ver.pieces.begin(); p != ver.pieces.end();) {
        const auto next = std::next(p);
        Piece& entry = *p->second;
        if (entry.copy.holder == dead) entry.copy = {};
        if (entry.copy_after.holder == dead) entry.copy_after = {};
        if (entry.owner != dead) {
          p = next;
          continue;
        }
        net::CopyRef copy = std::exchange(entry.copy, {});  // a moved-from copy would keep its id
        if (copy && copy.holder != self) {  // read from the copy's server from now on
          entry.owner = std::move(copy.holder);
          entry.key = std::move(copy.key);
          entry.holder_id = copy.id;
          entry.copy = std::exchange(entry.copy_after, {});
          ++moved;
        } else {
          auto c = copy ? ver.pieces.find(copy.id) : ver.pieces.end();
          if (c != ver.pieces.end() && !c->second->is_copy && c->second->owner.empty()) {
            // The copy is this server's piece already: another entry of the
            // same piece took its place first (two entries of one piece,
            // one a shard's backup received after its holder moved, naming
            // it there). It shows this entry's visible parts too.
            c->second->indexed = true;
            for (const Box& b : entry.visible) c->second->visible.push_back(b);
            std::vector<std::unique_ptr<Piece>> entry_gone;
            drop_piece(ver, p, entry_gone);
            for (const Box& b : entry_gone.front()->visible) ver.index.insert(b, c->second->id);
            ++moved;
          } else if (c != ver.pieces.end() && c->second->is_copy) {  // the copy here takes the entry's place
            c->second->is_copy = false;
            c->second->copy_of.clear();
            c->second->indexed = true;
            c->second->visible = entry.visible;  // and its visible parts: what later puts covered stays covered
            ++moved;
            std::vector<std::unique_ptr<Piece>> entry_gone;  // an index entry: no bytes, nothing lost
            drop_piece(ver, p, entry_gone);
            index_visible(ver, *c->second);
          } else {
            drop_piece(ver, p, lost);
          }
        }
        p = next;
      }
      // Copies of the dead member's pieces that no entry here took: other
      // shards' entries moved to them (by their id here), so they are this
      // server's own pieces now, without a second copy.
      for (auto& [id, p] : ver.pieces)
        if (p->is_copy && p->copy_of == dead) {
          p->is_copy = false;
          p->copy_of.clear();
        }
      it = ver.pieces.empty() && !ver.kept_empty() ? v.versions.erase(it) : std::next(it);
    }
  return lost;
}

std::vector<Store::PieceRef> Store::lacking_copies() const {
  std::vector<PieceRef> out;
  for (const auto& [name, v] : vars_)
    for (const auto& [num, ver] : v.versions)
      for (const auto& [id, p] : ver.pieces)
        if (p->owner.empty() && !p->is_copy && !p->copy && p->buffer) out.push_back({name, num, id});
  return out;
}

const Piece* Store::set_copy(const std::string& var, std::uint64_t version, const std::string& holder,
                             std::uint64_t id, const net::CopyRef& copy) {
  auto vit = vars_.find(var);
  if (vit == vars_.end()) return nullptr;
  auto it = vit->second.versions.find(version);
  if (it == vit->second.versions.end()) return nullptr;
  const Piece* set = nullptr;
  for (auto& [pid, p] : it->second.pieces)
    if (p->owner == holder && p->holder_id == id) {
      p->copy = copy;
      set = p.get();
    } else if (p->copy.holder == holder && p->copy.id == id) {
      p->copy_after = copy;
      set = p.get();
    }
  return set;
}

std::vector<std::unique_ptr<Piece>> Store::clear() {
  std::vector<std::unique_ptr<Piece>> out;
  for (auto& [owner, r] : retired_) out.push_back(std::move(r.piece));
  retired_.clear();
  for (auto& [name, v] : vars_)
    for (auto& [num, ver] : v.versions)
      while (!ver.pieces.empty()) drop_piece(ver, ver.pieces.begin(), out);
  vars_.clear();
  return out;
}

std::vector<Store::VariableListing> Store::list() const {
  std::vector<VariableListing> out;
  for (const auto& [name, v] : vars_) {
    VariableListing l{&v.def, {}};
    for (const auto& [num, ver] : v.versions) {
      VersionListing vl{num, {}, ver.sealed};
      for (const auto& [id, p] : ver.pieces) vl.pieces.push_back(p.get());
      l.versions.push_back(std::move(vl));
    }
    out.push_back(std::move(l));
  }
  return out;
}

StoreStats Store::stats() const {
  StoreStats s;
  s.variables = vars_.size();
  for (const auto& [name, v] : vars_) {
    s.versions += v.versions.size();
    for (const auto& [num, ver] : v.versions) {
      s.pieces += ver.pieces.size();
      for (const auto& [id, p] : ver.pieces) {
        if (p->is_copy) {
          ++s.copies;
          s.copy_bytes += p->bytes;
        } else if (p->owner.empty() && !p->copy) {
          ++s.single;
        }
        if (p->indexed && !(p->visible.size() == 1 && p->visible.front() == p->box)) {
          ++s.partly_covered;
          s.partly_covered_bytes += p->bytes;
        }
      }
    }
  }
  s.owned_bytes = owned_;
  s.local_bytes = local_;
  s.budget = budget_;
  s.replicas = replicas_;
  s.replica_bytes = replica_bytes_;
  s.metadata_bytes = metadata_bytes_;
  return s;
}

}  // namespace cove::store
