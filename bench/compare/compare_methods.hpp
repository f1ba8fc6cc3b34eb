// Factories of the methods the comparison benchmark's programs contain.
#pragma once

#include "exchange_runner.hpp"

#include <memory>

namespace cove::bench {

// Cove through staging servers (put, get), or direct (put_local, get).
std::unique_ptr<Method> make_cove_method(bool direct);
// One C++ standard-I/O binary file per writer process, reassembled by the
// readers; `cold`: fsync after writing and the page cache dropped for the
// files before reading.
std::unique_ptr<Method> make_binary_file_method(bool cold);
// Point-to-point MPI sends of bounding-box intersections, writers and
// readers in one MPMD job.
std::unique_ptr<Method> make_mpi_redistribution_method();

}  // namespace cove::bench
