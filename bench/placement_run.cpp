// cove-placement-run: the in-staging placement paper's loosely coupled
// workflow for real on this machine (docs/placement.md, "The real run").
//
// An AMR-like producer writes, each step, one block per mesh block of a
// 1-D variable; a block's refinement depth sets its analysis cost
// (base x 2^(depth - min)). Each block is placed by the placement library
// (src/store/placement, the same code the simulator links) onto a server
// of a running group and put there (Client::put_on). `cove worker`
// processes, W per server, run a k-way reduction (local, join, correction,
// output tasks) over the blocks, each task next to the server holding its
// input. Per policy: end-to-end time, bytes moved between servers (the
// workers' reads from other servers and task outputs taken from another
// server), and the analysis steps completed by the end of the simulation.
//
//   cove-placement-run --connect FILE --cove PATH/cove --out DIR [options]
#include <cove/client.hpp>
#include <cove/error.hpp>

#include "store/placement/affinity.hpp"
#include "store/placement/dataflow.hpp"
#include "store/placement/placer.hpp"
#include "store/placement/task_monitor.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

using namespace cove;
using cove::Error;
using namespace cove::store::placement;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string connect, cove, out = "placement-run";
  std::string policies = "rr-blocking,rr-nonblocking,time,data,hybrid";
  int blocks = 16, k = 4, steps = 8, per_server = 2, min_depth = 4, max_depth = 6;
  int block_elems = 4096;  // 32 KiB of doubles
  double base_ms = 2.0;    // a local task on a block at the minimum depth
  double sim_ms = 10.0;    // the producer's compute per step
  std::int64_t timeout_ms = 60000;
  std::uint64_t summary_bytes = 1024;
  bool halo = false;
  bool newest = false;  // the analysis takes the newest step written when free (cove worker --newest)
  std::string monitor = "events";  // cove worker --monitor: how server 0 learns task times
  bool server_placement = false;  // server 0 places (put_placed), by the policy its config gives the variable
  std::string prefix = "amr";      // variables are <prefix>.<policy>
  std::string work = "sleep";      // the producer's and the tasks' work: sleep (emulated cores) or busy
};

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
double unix_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void work(double s, const std::string& how) {
  if (how == "sleep") {
    std::this_thread::sleep_for(std::chrono::duration<double>(s));
    return;
  }
  const auto until = Clock::now() + std::chrono::duration<double>(s);
  volatile std::uint64_t x = 0;
  while (Clock::now() < until)
    for (int i = 0; i < 1000; ++i) x = x + static_cast<std::uint64_t>(i);
}

// The refinement depth of block i at step t: finest near two features
// moving across the domain, coarser away from them.
int depth(const Options& o, int i, int t) {
  const double x = (i + 0.5) / o.blocks;
  double d = 1;
  for (double f : {0.25 + 0.02 * t, 0.7 - 0.015 * t}) d = std::min(d, std::abs(x - f));
  const int levels = o.max_depth - o.min_depth;
  return o.max_depth - std::min(levels, static_cast<int>(d * 4 * (levels + 1)));
}

// The consumer's graph: the k-way reduction over the blocks, with task
// costs from the blocks' depths at step 0, as a JSON file the workers load.
nlohmann::json graph_json(const Options& o, const std::string& var) {
  const Dataflow g = kway_reduction(o.blocks, o.k, static_cast<std::uint64_t>(o.block_elems) * 8, o.summary_bytes, var);
  const double base = o.base_ms / 1000;
  nlohmann::json objects = nlohmann::json::array(), tasks = nlohmann::json::array();
  for (int i = 0; i < o.blocks; ++i)
    objects.push_back({{"name", g.objects()[static_cast<std::size_t>(i)].name},
                       {"var", var},
                       {"version", 0},
                       {"start", {static_cast<std::uint64_t>(i) * static_cast<std::uint64_t>(o.block_elems)}},
                       {"count", {o.block_elems}},
                       {"bytes", static_cast<std::uint64_t>(o.block_elems) * 8}});
  for (const Task& t : g.tasks()) {
    double cost = base / 4;  // joins, corrects, outputs: small summaries
    if (t.kind == "local") cost = base * std::ldexp(1.0, depth(o, t.reads.front(), 0) - o.min_depth);
    if (t.name.rfind("correction", 0) == 0 && !t.after.empty()) {
      const Task& local = g.tasks()[static_cast<std::size_t>(t.after.front().task)];
      if (local.kind == "local") cost = base * std::ldexp(1.0, depth(o, local.reads.front(), 0) - o.min_depth) / 2;
    }
    nlohmann::json after = nlohmann::json::array();
    for (const TaskInput& in : t.after) after.push_back({{"task", g.tasks()[static_cast<std::size_t>(in.task)].name}, {"bytes", in.bytes}});
    nlohmann::json reads = nlohmann::json::array();
    for (int r : t.reads) reads.push_back(g.objects()[static_cast<std::size_t>(r)].name);
    if (o.halo && t.kind == "local" && o.blocks > 1)
      reads.push_back(g.objects()[static_cast<std::size_t>((t.reads.front() + 1) % o.blocks)].name);
    tasks.push_back({{"name", t.name}, {"kind", t.kind}, {"reads", reads}, {"after", after}, {"cost", cost}});
  }
  return {{"objects", objects}, {"tasks", tasks}};
}

pid_t spawn(const std::vector<std::string>& args, const std::string& out) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, (out + ".err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, args.front().c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw Error(Code::Internal, fmt::format("cannot start {}: {}", args.front(), std::strerror(rc)));
  return pid;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Result {
  std::string policy;
  double end_to_end = 0, sim_time = 0;
  int analysed = 0;
  std::uint64_t steps_analysed = 0;  // by the end (every step, unless --newest)
  std::uint64_t tasks = 0, read_bytes = 0, remote_read_bytes = 0, edge_bytes = 0, remote_edge_bytes = 0;
  double decision_us = 0;  // median per put
  std::uint64_t decisions = 0, fallbacks = 0;
  std::vector<std::array<double, 2>> produced;  // per step: first block written, last block written (system clock, s)
  // Per analysed step: the step, the first worker's start and the last worker's end of it.
  std::map<int, std::array<double, 2>> analysis;
};

bool step_done(Client& c, const std::string& run, int step, int blocks) {
  for (int i = 0; i < blocks; ++i) try {
      c.get_meta(fmt::format("cove.task.{}.{}.output{}", run, step, i), 0, 0);
    } catch (const Error& e) {
      if (e.code() == Code::Timeout || e.code() == Code::NotFound) return false;
      throw;
    }
  return true;
}

Result run_policy(Client& client, const Options& o, Policy policy, const std::string& conn) {
  Result r;
  r.policy = policy_name(policy);
  const std::string var = fmt::format("{}.{}", o.prefix, r.policy);
  // Names this run's task outputs and worker announcements (metadata
  // stays after the variable goes: a later run must not see them).
  const std::string run = fmt::format("{}.{}", var, std::chrono::system_clock::now().time_since_epoch().count());
  const std::size_t servers = client.servers().size();
  const Index shape[] = {static_cast<Index>(o.blocks) * o.block_elems};
  try {
    client.undefine(var);
  } catch (const Error&) {
  }
  client.define(var, DType::parse("f8"), 1, shape);
  const std::string graph_path = fmt::format("{}/{}.graph.json", o.out, r.policy);
  std::ofstream(graph_path) << graph_json(o, var).dump(1);
  const Dataflow g = Dataflow::load(graph_path);

  // The previous policy's workers have exited; the servers see their
  // connections close a little later: their slots first.
  for (const auto until = Clock::now() + std::chrono::milliseconds(o.timeout_ms);;) {
    std::uint64_t left = 0;
    for (const auto& [address, st] : client.stat_each()) left += st.workers;
    if (left == 0) break;
    if (Clock::now() >= until) throw Error(Code::Timeout, fmt::format("{} workers of the last run stay registered", left));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (o.server_placement) client.register_dataflow(graph_path);
  const Clock::time_point start = Clock::now();
  std::vector<pid_t> workers;
  std::vector<std::string> outs;
  for (std::size_t s = 0; s < servers; ++s)
    for (int w = 0; w < o.per_server; ++w) {
      outs.push_back(fmt::format("{}/{}.worker{}.{}.json", o.out, r.policy, s, w));
      std::vector<std::string> args{o.cove, "worker", graph_path, "--server", std::to_string(s), "--name",
                                    fmt::format("{}.{}.{}", r.policy, s, w), "--run", run, "--steps",
                                    std::to_string(o.steps), "--per-server", std::to_string(o.per_server),
                                    "--timeout-ms", std::to_string(o.timeout_ms), "--verify", "--json", "--connect", conn};
      if (o.newest)
        args.insert(args.end(), {"--newest", "--plan-by", policy == Policy::rr_blocking ? "written" : "begun"});
      args.insert(args.end(), {"--monitor", o.monitor, "--work", o.work});
      workers.push_back(spawn(args, outs.back()));
    }

  std::vector<int> nodes_of;
  for (std::size_t s = 0; s < servers; ++s)
    for (int w = 0; w < o.per_server; ++w) nodes_of.push_back(static_cast<int>(s));
  PlacerOptions po;
  po.policy = policy;
  po.window = 0.001;
  po.default_eet = o.base_ms / 1000;
  Placer placer(nodes_of, po);
  TaskMonitor monitor;
  // The task times the workers published (their outputs), as EETs for
  // the next steps; the steps of the last few only, where they can still
  // come (EET needs the newest two).
  std::vector<std::vector<bool>> measured(static_cast<std::size_t>(o.steps), std::vector<bool>(static_cast<std::size_t>(o.blocks)));
  auto measure = [&](int upto) {
    for (int t = std::max(0, upto - 4); t < upto; ++t)
      for (int i = 0; i < o.blocks; ++i) {
        if (measured[static_cast<std::size_t>(t)][static_cast<std::size_t>(i)]) continue;
        try {
          const Metadata m = client.get_meta(fmt::format("cove.task.{}.{}.local{}", run, t, i), 0, 0);
          double took = 0;
          if (m.data.size() >= 16) std::memcpy(&took, m.data.data() + 8, sizeof took);
          monitor.record(static_cast<ObjectId>(i), took);
          measured[static_cast<std::size_t>(t)][static_cast<std::size_t>(i)] = true;
        } catch (const Error& e) {
          if (e.code() != Code::Timeout && e.code() != Code::NotFound) throw;
        }
      }
  };

  // The producer's compute per block at step t: the step's sim-ms shared
  // by the blocks' refinement (a block at depth d takes 2^(d - min) of a
  // base block).
  auto compute_shares = [&](int t) {
    std::vector<double> share(static_cast<std::size_t>(o.blocks));
    double total = 0;
    for (int b = 0; b < o.blocks; ++b) total += share[static_cast<std::size_t>(b)] = std::ldexp(1.0, depth(o, b, t) - o.min_depth);
    for (double& x : share) x *= o.sim_ms / 1000 / total;
    return share;
  };
  std::vector<double> block(static_cast<std::size_t>(o.block_elems));
  std::vector<double> decision_us;
  double first_written = 0;  // this step's first block written (system clock)
  auto put_block = [&](int t, int i, std::optional<int> server) {
    for (int e = 0; e < o.block_elems; ++e)
      block[static_cast<std::size_t>(e)] = static_cast<double>((static_cast<std::uint64_t>(t) << 32) +
                                                               static_cast<std::uint64_t>(i) * static_cast<std::uint64_t>(o.block_elems) +
                                                               static_cast<std::uint64_t>(e));
    const Index lo[] = {static_cast<Index>(i) * o.block_elems}, n[] = {o.block_elems};
    const Box box = Box::from_start_count(lo, n);
    if (server) {
      client.put_on(static_cast<std::size_t>(*server), var, static_cast<std::uint64_t>(t), box, block.data(),
                    block.size() * sizeof(double));
    } else {
      // Server 0 places it; the time is the whole put_placed (a Place round
      // trip and the put; `cove stat --placements` has the decisions).
      const Clock::time_point d0 = Clock::now();
      client.put_placed(var, static_cast<std::uint64_t>(t), box, block.data(), block.size() * sizeof(double));
      decision_us.push_back(since(d0) * 1e6);
      ++r.decisions;
    }
    if (first_written == 0) first_written = unix_seconds();
  };
  auto place = [&](std::vector<Request> requests) {
    const Clock::time_point d0 = Clock::now();
    const std::vector<Decision> decisions = placer.place_all(std::move(requests), monitor);
    decision_us.push_back(since(d0) * 1e6 / static_cast<double>(decisions.size()));
    r.decisions += decisions.size();
    for (const Decision& d : decisions)
      if (d.applied != d.policy) ++r.fallbacks;
    return decisions;
  };
  const std::uint64_t block_bytes = static_cast<std::uint64_t>(o.block_elems) * 8;
  const std::byte one[1] = {std::byte{1}};
  bool partitioned = false;
  for (int t = 0; t < o.steps; ++t) {
    first_written = 0;
    measure(t);
    // The placer cannot know which steps the analysis will take (with
    // --newest it skips some): each step's EATs start at the step's start.
    for (int res = 0; res < placer.resources(); ++res) placer.set_available(res, since(start));
    // The producer's compute: what a sleep overshoots is taken off the
    // next block's, so every policy's step computes sim-ms in all.
    double owed = 0;
    auto compute = [&](double s) {
      owed += s;
      const Clock::time_point c0 = Clock::now();
      work(std::max(0.0, owed), o.work);
      owed -= since(c0);
    };
    if (policy == Policy::rr_blocking) {
      // Synchronous coupling: the whole step is computed, then written.
      compute(o.sim_ms / 1000);
      std::vector<Request> requests;
      for (int i = 0; i < o.blocks; ++i) requests.push_back({static_cast<ObjectId>(i), since(start), block_bytes});
      if (o.server_placement)
        for (int i = 0; i < o.blocks; ++i) put_block(t, i, std::nullopt);
      else
        for (const Decision& d : place(std::move(requests))) put_block(t, static_cast<int>(d.object), d.node);
    } else {
      // Asynchronous coupling: each block is placed and written as soon as
      // it is computed; the analysis may begin with the step's first block.
      const std::vector<double> share = compute_shares(t);
      for (int i = 0; i < o.blocks; ++i) {
        compute(share[static_cast<std::size_t>(i)]);
        if (o.server_placement)
          put_block(t, i, std::nullopt);
        else
          put_block(t, i, place({{static_cast<ObjectId>(i), since(start), block_bytes}}).front().node);
        if (i == 0) client.put_meta(fmt::format("cove.begun.{}", run), static_cast<std::uint64_t>(t), one);
      }
    }
    client.put_meta(fmt::format("cove.written.{}", run), static_cast<std::uint64_t>(t), one);
    r.produced.push_back({first_written, unix_seconds()});
    if (policy == Policy::rr_blocking && !o.newest) {
      // Every step analysed, synchronously: the step's analysis ends before the next step.
      for (int i = 0; i < o.blocks; ++i)
        client.get_meta(fmt::format("cove.task.{}.{}.output{}", run, t, i), 0, o.timeout_ms);
    }
    if (!partitioned && (policy == Policy::data || policy == Policy::hybrid)) {
      // Once, after the first step, as the paper does.
      const Partition p = partition_dataflow(g, static_cast<int>(servers));
      if (p.ok)
        placer.set_affinity(p.affinity);
      else
        fmt::print(stderr, "warning: {}\n", p.warning);
      partitioned = true;
    }
    placer.new_step();
  }
  r.sim_time = since(start);
  for (int t = 0; t < o.steps; ++t)
    if (step_done(client, run, t, o.blocks)) ++r.analysed;

  std::string failures;
  for (std::size_t w = 0; w < workers.size(); ++w) {
    int status = 0;
    waitpid(workers[w], &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      failures += fmt::format("\n{}: {}", outs[w], slurp(outs[w] + ".err"));
      continue;
    }
    const auto j = nlohmann::json::parse(slurp(outs[w]));
    r.tasks += j["tasks"].get<std::uint64_t>();
    r.steps_analysed = j["steps_analysed"].get<std::uint64_t>();
    r.read_bytes += j["object_bytes"].get<std::uint64_t>();
    r.remote_read_bytes += j["remote_object_bytes"].get<std::uint64_t>();
    r.edge_bytes += j["edge_bytes"].get<std::uint64_t>();
    r.remote_edge_bytes += j["remote_edge_bytes"].get<std::uint64_t>();
    for (const auto& step : j["timeline"]) {
      const int t = step[0].get<int>();
      auto [it, fresh] = r.analysis.emplace(t, std::array<double, 2>{step[1].get<double>(), step[2].get<double>()});
      if (!fresh) it->second = {std::min(it->second[0], step[1].get<double>()), std::max(it->second[1], step[2].get<double>())};
    }
  }
  r.end_to_end = since(start);
  if (!failures.empty()) throw Error(Code::Internal, fmt::format("policy {}: workers failed:{}", r.policy, failures));
  const std::uint64_t expected = g.tasks().size() * r.steps_analysed;
  if (r.tasks != expected)
    throw Error(Code::Internal, fmt::format("policy {}: the workers ran {} tasks of {}", r.policy, r.tasks, expected));
  const std::uint64_t expected_bytes =
      static_cast<std::uint64_t>(o.blocks) * o.block_elems * 8 * r.steps_analysed * (o.halo && o.blocks > 1 ? 2 : 1);
  if (!o.newest && r.steps_analysed != static_cast<std::uint64_t>(o.steps))
    throw Error(Code::Internal, fmt::format("policy {}: {} steps analysed of {}", r.policy, r.steps_analysed, o.steps));
  if (r.read_bytes != expected_bytes)
    throw Error(Code::Internal,
                fmt::format("policy {}: the workers read {} bytes of {}", r.policy, r.read_bytes, expected_bytes));
  std::sort(decision_us.begin(), decision_us.end());
  r.decision_us = decision_us[decision_us.size() / 2];
  client.undefine(var);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"cove-placement-run: the placement paper's AMR + k-way reduction workflow on a running group"};
  app.add_option("--connect", o.connect, "the group's connection file")->required();
  app.add_option("--cove", o.cove, "the cove command (its `worker` runs the consumer)")->required();
  app.add_option("--out", o.out, "folder for graphs and worker summaries");
  app.add_option("--policies", o.policies, "comma-separated: rr-blocking,rr-nonblocking,time,data,hybrid");
  app.add_option("--blocks", o.blocks, "AMR blocks")->check(CLI::Range(1, 1 << 16));
  app.add_option("--k", o.k, "reduction fan-in")->check(CLI::Range(2, 8));
  app.add_option("--steps", o.steps, "simulation steps")->check(CLI::Range(1, 1 << 16));
  app.add_option("--per-server", o.per_server, "workers per server")->check(CLI::Range(1, 64));
  app.add_option("--min-depth", o.min_depth)->check(CLI::Range(0, 20));
  app.add_option("--max-depth", o.max_depth)->check(CLI::Range(0, 20));
  app.add_option("--block-elems", o.block_elems, "doubles per block")->check(CLI::Range(1, 1 << 24));
  app.add_option("--base-ms", o.base_ms, "a local task's cost at the minimum depth")->check(CLI::Range(0.0, 1e5));
  app.add_option("--sim-ms", o.sim_ms, "the producer's compute per step")->check(CLI::Range(0.0, 1e5));
  app.add_option("--timeout-ms", o.timeout_ms, "the longest wait of a worker")->check(CLI::Range(1, 86400000));
  app.add_option("--prefix", o.prefix, "variables are PREFIX.<policy> (default amr)");
  app.add_flag("--newest", o.newest,
               "the analysis takes the newest step whenever it is free: rr-blocking the newest wholly written, "
               "the others the newest begun (the paper's loosely coupled workflow; the producer never waits)");
  app.add_option("--work", o.work,
                 "the producer's and the tasks' work: sleep (default; each worker an emulated staging core, "
                 "the producer one more) or busy (they compete for this machine's cores)")
      ->check(CLI::IsMember({"sleep", "busy"}));
  app.add_option("--monitor", o.monitor, "the workers' task times: events (each task reports) or reads (read intervals)")
      ->check(CLI::IsMember({"events", "reads"}));
  app.add_flag("--halo", o.halo, "a local task also reads its neighbour block");
  app.add_flag("--server-placement", o.server_placement,
               "server 0 places the blocks (put_placed) by the policy its config gives each variable amr.<policy>");
  CLI11_PARSE(app, argc, argv);
  try {
    if (o.max_depth < o.min_depth) throw Error(Code::InvalidArgument, "--max-depth is below --min-depth");
    std::filesystem::create_directories(o.out);
    Client client = Client::connect(o.connect);
    std::vector<Result> results;
    std::stringstream list(o.policies);
    for (std::string p; std::getline(list, p, ',');) results.push_back(run_policy(client, o, parse_policy(p), o.connect));
    // Same-run baseline for the per-block costs: a memcpy of one block.
    std::vector<double> from(static_cast<std::size_t>(o.block_elems), 1.0), to(from.size());
    std::vector<double> copy_us;
    for (int rep = 0; rep < 101; ++rep) {
      const Clock::time_point c0 = Clock::now();
      std::memcpy(to.data(), from.data(), from.size() * sizeof(double));
      copy_us.push_back(since(c0) * 1e6);
      from[0] = to[from.size() - 1] + 1;  // each copy's input depends on the last's output
    }
    std::sort(copy_us.begin(), copy_us.end());
    fmt::print("memcpy of one {} KiB block: {:.2f} us median (same run)\n", o.block_elems * 8 / 1024, copy_us[copy_us.size() / 2]);
    fmt::print("{} servers x {} workers, {} blocks of {} KiB, depths {}-{}, k = {}, {} steps, {} ms producer step\n",
               client.servers().size(), o.per_server, o.blocks, o.block_elems * 8 / 1024, o.min_depth, o.max_depth,
               o.k, o.steps, o.sim_ms);
    // Per analysed step: the KiB moved between servers, and how long after
    // the step's last block was written its analysis ended (median).
    auto per_step_kib = [](const Result& r) {
      return r.steps_analysed ? static_cast<double>(r.remote_read_bytes + r.remote_edge_bytes) / 1024 /
                                    static_cast<double>(r.steps_analysed)
                              : 0.0;
    };
    auto lag_ms = [](const Result& r) {
      std::vector<double> lag;
      for (const auto& [t, span] : r.analysis)
        if (static_cast<std::size_t>(t) < r.produced.size()) lag.push_back(span[1] - r.produced[static_cast<std::size_t>(t)][1]);
      if (lag.empty()) return 0.0;
      std::sort(lag.begin(), lag.end());
      return lag[lag.size() / 2] * 1000;
    };
    fmt::print("{:<15} {:>9} {:>9} {:>9} {:>9} {:>12} {:>12} {:>12} {:>10} {:>9} {:>10}\n", "policy", "e2e (s)", "sim (s)",
               "analysed", "in all", "read KiB", "remote KiB", "edges KiB", "KiB/step", "lag (ms)", "dec (us)");
    const Result* base = nullptr;
    for (const Result& r : results)
      if (r.policy == "rr-blocking") base = &r;
    for (const Result& r : results)
      fmt::print("{:<15} {:>9.3f} {:>9.3f} {:>9} {:>9} {:>12.1f} {:>12.1f} {:>12.1f} {:>10.1f} {:>9.1f} {:>10.2f}\n", r.policy,
                 r.end_to_end, r.sim_time, r.analysed, r.steps_analysed, static_cast<double>(r.read_bytes) / 1024,
                 static_cast<double>(r.remote_read_bytes) / 1024, static_cast<double>(r.remote_edge_bytes) / 1024,
                 per_step_kib(r), lag_ms(r), r.decision_us);
    // The ratios, within this run: against rr-blocking, and bytes
    // moved per analysed step against time.
    const Result* time = nullptr;
    for (const Result& r : results)
      if (r.policy == "time") time = &r;
    for (const Result& r : results) {
      std::string line = fmt::format("{:<15}", r.policy);
      if (base) line += fmt::format(" e2e vs rr-blocking {:.2f}x", base->end_to_end / r.end_to_end);
      if (base && base->analysed)
        line += fmt::format(", analysed by the simulation's end vs rr-blocking {:.2f}x",
                            static_cast<double>(r.analysed) / base->analysed);
      if (time && per_step_kib(*time) > 0)
        line += fmt::format(", moved per analysed step vs time {:.2f}", per_step_kib(r) / per_step_kib(*time));
      fmt::print("{}\n", line);
    }
    nlohmann::json j = nlohmann::json::array();
    for (const Result& r : results)
      j.push_back({{"policy", r.policy}, {"end_to_end_s", r.end_to_end}, {"sim_s", r.sim_time},
                   {"analysed", r.analysed}, {"steps_analysed", r.steps_analysed}, {"tasks", r.tasks}, {"read_bytes", r.read_bytes},
                   {"remote_read_bytes", r.remote_read_bytes}, {"remote_edge_bytes", r.remote_edge_bytes},
                   {"decision_us", r.decision_us}, {"fallbacks", r.fallbacks}, {"produced", r.produced},
                   {"analysis", [&] {
                      nlohmann::json a = nlohmann::json::array();
                      for (const auto& [t, span] : r.analysis) a.push_back({t, span[0], span[1]});
                      return a;
                    }()}});
    std::ofstream(o.out + "/results.json") << j.dump(1) << "\n";
    return 0;
  } catch (const Error& e) {
    fmt::print(stderr, "cove-placement-run: {}\n", e.what());
    return 1;
  }
}
