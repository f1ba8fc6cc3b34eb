#include "h5vol/config.hpp"

#include "h5vol/errors.hpp"

#include <fnmatch.h>
#include <toml++/toml.h>

#include <cstdlib>

namespace cove::h5vol {
namespace {

Mode parse_mode(const std::string& where, const std::string& s) {
  if (s == "memory") return Mode::memory;
  if (s == "file") return Mode::file;
  if (s == "both") return Mode::both;
  fail(where + ": mode \"" + s + "\" is not memory, file or both");
}

Transfer parse_transfer(const std::string& where, const std::string& s) {
  if (s == "deep") return Transfer::deep;
  if (s == "local") return Transfer::local;
  if (s == "shallow") return Transfer::shallow;
  fail(where + ": transfer \"" + s + "\" is not deep, local or shallow");
}

Policy parse_policy(const std::string& where, const std::string& s) {
  if (s == "next") return Policy::next;
  if (s == "latest") return Policy::latest;
  if (s == "every") return Policy::every;
  fail(where + ": policy \"" + s + "\" is not next, latest or every");
}

std::int64_t non_negative(const std::string& where, const char* key, std::int64_t v) {
  if (v < 0) fail(where + ": " + key + " = " + std::to_string(v) + " is negative");
  return v;
}

FileSettings read_settings(const std::string& where, const toml::table& t, FileSettings s) {
  for (auto&& [k, v] : t) {
    const std::string key(k.str());
    if (key == "pattern") continue;
    if (key == "mode") {
      s.mode = parse_mode(where, v.value<std::string>().value_or("?"));
    } else if (key == "transfer") {
      s.transfer = parse_transfer(where, v.value<std::string>().value_or("?"));
    } else if (key == "policy") {
      s.policy = parse_policy(where, v.value<std::string>().value_or("?"));
    } else if (key == "every") {
      const auto n = v.value<std::int64_t>().value_or(0);
      if (n < 1) fail(where + ": every = " + std::to_string(n) + " must be at least 1");
      s.every = static_cast<std::uint64_t>(n);
    } else if (key == "open_timeout_ms") {
      s.open_timeout_ms = non_negative(where, "open_timeout_ms", v.value<std::int64_t>().value_or(-1));
    } else if (key == "keep_files") {
      s.keep_files = non_negative(where, "keep_files", v.value<std::int64_t>().value_or(-1));
    } else if (key == "read_timeout_ms") {
      s.read_timeout_ms = non_negative(where, "read_timeout_ms", v.value<std::int64_t>().value_or(-1));
    } else if (key == "dataset") {
      auto* list = v.as_array();
      if (!list) fail(where + ": dataset must be an array of tables ([[file.dataset]])");
      for (auto& entry : *list) {
        auto* d = entry.as_table();
        const std::string at = where + ": [[file.dataset]] " + std::to_string(s.datasets.size());
        if (!d) fail(at + " is not a table");
        auto pattern = (*d)["pattern"].value<std::string>();
        auto mode = (*d)["mode"].value<std::string>();
        auto transfer = (*d)["transfer"].value<std::string>();
        if (!pattern || (!mode && !transfer)) fail(at + " needs pattern and mode or transfer");
        for (auto&& [dk, dv] : *d)
          if (dk.str() != "pattern" && dk.str() != "mode" && dk.str() != "transfer")
            fail(at + ": unknown key \"" + std::string(dk.str()) + "\"");
        DatasetRule rule{*pattern, std::nullopt, std::nullopt};
        if (mode) {
          rule.mode = parse_mode(at, *mode);
          if (*rule.mode == Mode::both) fail(at + ": a dataset's mode is memory or file (both is the file's)");
        }
        if (transfer) rule.transfer = parse_transfer(at, *transfer);
        s.datasets.push_back(std::move(rule));
      }
    } else if (key != "connect" && key != "file" && key != "embedded") {
      fail(where + ": unknown key \"" + key + "\"");
    }
  }
  return s;
}

bool has_mode_rule(const FileSettings& s) {
  for (const auto& d : s.datasets)
    if (d.mode) return true;
  return false;
}

}  // namespace

Mode FileSettings::dataset_mode(const std::string& path) const {
  for (const auto& d : datasets)
    if (fnmatch(d.pattern.c_str(), path.c_str(), 0) == 0) return d.mode.value_or(mode);
  return mode;
}

Transfer FileSettings::dataset_transfer(const std::string& path) const {
  for (const auto& d : datasets)
    if (fnmatch(d.pattern.c_str(), path.c_str(), 0) == 0) return d.transfer.value_or(transfer);
  return transfer;
}

const FileSettings& Config::settings_for(const std::string& file_name) const {
  for (const auto& rule : files)
    if (fnmatch(rule.pattern.c_str(), file_name.c_str(), 0) == 0) return rule.settings;
  return defaults;
}

Config load_config(const std::string& given) {
  std::string path = given;
  if (path.empty()) {
    const char* env = std::getenv("COVE_HDF5_CONFIG");
    if (env) path = env;
  }
  Config config;
  if (path.empty()) return config;
  toml::table root;
  try {
    root = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    fail("config " + path + ": " + std::string(e.description()));
  }
  config.connect = root["connect"].value<std::string>().value_or("");
  config.defaults = read_settings("config " + path, root, config.defaults);
  if (auto* e = root["embedded"].as_table()) {
    const std::string where = "config " + path + ": [embedded]";
    for (auto&& [k, v] : *e) {
      const std::string key(k.str());
      if (key == "path") {
        config.embedded.path = v.value<std::string>().value_or("");
      } else if (key == "transport") {
        config.embedded.transport = v.value<std::string>().value_or("");
        if (config.embedded.transport != "local" && config.embedded.transport != "tcp" && config.embedded.transport != "ucx")
          fail(where + ": transport \"" + config.embedded.transport + "\" is not local, tcp or ucx");
      } else if (key == "max_versions") {
        config.embedded.max_versions = static_cast<int>(non_negative(where, "max_versions", v.value<std::int64_t>().value_or(-1)));
      } else if (key == "linger_ms") {
        config.embedded.linger_ms = non_negative(where, "linger_ms", v.value<std::int64_t>().value_or(-1));
      } else {
        fail(where + ": unknown key \"" + key + "\"");
      }
    }
    if (config.embedded.path.empty()) fail(where + " has no path");
  }
  if (has_mode_rule(config.defaults) && config.defaults.mode != Mode::both)
    fail("config " + path + ": dataset rules with a mode need mode = \"both\"");
  if (auto* files = root["file"].as_array()) {
    int i = 0;
    for (auto& entry : *files) {
      const std::string where = "config " + path + ": [[file]] " + std::to_string(i++);
      auto* t = entry.as_table();
      if (!t) fail(where + " is not a table");
      auto pattern = (*t)["pattern"].value<std::string>();
      if (!pattern) fail(where + " has no pattern");
      config.files.push_back({*pattern, read_settings(where, *t, config.defaults)});
      config.files.back().settings.rule = *pattern;
      const auto& fs = config.files.back().settings;
      if (has_mode_rule(fs) && fs.mode != Mode::both) fail(where + ": dataset rules with a mode need mode = \"both\"");
    }
  }
  return config;
}

}  // namespace cove::h5vol
