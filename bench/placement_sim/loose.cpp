#include "sim.hpp"

#include "store/placement/affinity.hpp"
#include "store/placement/dataflow.hpp"
#include "store/placement/task_monitor.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <queue>
#include <unordered_map>

namespace cove::sim {

using namespace store::placement;

namespace {

struct Event {
  double time;
  int kind;  // 0 ready, 1 close, 2 done
  std::uint64_t seq;
  int task;
  int resource;
  bool operator>(const Event& o) const {
    if (time != o.time) return time > o.time;
    if (kind != o.kind) return kind > o.kind;
    return seq > o.seq;
  }
};

struct Amr {
  std::vector<double> step_end;
  std::vector<std::vector<double>> dat;  // per step, per block: in staging
  std::vector<double> first_dat;         // per step
};

Amr run_amr(const Params& p, const std::vector<std::vector<Block>>& steps, bool blocking) {
  Amr a;
  const double write = transfer(p, p.block_bytes);
  double start = 0;
  std::vector<double> core(p.producer_cores);
  std::vector<int> count(p.producer_cores);
  for (int s = 0; s < p.steps; ++s) {
    std::fill(core.begin(), core.end(), start);
    std::fill(count.begin(), count.end(), 0);
    std::vector<double> dat(steps[s].size());
    for (std::size_t i = 0; i < steps[s].size(); ++i) {
      const auto c = static_cast<std::size_t>(steps[s][i].id % static_cast<ObjectId>(p.producer_cores));
      core[c] += task_cost(p, p.producer_cost, steps[s][i], s, 0);
      ++count[c];
      dat[i] = core[c] + write;
    }
    double end = start;
    for (int c = 0; c < p.producer_cores; ++c) end = std::max(end, core[c] + (blocking ? count[c] * write : 0.0));
    if (blocking) std::fill(dat.begin(), dat.end(), end);
    a.first_dat.push_back(*std::min_element(dat.begin(), dat.end()));
    a.dat.push_back(std::move(dat));
    a.step_end.push_back(end);
    start = end;
  }
  return a;
}

std::vector<int> node_list(int cores, int per_node) {
  std::vector<int> n(cores);
  for (int r = 0; r < cores; ++r) n[r] = r / per_node;
  return n;
}

}  // namespace

LooseResult run_loose(const Params& p, Policy policy, DecisionTimes* times) {
  Mesh mesh(p);
  std::vector<std::vector<Block>> steps(p.steps);
  for (int s = 0; s < p.steps; ++s) steps[s] = mesh.blocks(s);
  const bool blocking = policy == Policy::rr_blocking;
  const Amr amr = run_amr(p, steps, blocking);
  LooseResult result;
  result.amr_step_end = amr.step_end;
  result.end = amr.step_end.back();

  const auto nodes_of = node_list(p.consumer_cores, p.cores_per_node);
  const int nodes = nodes_of.back() + 1;
  Placer placer(nodes_of, PlacerOptions{policy, 1.2, p.window, p.analysis_cost});
  TaskMonitor monitor;
  bool partitioned = false;
  // The partition is made once, on the first analysed step's graph; blocks
  // refined or coarsened later take the part of their base-level region,
  // the way a server would find an unknown region's group by overlap.
  std::unordered_map<std::uint64_t, int> region_part;
  const double hop = transfer(p, p.summary_bytes);

  double idle_at = 0;
  int last = -1;
  while (true) {
    // The step to analyse next: the newest one there (blocking: wholly
    // written; otherwise begun), or the next to come.
    int s = -1;
    for (int c = p.steps - 1; c > last; --c) {
      const double there = blocking ? amr.step_end[c] : amr.first_dat[c];
      if (there <= idle_at) {
        s = c;
        break;
      }
    }
    if (s < 0) s = last + 1;
    if (s >= p.steps) break;
    const double begin = std::max(idle_at, blocking ? amr.step_end[s] : amr.first_dat[s]);
    if (begin >= result.end) break;
    last = s;

    const auto& blocks = steps[s];
    const Dataflow g = kway_reduction(static_cast<int>(blocks.size()), p.k, p.block_bytes, p.summary_bytes);
    const auto& tasks = g.tasks();
    const std::size_t n = tasks.size();
    std::vector<std::vector<std::pair<int, std::uint64_t>>> out(n);
    std::vector<int> inputs_left(n);
    for (std::size_t t = 0; t < n; ++t) {
      inputs_left[t] = static_cast<int>(tasks[t].after.size());
      for (const TaskInput& in : tasks[t].after) out[static_cast<std::size_t>(in.task)].emplace_back(static_cast<int>(t), in.bytes);
    }
    std::vector<int> where(n, -1);
    std::vector<double> done_at(n, 0);
    std::vector<std::deque<int>> queue(p.consumer_cores);
    std::vector<char> busy(p.consumer_cores, 0);
    std::vector<double> queued_eet(p.consumer_cores, 0);
    std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
    std::uint64_t seq = 0;
    std::vector<Request> pending;
    bool window_open = false;
    AnalysisStep step{s, -1, 0, 0};
    if (!region_part.empty()) {
      Affinity a(nodes);
      for (const Block& b : blocks) a.assign(b.id, region_part.at(Mesh::ancestor(b.key, p.min_depth)));
      placer.set_affinity(std::move(a));
    }
    placer.new_step();
    for (int r = 0; r < p.consumer_cores; ++r) placer.set_available(r, begin);

    auto cost = [&](int t) {
      const Task& task = tasks[static_cast<std::size_t>(t)];
      if (task.kind == "local") {
        const double features = 1.0 + p.analysis_growth * static_cast<double>(s) / p.steps;
        return features * task_cost(p, p.analysis_cost, blocks[static_cast<std::size_t>(task.reads[0])], s, 1);
      }
      return p.reduction_cost;
    };
    auto try_start = [&](int r, double now) {
      if (busy[r] || queue[r].empty()) return;
      const int t = queue[r].front();
      queue[r].pop_front();
      busy[r] = 1;
      if (tasks[static_cast<std::size_t>(t)].kind == "local") {
        queued_eet[r] -= placer.eet(blocks[static_cast<std::size_t>(tasks[static_cast<std::size_t>(t)].reads[0])].id, monitor);
      }
      if (step.start < 0) step.start = now;
      events.push(Event{now + cost(t), 2, seq++, t, r});
    };
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      // local tasks come first in the graph, in block order
      events.push(Event{std::max(begin, amr.dat[s][i]), 0, seq++, static_cast<int>(i), -1});
    }
    while (!events.empty()) {
      const Event e = events.top();
      events.pop();
      const Task& task = tasks[static_cast<std::size_t>(std::max(e.task, 0))];
      if (e.kind == 0) {
        if (task.kind == "local") {
          pending.push_back(Request{blocks[static_cast<std::size_t>(task.reads[0])].id, e.time, p.block_bytes});
          if (!window_open) {
            window_open = true;
            events.push(Event{e.time + p.window, 1, seq++, -1, -1});
          }
        } else {
          queue[where[static_cast<std::size_t>(e.task)]].push_back(e.task);
          try_start(where[static_cast<std::size_t>(e.task)], e.time);
        }
      } else if (e.kind == 1) {
        window_open = false;
        std::unordered_map<ObjectId, int> local_of;
        for (const Request& rq : pending) local_of.emplace(rq.object, -1);
        for (std::size_t i = 0; i < blocks.size(); ++i) {
          if (auto it = local_of.find(blocks[i].id); it != local_of.end()) it->second = static_cast<int>(i);
        }
        for (const Request& rq : placer.prioritize(std::move(pending), monitor)) {
          const auto t0 = std::chrono::steady_clock::now();
          const Decision d = placer.place(rq, monitor);
          if (times) times->us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
          const int t = local_of.at(rq.object);
          where[static_cast<std::size_t>(t)] = d.resource;
          queue[d.resource].push_back(t);
          queued_eet[d.resource] += d.eet;
          try_start(d.resource, e.time);
        }
        pending.clear();
      } else {
        busy[e.resource] = 0;
        done_at[static_cast<std::size_t>(e.task)] = e.time;
        if (task.kind == "local") {
          monitor.record(blocks[static_cast<std::size_t>(task.reads[0])].id, cost(e.task));
          placer.set_available(e.resource, e.time + std::max(0.0, queued_eet[e.resource]));
        }
        if (task.kind == "output") step.end = std::max(step.end, e.time);
        try_start(e.resource, e.time);
        for (auto [m, bytes] : out[static_cast<std::size_t>(e.task)]) {
          if (--inputs_left[static_cast<std::size_t>(m)] > 0) continue;
          const Task& next = tasks[static_cast<std::size_t>(m)];
          // Where a reduction task runs: a join on the node holding most of
          // its inputs, on the first such input's core; the others beside their first input.
          int r = where[static_cast<std::size_t>(next.after[0].task)];
          if (next.kind == "join") {
            std::unordered_map<int, int> votes;
            int best = -1;
            for (const TaskInput& in : next.after) {
              const int node = nodes_of[where[static_cast<std::size_t>(in.task)]];
              if (++votes[node] > best) best = votes[node];
            }
            for (const TaskInput& in : next.after) {
              const int rr = where[static_cast<std::size_t>(in.task)];
              if (votes[nodes_of[rr]] == best) {
                r = rr;
                break;
              }
            }
          }
          where[static_cast<std::size_t>(m)] = r;
          double ready = 0;
          for (const TaskInput& in : next.after) {
            const bool cross = nodes_of[where[static_cast<std::size_t>(in.task)]] != nodes_of[r];
            if (cross) step.bytes_moved += in.bytes;
            ready = std::max(ready, done_at[static_cast<std::size_t>(in.task)] + (cross ? hop : 0.0));
          }
          events.push(Event{ready, 0, seq++, m, -1});
          (void)bytes;
        }
      }
    }
    idle_at = step.end;
    if (step.end <= result.end) result.analysed.push_back(step);
    if (!partitioned && (policy == Policy::data || policy == Policy::hybrid)) {
      partitioned = true;
      const Partition part = partition_dataflow(g, nodes);
      if (part.ok) {
        for (std::size_t i = 0; i < blocks.size(); ++i) {
          region_part.emplace(Mesh::ancestor(blocks[i].key, p.min_depth), *part.affinity.group_of(static_cast<ObjectId>(i)));
        }
      } else {
        result.partition_warning = part.warning;
      }
    }
  }
  return result;
}

}  // namespace cove::sim
