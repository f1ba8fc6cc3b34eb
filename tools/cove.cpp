// The `cove` command: run a staging server and look at a running one.
//
//   cove serve [--config FILE] [--connection-file PATH] [--memory-budget SIZE]
//              [--max-versions N] [--workers N] [--log-level LEVEL]
//              [--reorg rad|rasar|rasia|sahr] [--layouts L1,L2,...] [--reorg-threads N]
//   cove ls    [--connect TARGET]     variables, versions, pieces, bytes
//   cove stat  [--connect TARGET]     memory, objects, requests, bytes moved
//   cove stop  [--connect TARGET]     shut the server down
//
// `cove-server` is `cove serve`. TARGET is a connection file or an address;
// without --connect, COVE_CONNECT is used. Exit status: 0 on success, 1 on
// an error (printed as "cove: <code>: <message>"), 2 on bad usage.
#include <cove/client.hpp>
#include <cove/error.hpp>
#include <cove/server.hpp>

#include "common/auth.hpp"
#include "common/config.hpp"
#include "common/connection_file.hpp"

#ifdef COVE_HAVE_MPI
#include <mpi.h>
#endif

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <pthread.h>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "cove: %s\n"
               "usage: cove serve [--config FILE] [--connection-file PATH] [--memory-budget SIZE]\n"
               "                  [--max-versions N] [--workers N] [--log-level LEVEL]\n"
               "                  [--reorg rad|rasar|rasia|sahr] [--layouts L1,L2,...] [--reorg-threads N]\n"
               "       cove ls|stat|stop [--connect CONNECTION_FILE_OR_ADDRESS]\n",
               why);
  std::exit(2);
}

// --key value pairs after the subcommand.
std::map<std::string, std::string> parse_flags(int argc, char** argv, int first,
                                               const std::vector<std::string>& allowed) {
  std::map<std::string, std::string> flags;
  for (int i = first; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--", 0) != 0 || i + 1 >= argc) usage(("unexpected argument '" + a + "'").c_str());
    const std::string key = a.substr(2);
    bool known = false;
    for (const auto& k : allowed) known |= k == key;
    if (!known) usage(("unknown option '" + a + "'").c_str());
    flags[key] = argv[++i];
  }
  return flags;
}

int to_int(const std::string& text, const char* what) {
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end || v < 0 || v > 1'000'000)
    throw cove::Error(cove::Code::InvalidArgument, std::string(what) + " = '" + text + "' is not a count");
  return static_cast<int>(v);
}

// Under mpiexec every rank runs a server; rank 0 writes the connection file
// with all of their addresses, and each server joins the group.
struct Group {
  int rank = 0, size = 1;
  bool mpi = false;

  Group() {
#ifdef COVE_HAVE_MPI
    if (std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") || std::getenv("PMIX_RANK")) {
      MPI_Init(nullptr, nullptr);
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      MPI_Comm_size(MPI_COMM_WORLD, &size);
      mpi = true;
    }
#endif
  }
  ~Group() {
#ifdef COVE_HAVE_MPI
    if (mpi) MPI_Finalize();
#endif
  }

  std::vector<std::string> addresses(const std::string& mine) const {
    if (size == 1) return {mine};
#ifdef COVE_HAVE_MPI
    const int len = static_cast<int>(mine.size());
    std::vector<int> lens(size), offsets(size);
    MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, MPI_COMM_WORLD);
    int total = 0;
    for (int i = 0; i < size; ++i) {
      offsets[i] = total;
      total += lens[i];
    }
    std::string all(static_cast<std::size_t>(total), '\0');
    MPI_Allgatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), offsets.data(), MPI_CHAR, MPI_COMM_WORLD);
    std::vector<std::string> out;
    for (int i = 0; i < size; ++i) out.push_back(all.substr(offsets[i], lens[i]));
    return out;
#else
    return {mine};
#endif
  }
  // The group's secret: made by rank 0, known to the members only.
  std::string secret() const {
    std::string s = rank == 0 ? cove::common::random_hex(32) : std::string(64, '\0');
#ifdef COVE_HAVE_MPI
    if (mpi) MPI_Bcast(s.data(), static_cast<int>(s.size()), MPI_CHAR, 0, MPI_COMM_WORLD);
#endif
    return s;
  }
  void barrier() const {
#ifdef COVE_HAVE_MPI
    if (mpi) MPI_Barrier(MPI_COMM_WORLD);
#endif
  }
};

int serve(int argc, char** argv, int first) {
  auto flags = parse_flags(argc, argv, first,
                           {"config", "connection-file", "memory-budget", "max-versions", "workers", "log-level",
                            "reorg", "layouts", "reorg-threads"});
  cove::common::ServerConfig cfg;
  if (flags.count("config")) cfg = cove::common::load_server_config(flags["config"]);
  if (cfg.options.transport.rfind("inproc://", 0) == 0) cfg.options.transport = "ucx";  // a server process serves others
  if (flags.count("connection-file")) cfg.connection_file = flags["connection-file"];
  if (flags.count("memory-budget"))
    cfg.options.memory_budget = cove::common::parse_bytes(flags["memory-budget"], "--memory-budget");
  if (flags.count("max-versions")) cfg.options.max_versions = to_int(flags["max-versions"], "--max-versions");
  if (flags.count("workers")) cfg.options.workers = to_int(flags["workers"], "--workers");
  if (flags.count("reorg")) cfg.options.reorg = cove::parse_reorg(flags["reorg"]);
  if (flags.count("layouts")) cfg.options.layouts = cove::common::parse_layouts(flags["layouts"], "--layouts");
  if (flags.count("reorg-threads")) cfg.options.reorg_threads = to_int(flags["reorg-threads"], "--reorg-threads");
  if (flags.count("log-level")) {
    cove::common::validate_log_level(flags["log-level"]);
    cfg.log_level = flags["log-level"];
  }
  // SIGTERM and SIGINT are taken by one thread (sigwait), so that no server
  // thread is interrupted and shutdown runs in ordinary code.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  Group group;
  cove::Server server(cfg.options);
  const auto addresses = group.addresses(server.address());
  server.join_group(addresses, group.rank, group.secret());
  group.barrier();  // every member knows the group before any client can
  if (group.rank == 0) cove::common::write_connection_file(cfg.connection_file, addresses);
  if (cfg.log_level != "error" && cfg.log_level != "warn")
    std::fprintf(stderr, "cove-server %d: serving as %d of %d; connection file %s\n", static_cast<int>(::getpid()),
                 group.rank, group.size, cfg.connection_file.c_str());
  std::thread signals([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    if (sig != 0) server.stop();
  });
  server.wait();
  if (group.rank == 0) ::unlink(cfg.connection_file.c_str());
  // Wake the signal thread if the server stopped for another reason (cove stop).
  pthread_kill(signals.native_handle(), SIGTERM);
  signals.join();
  if (cfg.log_level == "info" || cfg.log_level == "debug")
    std::fprintf(stderr, "cove-server %d: stopped\n", static_cast<int>(::getpid()));
  return 0;
}

std::string human_bytes(std::uint64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u ? "%.1f %s" : "%.0f %s", v, units[u]);
  return buf;
}

int ls(cove::Client& c) {
  const auto servers = c.servers();
  auto name_of = [&](const std::string& holder) {
    for (std::size_t i = 0; i < servers.size(); ++i)
      if (servers[i] == holder) return "server " + std::to_string(i);
    return std::string("writer ") + holder.substr(0, 16) + "...";
  };
  const auto vars = c.list();
  if (vars.empty()) std::printf("(no variables)\n");
  for (const auto& v : vars) {
    std::string reorg = v.reorg ? cove::reorg_name(*v.reorg) : "(server's)";
    for (std::size_t i = 0; i < v.layouts.size(); ++i) reorg += (i ? "," : " layouts ") + v.layouts[i].to_string();
    std::printf("%s  %s  ndim %d  shape %s  reorg %s\n", v.name.c_str(), v.dtype.name().c_str(), v.ndim,
                v.shape ? v.shape->to_string().c_str() : "(none)", reorg.c_str());
    for (const auto& ver : v.versions) {
      struct Held {
        std::size_t pieces = 0, replicas = 0;
        std::uint64_t bytes = 0, replica_bytes = 0;
      };
      std::map<std::string, Held> by_holder;
      for (const auto& p : ver.pieces) {
        auto& h = by_holder[name_of(p.holder)];
        h.pieces++;
        h.bytes += p.bytes;
        for (const auto& r : p.replicas) {
          h.replicas++;
          h.replica_bytes += r.bytes;
        }
      }
      std::printf("  version %llu: %zu pieces\n", static_cast<unsigned long long>(ver.version), ver.pieces.size());
      for (const auto& [holder, h] : by_holder) {
        std::printf("    %-28s %4zu pieces  %s", holder.c_str(), h.pieces, human_bytes(h.bytes).c_str());
        if (h.replicas) std::printf("  + %zu replicas  %s", h.replicas, human_bytes(h.replica_bytes).c_str());
        std::printf("\n");
      }
    }
  }
  return 0;
}

int stat(cove::Client& c) {
  int i = 0;
  std::printf("%-8s %9s %8s %8s %12s %12s %12s %10s %12s %8s %12s %7s\n", "server", "variables", "versions",
              "pieces", "memory", "budget", "writers'", "requests", "bytes put", "replicas", "replica mem", "reorg");
  const auto all = c.stat_each();
  for (const auto& [address, s] : all)
    std::printf("%-8d %9llu %8llu %8llu %12s %12s %12s %10llu %12s %8llu %12s %7s\n", i++,
                (unsigned long long)s.variables, (unsigned long long)s.versions, (unsigned long long)s.pieces,
                human_bytes(s.owned_bytes).c_str(), s.memory_budget ? human_bytes(s.memory_budget).c_str() : "unlimited",
                human_bytes(s.local_bytes).c_str(), (unsigned long long)s.requests, human_bytes(s.bytes_in).c_str(),
                (unsigned long long)s.replicas, human_bytes(s.replica_bytes).c_str(), cove::reorg_name(s.reorg));
  if (!all.empty()) {
    const cove::ServerStats& s = all.front().second;
    std::string layouts;
    for (const auto& l : s.layouts) layouts += (layouts.empty() ? "" : ",") + l.to_string();
    std::uint64_t built = 0, answers = 0;
    for (const auto& [address, t] : all) {
      built += t.reorganizations;
      answers += t.replica_answers;
    }
    std::printf("reorganization: %s (expected layouts %s); built %llu replicas, answered %llu pieces from them, "
                "%llu access patterns\n",
                cove::reorg_name(s.reorg), layouts.empty() ? "C,F" : layouts.c_str(), (unsigned long long)built,
                (unsigned long long)answers, (unsigned long long)s.patterns);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string self = argv[0];
    if (self.size() >= 11 && self.compare(self.size() - 11, 11, "cove-server") == 0) return serve(argc, argv, 1);
    if (argc < 2) usage("no command given");
    const std::string cmd = argv[1];
    if (cmd == "serve") return serve(argc, argv, 2);
    if (cmd != "ls" && cmd != "stat" && cmd != "stop") usage(("unknown command '" + cmd + "'").c_str());
    auto flags = parse_flags(argc, argv, 2, {"connect"});
    cove::ConnectOptions co;
    co.timeout_ms = 5000;
    cove::Client c = cove::Client::connect(flags.count("connect") ? flags["connect"] : "", co);
    if (cmd == "ls") return ls(c);
    if (cmd == "stat") return stat(c);
    c.stop_server();
    std::printf("server stopped\n");
    return 0;
  } catch (const cove::Error& e) {
    std::fprintf(stderr, "cove: %s\n", e.what());
    return 1;
  }
}
