// Sizes given to a server, in flags and in its configuration file: a sign,
// a fraction or a value out of range is refused, naming the accepted range.
#include "common/config.hpp"

#include <cove/server.hpp>

#include <gtest/gtest.h>

#include "expect_error.hpp"

#include <cstdio>
#include <string>
#include <unistd.h>

namespace {

using cove::Code;
using cove_test::expect_error;
namespace common = cove::common;

TEST(Config, SizesWithUnits) {
  EXPECT_EQ(common::parse_memory_budget("0", "--memory-budget"), 0u);
  EXPECT_EQ(common::parse_memory_budget("512MiB", "--memory-budget"), 512ull << 20);
  EXPECT_EQ(common::parse_memory_budget("8GiB", "--memory-budget"), 8ull << 30);
  EXPECT_EQ(common::parse_memory_budget("1024TiB", "--memory-budget"), common::kMaxMemoryBudget);
  EXPECT_EQ(common::parse_message_bytes("4MiB", "--max-message-bytes"), 4u << 20);
}

TEST(Config, NegativeAndAbsurdSizesAreRefusedWithTheRange) {
  const std::string range = "0..1125899906842624 bytes";
  for (const char* bad : {"-1", "-5", " 5", "+5", "-0"})
    expect_error(Code::InvalidArgument, range, [&] { common::parse_memory_budget(bad, "--memory-budget"); });
  expect_error(Code::InvalidArgument, "'2PiB' has unit 'PiB'", [] { common::parse_memory_budget("2PiB", "--memory-budget"); });
  expect_error(Code::InvalidArgument, "'1025TiB' is out of range: accepted are " + range,
               [] { common::parse_memory_budget("1025TiB", "--memory-budget"); });
  expect_error(Code::InvalidArgument, "out of range",
               [] { common::parse_memory_budget("99999999999999999999999", "--memory-budget"); });
  expect_error(Code::InvalidArgument, "out of range", [] { common::parse_memory_budget("16777216TiB", "--memory-budget"); });
  expect_error(Code::InvalidArgument, "1024..1073741824 bytes",
               [] { common::parse_message_bytes("100", "--max-message-bytes"); });
  expect_error(Code::InvalidArgument, "1024..1073741824 bytes",
               [] { common::parse_message_bytes("2GiB", "--max-message-bytes"); });
  // The same through the library's own options.
  cove::ServerOptions o;
  o.memory_budget = static_cast<std::uint64_t>(-5);
  expect_error(Code::InvalidArgument, "ServerOptions.memory_budget", [&] { cove::Server s(o); });
  o.memory_budget = 0;
  o.max_message_bytes = 10;
  expect_error(Code::InvalidArgument, "ServerOptions.max_message_bytes", [&] { cove::Server s(o); });
}

class ConfigFile : public ::testing::Test {
 protected:
  std::string path = ::testing::TempDir() + "cove-config-" + std::to_string(::getpid()) + ".toml";
  void TearDown() override { std::remove(path.c_str()); }
  common::ServerConfig load(const std::string& text) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    std::fputs(text.c_str(), f);
    std::fclose(f);
    return common::load_server_config(path);
  }
};

TEST_F(ConfigFile, SizesAreCheckedAsStringsAndIntegers) {
  EXPECT_EQ(load("[server]\nmemory_budget = \"2GiB\"\n").options.memory_budget, 2ull << 30);
  EXPECT_EQ(load("[server]\nmemory_budget = 4096\nmax_message_bytes = 2048\n").options.max_message_bytes, 2048u);
  expect_error(Code::InvalidArgument, "server.memory_budget = '-5' is not a size",
               [&] { load("[server]\nmemory_budget = \"-5\"\n"); });
  expect_error(Code::InvalidArgument, "server.memory_budget = -5 is out of range",
               [&] { load("[server]\nmemory_budget = -5\n"); });
  expect_error(Code::InvalidArgument, "server.memory_budget must be an integer of bytes",
               [&] { load("[server]\nmemory_budget = 1.5e9\n"); });
  expect_error(Code::InvalidArgument, "server.max_message_bytes = 12 is out of range: accepted are 1024..",
               [&] { load("[server]\nmax_message_bytes = 12\n"); });
  EXPECT_EQ(load("[server]\n").options.pool_reserve, 0u);
  EXPECT_EQ(load("[server]\npool_reserve = \"3GiB\"\n").options.pool_reserve, 3ull << 30);
  expect_error(Code::InvalidArgument, "server.pool_reserve = '-1GiB' is not a size",
               [&] { load("[server]\npool_reserve = \"-1GiB\"\n"); });
}

TEST_F(ConfigFile, ADirectoryIsNotAConfiguration) {
  expect_error(Code::InvalidArgument, "is not a regular file", [&] { common::load_server_config(::testing::TempDir()); });
}

}  // namespace

TEST_F(ConfigFile, WorkerSlotsAndPlacementPolicies) {
  const auto c = load("[server]\nworker_slots = 3\nplacement = \"time\"\n"
                      "placement_variables = { rho = \"hybrid\", \"amr.x\" = \"rr-blocking\" }\n");
  EXPECT_EQ(c.options.worker_slots, 3);
  EXPECT_EQ(c.options.placement, "time");
  EXPECT_EQ(c.options.placement_variables.at("rho"), "hybrid");
  EXPECT_EQ(c.options.placement_variables.at("amr.x"), "rr-blocking");
  expect_error(Code::InvalidArgument, "server.worker_slots must be an integer in 0..4096",
               [&] { load("[server]\nworker_slots = 5000\n"); });
  EXPECT_EQ(c.options.placement_window_ms, 0);
  EXPECT_EQ(load("[server]\nplacement_window_ms = 250\n").options.placement_window_ms, 250);
  expect_error(Code::InvalidArgument, "server.placement_window_ms must be an integer in 0..1000 (ms)",
               [&] { load("[server]\nplacement_window_ms = 1001\n"); });
  expect_error(Code::InvalidArgument, "server.placement_window_ms must be an integer in 0..1000 (ms)",
               [&] { load("[server]\nplacement_window_ms = -1\n"); });
  expect_error(Code::InvalidArgument, "server.placement_variables.rho must be a string",
               [&] { load("[server]\nplacement_variables = { rho = 3 }\n"); });
  // Policy names are the server's to check: it refuses to start, naming the variable.
  cove::ServerOptions o;
  o.placement_variables["rho"] = "fastest";
  expect_error(Code::InvalidArgument, "placement_variables['rho']: placement policy 'fastest'",
               [&] { cove::Server s(o); });
  o.placement_variables.clear();
  o.worker_slots = -1;
  expect_error(Code::InvalidArgument, "ServerOptions.worker_slots", [&] { cove::Server s(o); });
  o.worker_slots = 2;
  o.placement_window_ms = 1001;
  expect_error(Code::InvalidArgument, "ServerOptions.placement_window_ms = 1001 must be 0..1000",
               [&] { cove::Server s(o); });
}
