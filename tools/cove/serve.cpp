// `cove serve` (and `cove-server`): one staging server, or under mpiexec a
// group of them. Rank 0 writes the connection file with every member's
// address once all have joined the group.
#include "commands.hpp"

#include "common/auth.hpp"
#include "common/config.hpp"
#include "common/connection_file.hpp"
#include "common/log.hpp"

#include <cove/client.hpp>
#include <cove/error.hpp>

#ifdef COVE_HAVE_MPI
#include <mpi.h>
#endif

#include <csignal>
#include <cstdlib>
#include <pthread.h>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace cove::tool {
namespace {

// Under mpiexec every rank runs a server; rank 0 writes the connection file
// with all of their addresses, and each server joins the group.
struct Group {
  int rank = 0, size = 1;
  bool mpi = false;
  // MPI_Finalize can wait for ever for a rank that died (over TCP, for one
  // whose host vanished): a server that found a member dead leaves without it.
  bool finalize = true;

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
    if (mpi && finalize) MPI_Finalize();
#endif
  }
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;

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
    std::string s = rank == 0 ? common::random_hex(32) : std::string(64, '\0');
#ifdef COVE_HAVE_MPI
    if (mpi) MPI_Bcast(s.data(), static_cast<int>(s.size()), MPI_CHAR, 0, MPI_COMM_WORLD);
#endif
    return s;
  }
  // Whether every member got this far (a member that failed to start
  // reports 0, and all of them stop instead of waiting for it).
  bool all(bool ok) const {
    int mine = ok ? 1 : 0, every = mine;
#ifdef COVE_HAVE_MPI
    if (mpi) MPI_Allreduce(&mine, &every, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
#endif
    return every == 1;
  }
};

common::ServerConfig configure(const ServeArgs& a) {
  common::ServerConfig cfg;
  if (!a.config.empty()) cfg = common::load_server_config(a.config);
  // A server process serves other processes: "inproc" (the library's
  // default) makes no sense here.
  if (cfg.options.transport.rfind("inproc://", 0) == 0) cfg.options.transport = "tcp";
  if (!a.transport.empty()) {
    if (a.transport != "ucx" && a.transport != "tcp" && a.transport != "local")
      throw Error(Code::InvalidArgument, "--transport '" + a.transport + "': expected 'tcp', 'ucx' or 'local'");
    cfg.options.transport = a.transport;
  }
  if (!a.listen.empty()) cfg.options.listen = a.listen;
  if (!a.connection_file.empty()) cfg.connection_file = a.connection_file;
  if (!a.memory_budget.empty()) cfg.options.memory_budget = common::parse_memory_budget(a.memory_budget, "--memory-budget");
  if (!a.max_message_bytes.empty())
    cfg.options.max_message_bytes = common::parse_message_bytes(a.max_message_bytes, "--max-message-bytes");
  if (!a.pool_reserve.empty()) cfg.options.pool_reserve = common::parse_memory_budget(a.pool_reserve, "--pool-reserve");
  if (a.max_versions >= 0) cfg.options.max_versions = a.max_versions;
  if (a.replicas >= 0) cfg.options.replicas = a.replicas;
  if (a.workers >= 0) cfg.options.workers = a.workers;
  if (a.worker_slots >= 0) cfg.options.worker_slots = a.worker_slots;
  if (a.placement_window_ms >= 0) cfg.options.placement_window_ms = a.placement_window_ms;
  if (!a.reorg.empty()) cfg.options.reorg = parse_reorg(a.reorg);
  if (!a.layouts.empty()) cfg.options.layouts = common::parse_layouts(a.layouts, "--layouts");
  if (a.reorg_threads >= 0) cfg.options.reorg_threads = a.reorg_threads;
  if (!a.log_level.empty()) cfg.log_level = a.log_level;
  if (!a.log_file.empty()) cfg.log_file = a.log_file;
  return cfg;
}

// Writes the group's connection file where none is, or over a stale one
// (a Cove connection file whose servers no longer answer). A file of a
// running group, and anything that is not a Cove connection file, stay.
void publish_connection_file(const std::string& path, const common::ConnectionInfo& info) {
  try {
    common::create_connection_file(path, info);
    return;
  } catch (const Error& e) {
    if (e.code() != Code::AlreadyExists) throw;
  }
  try {
    ConnectOptions probe;
    probe.timeout_ms = 500;
    Client::connect(path, probe);
  } catch (const Error& e) {
    if (e.code() != Code::Unavailable)
      throw Error(Code::AlreadyExists, "connection file " + path + " exists and is left alone: " + e.what());
    log::warn("replacing the stale connection file {} (its servers do not answer)", path);
    common::replace_connection_file(path, info);
    return;
  }
  throw Error(Code::AlreadyExists, "connection file " + path +
                                       " belongs to a running Cove group: stop it (cove stop) or give this one "
                                       "another --connection-file");
}

// Removes the group's connection file, unless another group's is there now.
void remove_connection_file(const std::string& path, const std::string& secret) {
  try {
    if (common::read_connection_file(path, 0).secret != secret) return;
  } catch (const Error&) {
    return;
  }
  ::unlink(path.c_str());
}

}  // namespace

int serve(const ServeArgs& args) {
  if (::geteuid() == 0 && !args.allow_root)
    throw Error(Code::PermissionDenied,
                "cove-server refuses to run as root: it would read and serve memory with root's rights. Run it as an "
                "ordinary user, or give --allow-run-as-root if you really mean it");
  const common::ServerConfig cfg = configure(args);
  log::configure(cfg.log_level, cfg.log_file);

  // SIGTERM and SIGINT are taken by one thread (sigwait), so that no server
  // thread is interrupted and shutdown runs in ordinary code.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  Group group;
  Server server(cfg.options);
  const auto addresses = group.addresses(server.address());
  const std::string secret = group.secret();
  server.join_group(addresses, group.rank, secret);
  // Every member knows the group before any client can, and a member whose
  // connection file cannot be written stops the others instead of leaving
  // them waiting.
  std::string why;
  if (group.rank == 0) {
    try {
      publish_connection_file(cfg.connection_file, {addresses, secret});
    } catch (const Error& e) {
      log::error("{}", e.what());
      why = e.what();
    }
  }
  if (!group.all(why.empty())) {
    server.stop();
    throw Error(Code::Unavailable, "the group did not start: " +
                                       (why.empty() ? "rank 0 could not write the connection file '" +
                                                          cfg.connection_file + "' (see its log)"
                                                    : why));
  }
  log::info("cove-server {}: serving as {} of {} at {}; connection file {}", ::getpid(), group.rank, group.size,
            server.address(), cfg.connection_file);
  std::thread signals([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    if (sig != 0) {
      log::info("cove-server {}: signal {} received", ::getpid(), sig);
      server.stop();
    }
  });
  server.wait();
  if (group.rank == 0) remove_connection_file(cfg.connection_file, secret);
  // Wake the signal thread if the server stopped for another reason (cove stop).
  pthread_kill(signals.native_handle(), SIGTERM);
  signals.join();
  const ServerStats s = server.stats();
  log::info("cove-server {}: stopped after {} requests, {} bytes in, {} bytes out", ::getpid(), s.requests,
            s.bytes_in, s.bytes_out);
  if (const std::size_t lost = server.members_lost(); lost > 0 && group.mpi) {
    log::warn("cove-server {}: {} member(s) of the group died; leaving without MPI_Finalize", ::getpid(), lost);
    group.finalize = false;
  }
  return 0;
}

}  // namespace cove::tool
