// Heterogeneous layouts: for every reorganization method (RAD, RASAR,
// RASIA, SAHR) and every pair of writer and reader layouts (C, F and a 3-D
// and a 4-D permutation), n writers and m readers exchange a field and every
// element read is checked against a value that encodes its global index.
// Also: access-pattern records (Algorithm 1), replicas made once under
// concurrent first requests, replicas evicted and deleted with their
// version, memory accounting back to its baseline, replicas dropped first
// under memory pressure, and bad input.
#include <cove/client.hpp>
#include <cove/decomposition.hpp>
#include <cove/error.hpp>
#include <cove/reorg.hpp>
#include <cove/server.hpp>

#include "net/handshake.hpp"
#include "net/transport.hpp"
#include "common/config.hpp"
#include "staging_support.hpp"
#include "store/access_patterns.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>

namespace {

using cove::Box;
using cove::Client;
using cove::Code;
using cove::DType;
using cove::DTypeKind;
using cove::Layout;
using cove::Reorg;
using namespace cove_test;

// Waits (without asserting on time: the bound only stops a hung test) until
// `done` holds, for replicas built in the background.
bool eventually(const std::function<bool()>& done) {
  for (int i = 0; i < 20000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return done();
}

struct ScopedEnv {
  ScopedEnv(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedEnv() { ::unsetenv(name_); }
  const char* name_;
};

TEST(AccessPatterns, Algorithm1MergesIntersectingGetsIntoSupersets) {
  cove::store::AccessPatterns p;
  const Layout f = Layout::f();
  const Box a = Box::from_start_count(V{0, 0}, V{10, 10});
  EXPECT_TRUE(p.update("x", f, a));  // new
  EXPECT_FALSE(p.update("x", f, Box::from_start_count(V{2, 2}, V{3, 3})));  // contained: frequency only
  ASSERT_EQ(p.of("x").size(), 1u);
  EXPECT_EQ(p.of("x")[0].frequency, 2u);
  EXPECT_TRUE(p.update("x", Layout::c(), a));  // another layout: its own record
  EXPECT_TRUE(p.update("x", f, Box::from_start_count(V{20, 20}, V{5, 5})));  // disjoint: a second record
  EXPECT_EQ(p.size(), 3u);
  // A box meeting both F records merges all three into their bounding box.
  EXPECT_TRUE(p.update("x", f, Box::from_start_count(V{8, 8}, V{14, 14})));
  std::vector<cove::store::AccessPattern> fs;
  for (const auto& r : p.of("x"))
    if (r.layout == f) fs.push_back(r);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].box, Box::from_start_count(V{0, 0}, V{25, 25}));
  EXPECT_EQ(fs[0].frequency, 4u);
  // Growing one record can make it meet another that the new box did not.
  cove::store::AccessPatterns q;
  q.update("y", f, Box::from_start_count(V{0}, V{4}));
  q.update("y", f, Box::from_start_count(V{10}, V{4}));
  q.update("y", f, Box::from_start_count(V{3}, V{8}));  // meets both
  ASSERT_EQ(q.of("y").size(), 1u);
  EXPECT_EQ(q.of("y")[0].box, Box::from_start_count(V{0}, V{14}));
}

TEST(Reorg, NamesRoundTripAndUnknownOnesAreNamed) {
  for (Reorg m : {Reorg::Rad, Reorg::Rasar, Reorg::Rasia, Reorg::Sahr})
    EXPECT_EQ(cove::parse_reorg(cove::reorg_name(m)), m);
  EXPECT_EQ(cove::parse_reorg("SAHR"), Reorg::Sahr);
  expect_error(Code::InvalidArgument, "'lazy'", [] { cove::parse_reorg("lazy"); });
  const auto ls = cove::common::parse_layouts("F,P2,0,1,C", "--layouts");
  ASSERT_EQ(ls.size(), 3u);
  EXPECT_EQ(ls[1].to_string(), "P2,0,1");
  expect_error(Code::InvalidArgument, "--layouts: layout 'P0,0,1'", [] { cove::common::parse_layouts("F,P0,0,1", "--layouts"); });
  expect_error(Code::InvalidArgument, "Q", [] { cove::common::parse_layouts("Q", "--layouts"); });
  // The server configuration: the method, the expected layouts, the reorganizer threads.
  const std::string path = ::testing::TempDir() + "cove-reorg-" + std::to_string(::getpid()) + ".toml";
  auto load = [&](const std::string& text) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    std::fputs(text.c_str(), f);
    std::fclose(f);
    return cove::common::load_server_config(path);
  };
  const auto cfg = load("[server]\nreorg = \"sahr\"\nlayouts = [\"F\", \"P2,0,1\"]\nreorg_threads = 2\n");
  EXPECT_EQ(cfg.options.reorg, Reorg::Sahr);
  ASSERT_EQ(cfg.options.layouts.size(), 2u);
  EXPECT_EQ(cfg.options.reorg_threads, 2);
  expect_error(Code::InvalidArgument, "server.reorg: reorganization method 'fast'",
               [&] { load("[server]\nreorg = \"fast\"\n"); });
  expect_error(Code::InvalidArgument, "server.layouts: layout 'P1,1'", [&] { load("[server]\nlayouts = [\"P1,1\"]\n"); });
  std::remove(path.c_str());
}

// ---- every method x every layout pair, n writers to m readers ----

struct Case {
  Reorg method;
  int ndim;
  int servers;
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return std::string(cove::reorg_name(info.param.method)) + "_" + std::to_string(info.param.ndim) + "d_" +
         std::to_string(info.param.servers) + "s";
}

class EveryLayoutPair : public ::testing::TestWithParam<Case> {};

TEST_P(EveryLayoutPair, ReadersGetExactlyTheirRegionInTheirLayout) {
  const auto [method, ndim, nservers] = GetParam();
  // Each reader's block is over 64 KiB, so that it is not answered inline
  // (small gets are assembled by the server whatever the method).
  const V shape = ndim == 3 ? V{40, 36, 30} : V{12, 10, 14, 16};
  const std::vector<Layout> layouts = {Layout::c(), Layout::f(),
                                       ndim == 3 ? Layout::parse("P2,0,1") : Layout::parse("P1,3,0,2")};
  cove::ServerOptions base;
  base.reorg = method;
  base.layouts = layouts;  // RASIA prepares all of them
  Group group(nservers, base);
  const Box domain = Box::from_shape(shape);
  const int nw = 3, nr = 2;
  const cove::BlockDecomposition wdec(domain, nw), rdec(domain, cove::dims_create(nr, ndim));
  std::vector<Client> writers, readers;
  for (int w = 0; w < nw; ++w) writers.push_back(Client::connect(group.addresses()));
  for (int r = 0; r < nr; ++r) readers.push_back(Client::connect(group.addresses()));
  std::uint64_t version = 0;
  for (std::size_t wl = 0; wl < layouts.size(); ++wl)
    for (std::size_t rl = 0; rl < layouts.size(); ++rl) {
      const std::string var = "f" + std::to_string(wl) + std::to_string(rl);
      writers[0].define(var, DType(DTypeKind::Float64), ndim, shape);
      // Three versions: the first teaches SAHR the pattern, later ones are prepared for it.
      for (int step = 0; step < 3; ++step) {
        ++version;
        for (int w = 0; w < nw; ++w) {
          const Box b = wdec.block(w);
          auto data = encoded(b, shape, layouts[wl]);
          for (auto& v : data) v += 1e6 * static_cast<double>(version);
          writers[w].put(var, version, b, data.data(), data.size() * 8, layouts[wl]);
        }
        // Two passes of every reader: the second may be served by replicas.
        for (int pass = 0; pass < 2; ++pass)
          for (int r = 0; r < nr; ++r) {
            const Box b = rdec.block(r);
            std::vector<double> got(static_cast<std::size_t>(b.volume()), -1);
            readers[r].get(var, version, b, got.data(), got.size() * 8, -1, layouts[rl]);
            auto want = encoded(b, shape, layouts[rl]);
            for (auto& v : want) v += 1e6 * static_cast<double>(version);
            ASSERT_EQ(got, want) << cove::reorg_name(method) << ": writer " << layouts[wl].to_string() << ", reader "
                                 << layouts[rl].to_string() << ", reader " << r << ", pass " << pass << ", step "
                                 << step;
          }
      }
    }
  const cove::ServerStats s = readers[0].stat();
  EXPECT_EQ(s.reorg, method);
  if (method == Reorg::Rad) {
    EXPECT_EQ(s.replicas, 0u);
    EXPECT_EQ(s.reorganizations, 0u);
  } else {
    // Readers whose layout differs from the writer's were answered from replicas.
    EXPECT_GT(s.reorganizations, 0u);
    EXPECT_GT(s.replica_answers, 0u);
  }
  if (method == Reorg::Sahr) {
    EXPECT_GT(s.patterns, 0u);
  }
  // Deleting every version returns all memory, replicas included.
  for (const auto& v : readers[0].list())
    for (const auto& ver : v.versions) readers[0].remove(v.name, ver.version);
  EXPECT_TRUE(eventually([&] { return readers[0].stat().replicas == 0; }));
  const cove::ServerStats after = readers[0].stat();
  EXPECT_EQ(after.owned_bytes, 0u);
  EXPECT_EQ(after.replica_bytes, 0u);
}

INSTANTIATE_TEST_SUITE_P(Methods, EveryLayoutPair,
                         ::testing::Values(Case{Reorg::Rad, 3, 1}, Case{Reorg::Rasar, 3, 1}, Case{Reorg::Rasia, 3, 1},
                                           Case{Reorg::Sahr, 3, 1}, Case{Reorg::Rad, 4, 1}, Case{Reorg::Rasar, 4, 1},
                                           Case{Reorg::Rasia, 4, 1}, Case{Reorg::Sahr, 4, 1},
                                           Case{Reorg::Rasar, 3, 2}, Case{Reorg::Rasia, 3, 2},
                                           Case{Reorg::Sahr, 3, 2}),
                         case_name);

// ---- replicas: made once, evicted with their version, dropped first under pressure ----

struct Replicas : ::testing::Test {
  const V shape{64, 48, 32};  // 768 KiB of float64
  const Box domain = Box::from_shape(shape);
  const std::size_t bytes = static_cast<std::size_t>(domain.volume()) * 8;

  cove::ServerOptions options(Reorg method) {
    cove::ServerOptions o;
    o.transport = unique_name("replicas");
    o.reorg = method;
    return o;
  }
  void put(Client& c, std::uint64_t version) {
    const auto data = encoded(domain, shape);
    c.put("t", version, domain, data.data(), bytes);
  }
  void check_get(Client& c, std::uint64_t version, const Layout& layout) {
    std::vector<double> got(bytes / 8, -1);
    c.get("t", version, domain, got.data(), bytes, -1, layout);
    ASSERT_EQ(got, encoded(domain, shape, layout)) << layout.to_string();
  }
};

TEST_F(Replicas, ConcurrentFirstRequestsMakeExactlyOneReplica) {
  cove::Server server(options(Reorg::Rasar));
  Client w = Client::connect(server.address());
  w.define("t", DType(DTypeKind::Float64), 3, shape);
  put(w, 1);
  constexpr int kReaders = 8;
  std::vector<Client> readers;
  for (int i = 0; i < kReaders; ++i) readers.push_back(Client::connect(server.address()));
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < kReaders; ++i)
    threads.emplace_back([&, i] {
      std::vector<double> got(bytes / 8, -1);
      readers[i].get("t", 1, domain, got.data(), bytes, -1, Layout::f());
      if (got == encoded(domain, shape, Layout::f())) ++ok;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok, kReaders);
  const auto s = w.stat();
  EXPECT_EQ(s.reorganizations, 1u);
  EXPECT_EQ(s.replicas, 1u);
  EXPECT_EQ(s.replica_bytes, bytes);
  EXPECT_EQ(s.replica_answers, static_cast<std::uint64_t>(kReaders));
  const auto vars = w.list();
  ASSERT_EQ(vars.at(0).versions.at(0).pieces.at(0).replicas.size(), 1u);
  EXPECT_EQ(vars[0].versions[0].pieces[0].replicas[0].layout, Layout::f());
  EXPECT_TRUE(vars[0].versions[0].pieces[0].replicas[0].ready);
}

TEST_F(Replicas, AreEvictedWithTheirVersionAndAccountingReturnsToBaseline) {
  auto o = options(Reorg::Rasar);
  o.max_versions = 1;
  cove::Server server(o);
  Client c = Client::connect(server.address());
  c.define("t", DType(DTypeKind::Float64), 3, shape);
  put(c, 1);
  check_get(c, 1, Layout::f());
  EXPECT_EQ(c.stat().replica_bytes, bytes);
  put(c, 2);  // evicts version 1 and its replica
  auto s = c.stat();
  EXPECT_EQ(s.owned_bytes, bytes);
  EXPECT_EQ(s.replicas, 0u);
  EXPECT_EQ(s.replica_bytes, 0u);
  check_get(c, 2, Layout::f());
  check_get(c, 2, Layout::parse("P1,2,0"));
  EXPECT_EQ(c.stat().replicas, 2u);
  c.remove("t", 2);
  s = c.stat();
  EXPECT_EQ(s.owned_bytes, 0u);
  EXPECT_EQ(s.replicas, 0u);
  EXPECT_EQ(s.replica_bytes, 0u);
  EXPECT_EQ(s.pieces, 0u);
}

TEST_F(Replicas, RasiaPreparesExpectedLayoutsInTheBackground) {
  auto o = options(Reorg::Rasia);
  o.layouts = {Layout::f(), Layout::parse("P2,1,0"), Layout::c()};  // F and P2,1,0 are one order; C is the source's
  cove::Server server(o);
  Client c = Client::connect(server.address());
  c.define("t", DType(DTypeKind::Float64), 3, shape);
  put(c, 1);
  ASSERT_TRUE(eventually([&] { return c.stat().reorganizations == 1; }));
  EXPECT_EQ(c.stat().replica_bytes, bytes);  // about twice the original in all
  check_get(c, 1, Layout::f());
  EXPECT_EQ(c.stat().replica_answers, 1u);
  check_get(c, 1, Layout::parse("P1,2,0"));  // not expected: the reader reorganizes
  EXPECT_EQ(c.stat().replicas, 1u);
}

TEST_F(Replicas, MethodPerVariableAndPerClient) {
  cove::Server server(options(Reorg::Rad));
  Client c = Client::connect(server.address());
  // Per variable: RASIA for "t" with its own expected layouts.
  c.define("t", DType(DTypeKind::Float64), 3, shape, {Reorg::Rasia, {Layout::parse("P0,2,1")}, {}});
  const auto vars = c.list();
  ASSERT_EQ(vars.at(0).reorg, Reorg::Rasia);
  ASSERT_EQ(vars.at(0).layouts.size(), 1u);
  put(c, 1);
  ASSERT_TRUE(eventually([&] { return c.stat().reorganizations == 1; }));
  check_get(c, 1, Layout::parse("P0,2,1"));
  EXPECT_EQ(c.stat().replica_answers, 1u);
  // Per client: this reader's COVE_REORG=rasar beats the variable's RASIA.
  {
    ScopedEnv env("COVE_REORG", "rasar");
    Client r = Client::connect(server.address());
    check_get(r, 1, Layout::f());
  }
  EXPECT_EQ(c.stat().reorganizations, 2u);
  // And COVE_REORG=rad: the reader reorganizes; no replica is used.
  {
    ScopedEnv env("COVE_REORG", "rad");
    Client r = Client::connect(server.address());
    check_get(r, 1, Layout::f());
  }
  EXPECT_EQ(c.stat().replica_answers, 2u);
  // A define without options leaves the variable's settings.
  c.define("t", DType(DTypeKind::Float64), 3, shape);
  EXPECT_EQ(c.list().at(0).reorg, Reorg::Rasia);
}

TEST_F(Replicas, SahrPreparesLearntPatternsAndNeverWaits) {
  cove::Server server(options(Reorg::Sahr));
  Client w = Client::connect(server.address());
  Client r = Client::connect(server.address());
  w.define("t", DType(DTypeKind::Float64), 3, shape);
  const Box sub = Box::from_start_count(V{16, 12, 8}, V{32, 24, 16});  // the centred cube of half the side
  auto get_sub = [&](std::uint64_t version) {
    std::vector<double> got(static_cast<std::size_t>(sub.volume()), -1);
    r.get("t", version, sub, got.data(), got.size() * 8, -1, Layout::f());
    ASSERT_EQ(got, encoded(sub, shape, Layout::f()));
  };
  put(w, 1);
  get_sub(1);  // first get: the source, reorganized here; the pattern goes to the server
  auto s = w.stat();
  EXPECT_EQ(s.reorganizations, 0u);
  EXPECT_EQ(s.patterns, 1u);
  put(w, 2);  // prepared in advance: only the recorded region
  ASSERT_TRUE(eventually([&] { return w.stat().reorganizations == 1; }));
  s = w.stat();
  EXPECT_EQ(s.replica_bytes, static_cast<std::uint64_t>(sub.volume()) * 8);
  get_sub(2);
  EXPECT_EQ(w.stat().replica_answers, 1u);
  // The same get again is no new pattern: nothing more is recorded.
  get_sub(2);
  EXPECT_EQ(w.stat().patterns, 1u);
}

TEST_F(Replicas, SahrPreparesVersionsAWriterPutAheadOfItsReader) {
  cove::Server server(options(Reorg::Sahr));
  Client w = Client::connect(server.address());
  Client r = Client::connect(server.address());
  w.define("t", DType(DTypeKind::Float64), 3, shape);
  for (std::uint64_t v = 1; v <= 3; ++v) put(w, v);
  check_get(r, 1, Layout::f());  // the pattern: versions 2 and 3 are prepared, not 1
  ASSERT_TRUE(eventually([&] { return w.stat().reorganizations == 2; }));
  check_get(r, 3, Layout::f());
  EXPECT_EQ(w.stat().replica_answers, 1u);
  EXPECT_EQ(w.stat().replica_bytes, 2 * bytes);
}

TEST_F(Replicas, AreDroppedFirstUnderMemoryPressureAndNeverCauseErrors) {
  auto o = options(Reorg::Rasar);
  o.memory_budget = bytes * 5 / 2;  // two originals and half of a replica
  cove::Server server(o);
  Client c = Client::connect(server.address());
  c.define("t", DType(DTypeKind::Float64), 3, shape);
  put(c, 1);
  check_get(c, 1, Layout::f());  // a replica of version 1
  EXPECT_EQ(c.stat().replicas, 1u);
  put(c, 2);  // needs the replica's memory: the replica goes, the put succeeds
  auto s = c.stat();
  EXPECT_EQ(s.owned_bytes, 2 * bytes);
  EXPECT_EQ(s.replicas, 0u);
  // No room for a replica now: the get falls back to the source (RAD) and succeeds.
  check_get(c, 2, Layout::f());
  check_get(c, 1, Layout::f());
  s = c.stat();
  EXPECT_EQ(s.replicas, 0u);
  EXPECT_EQ(s.owned_bytes, 2 * bytes);
  EXPECT_LE(s.owned_bytes + s.replica_bytes, o.memory_budget);
  // A put that cannot fit even without replicas still fails with NoMemory, and keeps what was stored.
  expect_error(Code::NoMemory, "memory budget", [&] { put(c, 3); });
  check_get(c, 1, Layout::c());
}

TEST_F(Replicas, BadInputIsNamedAndNothingStoredIsLost) {
  cove::Server server(options(Reorg::Rasar));
  Client c = Client::connect(server.address());
  c.define("t", DType(DTypeKind::Float64), 3, shape);
  put(c, 1);
  std::vector<double> buf(bytes / 8);
  expect_error(Code::InvalidArgument, "'P0,1,1'", [&] { Layout::parse("P0,1,1"); });
  expect_error(Code::InvalidArgument, "'Z'", [&] { Layout::parse("Z"); });
  // A layout whose rank is not the variable's.
  expect_error(Code::InvalidArgument, "rank", [&] {
    c.get("t", 1, domain, buf.data(), bytes, 0, Layout::parse("P1,0"));
  });
  expect_error(Code::InvalidArgument, "rank", [&] {
    c.define("t", DType(DTypeKind::Float64), 3, shape, {Reorg::Rasia, {Layout::parse("P1,0")}, {}});
  });
  // An unknown method: per client, in the server's configuration, and on the wire.
  {
    ScopedEnv env("COVE_REORG", "eager");
    expect_error(Code::InvalidArgument, "'eager'", [&] { Client::connect(server.address()); });
  }
  auto ep = cove::net::make_endpoint(across_processes() ? test_transport() : "inproc://reorg-raw-" + std::to_string(::getpid()));
  auto peer = ep->connect(server.address(), cove::net::deadline_in(10000));
  cove::net::greet(*ep, peer, cove::net::Role::Client, ep->address(), server.secret(), cove::net::deadline_in(5000));
  cove::net::WireWriter q(static_cast<std::uint16_t>(cove::net::Op::Query), 7);
  q.str("t").u64(1).u8(0).box(domain).i64(0).str("F").u32(0).u8(9);
  const auto reply = ep->call(peer, std::move(q).finish(), cove::net::deadline_in(5000));
  expect_error(Code::Protocol, "method 9",
               [&] { cove::net::check_reply(reply, static_cast<std::uint16_t>(cove::net::Op::Query), 7); });
  // Everything stored is intact.
  check_get(c, 1, Layout::f());
  check_get(c, 1, Layout::c());
  EXPECT_EQ(c.stat().owned_bytes, bytes);
}

}  // namespace
