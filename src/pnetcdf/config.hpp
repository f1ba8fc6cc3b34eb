// The TOML configuration named by COVE_PNETCDF_CONFIG (docs/pnetcdf.md):
// which files are coupled, in which mode, deep or shallow, how long a
// reader waits.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cove::pnetcdf {

enum class Mode { memory, file, both };
enum class Transfer { deep, shallow };

struct FileRule {
  std::string pattern;  // fnmatch(3) pattern, against the path and its last component
  Mode mode = Mode::memory;
  Transfer transfer = Transfer::deep;
  std::string writer;                // empty: any component
  std::vector<std::string> readers;  // empty: any component
};

struct Config {
  std::vector<FileRule> files;
  double timeout_s = 60;
  std::map<std::string, std::string> components;  // executable -> component name
  std::string component;                          // this program's component name
};

// Reads `path`; throws std::runtime_error naming the file, the key and the line.
Config load_config(const std::string& path);
// The rule for a file this component creates (writer) or opens (reader); none: not coupled.
const FileRule* rule_for(const Config& config, const std::string& path, bool writer);

}  // namespace cove::pnetcdf
