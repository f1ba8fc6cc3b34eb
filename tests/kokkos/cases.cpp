// Single-process cases of the Kokkos staging space against a real server:
// bad input fails with the right cove::Error (not a hang or a crash), and
// the paths other than Figure 6's reach Cove.
//
//   cove-kokkos-cases CASE      (COVE_CONNECT names the server)
#include <cove/error.hpp>
#include <cove/kokkos.hpp>

#include <Kokkos_Core.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>

namespace {

using Right2 = Kokkos::View<double**, Kokkos::LayoutRight, cove::StagingSpace>;
using Host2 = Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace>;

struct Failed {
  std::string why;
};

void require(bool ok, const std::string& why) {
  if (!ok) throw Failed{why};
}

// Runs `body`, which must throw cove::Error with `code` and a message
// containing `text`.
void expect_error(cove::Code code, const std::string& text, const std::function<void()>& body) {
  try {
    body();
  } catch (const cove::Error& e) {
    std::printf("  got %s: %s\n", cove::code_name(e.code()), e.what());
    require(e.code() == code, std::string("expected ") + cove::code_name(code) + ", got " + cove::code_name(e.code()));
    require(std::string(e.what()).find(text) != std::string::npos, "the message does not mention '" + text + "'");
    return;
  }
  throw Failed{std::string("no error; expected ") + cove::code_name(code)};
}

Host2 filled(const char* label, int n0, int n1, double base) {
  Host2 h(std::string(label), n0, n1);
  for (int i = 0; i < n0; ++i)
    for (int j = 0; j < n1; ++j) h(i, j) = base + i * n1 + j;
  return h;
}

void check_filled(const Host2& h, double base) {
  for (std::size_t i = 0; i < h.extent(0); ++i)
    for (std::size_t j = 0; j < h.extent(1); ++j)
      require(h(i, j) == base + static_cast<double>(i * h.extent(1) + j),
              "element (" + std::to_string(i) + ", " + std::to_string(j) + ") is wrong");
}

const std::map<std::string, std::function<void()>> cases = {
    // A version nobody writes: the get times out, within the view's timeout.
    {"never-written",
     [] {
       cove::kokkos::ScopeGuard staging;
       Right2 s("never-written", 4, 5);
       cove::kokkos::set_version(s, 7);
       Kokkos::deep_copy(s, filled("h", 4, 5, 0));
       Right2 r("never-written", 4, 5);
       cove::kokkos::set_version(r, 8);
       cove::kokkos::set_timeout(r, 300);
       Host2 out("out", 4, 5);
       const auto start = std::chrono::steady_clock::now();
       expect_error(cove::Code::Timeout, "never-written", [&] { Kokkos::deep_copy(out, r); });
       const auto waited = std::chrono::steady_clock::now() - start;
       std::printf("  waited %.2f s\n", std::chrono::duration<double>(waited).count());
     }},
    // Bounds that do not hold the view's extents.
    {"bad-bounds",
     [] {
       cove::kokkos::ScopeGuard staging;
       Right2 s("bad-bounds", 4, 5);
       cove::kokkos::set_lower_bound(s, 10, 10);
       cove::kokkos::set_upper_bound(s, 10, 10);  // the listing's lb0, lb1 for the upper bound
       expect_error(cove::Code::InvalidArgument, "extent 4 in dimension 0",
                    [&] { Kokkos::deep_copy(s, filled("h", 4, 5, 0)); });
     }},
    {"not-initialized",
     [] {
       Right2 s("not-initialized", 2, 2);
       expect_error(cove::Code::InvalidArgument, "initialize()", [&] { Kokkos::deep_copy(s, filled("h", 2, 2, 0)); });
     }},
    {"extents",
     [] {
       cove::kokkos::ScopeGuard staging;
       Right2 s("extents", 4, 5);
       expect_error(cove::Code::InvalidArgument, "differ", [&] { Kokkos::deep_copy(s, filled("h", 5, 4, 0)); });
     }},
    // Subviews: one starting inside the allocation, one at its start.
    {"subview",
     [] {
       cove::kokkos::ScopeGuard staging;
       Right2 s("whole", 4, 5);
       cove::kokkos::set_version(s, 1);  // described: Kokkos' byte copy of a part is told apart
       auto inner = Kokkos::subview(s, std::make_pair(1, 3), Kokkos::ALL);
       expect_error(cove::Code::InvalidArgument, "subviews", [&] { Kokkos::deep_copy(inner, filled("h", 2, 5, 0)); });
       auto head = Kokkos::subview(s, std::make_pair(0, 2), Kokkos::ALL);
       expect_error(cove::Code::InvalidArgument, "80 bytes for staging view 'whole' of 160",
                    [&] { Kokkos::deep_copy(head, filled("h", 2, 5, 0)); });
     }},
    // One name, another element type: the variable's definition refuses it.
    {"dtype",
     [] {
       cove::kokkos::ScopeGuard staging;
       Right2 s("field", 3, 3);
       Kokkos::deep_copy(s, filled("h", 3, 3, 0));
       Kokkos::View<float**, Kokkos::LayoutRight, cove::StagingSpace> f("field", 3, 3);
       Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace> out("out", 3, 3);
       expect_error(cove::Code::InvalidArgument, "<f4", [&] { Kokkos::deep_copy(out, f); });
     }},
    // Spelled with Kokkos::Device, the view takes Kokkos' own deep_copy,
    // whose byte copy (Impl::DeepCopy) puts and gets: after a set_* call
    // has described it, and refused before.
    {"kokkos-path",
     [] {
       cove::kokkos::ScopeGuard staging;
       using Device = Kokkos::Device<Kokkos::DefaultHostExecutionSpace, cove::StagingSpace>;
       Kokkos::View<double**, Kokkos::LayoutRight, Device> s("kokkos-path", 6, 7);
       expect_error(cove::Code::InvalidArgument, "before its type was known",
                    [&] { Kokkos::deep_copy(s, filled("h", 6, 7, 0)); });
       cove::kokkos::set_version(s, 3);
       Kokkos::deep_copy(s, filled("h", 6, 7, 100));
       Host2 out("out", 6, 7);
       Kokkos::deep_copy(out, s);  // back through Kokkos' path
       check_filled(out, 100);
       Right2 r("kokkos-path", 6, 7);  // and through cove's overload
       cove::kokkos::set_version(r, 3);
       Host2 out2("out2", 6, 7);
       Kokkos::deep_copy(out2, r);
       check_filled(out2, 100);
     }},
    // A fill value and a seal: the writer's view covers rows 2..4 of a 6 x 7
    // domain; a reader's view of all of it reads -1 elsewhere, at once.
    {"sealed-fill",
     [] {
       cove::kokkos::ScopeGuard staging;
       Right2 w("sealed-fill", 3, 7);
       cove::kokkos::set_fill(w, -1.0);
       cove::kokkos::set_lower_bound(w, 2, 0);
       cove::kokkos::set_upper_bound(w, 4, 6);
       cove::kokkos::set_version(w, 4);
       Kokkos::deep_copy(w, filled("h", 3, 7, 10));
       require(!cove::kokkos::seal(w), "sealed before");
       require(cove::kokkos::seal(w), "sealing again says it was sealed");
       Right2 r("sealed-fill", 6, 7);
       cove::kokkos::set_version(r, 4);
       cove::kokkos::set_timeout(r, 0);  // a sealed version never waits
       Host2 out("out", 6, 7);
       Kokkos::deep_copy(out, r);
       for (int i = 0; i < 6; ++i)
         for (int j = 0; j < 7; ++j) {
           const double want = i >= 2 && i <= 4 ? 10.0 + (i - 2) * 7 + j : -1.0;
           require(out(i, j) == want, "element (" + std::to_string(i) + ", " + std::to_string(j) + ") is wrong");
         }
       expect_error(cove::Code::InvalidArgument, "sealed", [&] { Kokkos::deep_copy(w, filled("h", 3, 7, 0)); });
     }},
    // A strided host view (a subview of a host view) goes through a scratch view.
    {"strided-host",
     [] {
       cove::kokkos::ScopeGuard staging;
       Host2 big = filled("big", 8, 10, 0);
       auto part = Kokkos::subview(big, std::make_pair(2, 6), std::make_pair(3, 8));
       Right2 s("strided-host", 4, 5);
       Kokkos::deep_copy(s, part);
       Host2 out("out", 4, 5);
       Kokkos::deep_copy(out, s);
       for (int i = 0; i < 4; ++i)
         for (int j = 0; j < 5; ++j) require(out(i, j) == big(i + 2, j + 3), "strided element wrong");
       Host2 back("back", 8, 10);
       auto back_part = Kokkos::subview(back, std::make_pair(2, 6), std::make_pair(3, 8));
       Kokkos::deep_copy(back_part, s);
       for (int i = 0; i < 4; ++i)
         for (int j = 0; j < 5; ++j) require(back(i + 2, j + 3) == big(i + 2, j + 3), "strided get wrong");
       require(back(0, 0) == 0.0 && back(7, 9) == 0.0, "a strided get wrote outside its subview");
     }},
};

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  if (argc != 2 || !cases.contains(argv[1])) {
    std::fprintf(stderr, "usage: %s CASE; cases:", argv[0]);
    for (const auto& [name, body] : cases) std::fprintf(stderr, " %s", name.c_str());
    std::fprintf(stderr, "\n");
    return 2;
  }
  try {
    cases.at(argv[1])();
  } catch (const Failed& f) {
    std::fprintf(stderr, "%s: FAILED: %s\n", argv[1], f.why.c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: FAILED: unexpected exception: %s\n", argv[1], e.what());
    return 1;
  }
  std::printf("%s: ok\n", argv[1]);
  return 0;
}
