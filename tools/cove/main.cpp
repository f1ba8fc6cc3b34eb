// The `cove` command: run a staging server and look at a running one.
//
//   cove serve [options]          a server (or, under mpiexec, a group); `cove-server` is the same
//   cove ls    [--connect T] [--json]     variables, versions, pieces, bytes
//   cove stat  [--connect T] [--json] [--placements [N]]  memory, objects, requests, bytes moved, per server;
//                                 the newest N placement decisions
//   cove top   [--connect T] [--interval S] [--count N] [--placements N]   the same, live
//   cove stop  [--connect T]      shut the service down
//   cove undefine NAME [--connect T]   remove a variable and everything it holds
//   cove graph FILE --nodes N [--json] check a dataflow graph, show its METIS affinity groups
//   cove worker GRAPH --server S [--connect T]   an in-staging worker running GRAPH's tasks placed on server S
//
// T is a connection file or an address; without --connect, COVE_CONNECT is
// used. `--help` on any command lists its options. Exit status: 0 on
// success, 1 on an error (printed as "cove: <code>: <message>"), 2 on bad
// usage.
#include "commands.hpp"

#include <cove/error.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <optional>
#include <string>

namespace {

using cove::tool::ServeArgs;

void add_serve_options(CLI::App& app, ServeArgs& a) {
  app.add_option("--config", a.config, "TOML configuration file (docs/staging.md)")->check(CLI::ExistingFile);
  app.add_option("--connection-file", a.connection_file, "where rank 0 writes the servers' addresses (cove.conn)");
  app.add_option("--transport", a.transport,
                 "'tcp': this host over Unix-domain sockets, other hosts over TCP (default); 'ucx': other hosts "
                 "over UCX (RDMA fabrics); 'local': this host only");
  app.add_option("--listen", a.listen,
                 "interface or IP address TCP or UCX listens on (default: loopback only, no other host can connect)");
  app.add_option("--memory-budget", a.memory_budget, "bytes of array data held, e.g. 8GiB (0: no limit)");
  app.add_option("--pool-reserve", a.pool_reserve,
                 "piece memory made and faulted in ahead of use, off the puts' path, e.g. 2GiB (0: none)");
  app.add_option("--max-versions", a.max_versions, "versions kept per variable (0: all)")->check(CLI::Range(0, 1 << 20));
  app.add_option("--replicas", a.replicas, "copies of each piece in a group: 1, or 2 (survives one server's death)")
      ->check(CLI::Range(1, 2));
  app.add_option("--workers", a.workers, "request-handling threads")->check(CLI::Range(1, 1024));
  app.add_option("--worker-slots", a.worker_slots, "consumer worker slots (cove worker), default 4")
      ->check(CLI::Range(0, 4096));
  app.add_option("--placement-window-ms", a.placement_window_ms,
                 "placement: Place requests within this many ms are placed together, longest EET first (0..1000, "
                 "default 0: each at once)")
      ->check(CLI::Range(0, 1000));
  app.add_option("--log-level", a.log_level, "error, warn, info or debug (default info)")
      ->check(CLI::IsMember({"error", "warn", "info", "debug"}));
  app.add_option("--log-file", a.log_file, "append the log to this file (default stderr)");
  app.add_option("--reorg", a.reorg, "where layouts are reorganized: rad, rasar, rasia or sahr")
      ->check(CLI::IsMember({"rad", "rasar", "rasia", "sahr"}));
  app.add_option("--layouts", a.layouts, "layouts RASIA prepares, e.g. F,P2,0,1 (default C,F)");
  app.add_option("--reorg-threads", a.reorg_threads, "threads building replicas")->check(CLI::Range(1, 64));
  app.add_option("--max-message-bytes", a.max_message_bytes, "the largest request accepted, e.g. 4MiB");
  app.add_flag("--allow-run-as-root", a.allow_root, "serve even as root (refused otherwise)");
}

// CLI11's parse; --help exits 0, bad usage 2 (CLI11's own codes vary).
std::optional<int> parse(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
}

cove::Client connect(const std::string& target) {
  cove::ConnectOptions co;
  co.timeout_ms = 5000;
  return cove::Client::connect(target, co);
}

int run(int argc, char** argv) {
  const std::string self = argv[0];
  ServeArgs serve_args;
  if (self.size() >= 11 && self.compare(self.size() - 11, 11, "cove-server") == 0) {
    CLI::App app{"cove-server: a Cove staging server (under mpiexec, a group of them)", "cove-server"};
    add_serve_options(app, serve_args);
    if (auto done = parse(app, argc, argv)) return *done;
    return cove::tool::serve(serve_args);
  }

  CLI::App app{"cove: run a Cove staging server and look at a running one", "cove"};
  app.require_subcommand(1);
  CLI::App* serve = app.add_subcommand("serve", "run a staging server (under mpiexec, a group of them)");
  add_serve_options(*serve, serve_args);

  std::string target;
  bool json = false;
  double interval = 1.0;
  int count = 0;
  auto add_connect = [&](CLI::App* sub) {
    sub->add_option("--connect", target, "connection file or address (default: $COVE_CONNECT)");
  };
  CLI::App* ls = app.add_subcommand("ls", "variables, versions and pieces, and who holds them");
  CLI::App* stat = app.add_subcommand("stat", "each server's memory, objects, requests and bytes moved");
  CLI::App* top = app.add_subcommand("top", "each server's figures, refreshed");
  CLI::App* stop = app.add_subcommand("stop", "shut the service down");
  CLI::App* undefine = app.add_subcommand("undefine", "remove a variable and everything it holds");
  std::string var;
  undefine->add_option("NAME", var, "the variable")->required();
  CLI::App* graph = app.add_subcommand("graph", "check a dataflow graph (JSON or TOML) and show its affinity groups");
  std::string graph_file;
  int nodes = 1, imbalance = 30;
  graph->add_option("FILE", graph_file, "the graph (.json or .toml)")->required();
  graph->add_option("--nodes", nodes, "staging nodes: METIS parts")->required()->check(CLI::Range(1, 1 << 20));
  graph->add_option("--imbalance", imbalance, "METIS ufactor: allowed imbalance in 1/1000 (default 30)");
  graph->add_flag("--json", json, "print JSON for scripts");
  CLI::App* worker = app.add_subcommand("worker", "run a dataflow graph's tasks next to one server (docs/placement.md)");
  cove::tool::WorkerArgs wa;
  worker->add_option("GRAPH", wa.graph, "the consumer's dataflow graph (.json or .toml)")->required()->check(CLI::ExistingFile);
  worker->add_option("--server", wa.server, "the server (index in the group) whose worker this is")->required();
  worker->add_option("--name", wa.name, "the worker's name (default worker-<server>)");
  worker->add_option("--run", wa.run, "names this run's task outputs (default 'run')");
  worker->add_option("--steps", wa.steps, "steps: the objects' versions go up by one each")->check(CLI::Range(1, 1 << 20));
  worker->add_option("--per-server", wa.per_server, "workers each server has in this run (default 1)")->check(CLI::Range(1, 4096));
  worker->add_option("--timeout-ms", wa.timeout_ms, "the longest wait for data, other workers and task outputs")
      ->check(CLI::Range(1, 86400000));
  worker->add_option("--cost-scale", wa.cost_scale, "a task works cost x this seconds")->check(CLI::Range(0.0, 1e6));
  worker->add_flag("--newest", wa.newest, "analyse the newest step the producer announced whenever free, not every step");
  worker->add_option("--plan-by", wa.plan_by,
                     "with --newest, the newest step wholly written (written, default: cove.written.<run>) "
                     "or begun (begun: cove.begun.<run>, its first block written)")
      ->check(CLI::IsMember({"written", "begun"}));
  worker->add_option("--work", wa.work,
                     "a task's work: busy (default; workers compete for the cores) or sleep (each worker an "
                     "emulated staging core of its own)")
      ->check(CLI::IsMember({"busy", "sleep"}));
  worker->add_option("--monitor", wa.monitor,
                     "how server 0's task monitor learns task times: events (each task reports its time, default) "
                     "or reads (the interval between this worker's consecutive reads, as in the paper)")
      ->check(CLI::IsMember({"events", "reads"}));
  worker->add_flag("--verify", wa.verify, "check every object read against the producer's pattern");
  worker->add_flag("--json", wa.json, "print the summary as JSON");
  for (CLI::App* sub : {ls, stat, top, stop, undefine, worker}) add_connect(sub);
  for (CLI::App* sub : {ls, stat}) sub->add_flag("--json", json, "print JSON for scripts");
  top->add_option("--interval", interval, "seconds between refreshes")->check(CLI::Range(0.05, 3600.0));
  int placements = 0, top_placements = 5;
  CLI::Option* stat_placements =
      stat->add_option("--placements", placements, "also the newest N placement decisions of server 0 (default 16)")
          ->expected(0, 1)
          ->check(CLI::Range(1, 1024));
  top->add_option("--placements", top_placements, "show the newest N placement decisions (default 5, 0: none)")
      ->check(CLI::Range(0, 1024));
  top->add_option("--count", count, "stop after this many refreshes (0: until interrupted)")->check(CLI::NonNegativeNumber);
  if (auto done = parse(app, argc, argv)) return *done;

  if (serve->parsed()) return cove::tool::serve(serve_args);
  if (graph->parsed()) return cove::tool::graph(graph_file, nodes, imbalance, json);
  cove::Client client = connect(target);
  if (ls->parsed()) return cove::tool::ls(client, json);
  if (stat->parsed()) {
    if (stat_placements->count() > 0 && placements == 0) placements = 16;  // --placements without N
    return cove::tool::stat(client, json, placements);
  }
  if (top->parsed()) return cove::tool::top(client, interval, count, top_placements);
  if (worker->parsed()) return cove::tool::worker(client, wa);
  if (undefine->parsed()) {
    const std::size_t n = client.undefine(var);
    fmt::print("undefined '{}': {} pieces dropped\n", cove::tool::printable(var), n);
    return 0;
  }
  client.stop_server();
  fmt::print("server stopped\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const cove::Error& e) {
    fmt::print(stderr, "cove: {}\n", cove::tool::printable(e.what()));
    return 1;
  }
}
