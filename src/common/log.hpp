// Internal: Cove's log, through spdlog.
//
// One logger named "cove", to stderr or to a file. Levels: error, warn,
// info, debug. A server takes its level from log_level (config) or
// --log-level and its file from log_file; in any process, COVE_LOG_LEVEL
// sets the level the log starts with (default: warn), so a client's
// dropped errors and retries can be seen with COVE_LOG_LEVEL=debug.
//
// Every message is written escaped (common/printable.hpp): a variable name
// or an address holding control characters cannot rewrite the terminal of
// someone reading the log, or fake a line of it.
//
// Thread-safety: every function may be called from any thread.
// Errors: configure() throws InvalidArgument naming a bad level or a file
// that cannot be opened.
#pragma once

#include <fmt/format.h>
#include <spdlog/logger.h>

#include <memory>
#include <string>
#include <string_view>

namespace cove::log {

// The logger in use now.
std::shared_ptr<spdlog::logger> logger();
// Sets the level ("error", "warn", "info" or "debug") and where the log
// goes ("" for stderr, else a file, appended to).
void configure(const std::string& level, const std::string& file = "");
// InvalidArgument naming `what` unless `level` is one of the four.
spdlog::level::level_enum parse_level(const std::string& level, const std::string& what);

// Writes `message`, escaped, at `level`.
void write(spdlog::level::level_enum level, std::string_view message);

template <typename... Args>
void at(spdlog::level::level_enum level, fmt::format_string<Args...> format, Args&&... args) {
  if (logger()->should_log(level)) write(level, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void error(fmt::format_string<Args...> format, Args&&... args) {
  at(spdlog::level::err, format, std::forward<Args>(args)...);
}
template <typename... Args>
void warn(fmt::format_string<Args...> format, Args&&... args) {
  at(spdlog::level::warn, format, std::forward<Args>(args)...);
}
template <typename... Args>
void info(fmt::format_string<Args...> format, Args&&... args) {
  at(spdlog::level::info, format, std::forward<Args>(args)...);
}
template <typename... Args>
void debug(fmt::format_string<Args...> format, Args&&... args) {
  at(spdlog::level::debug, format, std::forward<Args>(args)...);
}

// For catch blocks that must not let anything escape (threads, callbacks,
// destructors): logs the exception in flight with `context`.
void dropped(const char* context) noexcept;

}  // namespace cove::log
