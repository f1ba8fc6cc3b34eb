// The process's Cove client for staging views, the views' settings, and
// their puts and gets (cove/kokkos.hpp).
#include "kokkos/allocations.hpp"

#include "core/fail.hpp"

#include <cove/error.hpp>

#include <set>
#include <sstream>
#include <tuple>

namespace cove::kokkos {
namespace {

struct State {
  std::mutex mutex;
  std::optional<Client> client;
  std::int64_t timeout_ms = -1;  // Options::timeout_ms
  // The definitions this client has made (define is a round trip): name,
  // dtype, rank, fill value.
  std::set<std::tuple<std::string, std::string, int, std::vector<std::byte>>> defined;
};

State& state() {
  static State s;
  return s;
}

using cove::detail::fail;

std::string extents_text(int rank, const std::array<Index, 8>& e) {
  std::ostringstream s;
  s << "(";
  for (int d = 0; d < rank; ++d) s << (d ? "," : "") << e[d];
  return s.str() + ")";
}

// Records the typed shape of a call on the allocation, once it has been
// checked to describe the whole allocation (not a subview starting there).
void describe(detail::Allocation& a, const detail::ViewShape& shape) {
  Index volume = 1;
  for (int d = 0; d < shape.rank; ++d) volume *= shape.extents[d];
  const auto bytes = static_cast<std::size_t>(volume) * shape.dtype.size();
  if (bytes > a.bytes || a.bytes - bytes >= 8)
    fail(Code::InvalidArgument, "staging view '", a.label, "' of extents ", extents_text(shape.rank, shape.extents),
         " is a subview of its allocation (", a.bytes, " bytes); subviews of staging views are not supported");
  a.settings.shape = shape;
}

std::shared_ptr<detail::Allocation> described(const void* staging, const detail::ViewShape& shape, const char* what) {
  auto a = detail::find_allocation(staging, what);
  std::lock_guard lock(a->mutex);
  describe(*a, shape);
  return a;
}

struct Transfer {
  std::optional<Client> client;
  std::string variable;
  std::uint64_t version;
  Box box;
  detail::ViewShape shape;
  std::int64_t timeout_ms;
  std::size_t bytes;
  std::vector<std::byte> fill;
};

// Everything a put or get of the allocation needs, checked.
Transfer plan(detail::Allocation& a, const std::optional<detail::ViewShape>& typed, std::size_t bytes,
              const char* what) {
  Transfer t;
  std::lock_guard lock(a.mutex);
  if (typed) describe(a, *typed);
  if (!a.settings.shape)
    fail(Code::InvalidArgument, what, ": staging view '", a.label,
         "' was copied by Kokkos as bytes before its type was known: call cove::kokkos::set_version or "
         "set_lower_bound on it first, or spell its type View<T, Layout, cove::StagingSpace>");
  const auto& s = a.settings;
  t.shape = *s.shape;
  std::array<Index, kMaxDims> lo{}, hi{};
  for (int d = 0; d < t.shape.rank; ++d) {
    const Index extent = t.shape.extents[d];
    lo[d] = s.lower ? (*s.lower)[d] : 0;
    const Index upper = s.upper ? (*s.upper)[d] : lo[d] + extent - 1;
    if (upper - lo[d] + 1 != extent)
      fail(Code::InvalidArgument, what, ": staging view '", a.label, "' has extent ", extent, " in dimension ", d,
           " but its bounds [", lo[d], ", ", upper, "] (inclusive) hold ", upper - lo[d] + 1, " elements");
    hi[d] = upper + 1;
  }
  t.box = Box::from_bounds(std::span<const Index>(lo.data(), static_cast<std::size_t>(t.shape.rank)),
                           std::span<const Index>(hi.data(), static_cast<std::size_t>(t.shape.rank)));
  t.bytes = static_cast<std::size_t>(t.box.volume()) * t.shape.dtype.size();
  // Kokkos' byte copy hands over the span of what it copies: fewer bytes
  // than the view's is a subview starting where the view does.
  if (typed ? bytes < t.bytes : bytes != t.bytes)
    fail(Code::InvalidArgument, what, ": ", bytes, " bytes for staging view '", a.label, "' of ", t.bytes,
         " (subviews of staging views are not supported)");
  t.variable = s.variable;
  t.version = s.version;
  t.fill = s.fill;
  std::lock_guard state_lock(state().mutex);
  if (!state().client)
    fail(Code::InvalidArgument, what, ": cove::kokkos::initialize() has not been called (staging view '", a.label,
         "')");
  t.client = *state().client;
  t.timeout_ms = s.timeout_ms.value_or(state().timeout_ms);
  return t;
}

void define(Transfer& t) {
  auto key = std::make_tuple(t.variable, t.shape.dtype.name(), t.shape.rank, t.fill);
  {
    std::lock_guard lock(state().mutex);
    if (state().defined.contains(key)) return;
  }
  VariableOptions options;
  options.fill = t.fill;
  t.client->define(t.variable, t.shape.dtype, t.shape.rank, {}, options);
  std::lock_guard lock(state().mutex);
  state().defined.insert(std::move(key));
}

// Adds the view's variable, version and box to a client error (whose
// message already starts with its code's name).
[[noreturn]] void rethrow(const Error& e, const char* what, const Transfer& t) {
  fail(e.code(), what, " of variable '", t.variable, "' version ", t.version, " box ", t.box.to_string(), " (",
       t.shape.layout.to_string(), "): ", cove::detail::message_of(e));
}

void do_put(detail::Allocation& a, const std::optional<detail::ViewShape>& typed, const void* host,
            std::size_t bytes) {
  constexpr const char* what = "Kokkos::deep_copy into a staging view";
  Transfer t = plan(a, typed, bytes, what);
  try {
    define(t);
    t.client->put(t.variable, t.version, t.box, host, t.bytes, t.shape.layout, MemorySpace::host);
  } catch (const Error& e) {
    rethrow(e, what, t);
  }
}

void do_get(detail::Allocation& a, const std::optional<detail::ViewShape>& typed, void* host, std::size_t bytes) {
  constexpr const char* what = "Kokkos::deep_copy from a staging view";
  Transfer t = plan(a, typed, bytes, what);
  try {
    define(t);
    t.client->get(t.variable, t.version, t.box, host, t.bytes, t.timeout_ms, t.shape.layout, MemorySpace::host);
  } catch (const Error& e) {
    rethrow(e, what, t);
  }
}

}  // namespace

void initialize(const Options& options) {
  std::lock_guard lock(state().mutex);
  if (state().client) fail(Code::InvalidArgument, "cove::kokkos::initialize(): already initialized");
  state().client = Client::connect(options.target, options.connect);
  state().timeout_ms = options.timeout_ms;
  state().defined.clear();
}

void finalize() noexcept {
  std::lock_guard lock(state().mutex);
  state().client.reset();
  state().defined.clear();
}

bool is_initialized() noexcept {
  std::lock_guard lock(state().mutex);
  return state().client.has_value();
}

Client client() {
  std::lock_guard lock(state().mutex);
  if (!state().client) fail(Code::InvalidArgument, "cove::kokkos::client(): cove::kokkos::initialize() has not been called");
  return *state().client;
}

namespace detail {

void set_bound(const void* staging, const ViewShape& shape, bool upper, std::span<const Index> bound) {
  auto a = find_allocation(staging, upper ? "cove::kokkos::set_upper_bound" : "cove::kokkos::set_lower_bound");
  std::lock_guard lock(a->mutex);
  describe(*a, shape);
  std::array<Index, 8> b{};
  std::copy(bound.begin(), bound.end(), b.begin());
  (upper ? a->settings.upper : a->settings.lower) = b;
}

void set_version(const void* staging, const ViewShape& shape, std::uint64_t version) {
  auto a = described(staging, shape, "cove::kokkos::set_version");
  std::lock_guard lock(a->mutex);
  a->settings.version = version;
}

void set_timeout(const void* staging, const ViewShape& shape, std::int64_t timeout_ms) {
  auto a = described(staging, shape, "cove::kokkos::set_timeout");
  std::lock_guard lock(a->mutex);
  a->settings.timeout_ms = timeout_ms;
}

void set_fill(const void* staging, const ViewShape& shape, const void* value, std::size_t bytes) {
  auto a = described(staging, shape, "cove::kokkos::set_fill");
  std::lock_guard lock(a->mutex);
  const auto* v = static_cast<const std::byte*>(value);
  a->settings.fill.assign(v, v + bytes);
}

bool seal(const void* staging, const ViewShape& shape) {
  constexpr const char* what = "cove::kokkos::seal";
  auto a = described(staging, shape, what);
  Transfer t = plan(*a, shape, static_cast<std::size_t>(-1), what);
  try {
    define(t);
    return t.client->seal(t.variable, t.version);
  } catch (const Error& e) {
    rethrow(e, what, t);
  }
}

void bind(const void* reader, const ViewShape& reader_shape, const void* writer, const ViewShape& writer_shape) {
  auto w = described(writer, writer_shape, "cove::kokkos::view_bind_layout (writer's view)");
  auto r = described(reader, reader_shape, "cove::kokkos::view_bind_layout (reader's view)");
  std::string variable;
  {
    std::lock_guard lock(w->mutex);
    variable = w->settings.variable;
  }
  std::lock_guard lock(r->mutex);
  r->settings.variable = variable;
}

void put(const void* staging, const ViewShape& shape, const void* host, std::size_t bytes) {
  do_put(*find_allocation(staging, "Kokkos::deep_copy into a staging view"), shape, host, bytes);
}

void get(const void* staging, const ViewShape& shape, void* host, std::size_t bytes) {
  do_get(*find_allocation(staging, "Kokkos::deep_copy from a staging view"), shape, host, bytes);
}

void put_bytes(const void* staging, const void* host, std::size_t bytes) {
  do_put(*find_allocation(staging, "Kokkos::deep_copy into a staging view"), std::nullopt, host, bytes);
}

void get_bytes(const void* staging, void* host, std::size_t bytes) {
  do_get(*find_allocation(staging, "Kokkos::deep_copy from a staging view"), std::nullopt, host, bytes);
}

void check_extents(const std::string& dst, const std::string& src, int rank, const std::array<Index, 8>& dst_extents,
                   const std::array<Index, 8>& src_extents) {
  for (int d = 0; d < rank; ++d)
    if (dst_extents[d] != src_extents[d])
      fail(Code::InvalidArgument, "Kokkos::deep_copy: extents of '", dst, "' ", extents_text(rank, dst_extents),
           " and '", src, "' ", extents_text(rank, src_extents), " differ");
}

}  // namespace detail
}  // namespace cove::kokkos
