// A coupled file's life: create/open/close, the versions they take and
// publish, the modes (define, independent) and request completion. The
// schema's own calls are in schema_calls.cpp.
#include "files.hpp"

#include "convert.hpp"

#include <cove/error.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <utility>

#include <unistd.h>

namespace cove::pnetcdf {
namespace {

constexpr int kFirstNcid = 1 << 24;  // far above the real library's ids

struct State {
  std::mutex mu;
  std::map<int, std::unique_ptr<File>> files;
  int next_ncid = kFirstNcid;
  bool loaded = false;
  std::optional<Config> config;
  std::string config_error;
  std::optional<Client> client;
  std::map<std::string, std::uint64_t> seen;     // path -> newest version opened
  std::map<std::string, std::uint64_t> created;  // path -> newest version created
  // Per path, the put_local pieces of the newest closed versions.
  std::map<std::string, std::deque<std::pair<std::uint64_t, std::vector<ShallowPiece>>>> shallow;
  std::vector<ShallowPiece> unreleased;
};

// Never destroyed: wrappers may run from other libraries' destructors.
State& state() {
  static State* s = new State;
  return *s;
}

std::string meta_name(const std::string& path) { return "pnetcdf:" + path; }

// ncmpi_delete of a coupled file publishes, under this name, the newest
// version it removed: that version and every older one are gone (an open
// waits for a newer one, or fails with NC_ENOENT).
std::string deleted_name(const std::string& path) { return "pnetcdf-deleted:" + path; }

// The newest version of a path that ncmpi_delete removed (0: none).
std::uint64_t deleted_through(const std::string& path) {
  const auto meta = client().find_latest_meta(deleted_name(path));
  return meta ? meta->version : 0;
}

// The newest version any writer published of a path (0: none).
std::uint64_t latest_published(const std::string& path) {
  const auto meta = client().find_latest_meta(meta_name(path));
  return meta ? meta->version : 0;
}

int rank_of(MPI_Comm comm) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}

// Our duplicate of a program's communicator, made once per communicator
// (MPI_Comm_dup is a collective that costs milliseconds on a busy node) and
// kept as an attribute of it. It is freed when the program frees its
// communicator and no coupled file still uses it.
struct SharedComm {
  MPI_Comm comm = MPI_COMM_NULL;
  int files = 0;
  bool orphan = false;
  std::uint64_t writer = 0;  // random, the same on every rank: see Schema::writer
};

int drop_shared_comm(MPI_Comm, int, void* attr, void*) {
  auto* shared = static_cast<SharedComm*>(attr);
  if (shared->files > 0) {
    shared->orphan = true;
  } else {
    MPI_Comm_free(&shared->comm);
    delete shared;
  }
  return MPI_SUCCESS;
}

SharedComm* shared_comm(MPI_Comm comm) {
  static int key = [] {
    int k = MPI_KEYVAL_INVALID;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, drop_shared_comm, &k, nullptr);
    return k;
  }();
  void* value = nullptr;
  int found = 0;
  MPI_Comm_get_attr(comm, key, &value, &found);
  if (found) return static_cast<SharedComm*>(value);
  auto* shared = new SharedComm;
  MPI_Comm_dup(comm, &shared->comm);
  if (rank_of(shared->comm) == 0) {
    std::random_device random;
    shared->writer = (std::uint64_t{random()} << 32 | random()) ^ static_cast<std::uint64_t>(getpid());
  }
  static_assert(sizeof(unsigned long long) == sizeof(std::uint64_t));
  MPI_Bcast(&shared->writer, 1, MPI_UNSIGNED_LONG_LONG, 0, shared->comm);
  MPI_Comm_set_attr(comm, key, shared);
  return shared;
}

void leave_shared_comm(SharedComm* shared) {
  if (--shared->files == 0 && shared->orphan) {
    MPI_Comm_free(&shared->comm);
    delete shared;
  }
}

// The configuration, read on the first create or open; nullptr with no
// COVE_PNETCDF_CONFIG. Throws the configuration's error every time.
const Config* config() {
  State& s = state();
  std::lock_guard lock(s.mu);
  if (!s.loaded) {
    s.loaded = true;
    if (const char* p = std::getenv("COVE_PNETCDF_CONFIG"); p != nullptr && *p != '\0') {
      try {
        s.config = load_config(p);
      } catch (const std::exception& e) {
        s.config_error = e.what();
      }
    }
  }
  if (!s.config_error.empty()) throw std::runtime_error(s.config_error);
  return s.config ? &*s.config : nullptr;
}

int add_file(std::unique_ptr<File> f, int ncid) {
  State& s = state();
  std::lock_guard lock(s.mu);
  if (ncid < 0) ncid = s.next_ncid++;
  s.files[ncid] = std::move(f);
  return ncid;
}

// A shallow writer keeps the bytes of this many versions of each file (the
// newest), so that a reader of the previous version can still finish.
constexpr std::size_t kShallowVersions = 2;

void remove_file(int ncid) {
  State& s = state();
  std::vector<std::pair<std::uint64_t, std::vector<ShallowPiece>>> retired;
  {
    std::lock_guard lock(s.mu);
    auto it = s.files.find(ncid);
    if (it == s.files.end()) return;
    File& f = *it->second;
    if (!f.shallow.empty()) {
      auto& kept = s.shallow[f.path];
      kept.emplace_back(f.version, std::move(f.shallow));
      while (kept.size() > kShallowVersions) {
        retired.push_back(std::move(kept.front()));
        kept.pop_front();
      }
    }
    if (f.shared_comm != nullptr) leave_shared_comm(static_cast<SharedComm*>(f.shared_comm));
    if (f.info != MPI_INFO_NULL) MPI_Info_free(&f.info);
    s.files.erase(it);
  }
  // release() waits for readers still copying out of the pieces; only then
  // may their memory go. A piece whose release failed may still be indexed,
  // so its memory is kept (until the connection closes) rather than reused
  // under a reader.
  for (auto& [version, pieces] : retired) {
    for (auto& piece : pieces) {
      try {
        client().release(piece.var, version, piece.box);
      } catch (const std::exception& e) {
        report(NC_NOERR, fmt::format("releasing {} version {}: {}; its memory stays allocated", piece.var, version,
                                     e.what()));
        std::lock_guard lock(s.mu);
        s.unreleased.push_back(std::move(piece));
      }
    }
  }
}

// Runs `fn` on rank 0 of `comm` and gives its status and text to every rank.
int on_root(MPI_Comm comm, std::string& text, const std::function<int(std::string&)>& fn) {
  int status = NC_NOERR;
  if (rank_of(comm) == 0) status = fn(text);
  long long len = static_cast<long long>(text.size());
  long long head[2] = {status, len};
  MPI_Bcast(head, 2, MPI_LONG_LONG, 0, comm);
  text.resize(static_cast<std::size_t>(head[1]));
  if (head[1] > 0) MPI_Bcast(text.data(), static_cast<int>(head[1]), MPI_CHAR, 0, comm);
  return static_cast<int>(head[0]);
}

// PnetCDF's two environment switches, read when a file is created or
// opened, as PnetCDF reads them (this build has RELAX_COORD_BOUND on and
// safe mode off unless set).
void read_environment(File& f) {
  const char* safe = std::getenv("PNETCDF_SAFE_MODE");
  f.safe_mode = safe != nullptr && *safe != '0';
  const char* relax = std::getenv("PNETCDF_RELAX_COORD_BOUND");
  f.strict_coords = relax != nullptr && *relax == '0';
}

// The cmode checks of PnetCDF's ncmpi_create and ncmpio_create, in their
// order, and the default format for a cmode that names none.
int check_cmode(int& cmode) {
  if (cmode & NC_NETCDF4) return NC_ENOTBUILT;  // this PnetCDF is built without NetCDF-4
  if ((cmode & (NC_64BIT_OFFSET | NC_64BIT_DATA)) == (NC_64BIT_OFFSET | NC_64BIT_DATA)) return NC_EINVAL_CMODE;
  if (!(cmode & (NC_64BIT_DATA | NC_64BIT_OFFSET | NC_CLASSIC_MODEL))) {
    int format = NC_FORMAT_CLASSIC;
    ncmpi_inq_default_format(&format);
    if (format == NC_FORMAT_CDF5) cmode |= NC_64BIT_DATA;
    if (format == NC_FORMAT_CDF2) cmode |= NC_64BIT_OFFSET;
  }
  if (cmode & (NC_DISKLESS | NC_MMAP)) return NC_EINVAL_CMODE;
  return NC_NOERR;
}

// PnetCDF's enddef before its fills: the layout the file would take
// (layout.hpp). NC_EVARSIZE keeps define mode, as PnetCDF's does; rank 0
// would write the header.
int end_define(File& f, MPI_Offset h_minfree = 0, MPI_Offset v_align = 0, MPI_Offset v_minfree = 0,
               MPI_Offset r_align = 0) {
  if (!f.define_mode) return NC_ENOTINDEFINE;
  if (h_minfree < 0 || v_align < 0 || v_minfree < 0 || r_align < 0) return NC_EINVAL;
  std::optional<Layout> old;
  if (!f.committed.empty()) old = Schema::parse(f.committed).layout;
  const int rc = lay_out(f.schema, f.hints, h_minfree, v_align, v_minfree, r_align, old ? &*old : nullptr,
                         f.schema.layout);
  if (rc == NC_EVARSIZE) return rc;
  f.define_mode = false;
  f.independent = false;
  if (rank_of(f.comm) == 0 && rc == NC_NOERR) f.put_size += f.schema.layout.xsz;
  return rc;
}

}  // namespace

File* find_file(int ncid) {
  if (ncid < 0) return nullptr;
  State& s = state();
  std::lock_guard lock(s.mu);
  auto it = s.files.find(ncid);
  return it == s.files.end() ? nullptr : it->second.get();
}

Route route(int ncid) {
  const File* f = find_file(ncid);
  if (f == nullptr) return Route::real;
  return f->real_too ? Route::both : Route::cove;
}

Client& client() {
  State& s = state();
  std::lock_guard lock(s.mu);
  if (!s.client) s.client = Client::connect();
  return *s.client;
}

std::string cove_name(const File& f, int varid) {
  const Var& v = f.schema.vars[static_cast<std::size_t>(varid)];
  // Paths and netCDF names may both contain ':': the path's length keeps
  // "a" + "b:c" apart from "a:b" + "c", which would share bytes otherwise.
  std::string name = fmt::format("pnetcdf:{:016x}:{}:{}:{}:{}:{}", f.schema.writer, f.path.size(), f.path,
                                 v.key.empty() ? v.name : v.key, v.type, v.dims.size());
  if (!v.fill_tag.empty()) name += ":" + v.fill_tag;
  if (name.size() > 255) {
    const std::hash<std::string> hash;
    name = fmt::format("pnetcdf#{:016x}{:016x}", hash(name), hash(name + '\x01'));
  }
  return name;
}

int report(int code, const std::string& what) {
  std::fprintf(stderr, "cove-pnetcdf: %s\n", what.c_str());
  return code;
}

int from_exception(const char* call, const File& f) {
  try {
    throw;
  } catch (const Error& e) {
    return report(NC_EFILE, fmt::format("{} on {}: {}", call, f.path, e.what()));
  } catch (const std::exception& e) {
    return report(NC_EFILE, fmt::format("{} on {}: {}", call, f.path, e.what()));
  }
}

File* find_file(const std::string& path) {
  State& s = state();
  std::lock_guard lock(s.mu);
  for (auto& [ncid, f] : s.files) {
    if (f->path == path) return f.get();
  }
  return nullptr;
}

int publish(File& f) {
  long long mine = f.schema.numrecs, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_LONG_LONG, MPI_MAX, f.comm);
  f.schema.numrecs = all;
  // Rank 0 leaves the reduction only after every rank entered it, that is
  // after every rank's puts returned (they are stored): now it may publish.
  std::string unused;
  f.published = true;
  return on_root(f.comm, unused, [&](std::string&) {
    try {
      // Sealed: the version is complete, its unwritten cells read as the
      // fill value (or fail, in NC_NOFILL mode), and nothing is put into it later.
      std::vector<std::string> vars;
      for (std::size_t v = 0; v < f.schema.vars.size(); ++v) {
        define_var(f, static_cast<int>(v));
        vars.push_back(cove_name(f, static_cast<int>(v)));
      }
      if (!vars.empty()) client().seal(vars, f.version);  // one request per server
      const std::string s = f.schema.serialize();
      client().put_meta(meta_name(f.path), f.version, std::span(reinterpret_cast<const std::byte*>(s.data()), s.size()));
      return NC_NOERR;
    } catch (...) {
      return from_exception("publishing", f);
    }
  });
}

void writers_meet(const File& f) {
  if (f.writer && !f.real_too) MPI_Barrier(f.comm);
}

int unsupported(int ncid, const char* name) {
  const File* f = find_file(ncid);
  return report(NC_ENOTSUPPORT, fmt::format("{} is not supported on the coupled file {}", name, f ? f->path : "?"));
}

// Deletes a coupled path: publishes the newest version there is as
// deleted. NC_ENOENT when there is none to delete.
int delete_coupled(const std::string& path) {
  std::uint64_t own = 0;
  {
    std::lock_guard lock(state().mu);
    if (auto it = state().created.find(path); it != state().created.end()) own = it->second;
  }
  try {
    const std::uint64_t gone = deleted_through(path);
    const std::uint64_t newest = std::max(own, latest_published(path));
    if (newest <= gone) return NC_ENOENT;
    const std::string mark = "deleted";
    client().put_meta(deleted_name(path), newest,
                      std::span(reinterpret_cast<const std::byte*>(mark.data()), mark.size()));
    return NC_NOERR;
  } catch (const std::exception& e) {
    return report(NC_EFILE, fmt::format("the deletion of the coupled file {}: {}", path, e.what()));
  }
}

// unlink() and remove() of a path this process created or opened as a
// coupled file in memory mode delete it as ncmpi_delete does: programs that
// clean up with POSIX calls (as PnetCDF's own tests do) see it gone. The
// real call runs too, for a file left on disk from before; its ENOENT does
// not count when the coupled file was deleted. Any other path (mode `both`
// included, whose file the real library creates and removes itself) goes
// straight to the C library, with no round trip to Cove.
bool coupled_in_memory_here(const char* path) {
  if (path == nullptr) return false;
  {
    std::lock_guard lock(state().mu);
    if (!state().created.count(path) && !state().seen.count(path)) return false;
  }
  try {
    const Config* c = config();
    const FileRule* rule = c != nullptr ? rule_for(*c, path, true) : nullptr;
    return rule != nullptr && rule->mode == Mode::memory;
  } catch (const std::exception&) {
    return false;  // a bad configuration: nothing was coupled by it
  }
}

template <class Fn>
int remove_path(const char* path, Fn real) {
  if (!coupled_in_memory_here(path)) return real(path);
  const int rc = real(path);
  const int real_errno = errno;
  if (rc != 0 && real_errno != ENOENT) return rc;  // on disk and not removable: nothing is deleted
  switch (delete_coupled(path)) {
    case NC_NOERR:
      return 0;
    case NC_ENOENT:
      errno = real_errno;
      return rc;
    default:
      errno = EIO;
      return -1;
  }
}

}  // namespace cove::pnetcdf

using namespace cove::pnetcdf;

extern "C" {

COVE_PNETCDF_API int ncmpi_create(MPI_Comm comm, const char* path, int cmode, MPI_Info info, int* ncidp) {
  static const auto real = real_fn<decltype(&::ncmpi_create)>("ncmpi_create");
  const FileRule* rule = nullptr;
  try {
    const Config* c = config();
    if (c != nullptr && path != nullptr && *path != '\0') rule = rule_for(*c, path, true);
  } catch (const std::exception& e) {
    return report(NC_EINVAL, fmt::format("ncmpi_create: bad COVE_PNETCDF_CONFIG: {}", e.what()));
  }
  if (rule == nullptr || rule->mode == Mode::file) return real(comm, path, cmode, info, ncidp);
  if (const int rc = check_cmode(cmode); rc != NC_NOERR) return rc;
  if (ncidp == nullptr) return NC_EINVAL;
  auto file = std::make_unique<File>();
  file->path = path;
  file->writer = true;
  read_environment(*file);
  file->real_too = rule->mode == Mode::both;
  file->transfer = rule->transfer;
  file->define_mode = true;
  file->info = combine_env_hints(info);
  file->hints = read_hints(file->info);
  file->schema.cmode = cmode;
  // The next version of the file: one more than this process last created,
  // or than the newest any writer published. Every rank finds the same
  // without a collective: nothing is published before all ranks are in close.
  std::uint64_t version = 0;
  bool exists = false;
  {
    std::lock_guard lock(state().mu);
    if (auto it = state().created.find(path); it != state().created.end()) version = it->second + 1;
    exists = version > 0 || state().seen.count(path) > 0;
  }
  if (version == 0) {
    try {
      const std::uint64_t newest = latest_published(path);
      version = newest + 1;  // a path never published starts at 1
      exists = newest > 0;
    } catch (...) {
      return from_exception("ncmpi_create", *file);
    }
  }
  // NC_NOCLOBBER: a coupled file exists once a version of it was created
  // here or published by any writer, and ncmpi_delete did not remove it.
  if ((cmode & NC_NOCLOBBER) && exists) {
    try {
      const std::uint64_t gone = deleted_through(path);
      std::uint64_t newest = version - 1;  // created here, or the newest published
      if (newest <= gone) newest = latest_published(path);
      exists = newest > gone;
    } catch (...) {
      return from_exception("ncmpi_create", *file);
    }
    if (exists) return NC_EEXIST;
  }
  // Only now the real file, which an error above would have left open.
  int ncid = -1;
  if (rule->mode == Mode::both) {
    const int rc = real(comm, path, cmode, info, &ncid);
    if (rc != NC_NOERR) return rc;
  }
  {
    std::lock_guard lock(state().mu);
    state().created[path] = version;
  }
  auto* shared = shared_comm(comm);
  ++shared->files;
  file->shared_comm = shared;
  file->comm = shared->comm;
  file->schema.writer = shared->writer;
  file->version = version;
  *ncidp = add_file(std::move(file), ncid);
  return NC_NOERR;
}

COVE_PNETCDF_API int ncmpi_open(MPI_Comm comm, const char* path, int omode, MPI_Info info, int* ncidp) {
  static const auto real = real_fn<decltype(&::ncmpi_open)>("ncmpi_open");
  const FileRule* rule = nullptr;
  double timeout_s = 0;
  try {
    const Config* c = config();
    if (c != nullptr && path != nullptr && *path != '\0') rule = rule_for(*c, path, false);
    if (c != nullptr) timeout_s = c->timeout_s;
  } catch (const std::exception& e) {
    return report(NC_EINVAL, fmt::format("ncmpi_open: bad COVE_PNETCDF_CONFIG: {}", e.what()));
  }
  if (rule == nullptr || rule->mode == Mode::file) return real(comm, path, omode, info, ncidp);
  if (ncidp == nullptr) return NC_EINVAL;
  auto file = std::make_unique<File>();
  file->path = path;
  file->transfer = rule->transfer;
  file->schema.cmode = omode;
  read_environment(*file);
  file->info = combine_env_hints(info);
  file->hints = read_hints(file->info);
  auto* shared = shared_comm(comm);
  file->comm = shared->comm;
  const bool write = (omode & NC_WRITE) != 0;
  if (write && rule->mode == Mode::both) {
    return report(NC_ENOTSUPPORT, fmt::format("ncmpi_open: NC_WRITE on {}, coupled in `both` mode, is not supported "
                                              "(a write would reach Cove but not the file)",
                                              path));
  }
  // A file this process created: its own newest version (reopened after
  // close). Any other: the next version a writer publishes.
  std::uint64_t own = 0;
  {
    std::lock_guard lock(state().mu);
    if (auto it = state().created.find(path); it != state().created.end()) own = it->second;
  }
  std::string text;
  const int status = on_root(file->comm, text, [&](std::string& out) {
    std::uint64_t after = 0;
    {
      std::lock_guard lock(state().mu);
      after = state().seen[path];
    }
    try {
      const auto timeout_ms = static_cast<std::int64_t>(timeout_s * 1000);
      // A version ncmpi_delete removed is not opened.
      const std::uint64_t gone = deleted_through(path);
      const auto meta = own > gone ? client().get_meta(meta_name(path), own, timeout_ms)
                                   : client().get_meta_next(meta_name(path), std::max(after, gone), timeout_ms);
      // NC_WRITE: the next version starts as this one (derive), after the
      // newest any writer published.
      std::uint64_t next = 0;
      if (write) {
        next = std::max(meta.version, client().get_meta_latest(meta_name(path), 0).version) + 1;
        File probe;
        probe.path = path;
        probe.schema = Schema::parse(std::string(reinterpret_cast<const char*>(meta.data.data()), meta.data.size()));
        std::vector<std::string> vars;
        for (std::size_t v = 0; v < probe.schema.vars.size(); ++v) vars.push_back(cove_name(probe, static_cast<int>(v)));
        if (!vars.empty()) client().derive(vars, meta.version, next);
      }
      out = std::to_string(meta.version) + " " + std::to_string(next) + " " +
            std::string(reinterpret_cast<const char*>(meta.data.data()), meta.data.size());
      return NC_NOERR;
    } catch (const cove::Error& e) {
      if (e.code() == cove::Code::Timeout || (e.code() == cove::Code::NotFound && !write)) {
        return report(NC_ENOENT, fmt::format("ncmpi_open: no writer published the coupled file {} (version > {}) "
                                             "within {} s",
                                             path, own > 0 ? own - 1 : after, timeout_s));
      }
      return from_exception("ncmpi_open", *file);
    } catch (...) {
      return from_exception("ncmpi_open", *file);
    }
  });
  if (status != NC_NOERR) return status;
  const auto space = text.find(' ');
  const auto space2 = text.find(' ', space + 1);
  file->version = std::stoull(text.substr(0, space));
  const std::uint64_t next = std::stoull(text.substr(space + 1, space2 - space - 1));
  try {
    file->schema = Schema::parse(text.substr(space2 + 1));
  } catch (const std::exception& e) {
    return report(NC_ENOTNC, fmt::format("ncmpi_open: the schema published for {} is not readable: {}", path, e.what()));
  }
  if (write) {
    // A writer of the derived version, in data mode; close seals and publishes it.
    file->writer = true;
    file->version = next;
    file->defined.assign(file->schema.vars.size(), true);
    file->fixed_vars = file->schema.vars.size();
    file->committed = file->schema.serialize();
    std::lock_guard lock(state().mu);
    state().created[path] = next;
  } else {
    std::lock_guard lock(state().mu);
    auto& seen = state().seen[path];
    seen = std::max(seen, file->version);
  }
  ++shared->files;
  file->shared_comm = shared;
  *ncidp = add_file(std::move(file), -1);
  return NC_NOERR;
}

// In `both` mode the entry goes even when the real close fails: its ncid is
// the real library's, which may hand it to an uncoupled file next. Every rank
// publishes regardless, since publishing is collective.
COVE_PNETCDF_API int ncmpi_close(int ncid) {
  static const auto real = real_fn<decltype(&::ncmpi_close)>("ncmpi_close");
  File* f = find_file(ncid);
  if (f == nullptr) return real(ncid);
  const int real_rc = f->real_too ? real(ncid) : NC_NOERR;
  // Closing in define mode ends it first, as PnetCDF's close does.
  int status = NC_NOERR;
  bool publish_it = f->writer && !f->published;
  if (f->writer && f->define_mode) {
    status = end_define(*f);
    // PnetCDF's close goes on after a failed enddef: the file keeps the
    // header of its last enddef, or none. Cove publishes that schema, or
    // nothing.
    if (status == NC_EVARSIZE) {
      if (f->committed.empty()) {
        publish_it = false;
      } else {
        const MPI_Offset numrecs = f->schema.numrecs;
        f->schema = Schema::parse(f->committed);
        f->schema.numrecs = std::max(f->schema.numrecs, numrecs);
      }
    } else {
      const int rc = fill_at_enddef(*f, ncid);
      if (status == NC_NOERR) status = rc;
    }
  }
  // Requests still pending are cancelled, as PnetCDF's close does
  // (NC_EPENDING): their puts are not stored.
  if (!f->requests.empty() && !f->real_too) {
    int puts = 0;
    for (const auto& [id, r] : f->requests) puts += r.put ? 1 : 0;
    report(NC_EPENDING, fmt::format("ncmpi_close: {} nonblocking put and {} get requests still pending on {} "
                                    "(rank {}): cancelled",
                                    puts, f->requests.size() - static_cast<std::size_t>(puts), f->path,
                                    rank_of(f->comm)));
    f->requests.clear();
    f->buffer.clear();
    f->buffer_used = 0;
    if (status == NC_NOERR) status = NC_EPENDING;
  }
  if (publish_it) {
    const int rc = publish(*f);
    if (status == NC_NOERR) status = rc;
  }
  remove_file(ncid);
  return real_rc != NC_NOERR ? real_rc : status;
}

// Deleting a coupled file removes its versions (see deleted_name): an
// open then fails with NC_ENOENT, as for a deleted file, unless a writer
// creates it anew; NC_ENOENT when there is none to delete. In `both` mode
// the real file is deleted too.
COVE_PNETCDF_API int ncmpi_delete(const char* filename, MPI_Info info) {
  static const auto real = real_fn<decltype(&::ncmpi_delete)>("ncmpi_delete");
  const FileRule* rule = nullptr;
  try {
    const Config* c = config();
    if (c != nullptr && filename != nullptr && *filename != '\0') rule = rule_for(*c, filename, true);
  } catch (const std::exception& e) {
    return report(NC_EINVAL, fmt::format("ncmpi_delete: bad COVE_PNETCDF_CONFIG: {}", e.what()));
  }
  if (rule == nullptr || rule->mode == Mode::file) return real(filename, info);
  if (rule->mode == Mode::both) {
    if (const int rc = real(filename, info); rc != NC_NOERR) return rc;
  }
  return delete_coupled(filename);
}

COVE_PNETCDF_API int unlink(const char* path) {
  static const auto real = real_fn<int (*)(const char*)>("unlink");
  return remove_path(path, real);
}

COVE_PNETCDF_API int remove(const char* path) {
  static const auto real = real_fn<int (*)(const char*)>("remove");
  return remove_path(path, real);
}

COVE_PNETCDF_API int ncmpi_abort(int ncid) {
  static const auto real = real_fn<decltype(&::ncmpi_abort)>("ncmpi_abort");
  File* f = find_file(ncid);
  if (f == nullptr) return real(ncid);
  const int real_rc = f->real_too ? real(ncid) : NC_NOERR;
  remove_file(ncid);
  return real_rc;
}

// Lays the file out as PnetCDF would (the queries answer from it), then fills.
static int enddef_and_fill(File& f, int ncid, MPI_Offset h_minfree, MPI_Offset v_align, MPI_Offset v_minfree,
                           MPI_Offset r_align) {
  const int rc = end_define(f, h_minfree, v_align, v_minfree, r_align);
  if (f.define_mode) return rc;
  const int filled = fill_at_enddef(f, ncid);
  f.committed = f.schema.serialize();
  return rc != NC_NOERR ? rc : filled;
}

COVE_PNETCDF_API int ncmpi_enddef(int ncid) {
  COUPLED(ncmpi_enddef, ncid)
  return enddef_and_fill(*f, ncid, 0, 0, 0, 0);
}

// The header and alignment arguments shape the layout, as in PnetCDF.
COVE_PNETCDF_API int ncmpi__enddef(int ncid, MPI_Offset h_minfree, MPI_Offset v_align, MPI_Offset v_minfree,
                                   MPI_Offset r_align) {
  COUPLED(ncmpi__enddef, ncid, h_minfree, v_align, v_minfree, r_align)
  return enddef_and_fill(*f, ncid, h_minfree, v_align, v_minfree, r_align);
}

COVE_PNETCDF_API int ncmpi_redef(int ncid) {
  COUPLED(ncmpi_redef, ncid)
  if (!f->writer || f->published) return NC_EPERM;
  if (f->define_mode) return NC_EINDEFINE;
  f->define_mode = true;
  return NC_NOERR;
}

COVE_PNETCDF_API int ncmpi_sync(int ncid) {
  COUPLED(ncmpi_sync, ncid)
  if (f->define_mode) return NC_EINDEFINE;
  writers_meet(*f);
  return NC_NOERR;
}

COVE_PNETCDF_API int ncmpi_flush(int ncid) {
  COUPLED(ncmpi_flush, ncid)
  return f->define_mode ? NC_EINDEFINE : NC_NOERR;
}

COVE_PNETCDF_API int ncmpi_sync_numrecs(int ncid) {
  COUPLED(ncmpi_sync_numrecs, ncid)
  long long mine = f->schema.numrecs, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_LONG_LONG, MPI_MAX, f->comm);
  f->schema.numrecs = all;
  return NC_NOERR;
}

COVE_PNETCDF_API int ncmpi_begin_indep_data(int ncid) {
  COUPLED(ncmpi_begin_indep_data, ncid)
  if (f->define_mode) return NC_EINDEFINE;
  if (f->independent) return NC_EINDEP;
  f->independent = true;
  // Collective in PnetCDF (a sync of the collective file handle): what any
  // rank did in collective mode is done before another's independent puts.
  writers_meet(*f);
  return NC_NOERR;
}

COVE_PNETCDF_API int ncmpi_end_indep_data(int ncid) {
  COUPLED(ncmpi_end_indep_data, ncid)
  if (!f->independent) return NC_ENOTINDEP;
  f->independent = false;
  writers_meet(*f);
  return NC_NOERR;
}


}  // extern "C"

namespace cove::pnetcdf {

// A finished bput's bytes go back once every later one is finished (PnetCDF's abuf_coalesce).
static void release_buffer(File& f, int request) {
  for (auto& e : f.buffer) {
    if (e.request == request) e.pending = false;
  }
  while (!f.buffer.empty() && !f.buffer.back().pending) {
    f.buffer_used -= f.buffer.back().bytes;
    f.buffer.pop_back();
  }
}

// A request's wait: a put's boxes go into the store, a get is read. Its
// status, or the error that stopped it.
static int complete(File& f, File::Request& r) {
  if (r.get) return std::exchange(r.get, nullptr)();
  if (r.puts.empty()) return r.status;
  if (f.published) {
    return report(NC_EPERM, fmt::format("ncmpi_wait: {} was already published by dtf_transfer; a put still pending "
                                        "there is not stored",
                                        f.path));
  }
  try {
    for (const auto& p : r.puts) store_box(f, p.var, p.box, p.bytes.data(), p.bytes.size());
  } catch (...) {
    return from_exception("ncmpi_wait", f);
  }
  r.puts.clear();
  return r.status;
}

// Nonblocking requests on coupled files are done when they are waited for
// (File::Request): wait does the puts, then the gets, hands back their
// statuses and, as PnetCDF's does, returns the first request's error (a
// get's NC_ERANGE) in the order given (by id for the _ALL forms). The mode
// checks are PnetCDF's (ncmpio_wait): data mode, then wait_all in
// collective mode and wait in independent mode.
static int wait_requests(File& f, int num, int* reqs, int* statuses, bool independent) {
  if (f.define_mode) return NC_EINDEFINE;
  if (independent && !f.independent) return NC_ENOTINDEP;
  if (!independent && f.independent) return NC_EINDEP;
  if (num == 0) return NC_NOERR;
  const bool all = num == NC_REQ_ALL || num == NC_GET_REQ_ALL || num == NC_PUT_REQ_ALL;
  if (!all && num < 0) return NC_EINVAL;
  // The requests waited for, in the order given (by id for the _ALL forms).
  std::vector<int> ids;
  if (all) {
    for (const auto& [id, r] : f.requests) {
      if (num == NC_REQ_ALL || (num == NC_PUT_REQ_ALL) == r.put) ids.push_back(id);
    }
  } else {
    ids.assign(reqs, reqs + num);
  }
  std::vector<int> status(ids.size(), NC_NOERR);
  std::vector<bool> done(ids.size(), false);
  // Puts first, then gets, as PnetCDF's wait does: a get waited for with a
  // put reads what the put wrote.
  for (const bool puts : {true, false}) {
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (ids[i] == NC_REQ_NULL || done[i]) continue;
      auto it = f.requests.find(ids[i]);
      if (it == f.requests.end()) {
        if (!puts) status[i] = NC_EINVAL_REQUEST;
        continue;
      }
      if (it->second.put != puts) continue;
      done[i] = true;
      status[i] = complete(f, it->second);
      if (puts) release_buffer(f, ids[i]);
      f.requests.erase(it);
    }
  }
  int first = NC_NOERR;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (first == NC_NOERR) first = status[i];
    if (all) continue;
    reqs[i] = NC_REQ_NULL;
    if (statuses != nullptr) statuses[i] = status[i];
  }
  return first;
}

}  // namespace cove::pnetcdf

extern "C" {

COVE_PNETCDF_API int ncmpi_wait_all(int ncid, int num, int* reqs, int* statuses) {
  COUPLED(ncmpi_wait_all, ncid, num, reqs, statuses)
  if (f->real_too) return NC_NOERR;
  // As a collective put: no rank's puts land under another rank's earlier
  // get, and every rank's are stored when it returns. The mode errors (the
  // same on every rank) meet nobody.
  const bool meets = !f->define_mode && !f->independent;
  if (meets) writers_meet(*f);
  const int rc = wait_requests(*f, num, reqs, statuses, false);
  if (meets) writers_meet(*f);
  return rc;
}

COVE_PNETCDF_API int ncmpi_wait(int ncid, int num, int* reqs, int* statuses) {
  COUPLED(ncmpi_wait, ncid, num, reqs, statuses)
  if (f->real_too) return NC_NOERR;
  return wait_requests(*f, num, reqs, statuses, true);
}

// Cancelling a request on a coupled file drops it: a get's buffer is left
// as it was, a put's boxes were never stored, and a bput's bytes of the
// attached buffer are freed.
COVE_PNETCDF_API int ncmpi_cancel(int ncid, int num, int* reqs, int* statuses) {
  COUPLED(ncmpi_cancel, ncid, num, reqs, statuses)
  if (f->real_too) return NC_NOERR;
  if (num == 0) return NC_NOERR;
  if (num < NC_PUT_REQ_ALL) return NC_EINVAL;
  const auto drop = [&](std::map<int, File::Request>::iterator it) {
    if (it->second.put) release_buffer(*f, it->first);
    return f->requests.erase(it);
  };
  if (num < 0) {
    for (auto it = f->requests.begin(); it != f->requests.end();) {
      const bool take = num == NC_REQ_ALL || (num == NC_PUT_REQ_ALL) == it->second.put;
      it = take ? drop(it) : std::next(it);
    }
    return NC_NOERR;
  }
  int first = NC_NOERR;
  for (int i = 0; i < num; ++i) {
    if (statuses != nullptr) statuses[i] = NC_NOERR;
    if (reqs[i] == NC_REQ_NULL) continue;
    auto it = f->requests.find(reqs[i]);
    if (it != f->requests.end()) {
      drop(it);
      reqs[i] = NC_REQ_NULL;
      continue;
    }
    if (statuses != nullptr) statuses[i] = NC_EINVAL_REQUEST;
    if (first == NC_NOERR) first = NC_EINVAL_REQUEST;
  }
  return first;
}

// The hints the program gave (and PNETCDF_HINTS), and PnetCDF's own with
// the values its enddef fixed, 0 before the first (ncmpio_inq_misc): a new
// MPI_Info the caller frees.
COVE_PNETCDF_API int ncmpi_inq_file_info(int ncid, MPI_Info* info_used) {
  COUPLED(ncmpi_inq_file_info, ncid, info_used)
  if (f->real_too || info_used == nullptr) return NC_NOERR;
  if (f->info != MPI_INFO_NULL) {
    MPI_Info_dup(f->info, info_used);
  } else {
    MPI_Info_create(info_used);
  }
  set_hint_values(*info_used, f->hints);
  MPI_Info_set(*info_used, "nc_num_subfiles", "0");  // PnetCDF is built without subfiling
  return NC_NOERR;
}

COVE_PNETCDF_API int ncmpi_get_file_info(int ncid, MPI_Info* info_used) {
  REAL_IF_UNCOUPLED(ncmpi_get_file_info, ncid, info_used)
  return ncmpi_inq_file_info(ncid, info_used);
}

// The format's cmode flag, as PnetCDF's ncmpi_inq_version answers.
COVE_PNETCDF_API int ncmpi_inq_version(int ncid, int* nc_mode) {
  COUPLED(ncmpi_inq_version, ncid, nc_mode)
  if (f->real_too || nc_mode == nullptr) return NC_NOERR;
  const int cmode = f->schema.cmode;
  *nc_mode = cmode & NC_64BIT_DATA ? NC_64BIT_DATA : cmode & NC_64BIT_OFFSET ? NC_64BIT_OFFSET : NC_CLASSIC_MODEL;
  return NC_NOERR;
}

COVE_PNETCDF_API int ncmpi_inq_nreqs(int ncid, int* nreqs) {
  COUPLED(ncmpi_inq_nreqs, ncid, nreqs)
  if (nreqs && !f->real_too) *nreqs = static_cast<int>(f->requests.size());
  return NC_NOERR;
}

COVE_PNETCDF_API int ncmpi_buffer_attach(int ncid, MPI_Offset bufsize) {
  COUPLED(ncmpi_buffer_attach, ncid, bufsize)
  if (f->real_too) return NC_NOERR;
  if (bufsize <= 0) return NC_ENULLBUF;
  if (f->buffer_size >= 0) return NC_EPREVATTACHBUF;
  f->buffer_size = bufsize;
  f->buffer_used = 0;
  f->buffer.clear();
  return NC_NOERR;
}

COVE_PNETCDF_API int ncmpi_buffer_detach(int ncid) {
  COUPLED(ncmpi_buffer_detach, ncid)
  if (f->real_too) return NC_NOERR;
  if (f->buffer_size < 0) return NC_ENULLABUF;
  for (const auto& e : f->buffer) {
    if (e.pending) return NC_EPENDINGBPUT;
  }
  f->buffer_size = -1;
  f->buffer_used = 0;
  f->buffer.clear();
  return NC_NOERR;
}

COVE_PNETCDF_API int ncmpi_inq_buffer_usage(int ncid, MPI_Offset* usage) {
  COUPLED(ncmpi_inq_buffer_usage, ncid, usage)
  if (f->real_too || usage == nullptr) return NC_NOERR;
  if (f->buffer_size < 0) return NC_ENULLABUF;
  *usage = f->buffer_used;
  return NC_NOERR;
}

COVE_PNETCDF_API int ncmpi_inq_buffer_size(int ncid, MPI_Offset* buf_size) {
  COUPLED(ncmpi_inq_buffer_size, ncid, buf_size)
  if (f->real_too || buf_size == nullptr) return NC_NOERR;
  if (f->buffer_size < 0) return NC_ENULLABUF;
  *buf_size = f->buffer_size;
  return NC_NOERR;
}

}  // extern "C"
