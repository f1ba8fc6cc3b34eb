#include "store/placement/placer.hpp"

#include <cove/error.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace cove::store::placement {

const char* policy_name(Policy policy) noexcept {
  switch (policy) {
    case Policy::rr_blocking: return "rr-blocking";
    case Policy::rr_nonblocking: return "rr-nonblocking";
    case Policy::time: return "time";
    case Policy::data: return "data";
    case Policy::hybrid: return "hybrid";
  }
  return "unknown";
}

Policy parse_policy(std::string_view text) {
  if (text == "rr-blocking" || text == "rr_blocking") return Policy::rr_blocking;
  if (text == "rr" || text == "rr-nonblocking" || text == "rr_nonblocking") return Policy::rr_nonblocking;
  if (text == "time") return Policy::time;
  if (text == "data") return Policy::data;
  if (text == "hybrid") return Policy::hybrid;
  throw Error(Code::InvalidArgument, "placement policy '" + std::string(text) +
                                         "' is not one of rr-blocking, rr-nonblocking (rr), time, data, hybrid");
}

Placer::Placer(std::vector<int> resource_nodes, PlacerOptions options)
    : options_(options), nodes_of_(std::move(resource_nodes)) {
  if (nodes_of_.empty()) throw Error(Code::InvalidArgument, "placer: no resources (worker slots) to place on");
  if (!(options_.hybrid_factor >= 1.0)) {
    throw Error(Code::InvalidArgument,
                "placer: hybrid factor " + std::to_string(options_.hybrid_factor) + " is below 1");
  }
  if (!(options_.window >= 0.0)) {
    throw Error(Code::InvalidArgument, "placer: window " + std::to_string(options_.window) + " s is negative");
  }
  for (std::size_t r = 0; r < nodes_of_.size(); ++r) {
    if (nodes_of_[r] < 0) {
      throw Error(Code::InvalidArgument, "placer: resource " + std::to_string(r) + " is on node " +
                                             std::to_string(nodes_of_[r]) + "; nodes are numbered from 0");
    }
    nodes_ = std::max(nodes_, nodes_of_[r] + 1);
  }
  eat_.assign(nodes_of_.size(), 0.0);
  by_node_.resize(static_cast<std::size_t>(nodes_));
  for (std::size_t r = 0; r < nodes_of_.size(); ++r) {
    all_.emplace(0.0, static_cast<int>(r));
    by_node_[static_cast<std::size_t>(nodes_of_[r])].emplace(0.0, static_cast<int>(r));
  }
}

void Placer::set_affinity(Affinity affinity) {
  affinity_ = std::move(affinity);
  placed_.assign(static_cast<std::size_t>(std::max(affinity_.groups(), 0) * nodes_), 0);
}

void Placer::new_step() { std::fill(placed_.begin(), placed_.end(), 0); }

double Placer::eat(int resource) const { return eat_.at(static_cast<std::size_t>(resource)); }

double Placer::eet(ObjectId object, const TaskMonitor& monitor) const {
  const double known = monitor.mean_latest();
  return monitor.eet_or(object, known > 0 ? known : options_.default_eet);
}

double Placer::ect(ObjectId object, double dat, int resource, const TaskMonitor& monitor) const {
  return eet(object, monitor) + std::max(dat, eat(resource));
}

void Placer::move(int resource, double at) {
  const auto r = static_cast<std::size_t>(resource);
  all_.erase({eat_[r], resource});
  by_node_[static_cast<std::size_t>(nodes_of_[r])].erase({eat_[r], resource});
  eat_[r] = at;
  all_.emplace(at, resource);
  by_node_[static_cast<std::size_t>(nodes_of_[r])].emplace(at, resource);
}

void Placer::set_available(int resource, double at) {
  if (resource < 0 || resource >= resources()) {
    throw Error(Code::InvalidArgument, "placer: resource " + std::to_string(resource) + " is outside 0.." +
                                           std::to_string(resources() - 1));
  }
  move(resource, at);
}

namespace {
constexpr int kHome = 1 << 24;
}  // namespace

int Placer::score(int group, int node) const {
  if (group < 0) return 0;
  const int members = placed_[static_cast<std::size_t>(group * nodes_ + node)];
  // The part's own node first; elsewhere, where most of the group already is.
  return members + (group % nodes_ == node ? kHome : 0);
}

Decision Placer::place(const Request& request, const TaskMonitor& monitor) {
  if (!std::isfinite(request.dat)) {
    throw Error(Code::InvalidArgument, "placer: object " + std::to_string(request.object) + " has data available time " +
                                           std::to_string(request.dat));
  }
  Decision d;
  d.sequence = sequence_++;
  d.object = request.object;
  d.policy = options_.policy;
  d.applied = options_.policy;
  d.dat = request.dat;
  d.bytes = request.bytes;
  d.eet = eet(request.object, monitor);
  const double least_eat = all_.begin()->first;
  d.min_ect = d.eet + std::max(d.dat, least_eat);

  if (options_.policy == Policy::data || options_.policy == Policy::hybrid) {
    if (auto g = affinity_.group_of(request.object)) {
      d.group = *g;
    } else {
      d.applied = Policy::time;
    }
  }

  int chosen = -1;
  switch (d.applied) {
    case Policy::rr_blocking:
    case Policy::rr_nonblocking:
      chosen = static_cast<int>(request.object % static_cast<ObjectId>(resources()));
      break;
    case Policy::time:
      chosen = all_.begin()->second;
      break;
    case Policy::data:
    case Policy::hybrid: {
      // Per node, its least-EAT resource is its best; among nodes with a
      // candidate, the highest score wins, ties by least ECT, then node.
      // ECTs are counted from the data's arrival: a task then completes at
      // most hybrid_factor times later than it could, whenever it arrives
      // (counted from 0, the factor would grow loose as the clock runs on).
      const double limit = d.dat + options_.hybrid_factor * (d.min_ect - d.dat);
      int best_score = -1;
      double best_ect = std::numeric_limits<double>::infinity();
      for (int n = 0; n < nodes_; ++n) {
        const auto& slots = by_node_[static_cast<std::size_t>(n)];
        if (slots.empty()) continue;
        const double e = d.eet + std::max(d.dat, slots.begin()->first);
        if (d.applied == Policy::hybrid && e > limit) continue;
        ++d.candidates;
        const int s = score(d.group, n);
        if (s > best_score || (s == best_score && e < best_ect)) {
          best_score = s;
          best_ect = e;
          chosen = slots.begin()->second;
        }
      }
      d.affinity = best_score;
      // The least-ECT node always qualifies; rounding in `limit` must not leave none.
      if (chosen < 0) chosen = all_.begin()->second;
      break;
    }
  }
  const auto r = static_cast<std::size_t>(chosen);
  d.resource = chosen;
  d.node = nodes_of_[r];
  d.eat_before = eat_[r];
  d.ect = d.eet + std::max(d.dat, eat_[r]);
  move(chosen, d.ect);
  if (auto g = affinity_.group_of(request.object); g && !placed_.empty()) {
    d.group = *g;
    d.affinity = score(*g, d.node);
    ++placed_[static_cast<std::size_t>(*g * nodes_ + d.node)];
  }
  return d;
}

std::vector<Request> Placer::prioritize(std::vector<Request> requests, const TaskMonitor& monitor) const {
  std::stable_sort(requests.begin(), requests.end(), [](const Request& a, const Request& b) { return a.dat < b.dat; });
  std::vector<double> eets(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) eets[i] = eet(requests[i].object, monitor);
  std::vector<std::size_t> index(requests.size());
  for (std::size_t i = 0; i < index.size(); ++i) index[i] = i;
  std::size_t begin = 0;
  while (begin < index.size()) {
    const double first = requests[index[begin]].dat;
    const double close = first + options_.window;
    std::size_t end = begin + 1;
    while (end < index.size() && (requests[index[end]].dat < close || requests[index[end]].dat == first)) ++end;
    std::stable_sort(index.begin() + static_cast<std::ptrdiff_t>(begin), index.begin() + static_cast<std::ptrdiff_t>(end),
                     [&](std::size_t a, std::size_t b) {
                       if (eets[a] != eets[b]) return eets[a] > eets[b];
                       if (requests[a].dat != requests[b].dat) return requests[a].dat < requests[b].dat;
                       return requests[a].object < requests[b].object;
                     });
    begin = end;
  }
  std::vector<Request> out;
  out.reserve(requests.size());
  for (std::size_t i : index) out.push_back(requests[i]);
  return out;
}

std::vector<Decision> Placer::place_all(std::vector<Request> requests, const TaskMonitor& monitor) {
  std::vector<Decision> out;
  out.reserve(requests.size());
  for (const Request& r : prioritize(std::move(requests), monitor)) out.push_back(place(r, monitor));
  return out;
}

}  // namespace cove::store::placement
