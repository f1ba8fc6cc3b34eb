#include "server/replicas.hpp"

#include "core/copy_plan.hpp"

namespace cove::server {

namespace {

// True when reading `part` of a piece stored over (box, layout) into a
// buffer over (dst_box, dst_layout) needs a reorganization: the two do not
// share their fastest-varying axis over the part, so the bytes cannot be
// moved as runs.
bool needs_reorg(const Box& box, const Layout& layout, const Box& dst_box, const Layout& dst_layout, const Box& part,
                 std::size_t elem) {
  return !detail::make_copy_plan(box, layout, dst_box, dst_layout, part, elem).innermost_contiguous();
}

}  // namespace

Reorg ReplicaPlanner::method_for(const store::VariableDef& def, std::optional<Reorg> client) const {
  return client ? *client : def.reorg ? *def.reorg : options_.reorg;
}

std::vector<Layout> ReplicaPlanner::expected_layouts(const store::VariableDef& def) const {
  if (!def.layouts.empty()) return def.layouts;
  if (!options_.layouts.empty()) return options_.layouts;
  return {Layout::c(), Layout::f()};
}

// Starts building a replica of `box` of piece `p` in `layout`, unless the
// bytes can be read without one, or one exists or is being built. Returns
// the replica (null when none is needed).
store::Replica* ReplicaPlanner::schedule(const std::string& var, std::uint64_t version, store::Piece& p,
                                         const Box& box, const Layout& layout, std::size_t elem,
                                         store::Store::Freed& freed) {
  if (!p.owner.empty() || !needs_reorg(p.box, p.layout, box, layout, box, elem)) return nullptr;
  if (store::Replica* r = store_.find_replica(p, layout, box)) return r;
  store::Replica& r = store_.add_replica(p, box, layout, elem, freed);
  if (r.state == store::Replica::State::Building)
    reorganizer_.submit({var, version, p.id, r.id, p.buffer, p.box, p.layout, box, layout, elem});
  return &r;
}

void ReplicaPlanner::prepare_on_put(const std::string& var, std::uint64_t version, store::Piece& p,
                                    std::optional<Reorg> client, store::Store::Freed& freed) {
  const store::VariableDef& def = *store_.find(var);
  if (method_for(def, client) == Reorg::Rasia)
    for (const Layout& l : expected_layouts(def)) schedule(var, version, p, p.box, l, def.dtype.size(), freed);
  // Recorded patterns whatever the writer's method: records exist only because readers asked for SAHR.
  prepare_patterns(var, version, p, freed);
}

void ReplicaPlanner::prepare_patterns(const std::string& var, std::uint64_t version, store::Piece& p,
                                      store::Store::Freed& freed) {
  const store::VariableDef& def = *store_.find(var);
  const std::size_t elem = def.dtype.size();
  for (const store::AccessPattern& rec : patterns_.of(var)) {
    if (rec.box.ndim != def.ndim) continue;
    const Box part = p.box.intersection(rec.box);
    if (!part.empty()) schedule(var, version, p, part, rec.layout, elem, freed);
  }
}

const store::Replica* ReplicaPlanner::replica_for(Reorg method, const std::string& var, std::uint64_t version,
                                                  store::Piece& p, const Box& region, const Layout& layout,
                                                  std::size_t elem, bool& preparing, store::Store::Freed& freed) {
  if (method == Reorg::Rad || !p.owner.empty()) return nullptr;  // held elsewhere: its holder answers with one
  const Box part = p.box.intersection(region);
  if (!needs_reorg(p.box, p.layout, region, layout, part, elem)) return nullptr;
  store::Replica* r = store_.find_replica(p, layout, part);
  if (!r && method == Reorg::Rasar) r = schedule(var, version, p, part, layout, elem, freed);
  if (!r || r->state == store::Replica::State::Failed) return nullptr;
  if (r->state == store::Replica::State::Ready) return r;
  if (method != Reorg::Sahr) preparing = true;  // SAHR never waits: a replica not ready means a busy server
  return nullptr;
}

bool ReplicaPlanner::built(const ReorgJob& job, std::shared_ptr<store::BufferPool::Block> bytes,
                           store::Store::Freed& freed) {
  store::Piece* p = store_.piece(job.var, job.version, job.piece);
  if (!p) {  // evicted meanwhile: the bytes go back to the pool
    freed.push_back(std::move(bytes));
    return false;
  }
  for (auto& r : p->replicas)
    if (r->id == job.replica) {
      if (bytes) {
        store_.replica_ready(*r, std::move(bytes));
        ++built_;
      } else {
        store_.replica_failed(*r);
      }
    }
  return true;
}

}  // namespace cove::server
