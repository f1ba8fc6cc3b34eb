// The C API over the C++ one: every entry point catches everything and
// turns it into a status plus a per-thread message.
#include <cove.h>

#include "common/config.hpp"
#include <cove/client.hpp>
#include <cove/error.hpp>
#include <cove/server.hpp>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <vector>

struct cove_server {
  cove::Server server;
  std::string address;
};

// A client handle counts the calls in flight on it, so that cove_disconnect
// on one thread waits for the calls of others instead of freeing the handle
// under them; calls that begin while it waits are refused.
struct cove_client {
  explicit cove_client(cove::Client c) : client(std::move(c)) {}
  cove::Client client;
  std::mutex mutex;  // guards the fields below
  std::condition_variable idle;
  int calls = 0;
  bool closing = false;
  std::map<void*, cove::SharedBuffer> allocated;  // cove_alloc, by address
};

namespace {

thread_local std::string t_error;

template <typename Fn>
cove_status guarded(Fn&& fn) noexcept {
  try {
    fn();
    t_error.clear();
    return COVE_OK;
  } catch (const cove::Error& e) {
    t_error = e.what();
    return static_cast<cove_status>(e.code());
  } catch (const std::bad_alloc&) {
    t_error = "out of memory";
    return COVE_NO_MEMORY;
  } catch (const std::exception& e) {
    t_error = e.what();
    return COVE_INTERNAL;
  } catch (...) {
    t_error = "unknown error";
    return COVE_INTERNAL;
  }
}

void require(const void* p, const char* what) {
  if (!p) throw cove::Error(cove::Code::InvalidArgument, std::string(what) + " is NULL");
}

cove::Box region(int ndim, const int64_t* start, const int64_t* count) {
  require(start, "start");
  require(count, "count");
  if (ndim < 1 || ndim > cove::kMaxDims)
    throw cove::Error(cove::Code::InvalidArgument, "ndim = " + std::to_string(ndim) + " is outside 1..10");
  return cove::Box::from_start_count({start, static_cast<std::size_t>(ndim)}, {count, static_cast<std::size_t>(ndim)});
}

cove::Layout layout_of(const char* layout) { return layout ? cove::Layout::parse(layout) : cove::Layout::c(); }

// One call on a client handle: counted while it runs; refused once
// cove_disconnect has begun.
class InFlight {
 public:
  explicit InFlight(cove_client* c) : c_(c) {
    require(c, "client");
    std::lock_guard lock(c->mutex);
    if (c->closing)
      throw cove::Error(cove::Code::InvalidArgument, "this client is being disconnected (cove_disconnect was called)");
    ++c->calls;
  }
  ~InFlight() {
    std::lock_guard lock(c_->mutex);
    if (--c_->calls == 0) c_->idle.notify_all();
  }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;

 private:
  cove_client* c_;
};

// guarded(), for a call on a client: fn(cove::Client&).
template <typename Fn>
cove_status on_client(cove_client* c, Fn&& fn) noexcept {
  return guarded([&] {
    InFlight call(c);
    fn(c->client);
  });
}

// The first line of a connect ticket (cove_connect_ticket).
constexpr char kTicketHead[] = "cove-connect-ticket-1\n";

// A define's shape: ndim extents, or none for NULL.
std::span<const cove::Index> shape_of(int ndim, const int64_t* shape) {
  if (!shape) return {};
  if (ndim < 1 || ndim > cove::kMaxDims)
    throw cove::Error(cove::Code::InvalidArgument, "ndim = " + std::to_string(ndim) + " is outside 1..10");
  return {shape, static_cast<std::size_t>(ndim)};
}

}  // namespace

extern "C" {

const char* cove_last_error(void) { return t_error.c_str(); }

cove_status cove_server_start(const char* transport, uint64_t memory_budget, int max_versions, cove_server_t** out) {
  return guarded([&] {
    require(transport, "transport");
    require(out, "server");
    cove::ServerOptions o;
    o.transport = transport;
    o.memory_budget = memory_budget;
    o.max_versions = max_versions;
    auto* s = new cove_server{cove::Server(o), {}};
    s->address = s->server.address();
    *out = s;
  });
}

const char* cove_server_address(const cove_server_t* server) { return server ? server->address.c_str() : ""; }

cove_status cove_server_stop(cove_server_t* server) {
  return guarded([&] {
    if (!server) return;
    server->server.stop();
    delete server;
  });
}

cove_status cove_connect(const char* target, int64_t timeout_ms, cove_client_t** out) {
  return guarded([&] {
    require(out, "client");
    cove::ConnectOptions o;
    o.timeout_ms = timeout_ms;
    *out = new cove_client(cove::Client::connect(target ? target : "", o));
  });
}

// A ticket: a first line naming the format, whether the group is known to
// have started (its connection file was read), the servers' addresses
// separated by commas, and the secret, which runs to the end (any bytes).
cove_status cove_connect_ticket(const char* target, int64_t timeout_ms, char* ticket, size_t capacity, size_t* size) {
  return guarded([&] {
    require(size, "size");
    *size = 0;
    const cove::ConnectTarget t = cove::Client::resolve_target(target ? target : "", timeout_ms);
    std::string servers;
    for (const auto& a : t.servers) servers += (servers.empty() ? "" : ",") + a;
    const std::string bytes = std::string(kTicketHead) + (t.from_file ? "1" : "0") + "\n" + servers + "\n" + t.secret;
    *size = bytes.size();
    if (capacity < bytes.size()) {
      if (capacity == 0) return;  // asked for the size only
      throw cove::Error(cove::Code::InvalidArgument, "the ticket takes " + std::to_string(bytes.size()) +
                                                        " bytes; capacity is " + std::to_string(capacity));
    }
    require(ticket, "ticket");
    std::memcpy(ticket, bytes.data(), bytes.size());
  });
}

cove_status cove_connect_with_ticket(const char* ticket, size_t size, int64_t timeout_ms, cove_client_t** out) {
  return guarded([&] {
    require(ticket, "ticket");
    require(out, "client");
    const std::string_view bytes(ticket, size);
    const std::string_view head(kTicketHead);
    const auto bad = [] { throw cove::Error(cove::Code::InvalidArgument, "these bytes are not a cove_connect_ticket"); };
    if (bytes.substr(0, head.size()) != head || bytes.size() < head.size() + 2) bad();
    const char started = bytes[head.size()];
    if ((started != '0' && started != '1') || bytes[head.size() + 1] != '\n') bad();
    const std::string_view rest = bytes.substr(head.size() + 2);
    const auto end = rest.find('\n');
    if (end == std::string_view::npos || end == 0) bad();
    cove::ConnectOptions o;
    o.timeout_ms = timeout_ms;
    o.group_started = started == '1';
    o.secret = std::string(rest.substr(end + 1));
    *out = new cove_client(cove::Client::connect(std::string(rest.substr(0, end)), o));
  });
}

cove_status cove_disconnect(cove_client_t* client) {
  return guarded([&] {
    if (!client) return;
    {
      std::unique_lock lock(client->mutex);
      if (client->closing)
        throw cove::Error(cove::Code::InvalidArgument, "cove_disconnect called twice on one client");
      client->closing = true;
      client->idle.wait(lock, [&] { return client->calls == 0; });
    }
    delete client;
  });
}

cove_status cove_define(cove_client_t* c, const char* name, const char* dtype, int ndim, const int64_t* shape) {
  return cove_define_reorg(c, name, dtype, ndim, shape, nullptr, nullptr);
}

cove_status cove_define_reorg(cove_client_t* c, const char* name, const char* dtype, int ndim, const int64_t* shape,
                              const char* reorg, const char* layouts) {
  return on_client(c, [&](cove::Client& client) {
    require(name, "name");
    require(dtype, "dtype");
    const std::span<const cove::Index> s = shape_of(ndim, shape);
    cove::VariableOptions options;
    if (reorg) options.reorg = cove::parse_reorg(reorg);
    if (layouts) options.layouts = cove::common::parse_layouts(layouts, "layouts");
    client.define(name, cove::DType::parse(dtype), ndim, s, options);
  });
}

cove_status cove_define_fill(cove_client_t* c, const char* name, const char* dtype, int ndim, const int64_t* shape,
                             const void* fill, size_t fill_bytes) {
  return on_client(c, [&](cove::Client& client) {
    require(name, "name");
    require(dtype, "dtype");
    const std::span<const cove::Index> s = shape_of(ndim, shape);
    cove::VariableOptions options;
    if (fill) {
      if (fill_bytes == 0) throw cove::Error(cove::Code::InvalidArgument, "fill value of 0 bytes");
      const auto* f = static_cast<const std::byte*>(fill);
      options.fill.assign(f, f + fill_bytes);
    }
    client.define(name, cove::DType::parse(dtype), ndim, s, options);
  });
}

cove_status cove_seal(cove_client_t* c, const char* var, uint64_t version, int* already) {
  return on_client(c, [&](cove::Client& client) {
    require(var, "var");
    const bool was = client.seal(var, version);
    if (already) *already = was ? 1 : 0;
  });
}

cove_status cove_derive(cove_client_t* c, const char* const* vars, size_t nvars, uint64_t from, uint64_t to,
                        size_t* shared) {
  return on_client(c, [&](cove::Client& client) {
    if (nvars > 0) require(vars, "vars");
    std::vector<std::string> names;
    for (size_t i = 0; i < nvars; ++i) {
      if (!vars[i]) throw cove::Error(cove::Code::InvalidArgument, "vars[" + std::to_string(i) + "] is null");
      names.emplace_back(vars[i]);
    }
    const std::size_t n = client.derive(names, from, to);
    if (shared) *shared = n;
  });
}

cove_status cove_put(cove_client_t* c, const char* var, uint64_t version, int ndim, const int64_t* start,
                     const int64_t* count, const void* data, size_t bytes, const char* layout) {
  return on_client(c, [&](cove::Client& client) {
    require(var, "var");
    client.put(var, version, region(ndim, start, count), data, bytes, layout_of(layout));
  });
}

cove_status cove_put_local(cove_client_t* c, const char* var, uint64_t version, int ndim, const int64_t* start,
                           const int64_t* count, const void* data, size_t bytes, const char* layout) {
  return on_client(c, [&](cove::Client& client) {
    require(var, "var");
    client.put_local(var, version, region(ndim, start, count), data, bytes, layout_of(layout));
  });
}

cove_status cove_alloc(cove_client_t* c, size_t bytes, void** data) {
  return on_client(c, [&](cove::Client& client) {
    require(data, "data");
    cove::SharedBuffer b = client.allocate(bytes);
    std::lock_guard lock(c->mutex);
    *data = b.data();
    c->allocated.emplace(b.data(), std::move(b));
  });
}

cove_status cove_free(cove_client_t* c, void* data) {
  return on_client(c, [&](cove::Client&) {
    if (!data) return;
    std::lock_guard lock(c->mutex);
    if (c->allocated.erase(data) == 0)
      throw cove::Error(cove::Code::InvalidArgument, "cove_free of memory that cove_alloc did not give");
  });
}

cove_status cove_release(cove_client_t* c, const char* var, uint64_t version, int ndim, const int64_t* start,
                         const int64_t* count, size_t* released) {
  return on_client(c, [&](cove::Client& client) {
    require(var, "var");
    const std::size_t n = client.release(var, version, region(ndim, start, count));
    if (released) *released = n;
  });
}

cove_status cove_get(cove_client_t* c, const char* var, uint64_t version, int ndim, const int64_t* start,
                     const int64_t* count, void* data, size_t bytes, int64_t timeout_ms, const char* layout) {
  return on_client(c, [&](cove::Client& client) {
    require(var, "var");
    client.get(var, version, region(ndim, start, count), data, bytes, timeout_ms, layout_of(layout));
  });
}

cove_status cove_get_latest(cove_client_t* c, const char* var, int ndim, const int64_t* start, const int64_t* count,
                            void* data, size_t bytes, int64_t timeout_ms, const char* layout, uint64_t* version) {
  return on_client(c, [&](cove::Client& client) {
    require(var, "var");
    const auto v = client.get_latest(var, region(ndim, start, count), data, bytes, timeout_ms, layout_of(layout));
    if (version) *version = v;
  });
}

cove_status cove_latest(cove_client_t* c, const char* var, uint64_t* version) {
  return on_client(c, [&](cove::Client& client) {
    require(var, "var");
    require(version, "version");
    const auto v = client.latest(var);
    if (!v) throw cove::Error(cove::Code::NotFound, std::string("variable '") + var + "' has no versions");
    *version = *v;
  });
}

cove_status cove_remove(cove_client_t* c, const char* var, uint64_t version) {
  return on_client(c, [&](cove::Client& client) {
    require(var, "var");
    client.remove(var, version);
  });
}

cove_status cove_undefine(cove_client_t* c, const char* var, size_t* dropped) {
  return on_client(c, [&](cove::Client& client) {
    require(var, "var");
    const std::size_t n = client.undefine(var);
    if (dropped) *dropped = n;
  });
}

cove_status cove_put_meta(cove_client_t* c, const char* name, uint64_t version, const void* data, size_t bytes) {
  return on_client(c, [&](cove::Client& client) {
    require(name, "name");
    if (bytes) require(data, "data");
    client.put_meta(name, version, {static_cast<const std::byte*>(data), bytes});
  });
}

namespace {

std::pair<std::span<const int64_t>, std::span<const int64_t>> lock_region(int ndim, const int64_t* start,
                                                                          const int64_t* count) {
  if (ndim < 0 || ndim > cove::kMaxDims)
    throw cove::Error(cove::Code::InvalidArgument, "ndim = " + std::to_string(ndim) + " is outside 0..10");
  if (ndim == 0) return {};
  require(start, "start");
  require(count, "count");
  return {{start, static_cast<std::size_t>(ndim)}, {count, static_cast<std::size_t>(ndim)}};
}

}  // namespace

cove_status cove_lock_read(cove_client_t* c, const char* name, int ndim, const int64_t* start, const int64_t* count,
                           int64_t timeout_ms) {
  return on_client(c, [&](cove::Client& client) {
    require(name, "name");
    auto [s, n] = lock_region(ndim, start, count);
    client.lock_read(name, s, n, timeout_ms);
  });
}

cove_status cove_lock_write(cove_client_t* c, const char* name, int ndim, const int64_t* start, const int64_t* count,
                            int64_t timeout_ms) {
  return on_client(c, [&](cove::Client& client) {
    require(name, "name");
    auto [s, n] = lock_region(ndim, start, count);
    client.lock_write(name, s, n, timeout_ms);
  });
}

cove_status cove_unlock(cove_client_t* c, const char* name, int ndim, const int64_t* start, const int64_t* count) {
  return on_client(c, [&](cove::Client& client) {
    require(name, "name");
    auto [s, n] = lock_region(ndim, start, count);
    client.unlock(name, s, n);
  });
}

cove_status cove_get_meta(cove_client_t* c, const char* name, cove_meta_mode mode, uint64_t version,
                          int64_t timeout_ms, void* data, size_t capacity, size_t* size, uint64_t* found_version) {
  return on_client(c, [&](cove::Client& client) {
    require(name, "name");
    if (capacity) require(data, "data");
    cove::Metadata m;
    switch (mode) {
      case COVE_META_EXACT: m = client.get_meta(name, version, timeout_ms); break;
      case COVE_META_NEXT: m = client.get_meta_next(name, version, timeout_ms); break;
      case COVE_META_LATEST: m = client.get_meta_latest(name, timeout_ms); break;
      default:
        throw cove::Error(cove::Code::InvalidArgument, "metadata mode " + std::to_string(static_cast<int>(mode)) +
                                                           " is not EXACT, NEXT or LATEST");
    }
    std::memcpy(data, m.data.data(), std::min(capacity, m.data.size()));
    if (size) *size = m.data.size();
    if (found_version) *found_version = m.version;
  });
}

namespace {

// Copies a per-server vector into a caller's array of `capacity` entries.
// `what` names the array in the error for a NULL one.
void per_server(const std::vector<std::uint64_t>& v, uint64_t* out, size_t capacity, size_t* servers, const char* what) {
  if (capacity) require(out, what);
  std::copy_n(v.begin(), std::min(capacity, v.size()), out);
  if (servers) *servers = v.size();
}

}  // namespace

cove_status cove_server_count(cove_client_t* c, size_t* count) {
  return on_client(c, [&](cove::Client& client) {
    require(count, "count");
    *count = client.servers().size();
  });
}

cove_status cove_become_worker(cove_client_t* c, size_t server, const char* name, cove_worker_slot* slot) {
  return on_client(c, [&](cove::Client& client) {
    require(name, "name");
    const cove::WorkerSlot w = client.become_worker(server, name);
    if (slot) *slot = {w.slot, w.slots, w.workers};
  });
}

cove_status cove_locate(cove_client_t* c, const char* var, uint64_t version, int ndim, const int64_t* start,
                        const int64_t* count, int64_t timeout_ms, uint64_t* held, size_t capacity, size_t* servers) {
  return on_client(c, [&](cove::Client& client) {
    require(var, "var");
    per_server(client.locate(var, version, region(ndim, start, count), timeout_ms), held, capacity, servers, "held");
  });
}

cove_status cove_bytes_read(cove_client_t* c, uint64_t* bytes, size_t capacity, size_t* servers) {
  return on_client(c, [&](cove::Client& client) { per_server(client.bytes_read(), bytes, capacity, servers, "bytes"); });
}

cove_status cove_put_on(cove_client_t* c, size_t server, const char* var, uint64_t version, int ndim,
                        const int64_t* start, const int64_t* count, const void* data, size_t bytes,
                        const char* layout) {
  return on_client(c, [&](cove::Client& client) {
    require(var, "var");
    client.put_on(server, var, version, region(ndim, start, count), data, bytes, layout_of(layout));
  });
}

cove_status cove_put_placed(cove_client_t* c, const char* var, uint64_t version, int ndim, const int64_t* start,
                            const int64_t* count, const void* data, size_t bytes, const char* layout,
                            size_t* server) {
  return on_client(c, [&](cove::Client& client) {
    require(var, "var");
    const std::size_t on = client.put_placed(var, version, region(ndim, start, count), data, bytes, layout_of(layout));
    if (server) *server = on;
  });
}

cove_status cove_task_done(cove_client_t* c, const char* var, int ndim, const int64_t* start, const int64_t* count,
                           double seconds) {
  return on_client(c, [&](cove::Client& client) {
    require(var, "var");
    client.task_done(var, region(ndim, start, count), seconds);
  });
}

cove_status cove_monitor_reads(cove_client_t* c, int on) {
  return on_client(c, [&](cove::Client& client) { client.monitor_reads(on != 0); });
}

cove_status cove_end_read_task(cove_client_t* c) {
  return on_client(c, [&](cove::Client& client) { client.end_read_task(); });
}

cove_status cove_register_dataflow(cove_client_t* c, const char* path) {
  return on_client(c, [&](cove::Client& client) {
    require(path, "path");
    client.register_dataflow(path);
  });
}

cove_status cove_stat(cove_client_t* c, cove_stats* out) {
  return on_client(c, [&](cove::Client& client) {
    require(out, "stats");
    const auto s = client.stat();
    *out = {s.variables, s.versions,      s.pieces,   s.owned_bytes,   s.local_bytes,    s.memory_budget,
            s.requests,  s.bytes_in,      s.replicas, s.replica_bytes, s.reorganizations, s.parked_gets,
            s.metadata_bytes};
  });
}

}  // extern "C"
