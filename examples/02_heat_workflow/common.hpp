// Shared by the heat-diffusion demo's two programs.
#pragma once

#include <cove/box.hpp>

#include <CLI/CLI.hpp>
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <optional>

namespace demo {

constexpr const char* kField = "heat/temperature";
constexpr const char* kChecksum = "heat/checksum";  // metadata: the simulation's own checksum per step

// An order-independent, exact checksum: the sum over elements of a hash of
// (global index, bits of the value), wrapping mod 2^64. Both programs compute
// it over their own blocks and add the parts up, whatever the decomposition.
inline std::uint64_t element_hash(std::uint64_t global_index, double value) {
  std::uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  std::uint64_t x = bits ^ (global_index * 0x9E3779B97F4A7C15ull);
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return x;
}

// Parses the command line on every rank; on --help or bad usage returns the
// exit status (0 or 2), with the message printed by rank 0 only.
inline std::optional<int> parse_args(CLI::App& app, int argc, char** argv, int rank) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    if (rank == 0) return app.exit(e) == 0 ? 0 : 2;
    return e.get_exit_code() == 0 ? 0 : 2;
  }
}

struct StepSummary {
  std::uint64_t checksum;
  double sum, min, max;
};

}  // namespace demo
