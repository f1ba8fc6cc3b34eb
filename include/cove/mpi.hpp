// Connecting every rank of an MPI communicator to a Cove server group.
//
// Header-only, so that libcove itself does not depend on MPI: include it
// in a program that links MPI.
//
// cove::connect(comm, target): collective over `comm`. Rank 0 resolves the
// target (reads the connection file, waiting as Client::connect does) and
// broadcasts the server addresses and the group's secret (within `comm`
// only); every rank then connects, taking a member that does not answer
// within 2 s for dead as a connect through the file would (see
// ConnectOptions::group_started). All ranks get the same outcome: if
// rank 0 fails, every rank throws the same Error.
#pragma once

#include <cove/client.hpp>
#include <cove/error.hpp>

#include <mpi.h>

#include <string>

namespace cove {

inline Client connect(MPI_Comm comm, const std::string& target = "", const ConnectOptions& options = {}) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int code = 0;
  std::string text;  // the addresses, or the error message
  ConnectOptions o = options;
  if (rank == 0) {
    try {
      ConnectTarget t = Client::resolve_target(target, options.timeout_ms);
      for (const auto& a : t.servers) text += (text.empty() ? "" : ",") + a;
      if (o.secret.empty()) o.secret = std::move(t.secret);
      o.group_started = o.group_started || t.from_file;
    } catch (const Error& e) {
      code = static_cast<int>(e.code());
      text = e.what();
    }
  }
  const auto broadcast = [comm](std::string& s) {
    int len = static_cast<int>(s.size());
    MPI_Bcast(&len, 1, MPI_INT, 0, comm);
    s.resize(static_cast<std::size_t>(len));
    MPI_Bcast(s.data(), len, MPI_CHAR, 0, comm);
  };
  int started = o.group_started ? 1 : 0;
  MPI_Bcast(&code, 1, MPI_INT, 0, comm);
  MPI_Bcast(&started, 1, MPI_INT, 0, comm);
  o.group_started = started != 0;
  broadcast(text);
  broadcast(o.secret);
  if (code != 0) throw Error(static_cast<Code>(code), text);
  return Client::connect(text, o);
}

}  // namespace cove
