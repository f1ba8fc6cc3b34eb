// The hand-written MPI redistribution LowFive compared itself against:
// writers and readers are ranks of one MPMD job. Once, every rank publishes
// its bounding box of each variable (all-gather); each writer then knows,
// for every reader, the intersection of their boxes. Per step, writers pack
// each non-empty intersection (or send it in place when it is contiguous in
// their piece) and send it point to point; readers receive each into place
// (or into a buffer they unpack as it arrives).
#include "compare_methods.hpp"

#include <algorithm>
#include <cstring>

namespace cove::bench {

namespace {

constexpr std::size_t kMaxMessage = std::size_t{1} << 30;  // MPI counts are int

struct Transfer {
  int peer;           // world rank
  int tag;            // variable index
  std::size_t block;  // index into the step's blocks
  Box part;
  bool in_place;      // contiguous in our buffer: no pack/unpack
  std::size_t offset; // in bytes, when in place
  std::vector<unsigned char> staging;
};

std::size_t run_count(const Box& outer, const Box& part) {
  std::size_t n = 0;
  for_each_run(outer, outer, part, [&](std::size_t, std::size_t, std::size_t) { ++n; });
  return n;
}

class MpiRedistribution final : public Method {
 public:
  bool coupled() const override { return true; }

  void setup(Context& ctx) override {
    // Every rank's box of every variable (writers: their piece; readers: their region).
    const std::size_t nv = ctx.cs.vars.size();
    std::vector<Index> mine;
    for (const auto& v : ctx.cs.vars) {
      const Box& b = ctx.my_box(v);
      for (int d = 0; d < b.ndim; ++d) mine.push_back(b.lo[d]), mine.push_back(b.hi[d]);
    }
    int world = 1;
    MPI_Comm_size(ctx.world, &world);
    const int per_rank = static_cast<int>(mine.size());
    std::vector<Index> all(static_cast<std::size_t>(per_rank) * static_cast<std::size_t>(world));
    MPI_Allgather(mine.data(), per_rank, MPI_INT64_T, all.data(), per_rank, MPI_INT64_T, ctx.world);
    auto box_of = [&](int rank, std::size_t var) {
      const int nd = static_cast<int>(ctx.cs.vars[var].shape.size());
      std::size_t pos = static_cast<std::size_t>(rank) * static_cast<std::size_t>(per_rank);
      for (std::size_t u = 0; u < var; ++u) pos += 2 * ctx.cs.vars[u].shape.size();
      std::vector<Index> lo, hi;
      for (int d = 0; d < nd; ++d) lo.push_back(all[pos + 2 * static_cast<std::size_t>(d)]), hi.push_back(all[pos + 2 * static_cast<std::size_t>(d) + 1]);
      return Box::from_bounds(lo, hi);
    };
    std::vector<int> peers;
    if (ctx.role == Role::Writer) {
      for (const auto& g : ctx.world_rank_of_reader) peers.insert(peers.end(), g.begin(), g.end());
    } else {
      peers = ctx.world_rank_of_writer;
    }
    for (std::size_t v = 0; v < nv; ++v) {
      const Box& me = ctx.my_box(ctx.cs.vars[v]);
      const std::size_t es = elem_size(ctx.cs.vars[v].elem);
      for (int p : peers) {
        const Box part = me.intersection(box_of(p, v));
        if (part.empty()) continue;
        Transfer t{p, static_cast<int>(v), v, part, run_count(me, part) == 1, 0, {}};
        if (t.in_place) {
          for_each_run(me, me, part, [&](std::size_t so, std::size_t, std::size_t) { t.offset = so * es; });
        } else {
          t.staging.resize(static_cast<std::size_t>(part.volume()) * es);
        }
        transfers_.push_back(std::move(t));
      }
    }
  }

  void write(Context&, std::uint64_t, std::vector<Block>& blocks) override {
    requests_.clear();
    for (auto& t : transfers_) {
      const Block& b = blocks[t.block];
      const std::size_t es = elem_size(b.var->elem);
      const unsigned char* src = static_cast<const unsigned char*>(b.data) + t.offset;
      if (!t.in_place) {
        auto* dst = t.staging.data();
        for_each_run(b.box, t.part, t.part, [&](std::size_t so, std::size_t dof, std::size_t len) {
          std::memcpy(dst + dof * es, static_cast<const unsigned char*>(b.data) + so * es, len * es);
        });
        src = dst;
      }
      post(const_cast<unsigned char*>(src), static_cast<std::size_t>(t.part.volume()) * es, t, true);
    }
    MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
  }

  void read(Context&, std::uint64_t, std::vector<Block>& blocks) override {
    requests_.clear();
    owner_.clear();
    for (std::size_t i = 0; i < transfers_.size(); ++i) {
      auto& t = transfers_[i];
      const Block& b = blocks[t.block];
      const std::size_t es = elem_size(b.var->elem);
      unsigned char* dst = t.in_place ? static_cast<unsigned char*>(b.data) + t.offset : t.staging.data();
      const std::size_t before = requests_.size();
      post(dst, static_cast<std::size_t>(t.part.volume()) * es, t, false);
      owner_.insert(owner_.end(), requests_.size() - before, i);
    }
    // Unpack each intersection once all of its messages are in.
    std::vector<std::size_t> pending(transfers_.size(), 0);
    for (std::size_t o : owner_) ++pending[o];
    for (std::size_t n = 0; n < requests_.size(); ++n) {
      int idx = MPI_UNDEFINED;
      MPI_Waitany(static_cast<int>(requests_.size()), requests_.data(), &idx, MPI_STATUS_IGNORE);
      if (idx == MPI_UNDEFINED) break;
      const std::size_t ti = owner_[static_cast<std::size_t>(idx)];
      if (--pending[ti] != 0) continue;
      auto& t = transfers_[ti];
      if (t.in_place) continue;
      const Block& b = blocks[t.block];
      const std::size_t es = elem_size(b.var->elem);
      for_each_run(t.part, b.box, t.part, [&](std::size_t so, std::size_t dof, std::size_t len) {
        std::memcpy(static_cast<unsigned char*>(b.data) + dof * es, t.staging.data() + so * es, len * es);
      });
    }
  }

 private:
  // Posts the transfer as messages of at most kMaxMessage bytes (same
  // peer and tag: MPI keeps them in order).
  void post(unsigned char* buf, std::size_t bytes, const Transfer& t, bool send) {
    for (std::size_t off = 0; off < bytes; off += kMaxMessage) {
      const int n = static_cast<int>(std::min(kMaxMessage, bytes - off));
      requests_.emplace_back();
      if (send) MPI_Isend(buf + off, n, MPI_BYTE, t.peer, t.tag, MPI_COMM_WORLD, &requests_.back());
      else MPI_Irecv(buf + off, n, MPI_BYTE, t.peer, t.tag, MPI_COMM_WORLD, &requests_.back());
    }
  }

  std::vector<Transfer> transfers_;
  std::vector<MPI_Request> requests_;
  std::vector<std::size_t> owner_;
};

}  // namespace

std::unique_ptr<Method> make_mpi_redistribution_method() { return std::make_unique<MpiRedistribution>(); }

}  // namespace cove::bench
