// The paper's Figure 6, with its namespace changed (Kokkos::Staging ->
// cove::Staging, Kokkos::StagingSpace -> cove::StagingSpace), run as the
// paper's workflow runs it: a writer process and a reader process, each
// executing the listing and doing its own half of the exchange (line 21
// in the writer, line 23 in the reader).
//
//   cove-kokkos-figure6 writer|reader I0 I1 LB0 LB1 VERSION
//
// Two things the listing leaves out are filled in: its upper bounds (lines
// 12 and 14 pass lb0, lb1 again, which names a one-element box; the box of
// an i0 x i1 view is [lb, lb + i - 1]) and the declaration of v_G (a
// ViewHost_ll_t, the type the listing declares and otherwise leaves unused).
// The writer fills v_P with values that encode each element's global index
// and the version; the reader checks every element of v_G.
#include <cove/error.hpp>
#include <cove/kokkos.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

using Data_t = double;

Data_t expected(std::int64_t g0, std::int64_t g1, std::uint64_t version) {
  return static_cast<Data_t>(g0) * 1e6 + static_cast<Data_t>(g1) + static_cast<Data_t>(version) * 1e12;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 7) {
    std::fprintf(stderr, "usage: %s writer|reader I0 I1 LB0 LB1 VERSION\n", argv[0]);
    return 2;
  }
  const std::string role = argv[1];
  const bool writer = role == "writer";
  const int i0 = std::atoi(argv[2]), i1 = std::atoi(argv[3]);
  const std::int64_t lb0 = std::atoll(argv[4]), lb1 = std::atoll(argv[5]);
  const std::int64_t ub0 = lb0 + i0 - 1, ub1 = lb1 + i1 - 1;
  const std::uint64_t version = std::strtoull(argv[6], nullptr, 10);
  std::int64_t wrong = 0;

  Kokkos::ScopeGuard kokkos(argc, argv);
  try {
    // ---- Figure 6 ----
    cove::Staging::initialize();
    {
      using ViewHost_lr_t = Kokkos::View<Data_t**, Kokkos::LayoutRight, Kokkos::HostSpace>;
      using ViewHost_ll_t = Kokkos::View<Data_t**, Kokkos::LayoutLeft, Kokkos::HostSpace>;
      using ViewStaging_lr_t = Kokkos::View<Data_t**, Kokkos::LayoutRight, cove::StagingSpace>;
      using ViewStaging_ll_t = Kokkos::View<Data_t**, Kokkos::LayoutLeft, cove::StagingSpace>;
      ViewHost_lr_t v_P("PutView", i0, i1);
      ViewStaging_lr_t v_S_lr("StagingView_LayoutRight", i0, i1);
      ViewStaging_ll_t v_S_ll("StagingView_LayoutLeft", i0, i1);
      ViewHost_ll_t v_G("GetView", i0, i1);  // not declared in the listing
      // global domain geometric descriptor
      cove::Staging::set_lower_bound(v_S_lr, lb0, lb1);
      cove::Staging::set_upper_bound(v_S_lr, ub0, ub1);
      cove::Staging::set_lower_bound(v_S_ll, lb0, lb1);
      cove::Staging::set_upper_bound(v_S_ll, ub0, ub1);
      // global iteration
      cove::Staging::set_version(v_S_lr, version);
      cove::Staging::set_version(v_S_ll, version);
      // bind two staging views in different layout
      cove::Staging::view_bind_layout(v_S_ll, v_S_lr);
      if (writer) {
        for (int i = 0; i < i0; ++i)
          for (int j = 0; j < i1; ++j) v_P(i, j) = expected(lb0 + i, lb1 + j, version);
        // from host to staging
        Kokkos::deep_copy(v_S_lr, v_P);
      } else {
        // from staging to host
        Kokkos::deep_copy(v_G, v_S_ll);
        for (int i = 0; i < i0; ++i)
          for (int j = 0; j < i1; ++j)
            if (v_G(i, j) != expected(lb0 + i, lb1 + j, version)) {
              if (wrong < 5)
                std::fprintf(stderr, "reader: v_G(%d, %d) = %.17g, expected %.17g\n", i, j, v_G(i, j),
                             expected(lb0 + i, lb1 + j, version));
              ++wrong;
            }
        // v_G is column-major: element (1, 0) follows (0, 0) in memory.
        if (i0 > 1 && v_G.data()[1] != expected(lb0 + 1, lb1, version)) {
          std::fprintf(stderr, "reader: v_G is not in column-major order\n");
          ++wrong;
        }
      }
    }
    cove::Staging::finalize();
    // ---- end of Figure 6 ----
  } catch (const cove::Error& e) {
    std::fprintf(stderr, "%s: %s: %s\n", role.c_str(), cove::code_name(e.code()), e.what());
    return 1;
  }
  if (wrong) {
    std::fprintf(stderr, "reader: %lld of %lld elements wrong\n", static_cast<long long>(wrong),
                 static_cast<long long>(i0) * i1);
    return 1;
  }
  std::printf("%s: %d x %d at (%lld, %lld) version %llu %s\n", role.c_str(), i0, i1, static_cast<long long>(lb0),
              static_cast<long long>(lb1), static_cast<unsigned long long>(version),
              writer ? "put" : "received and checked");
  return 0;
}
