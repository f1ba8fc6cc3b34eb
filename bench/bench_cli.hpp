// Command-line parsing shared by the benchmark programs (CLI11). Under MPI
// every rank parses; only rank 0 prints help or the usage error.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>

namespace cove::bench {

// nullopt: parsed, go on. Otherwise the exit status: 0 after --help, 2 on bad usage.
inline std::optional<int> parse_args(CLI::App& app, int argc, char** argv, int rank = 0) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    if (rank == 0) return app.exit(e) == 0 ? 0 : 2;
    return e.get_exit_code() == 0 ? 0 : 2;
  }
}

}  // namespace cove::bench
