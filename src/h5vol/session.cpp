#include "h5vol/session.hpp"

#include "h5vol/transfer.hpp"
#include "h5vol/vlen.hpp"

#include "h5vol/errors.hpp"
#include "h5vol/timing.hpp"

#include <cove/error.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>

namespace cove::h5vol {
namespace {

MPI_Comm comm_of(hid_t fapl) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized || fapl < 0 || H5Pget_driver(fapl) != H5FD_MPIO) return MPI_COMM_NULL;
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Info info = MPI_INFO_NULL;
  if (H5Pget_fapl_mpio(fapl, &comm, &info) < 0) fail("H5Pget_fapl_mpio failed on the file access list");
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  return comm;
}

// Waits for a nonblocking collective, polling less and less often: ranks
// that wait in H5Fcreate / H5Fclose / H5Fopen must not take the cores from
// ranks still putting their data wherever processes outnumber cores.
void quiet_wait(MPI_Request& req) {
  auto nap = std::chrono::microseconds(20);
  for (int done = 0;;) {
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (done) return;
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::microseconds(500));
  }
}

void quiet_barrier(MPI_Comm comm) {
  MPI_Request req;
  MPI_Ibarrier(comm, &req);
  quiet_wait(req);
}

void quiet_bcast(MPI_Comm comm, void* data, int count, MPI_Datatype type) {
  MPI_Request req;
  MPI_Ibcast(data, count, type, 0, comm, &req);
  quiet_wait(req);
}

// Which ranks of MPI_COMM_WORLD make up `comm`: its size and a hash of their list.
std::string comm_signature(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return {};
  MPI_Group group, world;
  MPI_Comm_group(comm, &group);
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int size = 0;
  MPI_Group_size(group, &size);
  std::vector<int> ranks(static_cast<std::size_t>(size)), in_world(static_cast<std::size_t>(size));
  for (int i = 0; i < size; ++i) ranks[static_cast<std::size_t>(i)] = i;
  MPI_Group_translate_ranks(group, size, ranks.data(), world, in_world.data());
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (int r : in_world) {
    h ^= static_cast<std::uint64_t>(static_cast<unsigned>(r));
    h *= 1099511628211ull;
  }
  return "|" + std::to_string(size) + "|" + std::to_string(h);
}

std::uint64_t broadcast(MPI_Comm comm, std::uint64_t v) {
  if (comm != MPI_COMM_NULL) quiet_bcast(comm, &v, 1, MPI_UINT64_T);
  return v;
}

// Rank 0 chose the version; the others get its metadata from it.
void broadcast_meta(MPI_Comm comm, Metadata& meta) {
  if (comm == MPI_COMM_NULL) return;
  PhaseTimer bcast("H5Fopen bcast");
  std::uint64_t head[2] = {meta.version, meta.data.size()};
  quiet_bcast(comm, head, 2, MPI_UINT64_T);
  meta.version = head[0];
  meta.data.resize(head[1]);
  if (head[1] > 0) quiet_bcast(comm, meta.data.data(), static_cast<int>(head[1]), MPI_BYTE);
}

// H5Fdelete's mark: a version of a file's metadata with no tree (a tree,
// even an empty file's, is never empty).
bool deleted(const Metadata& meta) { return meta.version != 0 && meta.data.empty(); }

std::string no_such_file(const std::string& name, const std::string& what) {
  return "no file \"" + name + "\" " + what + " (no producer has written it, or it was deleted; errno = 2, error message = 'No such file or directory')";
}

}  // namespace

FileState::~FileState() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (comm != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm);
}

void FileState::index(const std::shared_ptr<Node>& node) {
  if (by_id.count(node->id) && by_id[node->id].lock() == node) return;  // hard links may make cycles
  by_id[node->id] = node;
  for (auto& [link, child] : node->links) index(child);
}

std::shared_ptr<Node> FileState::find_id(std::uint64_t id) const {
  auto it = by_id.find(id);
  return it == by_id.end() ? nullptr : it->second.lock();
}

Session& Session::get() {
  // Never destroyed: HDF5 terminates the connector from its own atexit
  // handler, which runs after the destructors of statics made later.
  static Session* session = new Session;
  return *session;
}

void Session::configure(const std::string& config_path) {
  if (config_ && config_path == config_path_) return;
  config_path_ = config_path;
  config_ = std::make_unique<Config>(load_config(config_path));
}

void Session::shutdown() {
  if (removing_.valid()) removing_.wait();
  forget_parent();
  removals_->stop();
  print_timing();
  retire_all();
  if (server_) {
    // Consumers still reading this producer's versions finish first (bounded).
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(config().embedded.linger_ms);
    int quiet = 0;
    while (std::chrono::steady_clock::now() < end && quiet < 10) {
      // Our own client is one connection; quiet once nobody else is connected for 1 s.
      quiet = server_->stats().clients <= (client_ ? 1u : 0u) ? quiet + 1 : 0;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    client_.reset();
    server_->stop();
    server_.reset();
    std::remove(config().embedded.path.c_str());
  }
  client_.reset();
  config_.reset();
  last_version_.clear();
  own_version_.clear();
  opened_.clear();
  open_.clear();
  defined_.clear();
}

void Session::forget_parent() {
  if (pid_ == 0 || pid_ == ::getpid()) return;
  // A forked child: the connection, the embedded server and the worker
  // threads are its parent's. Using or closing them here would talk on the
  // parent's socket (the child hung there); they are let go without a word,
  // and the child connects anew when it needs to.
  (void)client_.release();
  (void)server_.release();
  (void)removals_.release();
  removals_ = std::make_unique<Worker>();
  removing_ = std::future<void>();
  held_.clear();  // the parent's pieces: the parent retires them
  open_.clear();
  pid_ = 0;
}

void Session::register_open(const std::shared_ptr<FileState>& f) {
  f->pid = ::getpid();
  f->handles = 1;
  open_[f->name] = f;
}

std::shared_ptr<FileState> Session::open_file(const std::string& name) {
  forget_parent();
  auto it = open_.find(name);
  if (it == open_.end()) return nullptr;
  auto f = it->second.lock();
  if (!f || f->pid != ::getpid()) {
    open_.erase(it);
    return nullptr;
  }
  return f;
}

bool Session::exists(const std::string& name) {
  // A file this process wrote exists at once, on every rank of its
  // communicator: rank 0 may not have published it yet when another rank's
  // H5Fclose returns (H5Fdelete asks right after).
  if (open_file(name) || (own_version_.count(name) && !deleted_.count(name))) return true;
  const auto meta = client().find_latest_meta("h5:" + name);
  return meta && !deleted(*meta);
}

const Config& Session::config() {
  if (!config_) configure(config_path_);
  return *config_;
}

Client& Session::client() {
  forget_parent();
  if (client_) return *client_;
  pid_ = ::getpid();
  const auto& embedded = config().embedded;
  if (embedded.path.empty()) {
    client_ = std::make_unique<Client>(Client::connect(config().connect));
    return *client_;
  }
  // The producer's embedded server: its address and secret, two lines.
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(config().defaults.open_timeout_ms);
  std::string address, secret;
  while (true) {
    std::ifstream in(embedded.path);
    if (in && std::getline(in, address) && std::getline(in, secret) && !secret.empty()) break;
    if (std::chrono::steady_clock::now() > end)
      fail("no embedded server announced itself in " + embedded.path + " within " +
           std::to_string(config().defaults.open_timeout_ms) + " ms");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ConnectOptions options;
  options.secret = secret;
  client_ = std::make_unique<Client>(Client::connect(address, options));
  return *client_;
}

void Session::start_embedded(MPI_Comm comm, int rank) {
  const auto& embedded = config().embedded;
  if (embedded.path.empty() || server_ || client_) return;
  if (rank == 0) {
    ServerOptions options;
    options.transport = embedded.transport;
    options.max_versions = embedded.max_versions;
    server_ = std::make_unique<Server>(options);
    const std::string tmp = embedded.path + ".tmp";
    {
      std::ofstream out(tmp, std::ios::trunc);
      ::chmod(tmp.c_str(), 0600);
      out << server_->address() << "\n" << server_->secret() << "\n";
      if (!out) fail("cannot write the embedded server's address to " + tmp);
    }
    if (std::rename(tmp.c_str(), embedded.path.c_str()) != 0) fail("cannot rename " + tmp + " to " + embedded.path);
  }
  if (comm != MPI_COMM_NULL) quiet_barrier(comm);
}

std::shared_ptr<FileState> Session::create(const std::string& name, hid_t fapl) {
  PhaseTimer timer("H5Fcreate");
  auto f = new_state(name, fapl, true, true);
  start_embedded(f->comm, f->rank);
  if (removed_.erase(name) != 0) {
    // keep_files removed this name's variables on rank 0's removal thread:
    // no rank may define or put them again until that removal is over, or
    // it would remove the new version's data too. Every rank keeps the same
    // list, so all of them take this (rare) collective.
    if (f->rank == 0 && removing_.valid()) removing_.get();
    if (f->comm != MPI_COMM_NULL) quiet_barrier(f->comm);
  }
  deleted_.erase(name);
  f->numbering = name + comm_signature(f->comm);
  const auto last = last_version_[f->numbering];
  // This process numbered the name's last version itself, on these ranks.
  const bool known = last != 0 && own_version_[name] == last;
  if (known && f->comm == MPI_COMM_NULL) {
    f->version = last + 1;
    last_version_[f->numbering] = own_version_[name] = f->version;
  } else {
    // Rank 0 of the communicator decides, and resolve (at the first
    // H5Dcreate, or H5Fclose) broadcasts: from what it knows, or for a name
    // new to it (or written elsewhere since) from the name's last version on
    // the servers, asked there (a producer run that follows another one
    // goes on after its versions). Only rank 0's knowledge counts, so ranks
    // that created the name on other communicators never skip a broadcast
    // the others wait for.
    f->version_known = false;
    if (f->rank == 0 && known) f->last_version = last;
  }
  f->root = std::make_shared<Node>();
  f->root->path.assign(1, '/');  // not = "/": GCC 12 flags that assign (-Wrestrict, a false positive)
  f->root->id = f->next_id++;
  f->index(f->root);
  client();  // connect now, collectively, rather than inside the first H5Dwrite
  register_open(f);
  return f;
}

void Session::resolve(FileState& file) {
  if (file.version_known) return;
  PhaseTimer timer("version resolve");
  std::uint64_t last = 0;
  std::string error;
  if (file.rank == 0) {
    try {
      if (file.last_version) {
        last = *file.last_version;
      } else if (const auto meta = client().find_latest_meta(file.meta_key())) {
        last = meta->version;  // (a name never written has none: its first version is 1)
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  // The others learn it, or that it failed (version 0), from rank 0.
  const auto version = broadcast(file.comm, error.empty() ? last + 1 : 0);
  if (version == 0)
    fail("looking up the last version of file \"" + file.name + "\" failed" + (error.empty() ? " on rank 0" : ": " + error));
  file.version = version;
  file.version_known = true;
  last_version_[file.numbering] = version;
  own_version_[file.name] = std::max(own_version_[file.name], version);
}

std::shared_ptr<FileState> Session::open(const std::string& name, hid_t fapl) {
  PhaseTimer timer("H5Fopen");
  if (auto f = open_file(name)) {  // open in this process already: the same file, as natively
    ++f->handles;
    return f;
  }
  auto f = new_state(name, fapl, false, true);
  auto& last = opened_[name];
  const auto own = own_version_.count(name) ? own_version_[name] : 0;
  const auto& s = f->settings;
  Metadata meta{0, {}};
  if (f->rank == 0) {
    PhaseTimer wait("H5Fopen get_meta");
    try {
      if (own > 0) {
        // A file this process wrote: its own last version, at once (never
        // one after it, which only another producer could write).
        meta = client().get_meta(f->meta_key(), own, s.open_timeout_ms);
      } else {
        switch (s.policy) {
          case Policy::next:
            meta = client().get_meta_next(f->meta_key(), last, s.open_timeout_ms);
            break;
          case Policy::latest:
            // The newest there is: at once when one exists (waits only for the first).
            meta = client().get_meta_latest(f->meta_key(), s.open_timeout_ms);
            break;
          case Policy::every:
            meta = client().get_meta(f->meta_key(), (last / s.every + 1) * s.every, s.open_timeout_ms);
            break;
        }
      }
    } catch (const Error& e) {
      if (e.code() != Code::Timeout && e.code() != Code::NotFound) throw;
    }
  }
  broadcast_meta(f->comm, meta);
  if (deleted(meta)) fail(no_such_file(name, "to open: its version " + std::to_string(meta.version) + " is its H5Fdelete"));
  if (meta.version == 0)
    fail("no version of file \"" + name + "\" after " + std::to_string(last) + " appeared within " +
         std::to_string(s.open_timeout_ms) + " ms (has a producer created it through the Cove connector?; errno = 2, error message = 'No such file or directory')");
  f->version = meta.version;
  if (own == 0) last = meta.version;
  f->root = deserialize(meta.data, f->next_id);
  f->index(f->root);
  remember_datasets(*f);
  register_open(f);
  return f;
}

std::shared_ptr<FileState> Session::open_rw(const std::string& name, hid_t fapl) {
  PhaseTimer timer("H5Fopen read-write");
  if (auto f = open_file(name)) {
    if (!f->writer) fail("file \"" + name + "\" is already open read-only in this process (as natively, it cannot be opened read-write too)");
    ++f->handles;
    return f;
  }
  auto f = new_state(name, fapl, true, true);
  start_embedded(f->comm, f->rank);
  Metadata meta{0, {}};
  std::uint64_t to = 0;
  std::string error;
  if (f->rank == 0) {
    try {
      meta = client().get_meta_latest(f->meta_key(), 0);
      if (deleted(meta)) throw Error(Code::NotFound, "deleted");
      to = std::max(meta.version, own_version_.count(name) ? own_version_[name] : 0) + 1;
      // Every dataset of the new version starts with the old one's content
      // (no bytes copied); one never written there has nothing to share.
      std::uint64_t next_id = 1;
      for_each_memory_dataset(deserialize(meta.data, next_id), [&](Node& n) {
        if (is_vlen(n.type.get())) return;  // its elements are in the tree (vlen.hpp), no variable
        try {
          client().derive(f->variable(n), meta.version, to);
        } catch (const Error& e) {
          if (e.code() != Code::NotFound) throw;
        }
      });
    } catch (const Error& e) {
      error = e.code() == Code::NotFound ? no_such_file(name, "to open read-write") : e.what();
    }
  }
  if (!error.empty()) meta.version = 0;
  broadcast_meta(f->comm, meta);
  to = broadcast(f->comm, to);
  if (meta.version == 0) fail(error.empty() ? "opening file \"" + name + "\" read-write failed on rank 0" : error);
  f->version = to;
  f->derived_from = meta.version;
  own_version_[name] = to;
  f->root = deserialize(meta.data, f->next_id);
  f->index(f->root);
  // Defined by the version's producer: no define again, but sealed at close.
  for_each_memory_dataset(f->root, [&](Node& n) {
    if (is_vlen(n.type.get())) return;
    f->defined.insert(f->variable(n));
    defined_.insert(f->variable(n));
  });
  client();
  register_open(f);
  return f;
}

void Session::remove(const std::string& name, hid_t fapl) {
  PhaseTimer timer("H5Fdelete");
  if (open_file(name)) fail("file \"" + name + "\" is open in this process: close it before H5Fdelete");
  auto f = new_state(name, fapl, true, true);  // its communicator and this rank in it
  retire_file(name);  // every rank gives back its pieces of the file's datasets before they go
  const std::string prefix = "h5:" + name + ":";
  for (auto it = defined_.begin(); it != defined_.end();)
    it = it->compare(0, prefix.size(), prefix) == 0 ? defined_.erase(it) : std::next(it);
  for (auto& [rule, files] : published_)
    for (auto it = files.begin(); it != files.end();) it = it->first == name ? files.erase(it) : std::next(it);
  if (f->comm != MPI_COMM_NULL) quiet_barrier(f->comm);
  std::uint64_t mark = 0;
  std::string error;
  if (f->rank == 0) {
    try {
      const Metadata meta = client().get_meta_latest(f->meta_key(), 0);
      if (deleted(meta)) throw Error(Code::NotFound, "deleted");
      mark = std::max(meta.version, own_version_.count(name) ? own_version_[name] : 0) + 1;
      client().put_meta(f->meta_key(), mark, {});
      std::uint64_t next_id = 1;
      std::vector<std::string> vars;
      for_each_memory_dataset(deserialize(meta.data, next_id), [&](Node& n) {
        if (!is_vlen(n.type.get())) vars.push_back(f->variable(n));  // vlen elements are in the tree: no variable
      });
      try {
        if (!vars.empty()) client().undefine(vars);  // one request per server
      } catch (const Error& e) {
        if (e.code() != Code::NotFound) throw;  // some never written: nothing of theirs to remove
      }
    } catch (const Error& e) {
      error = e.code() == Code::NotFound ? no_such_file(name, "to delete") : e.what();
      mark = 0;
    }
  }
  mark = broadcast(f->comm, mark);
  if (mark == 0) fail(error.empty() ? "deleting file \"" + name + "\" failed on rank 0" : error);
  // Opens of the name by this process now find the deletion, and a new
  // H5Fcreate numbers after it.
  own_version_[name] = mark;
  opened_[name] = mark;
  deleted_.insert(name);
}

std::shared_ptr<FileState> Session::native(const std::string& name, hid_t fapl, bool writer) {
  return new_state(name, fapl, writer, false);
}

std::shared_ptr<FileState> Session::new_state(const std::string& name, hid_t fapl, bool writer, bool in_memory) {
  auto f = std::make_shared<FileState>();
  f->name = name;
  f->writer = writer;
  f->memory = in_memory;
  f->settings = config().settings_for(name);
  if (in_memory) {
    f->comm = comm_of(fapl);
    if (f->comm != MPI_COMM_NULL) MPI_Comm_rank(f->comm, &f->rank);
  }
  f->fapl = Hid(check(H5Pcopy(fapl), "H5Pcopy of the file access list"));
  f->fileno = next_fileno_++;
  return f;
}

void Session::close(FileState& file) {
  if (auto it = open_.find(file.name); it != open_.end() && it->second.lock().get() == &file) open_.erase(it);
  if (!file.writer || !file.memory || file.published) return;
  if (file.pid != ::getpid()) return;  // a forked child: its parent publishes
  file.published = true;
  PhaseTimer timer("H5Fclose");
  resolve(file);
  // Every rank's puts are done before any reader can see this version.
  if (file.comm != MPI_COMM_NULL) {
    PhaseTimer barrier("H5Fclose barrier");
    quiet_barrier(file.comm);
  }
  if (file.rank == 0) {
    // Sealed: a read of it never waits; cells nobody wrote read as the
    // dataset's fill value. The metadata goes with the seal (its server is
    // asked last), so a reader that finds the version finds it sealed.
    PhaseTimer seal("H5Fclose seal and put_meta");
    const auto meta = serialize(*file.root);
    if (file.defined.empty())
      client().put_meta(file.meta_key(), file.version, meta);
    else
      client().seal_and_put_meta(std::vector<std::string>(file.defined.begin(), file.defined.end()), file.version,
                                 file.meta_key(), meta);
  }
  const auto keep = file.settings.keep_files;
  if (keep <= 0) return;
  // Every rank keeps the list (its held pieces of a removed file go too); rank 0 removes.
  auto& files = published_[file.settings.rule];
  for (auto it = files.begin(); it != files.end(); ++it)
    if (it->first == file.name) {
      files.erase(it);
      break;
    }
  files.emplace_back(file.name, file.defined);
  std::vector<std::string> old;
  while (files.size() > static_cast<std::size_t>(keep)) {
    retire_file(files.front().first);
    for (const auto& var : files.front().second) defined_.erase(var);
    removed_.insert(files.front().first);
    old.insert(old.end(), files.front().second.begin(), files.front().second.end());
    files.pop_front();
  }
  if (old.empty() || file.rank != 0) return;
  if (removing_.valid()) removing_.get();  // at most one removal in flight
  removing_ = removals_->run<void>([c = client(), old = std::move(old)]() mutable {
    try {
      c.undefine(old);  // every variable of the files removed, one request per server
    } catch (const std::exception& e) {
      // Some gone already, or the server went away: nothing is left to free.
      if (std::getenv("COVE_H5VOL_VERBOSE")) std::fprintf(stderr, "cove h5vol: removing old files: %s\n", e.what());
    }
  });
}

Held& Session::hold(const FileState& file, const Node& dataset) {
  auto& h = held_[{file.name, dataset.var}];
  if (h.version != 0 && h.version < file.version) retire(h);
  if (h.version == 0) {
    h.var = file.variable(dataset);
    h.retired_key = file.retired_key(dataset);
    h.version = file.version;
  }
  return h;
}

void Session::retire(Held& h) {
  if (h.version == 0) return;
  // The marker goes first: a consumer whose get finds the pieces gone learns why.
  try {
    client().put_meta(h.retired_key, h.version, {});
    for (const auto& box : h.boxes) client().release(h.var, h.version, box);
  } catch (const std::exception& e) {
    // keep_files removed the variable already, or the server went: no reader can copy from the pieces now.
    if (std::getenv("COVE_H5VOL_VERBOSE"))
      std::fprintf(stderr, "cove h5vol: retiring %s version %llu: %s\n", h.var.c_str(),
                   static_cast<unsigned long long>(h.version), e.what());
  }
  h = Held{};
}

void Session::retire_file(const std::string& name) {
  // held_ is ordered by file name first: the file's entries are one run.
  for (auto it = held_.lower_bound({name, std::string()}); it != held_.end() && it->first.first == name;) {
    retire(it->second);
    it = held_.erase(it);
  }
}

void Session::retire_all() {
  if (!client_) {
    held_.clear();
    return;
  }
  for (auto& [key, h] : held_) retire(h);
  held_.clear();
}

}  // namespace cove::h5vol
