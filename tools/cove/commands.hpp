// The subcommands of the `cove` command (main.cpp parses the command line
// with CLI11 and calls one of these). Each returns the process's exit
// status; errors are thrown as cove::Error and printed by main.
#pragma once

#include <cove/client.hpp>
#include <cove/server.hpp>

#include "common/printable.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace cove::tool {

// `cove serve` / `cove-server`.
struct ServeArgs {
  std::string config;           // a TOML file (docs/staging.md); "" for none
  std::string connection_file;  // overrides the config's
  std::string transport, listen, memory_budget, pool_reserve, max_message_bytes, reorg, layouts, log_level, log_file;
  int max_versions = -1, workers = -1, reorg_threads = -1, replicas = -1, worker_slots = -1;  // -1: the config's
  int placement_window_ms = -1;  // -1: the config's
  bool allow_root = false;
};
int serve(const ServeArgs& args);

// `cove ls`, `cove stat`, `cove top`: the client is connected.
int ls(Client& client, bool json);
// placements > 0: also the newest that many placement decisions of server 0.
int stat(Client& client, bool json, int placements = 0);
// Redraws every `interval_s` seconds; stops after `count` frames (0: until
// interrupted). On a terminal the screen is cleared before each frame.
// Below the table, the newest `placements` decisions of server 0 (0: none).
int top(Client& client, double interval_s, int count, int placements = 5);

// One placement decision on one line (cove stat --placements, cove top).
std::string placement_line(const PlacementDecision& d);

// `cove graph`: validates a dataflow graph file and prints its METIS
// affinity groups for `nodes` staging nodes (docs/placement.md).
int graph(const std::string& path, int nodes, int imbalance, bool json);

// `cove worker`: an in-staging consumer worker of one server, running the
// tasks of a dataflow graph whose inputs are placed there (worker.cpp).
struct WorkerArgs {
  std::string graph;           // .json or .toml
  int server = 0;              // index into the group
  std::string name;            // "" -> worker-<server>
  std::string run = "run";     // names the task outputs of this run
  int steps = 1;               // objects' versions: version, version + 1, ...
  int per_server = 1;          // workers each server must have
  std::int64_t timeout_ms = 30000;
  double cost_scale = 1.0;     // tasks work cost x scale seconds
  bool verify = false;         // check the producer's pattern in every object read
  bool newest = false;         // analyse the newest step written when free (worker 0 of server 0 plans)
  std::string plan_by = "written";  // --newest: the newest step "written" (wholly) or "begun"
  std::string work = "busy";   // a task's work: "busy" (a core's) or "sleep" (an emulated staging core)
  std::string monitor = "events";  // task times: "events" (task_done per task) or "reads" (read intervals)
  bool json = false;
};
int worker(Client& client, const WorkerArgs& args);

// Names and messages for a terminal (common/printable.hpp).
using common::printable;

// "1.5 MiB"
std::string human_bytes(double bytes);
inline std::string human_bytes(std::uint64_t bytes) { return human_bytes(static_cast<double>(bytes)); }

}  // namespace cove::tool
