// Handlers of reads: Query (which pieces cover a region, parked until they
// do), Lease and LeaseEnd (readers copying pieces), Latest, Pattern.
#include <cove/region_copy.hpp>

#include "core/fail.hpp"
#include "server/service.hpp"

#include <algorithm>

namespace cove::server {

using detail::fail;
using net::Op;

// A query waiting for its region to be covered, or for replicas being built.
class Service::QueryWait final : public ParkedRequest {
 public:
  QueryWait(Service& service, net::QueryRequest q, Responder answer, net::Deadline until)
      : ParkedRequest(var_key(q.var), until),
        service_(service),
        q_(std::move(q)),
        answer_(std::move(answer)),
        defined_(service_.store_.find(q_.var) != nullptr) {}

  bool retry(store::Store::Freed& freed) override {
    if (defined_ && !service_.store_.find(q_.var)) {
      answer_.fail(Code::NotFound, detail::concat("variable '", q_.var, "' was undefined while this get waited"));
      return true;
    }
    const Cover c = service_.try_cover(q_, sources_only_, answer_, freed);
    if (c == Cover::Preparing) deadline = std::max(deadline, net::deadline_in(net::kReplicaWaitMs));
    return c == Cover::Answered;
  }
  void expire() override {
    if (!sources_only_) {
      // Waiting for replicas took too long: the pieces themselves, if they cover it.
      sources_only_ = true;
      store::Store::Freed none;
      if (service_.try_cover(q_, true, answer_, none) == Cover::Answered) return;
    }
    answer_.fail(Code::Timeout, detail::concat("variable '", q_.var, "': region ", q_.region.to_string(),
                                               " was not covered before the timeout"));
  }
  void cancel() override { answer_.fail(Code::Unavailable, "the server is shutting down"); }

 private:
  Service& service_;
  net::QueryRequest q_;
  Responder answer_;
  bool defined_;  // when it was parked: waits for a variable not yet defined end only by their timeout
  bool sources_only_ = false;
};

void Service::query(net::QueryRequest&& q, Responder answer) {
  const net::Deadline deadline = net::deadline_in(q.timeout_ms);
  store::Store::Freed freed;  // replicas dropped to make room: released after the lock
  std::lock_guard lock(mutex);
  check_shard(q.shard);
  if (store_.find(q.var)) {  // a bad region or layout fails now, not when a put arrives
    const store::VariableDef& def = store_.check_piece(q.var, q.region);
    q.layout.axis_order(def.ndim);
  }
  const Cover c = try_cover(q, false, answer, freed);
  if (c == Cover::Answered) return;
  if (c == Cover::No && q.timeout_ms == 0) {
    if (!store_.find(q.var)) fail(Code::NotFound, "variable '", q.var, "' is not defined");
    if (q.latest) fail(Code::NotFound, "variable '", q.var, "' has no version covering ", q.region.to_string());
    fail(Code::NotFound, "version ", q.version, " of variable '", q.var, "' does not cover ", q.region.to_string(),
         " (yet)");
  }
  auto wait = std::make_unique<QueryWait>(*this, std::move(q), std::move(answer), deadline);
  if (c == Cover::Preparing) wait->deadline = std::max(wait->deadline, net::deadline_in(net::kReplicaWaitMs));
  parked_->park(std::move(wait));
}

// A query for another shard than this server's own: one this server is
// second owner of (replicas = 2): that of the member before it, or one whose
// entries it received after members died (shard_backups.cpp). Unavailable
// otherwise, so that the client asks the next member. Caller holds the mutex.
void Service::check_shard(std::int32_t shard) const {
  const int rank = group_->rank(), size = group_->size();
  if (shard < 0 || shard == rank) return;
  if (shard >= size) fail(Code::InvalidArgument, "query for shard ", shard, " of a group of ", size);
  if (options_.replicas < 2)
    fail(Code::Unavailable, "server ", shard, "'s index entries are nowhere else: the group keeps one copy (replicas = 1)");
  if (group_->successor(shard) != rank && !adopted_.count(shard))
    fail(Code::Unavailable, "server ", rank, " does not keep the index entries of server ", shard);
}

// Answers `q` if the store covers its region now. Errors checking it are
// the answer too. Caller holds the mutex.
Service::Cover Service::try_cover(const net::QueryRequest& q, bool sources_only, Responder& answer,
                                  store::Store::Freed& freed) {
  try {
    const store::VariableDef* def = store_.find(q.var);
    if (!def) return Cover::No;
    const std::vector<Box> parts = shard_map(*def).parts_of(q.shard < 0 ? group_->rank() : q.shard, q.region);
    // A sealed version covers everything: cells no put covered read as the
    // fill value, or (without one) the get fails now instead of waiting.
    const auto answers = [&](const store::Coverage& c) { return c.holes.empty() || !def->fill.empty(); };
    std::optional<store::Coverage> coverage;
    std::uint64_t version = q.version;
    if (q.latest) {
      std::vector<std::uint64_t> candidates = store_.versions_newest_first(q.var);
      if (q.oldest) std::reverse(candidates.begin(), candidates.end());
      for (std::uint64_t v : candidates)
        if (v >= q.version && (coverage = store_.covering(q.var, v, parts)) && answers(*coverage)) {
          version = v;
          break;
        } else {
          coverage.reset();
        }
    } else {
      coverage = store_.covering(q.var, version, parts);
      if (coverage && !answers(*coverage))
        fail(Code::NotFound, "version ", version, " of variable '", q.var, "' is sealed and no put covered ",
             coverage->holes.front().to_string(),
             coverage->holes.size() > 1 ? detail::concat(" (and ", coverage->holes.size() - 1, " more parts)") : "",
             "; the variable has no fill value");
    }
    if (!coverage) return Cover::No;
    std::vector<store::Visible>* pieces = &coverage->pieces;
    net::QueryReply out;
    out.version = version;
    out.dtype = def->dtype;
    out.shape = def->shape;
    out.method = replicas_->method_for(*def, q.reorg);
    const std::size_t elem = def->dtype.size();
    const std::uint64_t region_bytes = static_cast<std::uint64_t>(q.region.volume()) * elem;
    const bool all_here =
        std::all_of(pieces->begin(), pieces->end(), [](const store::Visible& v) { return v.piece->owner.empty(); });
    if (all_here && region_bytes <= q.eager_max && parts.size() == 1 && parts[0] == q.region) {
      // Small, and all ours: answer with the bytes, assembled in the reader's layout.
      net::Bytes data(region_bytes);
      for (const store::Visible& v : *pieces)
        for (const Box& part : v.boxes)
          copy_region({v.piece->buffer->data, v.piece->bytes, v.piece->box, v.piece->layout},
                      {data.data(), data.size(), q.region, q.layout}, part, elem);
      for (const Box& hole : coverage->holes)
        fill_region({data.data(), data.size(), q.region, q.layout}, hole, def->fill);
      out.data = std::move(data);
      bytes_out_ += region_bytes;
    } else {
      bool preparing = false;
      std::vector<const store::Replica*> replicas;
      for (const store::Visible& v : *pieces)
        replicas.push_back(sources_only ? nullptr
                                        : replicas_->replica_for(out.method, q.var, version, *v.piece, q.region,
                                                                 q.layout, elem, preparing, freed));
      if (preparing) return Cover::Preparing;
      // The reader copies under a lease: nothing it was told of is reused
      // (a buffer) or given back to its writer (put_local) until it ends.
      Session::Holds holds;
      for (std::size_t i = 0; i < pieces->size(); ++i) {
        const store::Piece* p = (*pieces)[i].piece;
        if (p->owner.empty())
          for (const Box& part : (*pieces)[i].boxes)
            bytes_out_ += static_cast<std::uint64_t>(part.intersection(q.region).volume()) * elem;
        if (const store::Replica* r = replicas[i]) {
          out.pieces.push_back({r->box, r->layout, "", r->buffer->key, true, p->key, 0, {}, {}});
          holds.push_back(r->buffer);
          ++replica_answers_;
        } else {
          out.pieces.push_back({p->box, p->layout, p->owner, p->key, false, p->key, p->holder_id, p->copy, {}});
          holds.push_back(p->lease_hold());
        }
        out.pieces.back().visible = std::move((*pieces)[i].boxes);
      }
      out.lease = session_of(answer.peer())->lease(std::move(holds));
      out.holes = std::move(coverage->holes);
      if (!out.holes.empty()) out.fill.assign(def->fill.begin(), def->fill.end());
    }
    answer.reply<net::Message<Op::Query>>(out);
  } catch (...) {
    answer.fail(std::current_exception());
  }
  return Cover::Answered;
}

// A reader about to copy pieces held here that another index shard told it
// of: NotFound when one is gone (the reader asks its shard again).
net::LeaseReply Service::lease(Session& s, net::LeaseRequest&& r) {
  Session::Holds holds;
  {
    std::lock_guard lock(mutex);
    for (const std::uint64_t id : r.pieces) {
      const store::Piece* p = store_.piece(r.var, r.version, id);
      if (!p || !p->owner.empty())
        fail(Code::NotFound, "piece ", id, " of version ", r.version, " of '", r.var, "' is no longer held here");
      holds.push_back(p->lease_hold());
    }
  }
  return {s.lease(std::move(holds))};
}

net::Empty Service::lease_end(Session& s, net::LeaseEndRequest&& r) {
  s.end_leases(r.leases);
  return {};
}

net::LatestReply Service::latest(net::VarRequest&& r) {
  std::lock_guard lock(mutex);
  if (!store_.find(r.var)) fail(Code::NotFound, "variable '", r.var, "' is not defined");
  return {store_.latest(r.var)};
}

net::Empty Service::pattern(net::PatternRequest&& r) {
  store::Store::Freed freed;
  std::lock_guard lock(mutex);
  store_.check_piece(r.var, r.region);
  r.layout.axis_order(r.region.ndim);
  if (patterns_.update(r.var, r.layout, r.region, r.gets))
    // A writer may be ahead of this reader: the versions after the one it
    // read are what it gets next.
    for (std::uint64_t v : store_.versions_newest_first(r.var)) {
      if (v <= r.version) break;
      for (store::Piece* p : store_.pieces_of(r.var, v))
        if (!p->is_copy) replicas_->prepare_patterns(r.var, v, *p, freed);
    }
  return {};
}

}  // namespace cove::server
