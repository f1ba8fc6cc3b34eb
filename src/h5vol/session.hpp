#pragma once

#include "h5vol/config.hpp"
#include "h5vol/tree.hpp"
#include "h5vol/worker.hpp"

#include <cove/client.hpp>

#include <mpi.h>
#include <unistd.h>

#include <cstdint>
#include <deque>
#include <map>
#include <future>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace cove::h5vol {

// One open file: its metadata tree and the version it is (producer) or
// reads (consumer).
struct FileState {
  std::string name;
  bool writer = false;
  std::uint64_t version = 0;
  FileSettings settings;
  std::shared_ptr<Node> root;
  std::uint64_t next_id = 1;
  MPI_Comm comm = MPI_COMM_NULL;  // from an MPI-IO file access list; else this process alone
  int rank = 0;
  Hid fapl;
  unsigned long fileno = 0;
  std::set<std::string> defined;  // this file's Cove variables (defined by this process)
  std::unordered_map<std::uint64_t, std::weak_ptr<Node>> by_id;
  // Modes file and both: the native connector under this one (H5VL_NATIVE).
  hid_t under_vol = H5I_INVALID_HID;
  // Modes memory and both (a consumer of a `both` file reads from memory).
  bool memory = true;
  // Open file handles (H5Fcreate, H5Fopen and H5Freopen of this file in this
  // process share this state): the version is published when the last closes.
  int handles = 0;
  pid_t pid = 0;  // the process that opened it (a forked child never publishes its parent's files)
  // A read-write open: the version this one was derived from (0: none).
  std::uint64_t derived_from = 0;
  std::string numbering;  // the name and its communicator's ranks (Session::last_version_)
  bool published = false;  // a producer publishes its version once
  // A producer's file: the first collective call that needs its version
  // (H5Dcreate or H5Fclose) has rank 0 decide it and broadcast it
  // (Session::resolve): one after the name's last version, which rank 0
  // knows (it numbered it) or asks the servers for then, on the calling
  // thread: with no define left in H5Dcreate for a background lookup to
  // overlap, the hand-off to a lookup thread cost about what the request
  // does (60 to 110 us per H5Fcreate on 2 loaded cores).
  bool version_known = true;
  std::optional<std::uint64_t> last_version;  // rank 0: the name's last version, when known here

  ~FileState();
  std::string meta_key() const { return "h5:" + name; }
  std::string variable(const Node& dataset) const { return "h5:" + name + ":" + dataset.var; }
  // Metadata whose newest version is the newest retired version of a held dataset.
  std::string retired_key(const Node& dataset) const { return "h5-retired:" + name + ":" + dataset.var; }
  void index(const std::shared_ptr<Node>& node);
  std::shared_ptr<Node> find_id(std::uint64_t id) const;
};

// Transfer shallow / local: this process's put_local pieces of the newest
// version it wrote of one dataset (of one file name).
struct Held {
  std::string var;
  std::string retired_key;
  std::uint64_t version = 0;
  std::vector<Box> boxes;
  std::vector<SharedBuffer> buffers;  // local: the copies the pieces are in
};

// The process-wide state of the connector: its configuration and its client.
class Session {
 public:
  static Session& get();
  void configure(const std::string& config_path);
  void shutdown();

  Client& client();
  // A producer with [embedded] in its config: rank 0 of `comm` starts the
  // server and writes its address; every rank then connects to it.
  void start_embedded(MPI_Comm comm, int rank);
  const Config& config();

  // H5Fcreate: a new version of `name` for this producer.
  std::shared_ptr<FileState> create(const std::string& name, hid_t fapl);
  // H5Fopen read-only: a file this process has open already (shared), the
  // last version this process wrote of the name, or else waits for a
  // version as the file's policy says.
  std::shared_ptr<FileState> open(const std::string& name, hid_t fapl);
  // H5Fopen read-write: the file if this process has it open for writing,
  // else a new version derived from the newest one (every dataset starts
  // with its content), published sealed at close.
  std::shared_ptr<FileState> open_rw(const std::string& name, hid_t fapl);
  // H5Fdelete of a file in memory, collective over the access list's
  // communicator: rank 0 publishes a version of the file's metadata that
  // says it was deleted (so that opens of the name fail, and a new H5Fcreate
  // numbers after it) and removes its datasets' variables; every rank first
  // gives back its held pieces of them. Fails, as natively, when no version
  // of the name exists (or the last one is a deletion), and when this
  // process has the file open.
  void remove(const std::string& name, hid_t fapl);
  // The state of `name` if this process has it open (else null).
  std::shared_ptr<FileState> open_file(const std::string& name);
  // Whether `name` exists: this process has it open or wrote it (and has
  // not deleted it since), or the servers' newest version of it is a file
  // (not an H5Fdelete's mark).
  bool exists(const std::string& name);
  // Mode file (and the native half of both): the state of a file that
  // lives in the native connector only.
  std::shared_ptr<FileState> native(const std::string& name, hid_t fapl, bool writer);
  // A file's state: its settings, a copy of the access list, a file number,
  // and for a file held in memory the access list's communicator and this
  // rank in it.
  std::shared_ptr<FileState> new_state(const std::string& name, hid_t fapl, bool writer, bool in_memory);
  // H5Fclose: the producer publishes its version.
  void close(FileState& file);
  // Collective over the file's ranks: makes file.version known (see FileState::last_version).
  void resolve(FileState& file);

  // The held pieces of `dataset` for a write of file.version: pieces of an
  // older version are retired first (the retired marker is published, then
  // each piece released, which waits for reads in flight).
  Held& hold(const FileState& file, const Node& dataset);
  // Retires the pieces of every held dataset (the connector closes).
  void retire_all();
  // Cove variables this process defined, across versions of a file name
  // (keep_files forgets those it removes): a define per dataset name, not per version.
  std::set<std::string>& defined() { return defined_; }

 private:
  std::string config_path_;
  std::unique_ptr<Config> config_;
  std::unique_ptr<Client> client_;
  std::unique_ptr<Server> server_;  // embedded, in a producer's rank 0
  std::future<void> removing_;      // keep_files: the removal of older files, off the producer's path
  std::set<std::string> removed_;   // keep_files: names whose variables were (being) removed
  // Per file name and communicator (FileState::numbering): the last version
  // this process created there (see Session::create: rank 0's decides).
  std::unordered_map<std::string, std::uint64_t> last_version_;
  std::unordered_map<std::string, std::uint64_t> own_version_;  // per file name: the last version this process wrote
  std::unordered_map<std::string, std::uint64_t> opened_;        // per file name: the last version this process opened
  std::set<std::string> deleted_;  // names this process deleted (H5Fdelete) and has not created again
  std::unordered_map<std::string, std::weak_ptr<FileState>> open_;  // files open in this process
  pid_t pid_ = 0;  // the process whose connection client_ is (a forked child reconnects)
  void forget_parent();
  void register_open(const std::shared_ptr<FileState>& f);
  // Per rule: the files this producer published, oldest first, with their variables (keep_files).
  std::unordered_map<std::string, std::deque<std::pair<std::string, std::set<std::string>>>> published_;
  unsigned long next_fileno_ = 1;
  std::map<std::pair<std::string, std::string>, Held> held_;  // (file name, dataset path)
  std::set<std::string> defined_;
  // On the heap: a forked child leaks its parent's (their threads are not in the child).
  std::unique_ptr<Worker> removals_ = std::make_unique<Worker>();  // keep_files removals (removing_), off H5Fclose's path
  void retire(Held& h);
  // Retires and forgets this process's held pieces of every dataset of file `name`.
  void retire_file(const std::string& name);
};

}  // namespace cove::h5vol
