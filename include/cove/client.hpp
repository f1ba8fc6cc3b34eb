// A client of Cove staging servers: define variables, put and get regions
// of N-dimensional arrays by version, leave data in place for readers
// (put_local), and inspect the space.
//
// Regions are (start, count) boxes in the variable's global index space;
// buffers hold exactly the region's elements in the given memory layout
// (C by default). Versions are 64-bit step numbers chosen by writers.
//
// Ownership: a Client is a handle; copies share one connection, which closes
// (releasing this client's put_local pieces) when the last copy goes.
// Blocking: every call blocks until the server has answered; get() also
// waits for data as its timeout says. No call waits forever on a server or
// link that stops answering: requests have deadlines (30 s; a get's own
// timeout plus max(250 ms, 10% of it), so that a get with timeout t >= 0
// returns by then even when its server is stopped), and moving bytes 10 s
// plus 1 s per 100 MiB, after which the call fails with Timeout or
// Unavailable. A connection that failed is
// made again by the next call to that server; what the server held for the
// old one (this client's put_local pieces, its leases) ended with it.
// Thread-safety: all member functions may be called from any thread.
// Memory: every buffer given to put, put_local, put_async, get and
// get_latest may be host or device (GPU) memory, found by itself or stated
// by `memory` (cove/memory.hpp, docs/gpu.md). A device buffer follows the
// same rules as a host one: put_local's stays untouched until release().
// Layouts: a reader may ask for any layout; where the reorganization happens
// is the reorganization method's choice (cove/reorg.hpp). COVE_REORG
// (rad, rasar, rasia, sahr) sets this client's method; connect() fails with
// InvalidArgument for another value.
// Errors (cove::Error): InvalidArgument for a bad argument or one that does
// not match the variable's definition, naming the field and value (nothing
// is stored); NotFound for unknown variables or versions; Timeout when a
// get's timeout passes first; NoMemory when the server's memory budget
// would be exceeded; Unavailable when no server answers.
#pragma once

#include <cove/box.hpp>
#include <cove/dtype.hpp>
#include <cove/export.hpp>
#include <cove/layout.hpp>
#include <cove/memory.hpp>
#include <cove/reorg.hpp>
#include <cove/server.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace cove {

class DataflowGraph;

struct ConnectOptions {
  // How long connect() waits for a server to appear, in milliseconds.
  std::int64_t timeout_ms = 10000;
  // The group's secret, which the client proves it holds to every server
  // (docs/security.md). Empty: the secret in the connection file, else the
  // COVE_SECRET environment variable, else that of a server running in this
  // process at that address.
  std::string secret;
  // The group is known to have started (its connection file was read, as
  // cove::connect(MPI_Comm) does on rank 0 before it passes the addresses
  // on): a member that does not answer within 2 s is taken for dead rather
  // than waited for until timeout_ms. Connecting through a connection file
  // sets it by itself.
  bool group_started = false;
  // How puts from and gets into device memory move their bytes
  // (cove/memory.hpp); automatic chooses by size and availability. The
  // environment variables COVE_GPU_SEND and COVE_GPU_RECV, when set,
  // override these (connect() fails with InvalidArgument for a bad name).
  DeviceSendPath send_path = DeviceSendPath::automatic;
  DeviceRecvPath recv_path = DeviceRecvPath::automatic;
};

// What a connect() target names: the servers and, from a connection file,
// the group's secret.
struct ConnectTarget {
  std::vector<std::string> servers;
  std::string secret;
  bool from_file = false;  // read from a connection file (the group has started)
};

// A part of a piece that a server holds in another layout (cove/reorg.hpp).
struct ReplicaInfo {
  Box box;
  Layout layout;
  std::uint64_t bytes;
  bool ready;  // false: being built
};

struct PieceInfo {
  Box box;
  std::uint64_t bytes;
  std::string holder;  // address of the process whose memory holds the bytes
  bool on_server;      // true: a staging server (put); false: a writer (put_local)
  std::vector<ReplicaInfo> replicas;
  std::string copy;    // the server holding its second copy (replicas = 2); "" for none
};

struct VersionInfo {
  std::uint64_t version;
  std::vector<PieceInfo> pieces;
  bool sealed = false;  // seal(): gets never wait for it, puts into it are refused
};

// A metadata blob and its version.
struct Metadata {
  std::uint64_t version;
  std::vector<std::byte> data;
};

// The completion of a put_async(). Cheap to copy; copies share the put.
class COVE_EXPORT PutHandle {
 public:
  // True once the put has finished (successfully or not); never blocks.
  bool test() const;
  // Blocks until the put has finished; throws what the put threw.
  void wait() const;

 private:
  friend class Client;
  struct State;
  std::shared_ptr<State> state_;
};

// A standing interest in a region of a variable; see Client::subscribe().
// Destroying the last copy cancels it.
class COVE_EXPORT Subscription {
 public:
  // Stops the callbacks; blocks until a running callback has returned
  // (do not call it from inside the callback). Idempotent.
  void cancel();

 private:
  friend class Client;
  struct State;
  std::shared_ptr<State> state_;
};

// How a reader walks the steps of a stream (Client::steps).
struct StepOptions {
  // After step v, the next one is the oldest complete step at or after
  // v + stride: 1 takes every step, n every n-th version number.
  std::uint64_t stride = 1;
  // Under load: each next() skips to the newest complete step instead
  // (stride still sets the least distance from the last one).
  bool newest = false;
  // The first step is after this version; unset: the oldest the servers
  // keep (so a reader that starts late still sees every kept step).
  std::optional<std::uint64_t> after;
};

// A reader's walk over the steps of a stream of one or several variables:
// a step is a version that covers the reader's region of every variable.
// Steps come in increasing version order. The stream ends when a writer
// calls Client::end_steps: next() then returns every step up to the last
// one it names, and then nothing. Cheap to copy; copies share the walk.
// Thread-safety: one thread at a time per walk.
class COVE_EXPORT Steps {
 public:
  // The next step's version; std::nullopt once the stream has ended.
  // Waits for the variables' definitions (a reader may start first) and
  // for the step: timeout_ms 0 answers at once (NotFound when no new step
  // is complete), negative waits as long as it takes, positive fails with
  // Timeout after that long. Unavailable when the servers go away.
  std::optional<std::uint64_t> next(std::int64_t timeout_ms);
  // The version next() returned last, if any.
  std::optional<std::uint64_t> current() const;

 private:
  friend class Client;
  struct State;
  std::shared_ptr<State> state_;
};

// Per-variable settings: reorganization (cove/reorg.hpp) and the fill
// value; unset fields leave the variable's current ones.
struct VariableOptions {
  std::optional<Reorg> reorg;  // the method for this variable
  std::vector<Layout> layouts;  // the layouts RASIA prepares (empty: the server's)
  // What the cells of a sealed version that no put covered read as: the
  // bytes of one element (dtype size). Empty: none (such a get fails with
  // NotFound). A later define may add one, not change it.
  std::vector<std::byte> fill;
  // Send the definition with this client's first put of the variable
  // instead of in a request of its own to every server: one round trip
  // less per server, for a writer that defines a variable and puts it at
  // once (the HDF5 connector defines each dataset so). Until a put of it is
  // stored, no other client sees the variable; this client's own calls
  // that name it (get, seal, derive, undefine, ...) send the definition
  // first. An invalid definition fails define() itself, as without.
  bool with_first_put = false;
};

// What define() declared of a variable.
struct VariableDefinition {
  DType dtype;
  int ndim = 0;
  std::optional<Box> shape;
  std::vector<std::byte> fill;  // empty: none
};

struct VariableInfo {
  std::string name;
  DType dtype;
  int ndim;
  std::optional<Box> shape;
  std::vector<VersionInfo> versions;
  std::optional<Reorg> reorg;
  std::vector<Layout> layouts;
  std::vector<std::byte> fill;  // the fill value (dtype size bytes); empty: none
};

// Memory from Client::allocate(): `size()` bytes at `data()`, page-aligned,
// zeroed, freed when the last copy of this handle goes (it keeps its client's
// connection alive that long). Put it with put_local(): readers on this host
// map it and copy from it with one memcpy. Release every put_local piece in
// it before the last handle goes. Thread-safety: a handle may be copied and
// destroyed on any thread; the bytes are the caller's to synchronise.
class COVE_EXPORT SharedBuffer {
 public:
  SharedBuffer() = default;
  std::byte* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  explicit operator bool() const noexcept { return data_ != nullptr; }

 private:
  friend class Client;
  std::shared_ptr<void> state_;
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

// A worker slot taken by Client::become_worker.
struct WorkerSlot {
  std::uint32_t slot = 0;     // 0 .. slots - 1
  std::uint32_t slots = 0;    // the server's worker slots
  std::uint32_t workers = 0;  // workers registered there, this one included
};

// One decision of the group's placement component (server 0;
// docs/placement.md, "Decision log") with its inputs, as
// Client::placements returns them. Times are seconds since server 0
// started.
struct PlacementDecision {
  std::uint64_t sequence = 0;  // 0, 1, ... in the order server 0 decided
  std::string var;
  Box box;
  std::uint64_t bytes = 0;
  std::string policy;          // configured for the variable
  std::string applied;         // differs when data/hybrid placed as time (no affinity yet)
  std::uint32_t server = 0;    // the chosen server (index into servers())
  std::uint32_t slot = 0;      // the chosen worker slot of that server
  double eet = 0;              // expected execution time of the object's task
  double dat = 0;              // data available time (when the request was placed)
  double eat = 0;              // the slot's expected available time before this decision
  double ect = 0;              // expected completion time on the chosen slot
  double min_ect = 0;          // the least ECT over all slots
  std::int32_t group = -1;     // affinity group (METIS part), -1 without
  std::int32_t affinity = 0;   // affinity score of the chosen server
  std::uint32_t candidates = 0;  // data, hybrid: servers considered
};

class COVE_EXPORT Client {
 public:
  // Connects to a server group. `target` is the path of a connection file
  // written by cove-server, or server addresses ("ucx:...",
  // "inproc://NAME") separated by commas, or empty to use the COVE_CONNECT
  // environment variable. The client proves to every server that it holds
  // the group's secret (see ConnectOptions::secret for where it comes from).
  // Waits up to options.timeout_ms for the connection file and the server
  // to appear (Unavailable after that). A member of a group that does not
  // answer (it died; from a connection file, after a 2 s grace) is left
  // out: requests that need it fail with Unavailable naming it, list() and
  // stat() leave it out (stat_each() marks it unreachable), and connect()
  // fails only when no server answers. PermissionDenied when no secret is
  // known or a server refuses it, or the connection file is not readable;
  // InvalidArgument when the target is not a regular file.
  static Client connect(const std::string& target = "", const ConnectOptions& options = {});
  ~Client();
  Client(const Client&) = default;
  Client& operator=(const Client&) = default;

  // Defines a variable; defining it again with the same definition is a
  // no-op, with another one an InvalidArgument error. `shape` (optional,
  // one extent per dimension) declares the global domain [0, shape):
  // regions outside it are rejected. `options` sets the variable's
  // reorganization method and expected layouts (InvalidArgument for a
  // layout whose rank is not ndim) and its fill value (InvalidArgument
  // naming the variable for one that is not dtype size bytes, or differs
  // from the one it has). Readers waiting for the definition go on.
  void define(const std::string& name, DType dtype, int ndim, std::span<const Index> shape = {},
              const VariableOptions& options = {});

  // Stores a copy of `box` of version `version`: `data` holds
  // box.volume() * dtype size bytes in `layout`. The bytes are copied
  // during the call (on one host, by this process, into a shared-memory
  // segment the server granted); `data` may be reused when it returns.
  void put(const std::string& var, std::uint64_t version, const Box& box, const void* data, std::size_t bytes,
           const Layout& layout = Layout::c(), MemorySpace memory = MemorySpace::automatic);
  // put() onto server `server` (an index into servers()) instead of the one
  // the variable's sharding names: for a placement component choosing
  // where a consumer's input lies (docs/placement.md). The shards still
  // index it, so every reader finds it. When that server does not answer
  // the piece goes to the next that does, as put() does: a placement
  // never loses a put. OutOfRange for an index past servers(); otherwise
  // blocking and errors as put().
  void put_on(std::size_t server, const std::string& var, std::uint64_t version, const Box& box, const void* data,
              std::size_t bytes, const Layout& layout = Layout::c(), MemorySpace memory = MemorySpace::automatic);

  // put() of a piece placed by the group's placement component (server 0,
  // ServerOptions::placement; docs/placement.md): server 0 names the
  // server (by the variable's policy, over the group's worker slots) and
  // the piece goes there as put_on(). On any error of the placement (off
  // for this variable, server 0 gone or refusing) the piece goes where
  // put() sends it: a placement never loses a put. Returns the index of the
  // server it went to. `data` is in `layout` and `memory` as for put().
  // Blocking: one more request than put(); errors as put().
  std::size_t put_placed(const std::string& var, std::uint64_t version, const Box& box, const void* data,
                         std::size_t bytes, const Layout& layout = Layout::c(),
                         MemorySpace memory = MemorySpace::automatic);
  // Reports to the placement component that the consumer task reading
  // `box` of `var` ran `seconds`: the task monitor's explicit start and end
  // events, from which it predicts the next step's execution time.
  // Blocking: one request to server 0. InvalidArgument for a negative or
  // non-finite time; Unavailable when server 0 is gone.
  void task_done(const std::string& var, const Box& box, double seconds);
  // The task monitor as in the paper, by read intervals instead of
  // explicit events: with `on`, each get()/get_latest() of this client ends
  // the task that read its previous get's region, and the time between the
  // two requests goes to the placement component as that task's execution
  // time (task_done of the previous region). end_read_task() ends the last
  // one, e.g. when a worker has run its step's tasks. A report that fails
  // (server 0 gone) is logged at debug level and dropped: the get goes on.
  // A get that fails starts no task. Blocking: none now; afterwards one
  // more request to server 0 per get. Thread-safe.
  void monitor_reads(bool on);
  // Ends the task of the last get (see monitor_reads): reports the time
  // since that get was asked for. Nothing when monitoring is off or no get
  // has started a task since. Blocking: at most one request to server 0.
  void end_read_task();
  // Hands the consumer's dataflow graph (a .json or .toml file, at most
  // 1 MiB; docs/placement.md) to the placement component: once every
  // object it reads has a task time reported (its first step), METIS
  // groups the objects read together, one group per server, for the data
  // and hybrid policies. Blocking: one request to server 0. NotFound for a
  // missing file; InvalidArgument naming the file and the culprit for a
  // graph that does not parse, has a cycle or reads an unknown object.
  void register_dataflow(const std::string& path);
  // The same for a graph built in code (include/cove/dataflow.hpp).
  // InvalidArgument for a cycle, or a graph whose JSON form is over 1 MiB.
  void register_dataflow(const DataflowGraph& graph);
  // The newest `max` placement decisions server 0 remembers (it keeps the
  // last 1024), oldest first, with their inputs. Blocking: one request to
  // server 0. InvalidArgument for max 0 or over 1024; Unavailable when
  // server 0 is gone. Thread-safe, as every call of a Client.
  std::vector<PlacementDecision> placements(std::size_t max = 16);

  // Like put(), but the bytes stay in this process: the server only indexes
  // them and readers read them from here. `data` must stay valid and
  // unchanged until release() of the same (var, version, box), or until the
  // client disconnects, which releases all of its put_local pieces.
  void put_local(const std::string& var, std::uint64_t version, const Box& box, const void* data,
                 std::size_t bytes, const Layout& layout = Layout::c(), MemorySpace memory = MemorySpace::automatic);
  // `bytes` bytes of memory for put_local() that readers on this host copy
  // from with one memcpy: a shared-memory segment of this client's, which
  // they map (with COVE_SHM=0, heap memory they read another way). Throws
  // NoMemory.
  SharedBuffer allocate(std::size_t bytes);
  // Like put(), but returns at once; the put runs on another thread. `data`
  // must stay valid and unchanged until the handle reports completion.
  PutHandle put_async(const std::string& var, std::uint64_t version, const Box& box, const void* data,
                      std::size_t bytes, const Layout& layout = Layout::c(), MemorySpace memory = MemorySpace::automatic);

  // Withdraws a put_local piece; returns how many pieces the servers
  // dropped. Blocks until no reader is still copying from the piece: once
  // it returns, `data` may be reused or freed. (A reader that dies while
  // copying stops counting when its connection closes.)
  std::size_t release(const std::string& var, std::uint64_t version, const Box& box);

  // Fills `data` (region.volume() * dtype size bytes, in `layout`) with
  // `region` of `version`, assembled from every piece that intersects it:
  // where puts overlap, each cell holds the bytes of the put acknowledged
  // last. timeout_ms: 0 returns at once (NotFound if the region is not
  // fully covered), negative waits until it is, positive waits that long
  // and then fails with Timeout. Partial coverage is never returned, except
  // from a sealed version (seal()), which never waits: its cells that no
  // put covered read as the variable's fill value, or without one the get
  // fails at once with NotFound naming them. A variable not defined yet is
  // waited for too, within the same timeout (a reader may start first).
  void get(const std::string& var, std::uint64_t version, const Box& region, void* data, std::size_t bytes,
           std::int64_t timeout_ms, const Layout& layout = Layout::c(), MemorySpace memory = MemorySpace::automatic);
  // The same for the newest version covering `region`; returns that version.
  std::uint64_t get_latest(const std::string& var, const Box& region, void* data, std::size_t bytes,
                           std::int64_t timeout_ms, const Layout& layout = Layout::c(), MemorySpace memory = MemorySpace::automatic);

  // Calls callback(var, version) for versions newer than those present now
  // that fully cover `region`, in increasing order, on a thread of the
  // subscription's own: each call reports the newest covering version after
  // the last one reported, so versions that arrive and are superseded while
  // a callback runs are skipped. The callback must not cancel its own subscription.
  // If waiting fails (the servers go away), the callback is called no more.
  Subscription subscribe(const std::string& var, const Box& region,
                         std::function<void(const std::string& var, std::uint64_t version)> callback);

  // Walks the steps of `vars` (see Steps). regions: one per variable, or
  // empty for each variable's whole declared shape (InvalidArgument at the
  // first next() for a variable declared without one). Nothing is asked of
  // the servers until next(). InvalidArgument for no variables, a stride of
  // 0, or regions that are not one per variable.
  Steps steps(std::vector<std::string> vars, std::vector<Box> regions = {}, const StepOptions& options = {});
  // A writer ends the stream of `vars`: readers' Steps::next() return the
  // steps up to `last` (unset: each variable's newest version now) and
  // then end. Call it after the last step's puts have returned. It is the
  // metadata "cove.end/<var>" (version: the last step). NotFound for a
  // variable with no version when `last` is unset.
  void end_steps(std::span<const std::string> vars, std::optional<std::uint64_t> last = std::nullopt);

  // Small named blobs (at most 1 MiB) by version, e.g. step times or
  // checksums. get_meta waits as get() does (timeout_ms 0, <0, >0).
  void put_meta(const std::string& name, std::uint64_t version, std::span<const std::byte> data);
  Metadata get_meta(const std::string& name, std::uint64_t version, std::int64_t timeout_ms);
  // The first version after `after`.
  Metadata get_meta_next(const std::string& name, std::uint64_t after, std::int64_t timeout_ms);
  Metadata get_meta_latest(const std::string& name, std::int64_t timeout_ms);
  // The newest version now, or nullopt when `name` has none. Never waits,
  // and "none" is no error: cheaper than get_meta_latest(name, 0) and its
  // NotFound where a name is usually new (a producer numbering a file).
  std::optional<Metadata> find_latest_meta(const std::string& name);

  // Locks on a named object, or on a region of it (start and count, as in
  // get; both empty: the whole object), kept by one server of the group
  // (the hash of the name). Readers share a lock; a writer holds it alone.
  // Waiting requests are served in arrival order, so a writer is not
  // starved by readers coming after it. A lock belongs to this client's
  // connection: it lasts until unlock(), or until the connection closes
  // (the process exits or is killed), whatever happens to the data. Locks
  // only coordinate clients that take them: put and get do not look at
  // them.
  // Blocks until granted, or fails with Timeout (naming the object) after
  // timeout_ms (0: only if free now; negative values are InvalidArgument).
  // InvalidArgument names the object for a region outside the variable's
  // defined domain or of mismatched ranks; AlreadyExists when this client
  // already holds or waits for that very region.
  void lock_read(const std::string& name, std::span<const Index> start, std::span<const Index> count,
                 std::int64_t timeout_ms);
  void lock_write(const std::string& name, std::span<const Index> start, std::span<const Index> count,
                  std::int64_t timeout_ms);
  // Releases this client's lock on exactly that region of `name`. NotFound
  // when nobody holds it; PermissionDenied (naming the holder's connection
  // only as "another client") when another client does.
  void unlock(const std::string& name, std::span<const Index> start, std::span<const Index> count);

  // ---- in-staging workers (docs/placement.md, "Workers") ----
  //
  // Makes this client a consumer worker of server `server` (an index into
  // servers()): its connection takes one of that server's worker slots
  // (ServerOptions::worker_slots) until this client goes or its
  // connection closes (the process exits or is killed). `name` names the
  // worker in the server's log. Blocking: one request. Returns the slot, the
  // server's slots and the workers registered there now. Errors:
  // OutOfRange for an index past servers(); InvalidArgument for an empty
  // name; Unavailable when every slot is taken or the server is gone;
  // AlreadyExists when this client already is a worker of that server.
  WorkerSlot become_worker(std::size_t server, const std::string& name);
  // The bytes of `region` of `var` version `version` held by each server
  // (servers() order; put_local pieces left in writers' memory count for
  // no server), waiting up to timeout_ms for the version as get does.
  // Blocking; errors as get's.
  std::vector<std::uint64_t> locate(const std::string& var, std::uint64_t version, const Box& region,
                                    std::int64_t timeout_ms = -1);
  // The bytes this client's gets have read so far, by the server they came
  // from (servers() order): pieces a server holds, and small regions a
  // server answered with. Bytes read from writers' memory (put_local)
  // count for no server. Thread-safe.
  std::vector<std::uint64_t> bytes_read() const;

  // The definition of `var`: asked of a server the first time (one request,
  // blocking), then remembered by this client, as put and get do. Waits up
  // to timeout_ms for a writer to define it (< 0: until it does), then
  // Timeout; with 0, NotFound at once if it is not defined.
  VariableDefinition definition(const std::string& var, std::int64_t timeout_ms = 0);
  // Makes this client take `def` as the definition of `var` without asking
  // a server: for a caller that keeps definitions of its own (the HDF5
  // connector reads its datasets' from the file's metadata), which saves a
  // round trip per variable on the first put or get. Sends nothing. The
  // servers stay the authority: a get whose servers answer with another
  // dtype or global shape fails with InvalidArgument before any byte is
  // copied (and the definition is asked of a server next time), and a put
  // of another dtype is refused by the server. InvalidArgument for a
  // definition that cannot be (ndim, shape, fill size). Thread-safe.
  void remember_definition(const std::string& var, const VariableDefinition& def);

  // Seals a version on every server: it is complete. Gets of it never wait
  // (see get()); puts into it fail with InvalidArgument naming the variable
  // and version; sealing it again changes nothing. Returns whether it was
  // sealed already. Any writer may seal (e.g. each rank at its close): a
  // put acknowledged before the seal is in the version. Blocking: one
  // request per server. NotFound for an unknown variable.
  bool seal(const std::string& var, std::uint64_t version);
  // The same for version `version` of several variables at once (a file's
  // close): one request per server, whatever their number. All or nothing:
  // NotFound for an unknown variable, and then none is sealed. Returns, per
  // variable, whether it was sealed already.
  std::vector<bool> seal(std::span<const std::string> vars, std::uint64_t version);
  // seal(vars, version), then put_meta(meta_name, version, meta), in one
  // request per server: the metadata travels with the seal to its own
  // server, which is asked last, so a reader that finds the metadata finds
  // every variable sealed (a producer's close of a file version). Errors
  // as seal() and put_meta(); when putting the metadata fails, the
  // variables stay sealed.
  std::vector<bool> seal_and_put_meta(std::span<const std::string> vars, std::uint64_t version,
                                      const std::string& meta_name, std::span<const std::byte> meta);
  // Version `to` of each variable in `vars` starts with what version `from`
  // holds, without copying a byte: the pieces are shared (counted once in
  // the servers' budgets), and puts into `to` then override them cell by
  // cell. Deleting or evicting `from` leaves `to` as it is; a put_local
  // piece shared this way stays its writer's, and its release() withdraws
  // it from both. `to` is not sealed. All or nothing: NotFound for an
  // unknown variable or one no server holds version `from` of,
  // AlreadyExists when `to` exists already, InvalidArgument for from == to
  // or a variable named twice; nothing changes then. Returns the pieces
  // shared (summed over the servers that hold or index them). Blocking:
  // two requests per server.
  std::size_t derive(std::span<const std::string> vars, std::uint64_t from, std::uint64_t to);
  std::size_t derive(const std::string& var, std::uint64_t from, std::uint64_t to);
  // The newest version of `var`, if any.
  std::optional<std::uint64_t> latest(const std::string& var);
  // Deletes a version (NotFound if absent).
  void remove(const std::string& var, std::uint64_t version);
  // Removes a variable from every server with everything it holds: its
  // versions, pieces, replicas and access records (NotFound if it is not
  // defined). Gets waiting on it fail with NotFound; readers copying its
  // bytes finish first (their leases). put_local pieces leave the index at
  // once, and their writers' release() still waits for those readers.
  // Returns the number of pieces dropped. It may be defined again afterwards.
  std::size_t undefine(const std::string& var);
  // The same for several variables in one request per server (a closed
  // file's datasets): those defined go; then NotFound naming the ones no
  // server defined, if any (InvalidArgument for an empty list).
  std::size_t undefine(std::span<const std::string> vars);
  // Every variable with its versions and pieces, across all servers.
  std::vector<VariableInfo> list();
  // Totals over all servers, and each server's own figures.
  ServerStats stat();
  std::vector<std::pair<std::string, ServerStats>> stat_each();
  // Asks every server to shut down.
  void stop_server();
  // The servers' addresses.
  std::vector<std::string> servers() const;
  // The server addresses a target names (see connect()), without connecting.
  static std::vector<std::string> resolve(const std::string& target, std::int64_t timeout_ms);
  // The same, with the secret a connection file holds (empty for addresses).
  static ConnectTarget resolve_target(const std::string& target, std::int64_t timeout_ms);

  // This client's own address (readers reach its put_local data there).
  std::string address() const;

 private:
  friend class Steps;
  Client() = default;
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace cove
