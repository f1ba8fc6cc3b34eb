#include "sim.hpp"

#include "store/placement/task_monitor.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <queue>
#include <unordered_map>

namespace cove::sim {

using namespace store::placement;

double DecisionTimes::median() const {
  if (us.empty()) return 0;
  std::vector<double> v = us;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

namespace {

enum Kind { arrive = 0, close = 1, done = 2 };

struct Event {
  double time;
  int kind;
  std::uint64_t seq;
  int side;
  int phase;
  int index;
  int resource;
  bool operator>(const Event& o) const {
    if (time != o.time) return time > o.time;
    if (kind != o.kind) return kind > o.kind;
    return seq > o.seq;
  }
};

struct Side {
  Placer placer;
  TaskMonitor monitor;
  std::vector<std::deque<std::pair<int, int>>> queue;  // (phase, index) per resource
  std::vector<double> queued_eet;
  std::vector<char> busy;
  std::vector<Request> pending;
  std::vector<std::pair<int, int>> pending_task;
  bool window_open = false;
  Side(int cores, int per_node, PlacerOptions o)
      : placer(nodes(cores, per_node), o), queue(cores), queued_eet(cores, 0), busy(cores, 0) {}
  static std::vector<int> nodes(int cores, int per_node) {
    std::vector<int> n(cores);
    for (int r = 0; r < cores; ++r) n[r] = r / per_node;
    return n;
  }
};

}  // namespace

TightResult run_tight(const Params& p, Policy policy, DecisionTimes* times) {
  Mesh mesh(p);
  std::vector<std::vector<Block>> steps(p.steps);
  TightResult result;
  for (int s = 0; s < p.steps; ++s) {
    steps[s] = mesh.blocks(s);
    result.max_blocks = std::max<std::uint64_t>(result.max_blocks, steps[s].size());
  }
  // next[s][i]: the blocks of step s+1 that need block i of step s (APP2 -> APP1).
  std::vector<std::vector<std::vector<int>>> next(p.steps);
  std::vector<std::vector<int>> need(p.steps);  // per block of step s: how many of step s-1 it needs
  for (int s = 0; s + 1 < p.steps; ++s) {
    const auto& now = steps[s];
    std::unordered_map<std::uint64_t, int> at;
    std::unordered_map<std::uint64_t, std::vector<int>> under;
    for (int i = 0; i < static_cast<int>(now.size()); ++i) {
      at.emplace(now[i].key, i);
      for (int d = p.min_depth; d < now[i].depth; ++d) under[Mesh::ancestor(now[i].key, d)].push_back(i);
    }
    next[s].assign(now.size(), {});
    need[s + 1].assign(steps[s + 1].size(), 0);
    for (int j = 0; j < static_cast<int>(steps[s + 1].size()); ++j) {
      const Block& b = steps[s + 1][j];
      int found = -1;
      for (int d = b.depth; d >= p.min_depth && found < 0; --d) {
        if (auto it = at.find(Mesh::ancestor(b.key, d)); it != at.end()) found = it->second;
      }
      std::vector<int> deps = found >= 0 ? std::vector<int>{found} : under[b.key];
      for (int i : deps) next[s][i].push_back(j);
      need[s + 1][j] = static_cast<int>(deps.size());
    }
  }

  const bool blocking = policy == Policy::rr_blocking;
  PlacerOptions o0{policy, 1.2, p.window, p.producer_cost};
  PlacerOptions o1{policy, 1.2, p.window, p.consumer_cost};
  Side sides[2] = {Side(p.producer_cores, p.cores_per_node, o0), Side(p.consumer_cores, p.cores_per_node, o1)};

  const int phases = 2 * p.steps;
  std::vector<std::vector<int>> waiting(phases);
  std::vector<std::vector<double>> ready_at(phases);
  std::vector<int> finished(phases, 0);
  std::vector<double> last_done(phases, 0);
  auto blocks_of = [&](int phase) -> const std::vector<Block>& { return steps[phase / 2]; };
  for (int ph = 0; ph < phases; ++ph) {
    const auto n = blocks_of(ph).size();
    ready_at[ph].assign(n, 0);
    waiting[ph] = (ph % 2 == 1) ? std::vector<int>(n, 1) : (ph == 0 ? std::vector<int>(n, 0) : need[ph / 2]);
  }
  auto cost_of = [&](int ph, int i) {
    return task_cost(p, ph % 2 == 0 ? p.producer_cost : p.consumer_cost, blocks_of(ph)[i], ph / 2, ph % 2);
  };

  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  std::uint64_t seq = 0;
  auto push = [&](double t, int kind, int side, int ph, int i, int r) {
    events.push(Event{t, kind, seq++, side, ph, i, r});
  };
  const double write = transfer(p, p.block_bytes);
  for (int i = 0; i < static_cast<int>(steps[0].size()); ++i) push(0, arrive, 0, 0, i, -1);

  auto try_start = [&](int side, int r, double now) {
    Side& sd = sides[side];
    if (sd.busy[r] || sd.queue[r].empty()) return;
    auto [ph, i] = sd.queue[r].front();
    sd.queue[r].pop_front();
    sd.queued_eet[r] -= sd.placer.eet(blocks_of(ph)[i].id, sd.monitor);
    sd.busy[r] = 1;
    // Blocking: the synchronous write at the end keeps the core.
    push(now + cost_of(ph, i) + (blocking ? write : 0.0), done, side, ph, i, r);
  };

  while (!events.empty()) {
    const Event e = events.top();
    events.pop();
    Side& sd = sides[e.side];
    if (e.kind == arrive) {
      sd.pending.push_back(Request{blocks_of(e.phase)[e.index].id, e.time, p.block_bytes});
      sd.pending_task.emplace_back(e.phase, e.index);
      if (!sd.window_open) {
        sd.window_open = true;
        push(e.time + p.window, close, e.side, 0, 0, -1);
      }
    } else if (e.kind == close) {
      sd.window_open = false;
      std::unordered_map<ObjectId, std::pair<int, int>> task_of;
      for (std::size_t k = 0; k < sd.pending.size(); ++k) task_of.emplace(sd.pending[k].object, sd.pending_task[k]);
      const auto order = sd.placer.prioritize(std::move(sd.pending), sd.monitor);
      sd.pending.clear();
      sd.pending_task.clear();
      for (const Request& rq : order) {
        const auto t0 = std::chrono::steady_clock::now();
        const Decision d = sd.placer.place(rq, sd.monitor);
        if (times) times->us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
        sd.queue[d.resource].push_back(task_of.at(rq.object));
        sd.queued_eet[d.resource] += d.eet;
        try_start(e.side, d.resource, e.time);
      }
    } else {
      const int ph = e.phase;
      sd.monitor.record(blocks_of(ph)[e.index].id, cost_of(ph, e.index));
      sd.busy[e.resource] = 0;
      ++result.tasks;
      sd.placer.set_available(e.resource, e.time + std::max(0.0, sd.queued_eet[e.resource]));
      try_start(e.side, e.resource, e.time);
      last_done[ph] = std::max(last_done[ph], e.time);
      ++finished[ph];
      if (ph + 1 < phases) {
        const int other = 1 - e.side;
        std::vector<int> to = ph % 2 == 0 ? std::vector<int>{e.index} : next[ph / 2][e.index];
        const double available = e.time + (blocking ? 0.0 : write);
        for (int j : to) {
          ready_at[ph + 1][j] = std::max(ready_at[ph + 1][j], available);
          if (--waiting[ph + 1][j] == 0 && !blocking) push(ready_at[ph + 1][j], arrive, other, ph + 1, j, -1);
        }
        if (blocking && finished[ph] == static_cast<int>(blocks_of(ph).size())) {
          for (int j = 0; j < static_cast<int>(blocks_of(ph + 1).size()); ++j) push(e.time, arrive, other, ph + 1, j, -1);
        }
      }
    }
  }
  result.step_end.resize(p.steps);
  for (int s = 0; s < p.steps; ++s) result.step_end[s] = last_done[2 * s + 1];
  result.end = result.step_end.back();
  return result;
}

}  // namespace cove::sim
