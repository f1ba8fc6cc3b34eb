// Connecting every rank of an MPI communicator to a Cove server group.
//
// Header-only, so that libcove itself does not depend on MPI: include it
// in a program that links MPI.
//
// cove::connect(comm, target): collective over `comm`. Rank 0 resolves the
// target (reads the connection file, waiting as Client::connect does) and
// broadcasts the server addresses; every rank then connects. All ranks get
// the same outcome: if rank 0 fails, every rank throws the same Error.
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
  if (rank == 0) {
    try {
      for (const auto& a : Client::resolve(target, options.timeout_ms)) text += (text.empty() ? "" : ",") + a;
    } catch (const Error& e) {
      code = static_cast<int>(e.code());
      text = e.what();
    }
  }
  int len = static_cast<int>(text.size());
  MPI_Bcast(&code, 1, MPI_INT, 0, comm);
  MPI_Bcast(&len, 1, MPI_INT, 0, comm);
  text.resize(static_cast<std::size_t>(len));
  MPI_Bcast(text.data(), len, MPI_CHAR, 0, comm);
  if (code != 0) throw Error(static_cast<Code>(code), text);
  return Client::connect(text, options);
}

}  // namespace cove
