// Figure 6 in three dimensions and the other direction: a writer puts a
// LayoutLeft (column-major) field of N0 x N1 x N2 for versions 1..STEPS; a
// reader binds LayoutRight staging views to it and gets every version
// whole, reorganized by Cove into row-major, and the last one again as an
// interior box, and once into a LayoutLeft host view (the copy through a
// scratch view in the staging view's layout). Every element is checked.
//
//   cove-kokkos-3d writer|reader N0 N1 N2 STEPS
#include <cove/error.hpp>
#include <cove/kokkos.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

using Field = double;

Field value(std::int64_t g0, std::int64_t g1, std::int64_t g2, std::uint64_t version) {
  return static_cast<Field>(((static_cast<std::int64_t>(version) * 1000 + g0) * 1000 + g1) * 1000 + g2);
}

// Counts (and shows the first few of) the elements of `host` that are not
// the field at lower + index.
template <class View>
std::int64_t check(const View& host, const std::int64_t (&lower)[3], std::uint64_t version, const char* what) {
  std::int64_t wrong = 0;
  for (std::size_t i = 0; i < host.extent(0); ++i)
    for (std::size_t j = 0; j < host.extent(1); ++j)
      for (std::size_t k = 0; k < host.extent(2); ++k) {
        const Field want = value(lower[0] + i, lower[1] + j, lower[2] + k, version);
        if (host(i, j, k) != want) {
          if (wrong < 5)
            std::fprintf(stderr, "reader: %s version %llu (%zu, %zu, %zu) = %.17g, expected %.17g\n", what,
                         static_cast<unsigned long long>(version), i, j, k, host(i, j, k), want);
          ++wrong;
        }
      }
  return wrong;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s writer|reader N0 N1 N2 STEPS\n", argv[0]);
    return 2;
  }
  const std::string role = argv[1];
  const int n0 = std::atoi(argv[2]), n1 = std::atoi(argv[3]), n2 = std::atoi(argv[4]);
  const std::uint64_t steps = std::strtoull(argv[5], nullptr, 10);
  std::int64_t wrong = 0;

  Kokkos::ScopeGuard kokkos(argc, argv);
  try {
    cove::kokkos::ScopeGuard staging;
    using StagingLeft = Kokkos::View<Field***, Kokkos::LayoutLeft, cove::StagingSpace>;
    using StagingRight = Kokkos::View<Field***, Kokkos::LayoutRight, cove::StagingSpace>;
    StagingLeft written("field3d", n0, n1, n2);  // the writer's variable
    cove::kokkos::set_lower_bound(written, 0, 0, 0);
    cove::kokkos::set_upper_bound(written, n0 - 1, n1 - 1, n2 - 1);
    if (role == "writer") {
      Kokkos::View<Field***, Kokkos::LayoutLeft, Kokkos::HostSpace> field("field", n0, n1, n2);
      for (std::uint64_t v = 1; v <= steps; ++v) {
        Kokkos::parallel_for(
            "fill", Kokkos::MDRangePolicy<Kokkos::DefaultHostExecutionSpace, Kokkos::Rank<3>>({0, 0, 0}, {n0, n1, n2}),
            [=](int i, int j, int k) { field(i, j, k) = value(i, j, k, v); });
        cove::kokkos::set_version(written, v);
        Kokkos::deep_copy(written, field);
      }
      std::printf("writer: %d x %d x %d LayoutLeft, versions 1..%llu put\n", n0, n1, n2,
                  static_cast<unsigned long long>(steps));
      return 0;
    }

    StagingRight whole("field3d (row-major)", n0, n1, n2);
    cove::kokkos::view_bind_layout(whole, written);
    const std::int64_t origin[3] = {0, 0, 0};
    Kokkos::View<Field***, Kokkos::LayoutRight, Kokkos::HostSpace> got("got", n0, n1, n2);
    for (std::uint64_t v = 1; v <= steps; ++v) {
      cove::kokkos::set_version(whole, v);
      Kokkos::deep_copy(got, whole);
      wrong += check(got, origin, v, "whole");
      // Row-major: element (0, 0, 1) follows (0, 0, 0) in memory.
      if (n2 > 1 && got.data()[1] != value(0, 0, 1, v)) {
        std::fprintf(stderr, "reader: the whole field is not in row-major order\n");
        ++wrong;
      }
    }

    // An interior box of the last version: bounds other than the writer's.
    const std::int64_t lower[3] = {1, 1, 1};
    StagingRight inner("field3d (interior)", n0 - 2, n1 - 2, n2 - 2);
    cove::kokkos::view_bind_layout(inner, written);
    cove::kokkos::set_lower_bound(inner, lower[0], lower[1], lower[2]);
    cove::kokkos::set_upper_bound(inner, n0 - 2, n1 - 2, n2 - 2);
    cove::kokkos::set_version(inner, steps);
    Kokkos::View<Field***, Kokkos::LayoutRight, Kokkos::HostSpace> inner_got("inner", n0 - 2, n1 - 2, n2 - 2);
    Kokkos::deep_copy(inner_got, inner);
    wrong += check(inner_got, lower, steps, "interior");

    // A host view in another layout than the staging view's.
    Kokkos::View<Field***, Kokkos::LayoutLeft, Kokkos::HostSpace> left("left", n0, n1, n2);
    Kokkos::deep_copy(left, whole);
    wrong += check(left, origin, steps, "into LayoutLeft");
  } catch (const cove::Error& e) {
    std::fprintf(stderr, "%s: %s: %s\n", role.c_str(), cove::code_name(e.code()), e.what());
    return 1;
  }
  if (wrong) {
    std::fprintf(stderr, "reader: %lld elements wrong\n", static_cast<long long>(wrong));
    return 1;
  }
  std::printf("reader: %llu versions of %d x %d x %d received row-major and checked\n",
              static_cast<unsigned long long>(steps), n0, n1, n2);
  return 0;
}
