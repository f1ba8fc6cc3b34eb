#include "config.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <fnmatch.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

namespace cove::pnetcdf {
namespace {

constexpr double kMaxTimeout = 1e9;

[[noreturn]] void bad(const std::string& file, const toml::node& node, const std::string& key, const std::string& why) {
  throw std::runtime_error(fmt::format("{}: line {}: key '{}': {}", file, node.source().begin.line, key, why));
}

std::string string_of(const std::string& file, const toml::node& node, const std::string& key) {
  if (!node.is_string()) bad(file, node, key, "must be a string");
  return std::string(node.as_string()->get());
}

Mode mode_of(const std::string& file, const toml::node& node, const std::string& key) {
  const std::string s = string_of(file, node, key);
  if (s == "memory") return Mode::memory;
  if (s == "file") return Mode::file;
  if (s == "both") return Mode::both;
  bad(file, node, key, fmt::format("'{}' is not one of memory, file, both", s));
}

Transfer transfer_of(const std::string& file, const toml::node& node, const std::string& key) {
  const std::string s = string_of(file, node, key);
  if (s == "deep") return Transfer::deep;
  if (s == "shallow") return Transfer::shallow;
  bad(file, node, key, fmt::format("'{}' is not one of deep, shallow", s));
}

std::string executable_name() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  std::string path(buf, static_cast<std::size_t>(n));
  return path.substr(path.find_last_of('/') + 1);
}

}  // namespace

Config load_config(const std::string& path) {
  toml::table top;
  try {
    top = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    const auto line = e.source().begin.line;  // 0: the file could not be read at all
    throw std::runtime_error(line > 0 ? fmt::format("{}: line {}: {}", path, line, e.description())
                                      : fmt::format("{}: {}", path, e.description()));
  }
  Config config;
  Mode mode = Mode::memory;
  Transfer transfer = Transfer::deep;
  for (const auto& [k, node] : top) {
    const std::string key(k.str());
    if (key == "mode") {
      mode = mode_of(path, node, key);
    } else if (key == "transfer") {
      transfer = transfer_of(path, node, key);
    } else if (key == "timeout") {
      if (!node.is_number()) bad(path, node, key, "must be a number of seconds");
      config.timeout_s = node.value<double>().value_or(0);
      // Milliseconds of it must fit Cove's 64-bit wait; TOML also allows nan and inf.
      if (!(config.timeout_s >= 0 && config.timeout_s <= kMaxTimeout)) {
        bad(path, node, key, fmt::format("{} is not a number of seconds from 0 to {:g}", config.timeout_s, kMaxTimeout));
      }
    } else if (key == "components") {
      if (!node.is_table()) bad(path, node, key, "must be a table of executable = \"component\"");
      for (const auto& [exe, name] : *node.as_table()) {
        config.components[std::string(exe.str())] = string_of(path, name, "components." + std::string(exe.str()));
      }
    } else if (key != "file") {
      bad(path, node, key, "unknown key (expected mode, transfer, timeout, components, file)");
    }
  }
  if (const auto* files = top.get("file")) {
    if (!files->is_array_of_tables()) bad(path, *files, "file", "must be an array of tables ([[file]])");
    for (const auto& entry : *files->as_array()) {
      FileRule rule{.pattern = "", .mode = mode, .transfer = transfer, .writer = "", .readers = {}};
      for (const auto& [k, node] : *entry.as_table()) {
        const std::string key = "file." + std::string(k.str());
        if (k.str() == "name") {
          rule.pattern = string_of(path, node, key);
        } else if (k.str() == "mode") {
          rule.mode = mode_of(path, node, key);
        } else if (k.str() == "transfer") {
          rule.transfer = transfer_of(path, node, key);
        } else if (k.str() == "writer") {
          rule.writer = string_of(path, node, key);
        } else if (k.str() == "readers") {
          if (!node.is_array()) bad(path, node, key, "must be an array of component names");
          for (const auto& r : *node.as_array()) rule.readers.push_back(string_of(path, r, key));
        } else {
          bad(path, node, key, "unknown key (expected name, mode, transfer, writer, readers)");
        }
      }
      if (rule.pattern.empty()) bad(path, entry, "file.name", "missing or empty");
      config.files.push_back(std::move(rule));
    }
  }
  if (const char* c = std::getenv("COVE_COMPONENT"); c != nullptr && *c != '\0') {
    config.component = c;
  } else if (auto it = config.components.find(executable_name()); it != config.components.end()) {
    config.component = it->second;
  }
  return config;
}

const FileRule* rule_for(const Config& config, const std::string& path, bool writer) {
  const std::string base = path.substr(path.find_last_of('/') + 1);
  for (const auto& rule : config.files) {
    if (fnmatch(rule.pattern.c_str(), path.c_str(), 0) != 0 && fnmatch(rule.pattern.c_str(), base.c_str(), 0) != 0) {
      continue;
    }
    if (writer && !rule.writer.empty() && rule.writer != config.component) return nullptr;
    if (!writer && !rule.readers.empty() &&
        std::find(rule.readers.begin(), rule.readers.end(), config.component) == rule.readers.end()) {
      return nullptr;
    }
    return &rule;
  }
  return nullptr;
}

}  // namespace cove::pnetcdf
