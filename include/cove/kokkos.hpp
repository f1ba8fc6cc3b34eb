// Kokkos views in Cove: the Kokkos Staging Space of the paper's Figure 6
// (docs/kokkos.md), on Kokkos 3.4.
//
//   cove::kokkos::ScopeGuard staging;                 // after Kokkos is initialized
//   Kokkos::View<double**, Kokkos::LayoutRight, cove::StagingSpace> s("T", n0, n1);
//   cove::kokkos::set_lower_bound(s, lb0, lb1);        // inclusive bounds
//   cove::kokkos::set_upper_bound(s, ub0, ub1);
//   cove::kokkos::set_version(s, step);
//   Kokkos::deep_copy(s, host_view);                   // cove::Client::put
//   Kokkos::deep_copy(host_view, s);                   // cove::Client::get
//
// A staging view names the Cove variable of its label; its element type,
// rank and layout (LayoutRight: C, LayoutLeft: F) are the variable's dtype,
// dimensions and the layout its bytes travel in. deep_copy into it puts the
// host view's contents as (version, box) in the staging view's layout;
// deep_copy out of it gets (version, box) in that layout, waiting up to the
// view's timeout. A reader's view bound to a writer's (view_bind_layout)
// reads the writer's variable, reorganized by Cove into the reader's layout.
// Host views of another layout, or not contiguous, are copied through a
// temporary host view in the staging view's layout.
//
// Bounds are inclusive, as in DataSpaces: [lower, upper] with upper - lower
// + 1 equal to the view's extent in each dimension. Unset, the lower bound
// is 0 and the upper lower + extent - 1; the version is 0.
//
// Kokkos' own deep_copy(View, View) reaches Cove only for contiguous views
// of one layout (its byte copy, Kokkos::Impl::DeepCopy); for the others it
// needs an execution space that can touch both sides, which staging memory
// does not allow. So this header adds overloads of Kokkos::deep_copy for
// View<T, Layout, cove::StagingSpace> and View<T, cove::StagingSpace> on
// either side (more specialized than Kokkos' templates, so overload
// resolution picks them). Views spelled otherwise (Kokkos::Device<...,
// cove::StagingSpace>, memory traits) take Kokkos' path: the byte copy,
// which needs the view to have been described by one of the set_* calls.
// Copies between two staging views, and subviews of staging views, are not
// supported.
//
// Ownership: initialize() makes one cove::Client for the process, finalize()
// drops it; the settings belong to the view's allocation (its copies share
// them). Blocking: deep_copy blocks until Cove has stored or delivered
// every byte (a get waits for the version up to the timeout).
// Thread-safety: all functions may be called from any thread; settings of
// one view changed while it is being copied apply to the next copy.
// Errors (cove::Error): InvalidArgument when Cove is not initialized, for
// bounds that do not match the extents, extents that differ between the
// views, a staging view that is a subview, or a variable defined otherwise
// (another dtype or rank); Timeout when a get's version or box does not
// appear in time; the other errors of cove::Client::put and get.
#pragma once

#include <cove/client.hpp>
#include <cove/dtype.hpp>
#include <cove/kokkos/staging_space.hpp>
#include <cove/kokkos_export.hpp>
#include <cove/layout.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <complex>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>

namespace cove::kokkos {

struct Options {
  // The connection file or server addresses (cove::Client::connect); empty:
  // the COVE_CONNECT environment variable.
  std::string target;
  ConnectOptions connect;
  // How long deep_copy from a staging view waits for its data, unless the
  // view sets its own (set_timeout): negative (the default) as long as it
  // takes, 0 not at all, else that many milliseconds, then Timeout (the
  // timeout rule of every language: docs/staging.md, "Timeouts").
  std::int64_t timeout_ms = -1;
};

// Connects the process's client (Kokkos must be initialized already).
// Throws what cove::Client::connect throws, and InvalidArgument when it is
// already initialized.
COVE_KOKKOS_EXPORT void initialize(const Options& options = {});
// Drops the client (staging views may outlive it; copies then fail).
// Idempotent.
COVE_KOKKOS_EXPORT void finalize() noexcept;
COVE_KOKKOS_EXPORT bool is_initialized() noexcept;
// The client initialize() made, for calls of Cove's own API (InvalidArgument
// before initialize()).
COVE_KOKKOS_EXPORT Client client();

// initialize() for a scope, finalize() at its end.
class ScopeGuard {
 public:
  explicit ScopeGuard(const Options& options = {}) { initialize(options); }
  ~ScopeGuard() { finalize(); }
  ScopeGuard(const ScopeGuard&) = delete;
  ScopeGuard& operator=(const ScopeGuard&) = delete;
};

namespace detail {

// What the compiled part knows of a staging view's type and extents.
struct ViewShape {
  int rank = 0;
  std::array<Index, 8> extents{};
  Layout layout;
  DType dtype;
};

template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, bool>) return DTypeKind::Bool;
  else if constexpr (std::is_same_v<T, float>) return DTypeKind::Float32;
  else if constexpr (std::is_same_v<T, double>) return DTypeKind::Float64;
  else if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, Kokkos::complex<float>>)
    return DTypeKind::Complex64;
  else if constexpr (std::is_same_v<T, std::complex<double>> || std::is_same_v<T, Kokkos::complex<double>>)
    return DTypeKind::Complex128;
  else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
    return sizeof(T) == 1 ? DTypeKind::Int8 : sizeof(T) == 2 ? DTypeKind::Int16 : sizeof(T) == 4 ? DTypeKind::Int32 : DTypeKind::Int64;
  else if constexpr (std::is_integral_v<T>)
    return sizeof(T) == 1 ? DTypeKind::UInt8 : sizeof(T) == 2 ? DTypeKind::UInt16 : sizeof(T) == 4 ? DTypeKind::UInt32 : DTypeKind::UInt64;
  else
    return DType::opaque(sizeof(T));
}

template <class V>
inline constexpr bool is_staging_view =
    Kokkos::is_view<V>::value && std::is_same_v<typename V::memory_space, cove::StagingSpace>;

template <class Layout>
inline constexpr bool is_cove_layout =
    std::is_same_v<Layout, Kokkos::LayoutRight> || std::is_same_v<Layout, Kokkos::LayoutLeft>;

template <class V>
ViewShape shape_of(const V& view) {
  static_assert(is_staging_view<V>, "a cove::StagingSpace view is expected here");
  static_assert(is_cove_layout<typename V::array_layout>,
                "staging views are LayoutRight (C) or LayoutLeft (F)");
  static_assert(V::rank >= 1, "staging views have rank 1 or more");
  ViewShape shape;
  shape.rank = static_cast<int>(V::rank);
  for (int d = 0; d < shape.rank; ++d) shape.extents[d] = static_cast<Index>(view.extent(d));
  shape.layout = std::is_same_v<typename V::array_layout, Kokkos::LayoutRight> ? Layout::c() : Layout::f();
  shape.dtype = dtype_of<typename V::non_const_value_type>();
  return shape;
}

// The compiled part: each call records `shape` as the view's and checks it
// against the allocation (a subview fails).
COVE_KOKKOS_EXPORT void set_bound(const void* staging, const ViewShape& shape, bool upper,
                                  std::span<const Index> bound);
COVE_KOKKOS_EXPORT void set_version(const void* staging, const ViewShape& shape, std::uint64_t version);
COVE_KOKKOS_EXPORT void set_timeout(const void* staging, const ViewShape& shape, std::int64_t timeout_ms);
COVE_KOKKOS_EXPORT void set_fill(const void* staging, const ViewShape& shape, const void* value, std::size_t bytes);
COVE_KOKKOS_EXPORT bool seal(const void* staging, const ViewShape& shape);
COVE_KOKKOS_EXPORT void bind(const void* reader, const ViewShape& reader_shape, const void* writer,
                             const ViewShape& writer_shape);
COVE_KOKKOS_EXPORT void put(const void* staging, const ViewShape& shape, const void* host, std::size_t bytes);
COVE_KOKKOS_EXPORT void get(const void* staging, const ViewShape& shape, void* host, std::size_t bytes);
// Throws InvalidArgument naming both views' extents when they differ.
COVE_KOKKOS_EXPORT void check_extents(const std::string& dst, const std::string& src, int rank,
                                      const std::array<Index, 8>& dst_extents,
                                      const std::array<Index, 8>& src_extents);

template <class V>
std::array<Index, 8> extents_of(const V& view) {
  std::array<Index, 8> e{};
  for (int d = 0; d < static_cast<int>(V::rank); ++d) e[d] = static_cast<Index>(view.extent(d));
  return e;
}

// A host view the staging view's bytes can travel through as they are.
template <class S, class H>
bool direct(const H& host) {
  return (std::is_same_v<typename H::array_layout, typename S::array_layout> || H::rank == 1) &&
         host.span_is_contiguous();
}

template <class S>
using scratch_view = Kokkos::View<typename S::non_const_data_type, typename S::array_layout, Kokkos::HostSpace>;

template <class S, class H>
void check_pair() {
  static_assert(static_cast<int>(S::rank) == static_cast<int>(H::rank), "deep_copy requires views of equal rank");
  static_assert(std::is_same_v<typename S::non_const_value_type, typename H::non_const_value_type>,
                "deep_copy between a staging view and a host view requires one value type");
  static_assert(Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename H::memory_space>::accessible,
                "the other side of a staging deep_copy must be host-accessible memory");
}

template <class S, class H>
void copy_in(const S& staging, const H& host) {
  check_pair<S, H>();
  check_extents(staging.label(), host.label(), static_cast<int>(S::rank), extents_of(staging), extents_of(host));
  const ViewShape shape = shape_of(staging);
  using T = typename S::non_const_value_type;
  if (staging.span() == 0) return;
  if (direct<S>(host)) {
    put(staging.data(), shape, host.data(), staging.size() * sizeof(T));
    return;
  }
  scratch_view<S> scratch(Kokkos::view_alloc(Kokkos::WithoutInitializing, staging.label() + " (put)"),
                             staging.layout());
  Kokkos::deep_copy(scratch, host);
  put(staging.data(), shape, scratch.data(), scratch.size() * sizeof(T));
}

template <class H, class S>
void copy_out(const H& host, const S& staging) {
  check_pair<S, H>();
  static_assert(std::is_same_v<typename H::value_type, typename H::non_const_value_type>,
                "deep_copy requires a non-const destination");
  check_extents(host.label(), staging.label(), static_cast<int>(S::rank), extents_of(host), extents_of(staging));
  const ViewShape shape = shape_of(staging);
  using T = typename S::non_const_value_type;
  if (staging.span() == 0) return;
  if (direct<S>(host)) {
    get(staging.data(), shape, host.data(), staging.size() * sizeof(T));
    return;
  }
  scratch_view<S> scratch(Kokkos::view_alloc(Kokkos::WithoutInitializing, staging.label() + " (get)"),
                             staging.layout());
  get(staging.data(), shape, scratch.data(), scratch.size() * sizeof(T));
  Kokkos::deep_copy(host, scratch);
}

template <class V, class... I>
void set_bound(const V& view, bool upper, I... bound) {
  static_assert(sizeof...(I) == V::rank, "one bound per dimension of the view");
  static_assert((std::is_integral_v<I> && ...), "bounds are integers");
  const std::array<Index, sizeof...(I)> b{static_cast<Index>(bound)...};
  detail::set_bound(view.data(), shape_of(view), upper, b);
}

}  // namespace detail

// The paper's geometric descriptor: the inclusive bounds of the view's box
// in the variable's global index space, one per dimension.
template <class V, class... I>
void set_lower_bound(const V& view, I... lower) {
  detail::set_bound(view, false, lower...);
}
template <class V, class... I>
void set_upper_bound(const V& view, I... upper) {
  detail::set_bound(view, true, upper...);
}

// The version (step) that deep_copy puts or gets.
template <class V>
void set_version(const V& view, std::uint64_t version) {
  detail::set_version(view.data(), detail::shape_of(view), version);
}

// How long deep_copy out of this view waits (negative: forever).
template <class V>
void set_timeout(const V& view, std::int64_t timeout_ms) {
  detail::set_timeout(view.data(), detail::shape_of(view), timeout_ms);
}

// The fill value of the view's variable (cove::VariableOptions::fill):
// what deep_copy out of a sealed version reads where no put went. It goes
// with the variable's definition at the view's next deep_copy, and the
// variable keeps it (a variable defined with another one: InvalidArgument).
template <class V>
void set_fill(const V& view, const typename V::non_const_value_type& value) {
  detail::set_fill(view.data(), detail::shape_of(view), &value, sizeof value);
}

// Seals the view's variable at its version (cove::Client::seal): readers'
// deep_copy of it never waits, and cells no put covered read as the fill
// value (or fail with NotFound without one). Returns whether it was sealed
// already. Blocking: one request per server.
template <class V>
bool seal(const V& view) {
  return detail::seal(view.data(), detail::shape_of(view));
}

// Declares that `reader` reads the variable `writer` writes (writer's
// label), which is stored in writer's layout: deep_copy out of `reader`
// has Cove reorganize it into reader's layout. Both views must have one
// value type and rank.
template <class R, class W>
void view_bind_layout(const R& reader, const W& writer) {
  static_assert(static_cast<int>(R::rank) == static_cast<int>(W::rank), "bound views have one rank");
  static_assert(std::is_same_v<typename R::non_const_value_type, typename W::non_const_value_type>,
                "bound views have one value type");
  detail::bind(reader.data(), detail::shape_of(reader), writer.data(), detail::shape_of(writer));
}

}  // namespace cove::kokkos

namespace cove {
// The paper's spelling: its Kokkos::Staging::f is cove::Staging::f, as its
// Kokkos::StagingSpace is cove::StagingSpace.
namespace Staging = kokkos;
}  // namespace cove

namespace Kokkos {

// Host -> staging: a put (see the top of this file for why these exist).
template <class DT, class L, class ST, class... SP>
void deep_copy(const View<DT, L, cove::StagingSpace>& dst, const View<ST, SP...>& src) {
  cove::kokkos::detail::copy_in(dst, src);
}
template <class DT, class ST, class... SP>
void deep_copy(const View<DT, cove::StagingSpace>& dst, const View<ST, SP...>& src) {
  cove::kokkos::detail::copy_in(dst, src);
}

// Staging -> host: a get.
template <class DT, class... DP, class ST, class L>
void deep_copy(const View<DT, DP...>& dst, const View<ST, L, cove::StagingSpace>& src) {
  cove::kokkos::detail::copy_out(dst, src);
}
template <class DT, class... DP, class ST>
void deep_copy(const View<DT, DP...>& dst, const View<ST, cove::StagingSpace>& src) {
  cove::kokkos::detail::copy_out(dst, src);
}

}  // namespace Kokkos
