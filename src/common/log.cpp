#include "common/log.hpp"

#include <cove/log.hpp>

#include "common/printable.hpp"
#include "core/fail.hpp"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <cstdlib>
#include <mutex>

namespace cove::log {

namespace {

std::mutex g_mutex;
std::shared_ptr<spdlog::logger> g_logger;
std::shared_ptr<const LogSink> g_sink;  // set_log_sink's, under g_mutex
std::string g_file;                     // configure()'s file, under g_mutex

LogLevel level_of(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
    case spdlog::level::debug:
      return LogLevel::debug;
    case spdlog::level::info:
      return LogLevel::info;
    case spdlog::level::warn:
      return LogLevel::warn;
    default:
      return LogLevel::error;
  }
}

// Hands each line to a program's sink (the base class serialises calls).
class FunctionSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit FunctionSink(std::shared_ptr<const LogSink> fn) : fn_(std::move(fn)) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    try {
      (*fn_)(level_of(msg.level), std::string_view(msg.payload.data(), msg.payload.size()));
    } catch (...) {
      // The program's sink failed: the line is lost, Cove goes on.
    }
  }
  void flush_() override {}

 private:
  std::shared_ptr<const LogSink> fn_;
};

// Caller holds g_mutex (it reads g_sink).
std::shared_ptr<spdlog::logger> make(spdlog::level::level_enum level, const std::string& file) {
  std::shared_ptr<spdlog::logger> l;
  if (file.empty() && g_sink) {
    l = std::make_shared<spdlog::logger>("cove", std::make_shared<FunctionSink>(g_sink));
  } else if (file.empty()) {
    l = std::make_shared<spdlog::logger>("cove", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  } else {
    try {
      l = std::make_shared<spdlog::logger>("cove", std::make_shared<spdlog::sinks::basic_file_sink_mt>(file));
    } catch (const spdlog::spdlog_ex& e) {
      detail::fail(Code::InvalidArgument, "log file '", file, "' cannot be opened: ", e.what());
    }
  }
  l->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%n %P] [%l] %v");
  l->set_level(level);
  l->flush_on(spdlog::level::warn);
  return l;
}

}  // namespace

spdlog::level::level_enum parse_level(const std::string& level, const std::string& what) {
  if (level == "error") return spdlog::level::err;
  if (level == "warn") return spdlog::level::warn;
  if (level == "info") return spdlog::level::info;
  if (level == "debug") return spdlog::level::debug;
  detail::fail(Code::InvalidArgument, what, " = '", level, "'; expected error, warn, info or debug");
}

std::shared_ptr<spdlog::logger> logger() {
  std::lock_guard lock(g_mutex);
  if (!g_logger) {
    auto level = spdlog::level::warn;
    if (const char* env = std::getenv("COVE_LOG_LEVEL"); env && *env) {
      try {
        level = parse_level(env, "COVE_LOG_LEVEL");
      } catch (const Error& e) {
        g_logger = make(spdlog::level::warn, "");
        g_logger->warn("{}; logging at warn", e.what());
        return g_logger;
      }
    }
    g_logger = make(level, "");
  }
  return g_logger;
}

void configure(const std::string& level, const std::string& file) {
  const auto parsed = parse_level(level, "log_level");
  std::lock_guard lock(g_mutex);
  g_logger = make(parsed, file);
  g_file = file;
}

void write(spdlog::level::level_enum level, std::string_view message) {
  logger()->log(level, "{}", common::printable(message));
}

void dropped(const char* context) noexcept {
  try {
    throw;
  } catch (const std::exception& e) {
    try {
      error("{}: {}", context, e.what());
    } catch (...) {
    }
  } catch (...) {
    try {
      error("{}: an exception that is not a std::exception", context);
    } catch (...) {
    }
  }
}

}  // namespace cove::log

namespace cove {

void set_log_sink(LogSink sink) {
  const auto level = log::logger()->level();
  std::lock_guard lock(log::g_mutex);
  log::g_sink = sink ? std::make_shared<const LogSink>(std::move(sink)) : nullptr;
  log::g_logger = log::make(level, log::g_file);
}

}  // namespace cove
