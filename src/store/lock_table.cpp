#include "store/lock_table.hpp"

#include "common/placement.hpp"

#include <cove/error.hpp>

#include <algorithm>
#include <unordered_set>

namespace cove::store {
namespace {

bool overlap(const LockRegion& a, const LockRegion& b) {
  if (a.start.empty() || b.start.empty()) return true;
  if (a.start.size() != b.start.size()) return true;  // different ranks of one name: be safe
  for (std::size_t i = 0; i < a.start.size(); ++i) {
    // Differences, not sums: start + count may not fit 64 bits.
    const bool apart = a.start[i] >= b.start[i] ? a.start[i] - b.start[i] >= b.count[i]
                                                : b.start[i] - a.start[i] >= a.count[i];
    if (apart) return false;
  }
  return true;
}

bool conflict(const LockRequest& a, const LockRequest& b) {
  return (a.mode == LockMode::write || b.mode == LockMode::write) && overlap(a.region, b.region);
}

bool same_region(const LockRegion& a, const LockRegion& b) { return a.start == b.start && a.count == b.count; }

std::string list(const std::vector<std::uint64_t>& v) {
  std::string s = "(";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(v[i]);
  }
  s += ')';
  return s;
}

}  // namespace

std::string lock_label(const std::string& name, const LockRegion& region) {
  if (region.start.empty()) return "'" + name + "'";
  return "'" + name + "'[start=" + list(region.start) + " count=" + list(region.count) + "]";
}

int lock_home(const std::string& name, int servers) noexcept { return common::home_server(name, servers); }

void LockTable::set_domain(const std::string& name, std::vector<std::uint64_t> dims) {
  domains_[name] = std::move(dims);
}

LockOutcome LockTable::lock(LockRequest request) {
  const std::string label = lock_label(request.name, request.region);
  const LockRegion& r = request.region;
  if (r.start.size() != r.count.size()) {
    throw Error(Code::InvalidArgument, "lock on " + label + ": start and count have different ranks");
  }
  for (std::uint64_t c : r.count) {
    if (c == 0) throw Error(Code::InvalidArgument, "lock on " + label + ": a count is 0");
  }
  if (auto d = domains_.find(request.name); d != domains_.end() && !r.start.empty()) {
    const auto& dims = d->second;
    bool inside = dims.size() == r.start.size();
    for (std::size_t i = 0; inside && i < dims.size(); ++i) {
      inside = r.start[i] < dims[i] && r.count[i] <= dims[i] - r.start[i];
    }
    if (!inside) {
      throw Error(Code::InvalidArgument, "lock on " + label + ": the region is outside the domain " + list(dims) +
                                             " of '" + request.name + "'");
    }
  }
  Object& o = objects_[request.name];
  for (const LockRequest& h : o.holders) {
    if (h.id == request.id) throw Error(Code::InvalidArgument, "lock on " + label + ": request id reused");
    if (h.holder == request.holder && same_region(h.region, r)) {
      throw Error(Code::AlreadyExists, "lock on " + label + ": client " + std::to_string(request.holder) +
                                           " already holds it");
    }
  }
  for (const LockRequest& w : o.queue) {
    if (w.id == request.id) throw Error(Code::InvalidArgument, "lock on " + label + ": request id reused");
    if (w.holder == request.holder && same_region(w.region, r)) {
      throw Error(Code::AlreadyExists, "lock on " + label + ": client " + std::to_string(request.holder) +
                                           " already waits for it");
    }
  }
  std::size_t& mine = per_holder_[request.holder];
  if (mine >= max_per_holder_) {
    if (mine == 0) per_holder_.erase(request.holder);
    if (o.holders.empty() && o.queue.empty()) objects_.erase(request.name);
    throw Error(Code::NoMemory, "lock on " + label + ": client " + std::to_string(request.holder) + " already has " +
                                    std::to_string(max_per_holder_) + " locks held or waited for on this server");
  }
  ++mine;
  o.queue.push_back(std::move(request));
  LockOutcome out;
  grant_waiting(o, out);
  return out;
}

void LockTable::grant_waiting(Object& o, LockOutcome& out) {
  // In FIFO order: a request goes when it conflicts with no holder and no
  // request still waiting ahead of it.
  std::vector<const LockRequest*> ahead;
  std::deque<LockRequest> still;
  for (LockRequest& w : o.queue) {
    bool blocked = std::any_of(o.holders.begin(), o.holders.end(), [&](const LockRequest& h) { return conflict(h, w); });
    blocked = blocked || std::any_of(ahead.begin(), ahead.end(), [&](const LockRequest* a) { return conflict(*a, w); });
    if (blocked) {
      still.push_back(std::move(w));
      ahead.push_back(&still.back());
    } else {
      out.granted.push_back(w.id);
      o.holders.push_back(std::move(w));
    }
  }
  o.queue = std::move(still);
}

LockOutcome LockTable::unlock(std::uint64_t holder, const std::string& name, const LockRegion& region) {
  const std::string label = lock_label(name, region);
  auto it = objects_.find(name);
  if (it != objects_.end()) {
    auto& hs = it->second.holders;
    auto mine = std::find_if(hs.begin(), hs.end(),
                             [&](const LockRequest& h) { return h.holder == holder && same_region(h.region, region); });
    if (mine != hs.end()) {
      hs.erase(mine);
      forget_one(holder);
      LockOutcome out;
      grant_waiting(it->second, out);
      if (hs.empty() && it->second.queue.empty()) objects_.erase(it);
      return out;
    }
    auto other = std::find_if(hs.begin(), hs.end(), [&](const LockRequest& h) { return same_region(h.region, region); });
    if (other != hs.end()) {
      throw Error(Code::PermissionDenied, "unlock of " + label + " by client " + std::to_string(holder) +
                                              ": it is held by client " + std::to_string(other->holder));
    }
  }
  throw Error(Code::NotFound, "unlock of " + label + " by client " + std::to_string(holder) + ": it is not locked");
}

void LockTable::forget_one(std::uint64_t holder) {
  auto it = per_holder_.find(holder);
  if (it != per_holder_.end() && --it->second == 0) per_holder_.erase(it);
}

std::size_t LockTable::of_holder(std::uint64_t holder) const {
  auto it = per_holder_.find(holder);
  return it == per_holder_.end() ? 0 : it->second;
}

LockOutcome LockTable::release_holder(std::uint64_t holder) {
  per_holder_.erase(holder);
  LockOutcome out;
  for (auto it = objects_.begin(); it != objects_.end();) {
    Object& o = it->second;
    std::erase_if(o.holders, [&](const LockRequest& h) { return h.holder == holder; });
    std::erase_if(o.queue, [&](const LockRequest& w) {
      if (w.holder != holder) return false;
      out.dropped.push_back(w.id);
      return true;
    });
    grant_waiting(o, out);
    it = (o.holders.empty() && o.queue.empty()) ? objects_.erase(it) : std::next(it);
  }
  return out;
}

LockOutcome LockTable::expire(double now) {
  LockOutcome out;
  for (auto it = objects_.begin(); it != objects_.end();) {
    Object& o = it->second;
    std::erase_if(o.queue, [&](const LockRequest& w) {
      if (w.deadline > now) return false;
      out.timed_out.push_back(w.id);
      forget_one(w.holder);
      return true;
    });
    grant_waiting(o, out);
    it = (o.holders.empty() && o.queue.empty()) ? objects_.erase(it) : std::next(it);
  }
  return out;
}

bool LockTable::cancel(std::uint64_t id, LockOutcome& out) {
  for (auto it = objects_.begin(); it != objects_.end(); ++it) {
    Object& o = it->second;
    auto w = std::find_if(o.queue.begin(), o.queue.end(), [&](const LockRequest& r) { return r.id == id; });
    if (w == o.queue.end()) continue;
    forget_one(w->holder);
    o.queue.erase(w);
    grant_waiting(o, out);
    if (o.holders.empty() && o.queue.empty()) objects_.erase(it);
    return true;
  }
  return false;
}

std::size_t LockTable::held(const std::string& name) const {
  auto it = objects_.find(name);
  return it == objects_.end() ? 0 : it->second.holders.size();
}

std::size_t LockTable::waiting(const std::string& name) const {
  auto it = objects_.find(name);
  return it == objects_.end() ? 0 : it->second.queue.size();
}

}  // namespace cove::store
