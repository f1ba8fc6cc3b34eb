// Internal: where the server's replicas come from (docs/layouts.md): which
// replica answers a get, when one is built (RASAR on a get, RASIA on a put,
// SAHR for recorded access patterns), and taking finished ones in.
// Building happens on the Reorganizer's threads, never here.
//
// Thread-safety: every function must be called with the server's state
// lock held (the store and the pattern records are under it).
#pragma once

#include <cove/server.hpp>

#include "server/reorganizer.hpp"
#include "store/access_patterns.hpp"
#include "store/store.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cove::server {

class ReplicaPlanner {
 public:
  ReplicaPlanner(const ServerOptions& options, store::Store& store, store::AccessPatterns& patterns,
                 Reorganizer& reorganizer)
      : options_(options), store_(store), patterns_(patterns), reorganizer_(reorganizer) {}

  // The method in force: the client's, else the variable's, else the server's.
  Reorg method_for(const store::VariableDef& def, std::optional<Reorg> client) const;

  // For a piece just stored: RASIA (every expected layout of the whole
  // piece, when the method in force says so) and the recorded patterns.
  void prepare_on_put(const std::string& var, std::uint64_t version, store::Piece& p, std::optional<Reorg> client,
                      store::Store::Freed& freed);
  // SAHR: the recorded regions of `var` that meet piece `p`, in their layouts.
  void prepare_patterns(const std::string& var, std::uint64_t version, store::Piece& p, store::Store::Freed& freed);

  // The replica that answers for piece `p` in a get of `region` in
  // `layout`, or null for the piece itself; sets `preparing` when the
  // answer should wait for one being built.
  const store::Replica* replica_for(Reorg method, const std::string& var, std::uint64_t version, store::Piece& p,
                                    const Box& region, const Layout& layout, std::size_t elem, bool& preparing,
                                    store::Store::Freed& freed);

  // A reorganizer finished (bytes) or failed (null) a replica. True when
  // the replica's piece is still here (its waiters may be answered now).
  bool built(const ReorgJob& job, std::shared_ptr<store::BufferPool::Block> bytes, store::Store::Freed& freed);
  std::uint64_t built_count() const noexcept { return built_; }

 private:
  store::Replica* schedule(const std::string& var, std::uint64_t version, store::Piece& p, const Box& box,
                           const Layout& layout, std::size_t elem, store::Store::Freed& freed);
  std::vector<Layout> expected_layouts(const store::VariableDef& def) const;

  const ServerOptions& options_;
  store::Store& store_;
  store::AccessPatterns& patterns_;
  Reorganizer& reorganizer_;
  std::uint64_t built_ = 0;
};

}  // namespace cove::server
