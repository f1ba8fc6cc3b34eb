#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cove::h5vol {

enum class Mode { memory, file, both };
enum class Policy { next, latest, every };
// How H5Dwrite hands a dataset's bytes to Cove (docs/hdf5.md, "Transfers"):
// deep: put, a copy on the servers; local: a copy in this producer's own
// Cove memory (put_local of a shared buffer); shallow: put_local of the
// program's own buffer, which it leaves untouched until the dataset is next
// written in a later version of the same file (or the connector closes).
enum class Transfer { deep, local, shallow };

// Where one dataset of a `both` file goes: its `mode` memory (staged only,
// not in the file) or file (in the file only, not staged).
struct DatasetRule {
  std::string pattern;  // fnmatch(3) on the dataset's path ("/fields/*")
  std::optional<Mode> mode;          // unset: the file's
  std::optional<Transfer> transfer;  // unset: the file's
};

// What applies to one file (docs/hdf5.md).
struct FileSettings {
  Mode mode = Mode::memory;
  Policy policy = Policy::next;
  std::uint64_t every = 1;          // Policy::every: versions every, 2*every, ...
  std::int64_t open_timeout_ms = 30000;  // a consumer's H5Fopen waits this long for a version
  std::int64_t read_timeout_ms = 10000;  // an H5Dread waits this long for the data
  // A producer keeps its newest keep_files files (distinct names) of this
  // rule in Cove and removes older ones (their datasets); 0 keeps all. For
  // file series named per step; versions of one name go by max_versions.
  std::int64_t keep_files = 0;
  std::string rule;  // the rule's pattern ("" for the defaults)
  Transfer transfer = Transfer::deep;
  std::vector<DatasetRule> datasets;  // [[file.dataset]]: the first match wins; none: the file's mode

  Mode dataset_mode(const std::string& path) const;
  Transfer dataset_transfer(const std::string& path) const;
};

struct FileRule {
  std::string pattern;  // fnmatch(3) pattern on the name given to H5Fcreate / H5Fopen
  FileSettings settings;
};

// A server inside the producer's rank 0 (one MPMD job, no cove-server).
struct Embedded {
  std::string path;               // where its address and secret go (0600); empty: no embedded server
  std::string transport = "local";  // ServerOptions::transport: "local" (this host) or "ucx"
  int max_versions = 0;           // ServerOptions::max_versions
  std::int64_t linger_ms = 60000;  // at exit, how long the producer serves on for consumers still connected
};

struct Config {
  std::string connect;  // Client::connect target; empty: COVE_CONNECT
  Embedded embedded;
  FileSettings defaults;
  std::vector<FileRule> files;

  const FileSettings& settings_for(const std::string& file_name) const;
};

// Reads the TOML file at `path` (empty: $COVE_HDF5_CONFIG, and with neither,
// the defaults). Throws Failure naming the file and the bad key or value.
Config load_config(const std::string& path);

}  // namespace cove::h5vol
