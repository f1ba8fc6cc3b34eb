// The log writes every message escaped: a name holding terminal escapes or
// a newline cannot rewrite a reader's terminal or fake a line of the log.
#include "common/log.hpp"
#include "common/printable.hpp"

#include <cove/log.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

TEST(Log, PrintableEscapesWhatATerminalWouldObey) {
  EXPECT_EQ(cove::common::printable("plain name_1.x"), "plain name_1.x");
  EXPECT_EQ(cove::common::printable("a\\b"), "a\\\\b");
  EXPECT_EQ(cove::common::printable("\x1b]0;pwned\x07\n\xff"), "\\x1b]0;pwned\\x07\\x0a\\xff");
}

TEST(Log, MessagesAreWrittenEscaped) {
  const auto file = std::filesystem::temp_directory_path() / ("cove-log-test-" + std::to_string(::getpid()));
  std::filesystem::remove(file);
  cove::log::configure("info", file.string());
  cove::log::warn("'{}' undefined", "evil\x1b[2J\n[2026-01-01] [cove 1] [error] fake");
  cove::log::logger()->flush();
  cove::log::configure("warn");  // back to stderr; the file is closed
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  std::filesystem::remove(file);
  const std::string log = text.str();
  EXPECT_NE(log.find("'evil\\x1b[2J\\x0a[2026-01-01] [cove 1] [error] fake' undefined"), std::string::npos) << log;
  EXPECT_EQ(log.find('\x1b'), std::string::npos);
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 1);  // one entry, one line
}

// A program's sink (the Python package's route into logging) receives
// each line that passes the level, escaped and without the prefix, with
// its level; configure() keeps it; an empty sink goes back to stderr.
TEST(Log, ASinkReceivesTheLinesInsteadOfStderr) {
  std::vector<std::pair<cove::LogLevel, std::string>> got;
  cove::set_log_sink([&](cove::LogLevel level, std::string_view line) { got.emplace_back(level, line); });
  cove::log::configure("info");
  cove::log::info("one {}", 1);
  cove::log::debug("not at info");
  cove::log::error("two\n{}", "lines");
  cove::set_log_sink({});
  cove::log::warn("to stderr again");
  cove::log::configure("warn");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], std::make_pair(cove::LogLevel::info, std::string("one 1")));
  EXPECT_EQ(got[1], std::make_pair(cove::LogLevel::error, std::string("two\\x0alines")));
  // A sink that throws loses its line, nothing more.
  cove::set_log_sink([](cove::LogLevel, std::string_view) { throw 1; });
  cove::log::error("lost");
  cove::set_log_sink({});
}

}  // namespace
