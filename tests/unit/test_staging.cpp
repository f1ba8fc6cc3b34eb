// The staging service end to end: n writers to m readers with different
// decompositions, put and put_local, waits and timeouts, bad input, budget,
// eviction. Every element read is checked against a value that encodes its
// global index. The transport is COVE_TEST_TRANSPORT: "inproc" (default)
// or "ucx" (CTest runs the suite again over UCX with TCP and with shared
// memory; see tests/CMakeLists.txt).
#include <cove/client.hpp>
#include <cove/decomposition.hpp>
#include <cove/error.hpp>
#include <cove/server.hpp>

#include "common/auth.hpp"
#include "net/handshake.hpp"
#include "store/metadata.hpp"
#include "staging_support.hpp"
#include "net/transport.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <numeric>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

namespace {

using cove::Box;
using cove::Client;
using cove::Code;
using cove::DType;
using cove::DTypeKind;
using cove::Index;
using cove::Layout;
using namespace cove_test;

struct Staging : ::testing::Test {
  cove::ServerOptions options() {
    cove::ServerOptions o;
    o.transport = unique_name("server");
    return o;
  }
};

struct Exchange {
  int ndim, writers, readers;
  bool local;
  int servers = 1;
};

class NToM : public ::testing::TestWithParam<Exchange> {};

TEST_P(NToM, EveryReaderGetsExactlyItsRegion) {
  const auto [ndim, nw, nr, local, nservers] = GetParam();
  Group group(nservers);
  const V shape_by_rank[] = {{}, {4099}, {61, 37}, {11, 9, 13}, {5, 6, 4, 7}};  // groups split all but 4-D (4 KiB index blocks)
  const V& shape = shape_by_rank[ndim];
  const Box domain = Box::from_shape(shape);
  // Writers decompose one way, readers another (and read in F order).
  const cove::BlockDecomposition wdec(domain, nw), rdec(domain, cove::dims_create(nr, ndim));
  std::vector<Client> writers;
  std::vector<std::vector<double>> data(static_cast<std::size_t>(nw));
  for (int w = 0; w < nw; ++w) {
    writers.push_back(Client::connect(group.addresses()));
    writers.back().define("field", DType(DTypeKind::Float64), ndim, shape);
  }
  for (std::uint64_t version : {1u, 2u}) {
    for (int w = 0; w < nw; ++w) {
      const Box b = wdec.block(w);
      data[w] = encoded(b, shape);
      for (auto& v : data[w]) v += 1000000.0 * static_cast<double>(version);
      if (local) {
        writers[w].put_local("field", version, b, data[w].data(), data[w].size() * 8);
      } else {
        writers[w].put("field", version, b, data[w].data(), data[w].size() * 8);
      }
    }
    for (int r = 0; r < nr; ++r) {
      Client reader = Client::connect(group.addresses());
      const Box b = rdec.block(r);
      for (const Layout& layout : {Layout::c(), Layout::f()}) {
        std::vector<double> got(static_cast<std::size_t>(b.volume()), -1);
        reader.get("field", version, b, got.data(), got.size() * 8, 0, layout);
        auto want = encoded(b, shape, layout);
        for (auto& v : want) v += 1000000.0 * static_cast<double>(version);
        ASSERT_EQ(got, want) << "reader " << r << " of " << nr << ", layout " << layout.to_string();
      }
    }
    if (local) {  // the next version reuses the buffers
      for (int w = 0; w < nw; ++w) EXPECT_EQ(writers[w].release("field", version, wdec.block(w)), 1u);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Inproc, NToM,
                         ::testing::Values(Exchange{1, 1, 1, false}, Exchange{1, 4, 3, false}, Exchange{2, 2, 3, false},
                                           Exchange{3, 4, 2, false}, Exchange{4, 2, 3, false}, Exchange{3, 4, 3, true},
                                           Exchange{2, 1, 2, true}, Exchange{4, 4, 1, true},
                                           Exchange{2, 2, 3, false, 2}, Exchange{3, 4, 3, false, 2},
                                           Exchange{3, 4, 2, true, 2}, Exchange{1, 4, 3, false, 3}));

TEST(Group, PiecesStayWhereTheyArriveAndIndexesAreSplit) {
  Group group(2);
  Client c = Client::connect(group.addresses());
  const V shape{64, 64};
  c.define("g", DType(DTypeKind::Float32), 2, shape);
  // Many small pieces across the domain: both servers receive data and index it.
  for (Index i = 0; i < 64; i += 16)
    for (Index j = 0; j < 64; j += 16) {
      const Box b = Box::from_start_count(V{i, j}, V{16, 16});
      std::vector<float> d(256, static_cast<float>(i * 64 + j));
      c.put("g", 1, b, d.data(), d.size() * 4);
    }
  const auto each = c.stat_each();
  ASSERT_EQ(each.size(), 2u);
  EXPECT_GT(each[0].second.owned_bytes, 0u);
  EXPECT_GT(each[1].second.owned_bytes, 0u);
  EXPECT_EQ(each[0].second.owned_bytes + each[1].second.owned_bytes, 64u * 64u * 4u);
  // A region across the middle is assembled from pieces on both servers.
  const Box mid = Box::from_start_count(V{8, 8}, V{48, 48});
  std::vector<float> got(48 * 48);
  c.get("g", 1, mid, got.data(), got.size() * 4, 0);
  for (Index i = 0; i < 48; ++i)
    for (Index j = 0; j < 48; ++j) {
      const Index gi = i + 8, gj = j + 8;
      ASSERT_EQ(got[i * 48 + j], static_cast<float>((gi / 16 * 16) * 64 + gj / 16 * 16));
    }
  // Listing merges the servers; every piece appears once.
  const auto vars = c.list();
  ASSERT_EQ(vars.size(), 1u);
  EXPECT_EQ(vars[0].versions.at(0).pieces.size(), 16u);
  c.remove("g", 1);
  EXPECT_EQ(c.stat().owned_bytes, 0u);
}

TEST_F(Staging, WaitsAndTimeouts) {
  cove::Server server(options());
  Client writer = Client::connect(server.address()), reader = Client::connect(server.address());
  const V shape{8, 8};
  writer.define("t", DType(DTypeKind::Float64), 2, shape);
  const Box all = Box::from_shape(shape), left = Box::from_start_count(V{0, 0}, V{8, 4}),
            right = Box::from_start_count(V{0, 4}, V{8, 4});
  std::vector<double> buf(64);
  // Nothing yet: timeout 0 answers at once, a positive timeout times out.
  EXPECT_EQ(code_of([&] { reader.get("t", 1, all, buf.data(), 512, 0); }), Code::NotFound);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(code_of([&] { reader.get("t", 1, all, buf.data(), 512, 50); }), Code::Timeout);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(50));
  // Half covered is not covered.
  const auto l = encoded(left, shape), r = encoded(right, shape);
  writer.put("t", 1, left, l.data(), l.size() * 8);
  EXPECT_EQ(code_of([&] { reader.get("t", 1, all, buf.data(), 512, 0); }), Code::NotFound);
  EXPECT_EQ(code_of([&] { reader.get("t", 1, all, buf.data(), 512, 30); }), Code::Timeout);
  // A reader waiting without limit is answered when the rest arrives.
  auto waiting = std::async(std::launch::async, [&] {
    std::vector<double> got(64);
    reader.get("t", 1, all, got.data(), 512, -1);
    return got;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(waiting.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout);
  writer.put("t", 1, right, r.data(), r.size() * 8);
  EXPECT_EQ(waiting.get(), encoded(all, shape));
  // The newest version, and a reader that starts before its writer.
  auto early = std::async(std::launch::async, [&] {
    std::vector<double> got(64);
    const auto v = reader.get_latest("t", all, got.data(), 512, 5000);
    return std::make_pair(v, got);
  });
  EXPECT_EQ(reader.latest("t"), std::optional<std::uint64_t>(1));
  EXPECT_EQ(early.get().first, 1u);
  auto second = std::async(std::launch::async, [&] {
    std::vector<double> got(64);
    reader.get("t", 7, all, got.data(), 512, 5000);
    return got;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const auto a = encoded(all, shape);
  writer.put("t", 7, all, a.data(), a.size() * 8);
  EXPECT_EQ(second.get(), a);
  EXPECT_EQ(reader.latest("t"), std::optional<std::uint64_t>(7));
}

TEST_F(Staging, BadInputIsRejectedAndStoredDataStaysIntact) {
  auto o = options();
  o.memory_budget = 300;
  cove::Server server(o);
  Client c = Client::connect(server.address());
  const V shape{10, 10};
  c.define("a", DType(DTypeKind::Float64), 2, shape);
  const Box q = Box::from_start_count(V{0, 0}, V{5, 5});
  const auto good = encoded(q, shape);
  c.put("a", 1, q, good.data(), good.size() * 8);
  std::vector<double> buf(100);
  expect_error(Code::InvalidArgument, "dtype <f8, not <f4", [&] { c.define("a", DType(DTypeKind::Float32), 2, shape); });
  expect_error(Code::InvalidArgument, "ndim 2, not 3", [&] { c.define("a", DType(DTypeKind::Float64), 3); });
  const Box outside = Box::from_start_count(V{8, 8}, V{5, 5});
  expect_error(Code::InvalidArgument, "outside the global shape", [&] { c.put("a", 1, outside, buf.data(), 200); });
  const Box three = Box::from_start_count(V{0, 0, 0}, V{1, 1, 1});
  expect_error(Code::InvalidArgument, "has 2 dimensions", [&] { c.put("a", 1, three, buf.data(), 8); });
  const Box empty = Box::from_start_count(V{0, 0}, V{0, 3});
  expect_error(Code::InvalidArgument, "is empty", [&] { c.put("a", 1, empty, buf.data(), 0); });
  expect_error(Code::InvalidArgument, "does not match region", [&] { c.put("a", 1, q, buf.data(), 100); });
  expect_error(Code::Overflow, "overflows 64 bits", [&] {
    c.put("a", 1, Box::from_start_count(V{INT64_MAX - 1, 0}, V{5, 1}), buf.data(), 40);
  });
  expect_error(Code::NotFound, "'nope' is not defined", [&] { c.get("nope", 1, q, buf.data(), 200, 0); });
  expect_error(Code::InvalidArgument, "outside the global shape", [&] { c.get("a", 1, outside, buf.data(), 200, 0); });
  // Over budget: 200 bytes are held, 200 more would make 400 > 300.
  const Box other = Box::from_start_count(V{5, 5}, V{5, 5});
  expect_error(Code::NoMemory, "memory budget of 300 bytes", [&] { c.put("a", 2, other, buf.data(), 200); });
  // Everything stored before is intact and readable.
  std::vector<double> got(25);
  c.get("a", 1, q, got.data(), 200, 0);
  EXPECT_EQ(got, good);
  const auto s = c.stat();
  EXPECT_EQ(s.owned_bytes, 200u);
  EXPECT_EQ(s.pieces, 1u);
  EXPECT_EQ(s.versions, 1u);
}

// Without proof of the server's secret a connection gets nothing but the
// hello's answer: no request of a client's is served, whatever it holds.
TEST_F(Staging, ConnectionsThatDoNotProveTheSecretAreRefusedEverything) {
  cove::Server server(options());
  {
    Client owner = Client::connect(server.address());
    owner.define("kept", DType(DTypeKind::Float64), 1, std::vector<Index>{8});
    const std::vector<double> v(8, 2.5);
    owner.put("kept", 1, Box::from_shape(std::vector<Index>{8}), v.data(), 64);
  }
  namespace net = cove::net;
  auto ep = net::make_endpoint(across_processes() ? test_transport() : "inproc://unproven-" + std::to_string(::getpid()));
  auto peer = ep->connect(server.address(), net::deadline_in(10000));
  net::greet(*ep, peer, net::Role::Client, ep->address(), {}, net::deadline_in(5000));  // hello only
  const auto refused = [&](auto call, const char* what) {
    try {
      call();
      ADD_FAILURE() << what << " was served without proof of the secret";
    } catch (const cove::Error& e) {
      EXPECT_EQ(e.code(), Code::PermissionDenied) << what << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("has not proved it holds the group's secret"), std::string::npos) << e.what();
    }
  };
  const Box all = Box::from_shape(std::vector<Index>{8});
  const auto d = net::deadline_in(5000);
  using net::Message;
  using net::Op;
  refused([&] { net::call<Message<Op::Define>>(*ep, peer, {"x", DType(DTypeKind::Int32), 1, std::nullopt, std::nullopt, {}, {}}, d); }, "define");
  net::PutInlineRequest put;
  put.piece = {"kept", 2, all, cove::Layout::c(), DType(DTypeKind::Float64), 64, std::nullopt};
  put.data.resize(64);
  refused([&] { net::call<Message<Op::PutInline>>(*ep, peer, put, d); }, "put");
  refused([&] { net::call<Message<Op::Query>>(*ep, peer, {"kept", 1, false, all, 0, cove::Layout::c(), 0, std::nullopt}, d); }, "get");
  refused([&] { net::call<Message<Op::Delete>>(*ep, peer, {"kept", 1}, d); }, "delete");
  refused([&] { net::call<Message<Op::List>>(*ep, peer, {}, d); }, "list");
  refused([&] { net::call<Message<Op::MetaGet>>(*ep, peer, {"kept", net::MetaMode::Exact, 1, 0}, d); }, "metadata get");
  refused([&] { net::call<Message<Op::Stop>>(*ep, peer, {}, d); }, "stop");
  // A wrong proof is refused, and so is a client given the wrong secret.
  expect_error(Code::PermissionDenied, "refused this process's proof", [&] {
    net::greet(*ep, peer, net::Role::Client, ep->address(), "a secret of another group", d);
  });
  refused([&] { net::call<Message<Op::List>>(*ep, peer, {}, d); }, "list after a refused proof");
  cove::ConnectOptions wrong;
  wrong.secret = "not this server's secret, but long enough";
  expect_error(Code::PermissionDenied, "refused this process's proof", [&] { Client::connect(server.address(), wrong); });
  // What was stored is intact, for a client that proves the secret.
  cove::ConnectOptions right;
  right.secret = server.secret();
  Client c = Client::connect(server.address(), right);
  std::vector<double> got(8);
  c.get("kept", 1, all, got.data(), 64, 0);
  EXPECT_EQ(got, std::vector<double>(8, 2.5));
  EXPECT_EQ(c.list().size(), 1u);
}

// Join by hand, proof by proof: only the 32-byte HMAC of this connection's
// latest challenge is taken, and each challenge takes one try, right or
// wrong. An empty, short, long, wrong or replayed proof is refused, and
// the connection is refused requests until a proof is taken. (greet()
// never sends such proofs: a client with no secret skips Join.)
TEST_F(Staging, JoinTakesOneRightProofPerChallenge) {
  cove::Server server(options());
  namespace net = cove::net;
  using net::Message;
  using net::Op;
  auto ep = net::make_endpoint(across_processes() ? test_transport() : "inproc://join-" + std::to_string(::getpid()));
  auto peer = ep->connect(server.address(), net::deadline_in(10000));
  const auto d = net::deadline_in(10000);
  const std::string secret = server.secret();
  // A hello (greet with no secret says only that): this connection's challenge now.
  const auto hello = [&] {
    const net::Bytes nonce = net::greet(*ep, peer, net::Role::Client, ep->address(), {}, d).nonce;
    EXPECT_EQ(nonce.size(), 32u);
    return nonce;
  };
  const auto join = [&](net::Bytes proof) { net::call<Message<Op::Join>>(*ep, peer, net::JoinRequest{std::move(proof)}, d); };
  const auto refused = [&](net::Bytes proof, const char* what) {
    SCOPED_TRACE(what);
    expect_error(Code::PermissionDenied, "join refused: the proof does not match", [&] { join(std::move(proof)); });
  };
  const auto served = [&] { return code_of([&] { net::call<Message<Op::List>>(*ep, peer, {}, d); }); };

  net::Bytes nonce = hello();
  const net::Bytes right = cove::common::prove(secret, nonce);
  ASSERT_EQ(right.size(), 32u);
  refused({}, "an empty proof");
  EXPECT_EQ(served(), Code::PermissionDenied);
  // The failed try used the challenge up: the right proof for it comes too late.
  refused(right, "the right proof after a refused one, without another hello");
  EXPECT_EQ(served(), Code::PermissionDenied);

  nonce = hello();
  net::Bytes short_proof = cove::common::prove(secret, nonce);
  short_proof.pop_back();
  refused(short_proof, "a proof one byte short");
  nonce = hello();
  net::Bytes long_proof = cove::common::prove(secret, nonce);
  long_proof.push_back(std::byte{0});
  refused(long_proof, "a proof one byte long");
  nonce = hello();
  refused(cove::common::prove("another group's secret", nonce), "a proof under another secret");
  refused(cove::common::prove(secret, nonce), "the right proof after a wrong one");
  const net::Bytes old = nonce;
  nonce = hello();
  refused(cove::common::prove(secret, old), "a proof of an earlier challenge");
  EXPECT_EQ(served(), Code::PermissionDenied);

  // The right proof on the first try is taken, once.
  nonce = hello();
  const net::Bytes proof = cove::common::prove(secret, nonce);
  join(proof);
  EXPECT_EQ(served(), Code::Ok);
  refused(proof, "the same proof again");
}

TEST_F(Staging, MalformedMessagesGetErrorRepliesAndServingGoesOn) {
  cove::Server server(options());
  auto ep = cove::net::make_endpoint(across_processes() ? test_transport() : "inproc://raw-sender-" + std::to_string(::getpid()));
  auto peer = ep->connect(server.address(), cove::net::deadline_in(10000));
  auto send = [&](cove::net::Bytes m) {
    auto reply = ep->call(peer, std::move(m), cove::net::deadline_in(5000));
    return cove::net::read_header(reply).status;
  };
  // Before the hello, nothing but a hello is taken.
  cove::net::WireWriter early(static_cast<std::uint16_t>(cove::net::Op::List), 1);
  EXPECT_EQ(send(std::move(early).finish()), Code::Protocol);
  cove::net::greet(*ep, peer, cove::net::Role::Client, ep->address(), server.secret(), cove::net::deadline_in(5000));
  EXPECT_EQ(send({std::byte{1}, std::byte{2}, std::byte{3}}), Code::Protocol);  // shorter than a header
  cove::net::WireWriter w(static_cast<std::uint16_t>(cove::net::Op::Define), 1);
  w.str("x").str("<f8");  // truncated: ndim and shape missing
  EXPECT_EQ(send(std::move(w).finish()), Code::Protocol);
  cove::net::WireWriter u(999, 2);
  EXPECT_EQ(send(std::move(u).finish()), Code::Protocol);
  cove::net::WireWriter junk(static_cast<std::uint16_t>(cove::net::Op::Stat), 3);
  junk.u64(1);  // trailing bytes
  EXPECT_EQ(send(std::move(junk).finish()), Code::Protocol);
  // Still serving.
  Client c = Client::connect(server.address());
  c.define("ok", DType(DTypeKind::Int32), 1);
  EXPECT_EQ(c.list().size(), 1u);
}

// A region put again replaces what the version held inside it: the
// server's memory stays that of one copy, and readers get the newest bytes.
// Across a group, every shard that indexed the old piece drops it.
TEST(Group, PuttingARegionAgainReplacesWhatItCovers) {
  for (int servers : {1, 2}) {
    Group group(servers);
    Client c = Client::connect(group.addresses());
    const V shape{128, 128};  // 128 KiB: put through a grant; the corner inline
    c.define("r", DType(DTypeKind::Float64), 2, shape);
    const Box all = Box::from_shape(shape);
    const Box corner = Box::from_start_count(V{0, 0}, V{16, 16});
    std::vector<double> d(128 * 128), part(16 * 16, -1.0);
    for (int round = 1; round <= 5; ++round) {
      c.put("r", 1, corner, part.data(), part.size() * 8);  // replaced by the put of `all`
      std::fill(d.begin(), d.end(), static_cast<double>(round));
      c.put("r", 1, all, d.data(), d.size() * 8);
    }
    const auto s = c.stat();
    EXPECT_EQ(s.owned_bytes, 128u * 128 * 8) << servers << " servers";
    EXPECT_EQ(s.pieces, static_cast<std::uint64_t>(servers)) << "one piece, indexed by every shard";
    EXPECT_EQ(c.list().at(0).versions.at(0).pieces.size(), 1u);
    std::vector<double> got(128 * 128);
    c.get("r", 1, all, got.data(), got.size() * 8, 0);
    EXPECT_EQ(got, std::vector<double>(128 * 128, 5.0));
    // A piece that only overlaps part of another leaves it.
    const Box half = Box::from_start_count(V{0, 0}, V{64, 128});
    std::vector<double> h(64 * 128, 7.0);
    c.put("r", 2, all, d.data(), d.size() * 8);
    c.put("r", 2, half, h.data(), h.size() * 8);
    EXPECT_EQ(c.list().at(0).versions.at(1).pieces.size(), 2u);
  }
}

// replicas = 2: every piece a server receives is also kept by the next
// member, with the index entries; when a member stops, the others serve
// every acknowledged version from what is left, and new puts go on.
TEST(Group, ReplicasKeepEveryAcknowledgedVersionWhenAMemberStops) {
  cove::ServerOptions o;
  o.replicas = 2;
  Group group(3, o);
  Client c = Client::connect(group.addresses());
  const V shape{96, 96};
  c.define("f", DType(DTypeKind::Float64), 2, shape);
  const Box all = Box::from_shape(shape);
  auto value = [](std::uint64_t version, Index i, Index j) { return static_cast<double>(version * 100000 + i * 96 + j); };
  auto put_version = [&](Client& w, std::uint64_t version, Index tile) {
    for (Index i = 0; i < 96; i += tile)
      for (Index j = 0; j < 96; j += tile) {
        const Box b = Box::from_start_count(V{i, j}, V{tile, tile});
        std::vector<double> d;
        for (Index x = i; x < i + tile; ++x)
          for (Index y = j; y < j + tile; ++y) d.push_back(value(version, x, y));
        w.put("f", version, b, d.data(), d.size() * 8);
      }
  };
  auto check_version = [&](Client& r, std::uint64_t version) {
    std::vector<double> got(96 * 96);
    r.get("f", version, all, got.data(), got.size() * 8, 2000);
    for (Index i = 0; i < 96; ++i)
      for (Index j = 0; j < 96; ++j) ASSERT_EQ(got[i * 96 + j], value(version, i, j)) << version << " " << i << "," << j;
  };
  put_version(c, 1, 16);  // 36 inline pieces
  put_version(c, 2, 32);  // 9 pieces of 8 KiB
  put_version(c, 3, 96);  // one piece of 72 KiB: a grant
  // Every piece has its second copy on another server.
  std::uint64_t copies = 0, held = 0;
  for (const auto& [address, st] : c.stat_each()) {
    EXPECT_EQ(st.replication, 2u);
    EXPECT_EQ(st.single_copies, 0u);
    copies += st.copies;
  }
  const auto listed = c.list();
  for (const auto& ver : listed.at(0).versions)
    for (const auto& p : ver.pieces) {
      ++held;
      EXPECT_FALSE(p.copy.empty()) << ver.version << " " << p.box.to_string();
      EXPECT_NE(p.copy, p.holder);
    }
  EXPECT_EQ(held, 36u + 9u + 1u);
  EXPECT_EQ(copies, held);
  // Putting a region again replaces its copies too.
  put_version(c, 3, 96);
  copies = 0;
  for (const auto& [address, st] : c.stat_each()) copies += st.copies;
  EXPECT_EQ(copies, held);

  group.servers[1].stop();
  // The survivors find it gone (both are connected to it) and turn its
  // pieces' entries to the copies.
  std::uint64_t moved = 0, lost = 0, found = 0;
  for (int i = 0; i < 400 && found < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    moved = lost = found = 0;
    for (const auto& [address, st] : c.stat_each()) {
      moved += st.moved_pieces;
      lost += st.lost_pieces;
      found += st.lost_members;
    }
  }
  EXPECT_EQ(found, 2u);
  EXPECT_GT(moved, 0u);
  EXPECT_EQ(lost, 0u);
  for (std::uint64_t v = 1; v <= 3; ++v) check_version(c, v);
  // A client that connects now, without server 1, reads them too.
  cove::ConnectOptions started;
  started.group_started = true;  // server 1 is taken for dead after 2 s
  Client late = Client::connect(group.addresses(), started);
  for (std::uint64_t v = 1; v <= 3; ++v) check_version(late, v);
  // Puts go on: a piece whose server is gone goes to the next.
  put_version(late, 4, 16);
  check_version(c, 4);
  check_version(late, 4);
}

// replicas = 2 with pieces of megabytes: the next member copies each from
// its holder's memory (on this host, mapped and copied with the region
// engine's threads). When the holder stops, every byte reads back from
// the copies.
TEST(Group, LargeSecondCopiesHoldEveryByteWhenTheirHolderStops) {
  cove::ServerOptions o;
  o.replicas = 2;
  Group group(2, o);
  Client c = Client::connect(group.addresses());
  const V shape{1024, 512};  // four pieces of 1 MiB
  c.define("big", DType(DTypeKind::Float64), 2, shape);
  const Box all = Box::from_shape(shape);
  std::vector<double> want(1024 * 512);
  std::iota(want.begin(), want.end(), 0.5);
  for (Index i = 0; i < 1024; i += 256)
    c.put("big", 1, Box::from_start_count(V{i, 0}, V{256, 512}), want.data() + i * 512, 256 * 512 * 8);
  std::set<std::string> holders;
  const auto listed = c.list();
  for (const auto& p : listed.at(0).versions.at(0).pieces) {
    EXPECT_FALSE(p.copy.empty()) << p.box.to_string();
    holders.insert(p.holder);
  }
  // Stop a member that holds pieces: they are read from its copies.
  const int gone = group.servers[0].address() == *holders.begin() ? 0 : 1;
  group.servers[gone].stop();
  std::uint64_t found = 0;
  for (int i = 0; i < 400 && found < 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    found = 0;
    for (const auto& [address, st] : c.stat_each()) found += st.lost_members;
  }
  ASSERT_EQ(found, 1u);
  std::vector<double> got(want.size(), -1.0);
  c.get("big", 1, all, got.data(), got.size() * 8, 2000);
  EXPECT_EQ(got, want);
}

// Undefine frees everything a variable holds, fails the gets waiting on
// it, and lets the name be defined again, with another definition.
TEST_F(Staging, UndefineFreesEverythingAVariableHolds) {
  auto o = options();
  o.reorg = cove::Reorg::Rasar;  // replicas too
  cove::Server server(o);
  Client c = Client::connect(server.address());
  const V shape{64, 64};
  const Box all = Box::from_shape(shape);
  std::vector<double> d(64 * 64, 1.5), got(64 * 64);
  for (int round = 0; round < 2; ++round) {
    c.define("u", DType(DTypeKind::Float64), 2, shape);
    for (std::uint64_t v = 1; v <= 3; ++v) c.put("u", v, all, d.data(), d.size() * 8);
    c.get("u", 3, all, got.data(), got.size() * 8, 0, cove::Layout::f());  // a replica in F
    auto waiter = std::async(std::launch::async, [&] {
      Client r = Client::connect(server.address());
      return code_of([&] { r.get("u", 9, all, got.data(), got.size() * 8, 20000); });
    });
    while (c.stat().parked_gets == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(c.undefine("u"), 3u);
    EXPECT_EQ(waiter.get(), Code::NotFound);
    const auto s = c.stat();
    EXPECT_EQ(s.variables, 0u);
    EXPECT_EQ(s.pieces, 0u);
    EXPECT_EQ(s.owned_bytes, 0u);
    EXPECT_EQ(s.replica_bytes, 0u);
    EXPECT_EQ(s.patterns, 0u);
    EXPECT_EQ(code_of([&] { c.get("u", 1, all, got.data(), got.size() * 8, 0); }), Code::NotFound);
    EXPECT_EQ(code_of([&] { c.undefine("u"); }), Code::NotFound);
  }
  c.define("u", DType(DTypeKind::Int32), 1);  // another definition is fine now
  // Many variables, defined and undefined, leave nothing behind.
  for (int i = 0; i < 1000; ++i) c.define("many" + std::to_string(i), DType(DTypeKind::UInt8), 1);
  for (int i = 0; i < 500; ++i) c.undefine("many" + std::to_string(i));
  // The rest in one request: those defined go, then NotFound names the others, each once.
  std::vector<std::string> rest{"ghost"};
  for (int i = 500; i < 1000; ++i) rest.push_back("many" + std::to_string(i));
  rest.push_back("many999");
  rest.push_back("ghost");
  try {
    c.undefine(rest);
    ADD_FAILURE() << "undefining a variable nobody defined succeeded";
  } catch (const cove::Error& e) {
    EXPECT_EQ(e.code(), Code::NotFound);
    const std::string what = e.what();
    EXPECT_NE(what.find("variable 'ghost' is not defined"), std::string::npos) << what;
    EXPECT_EQ(what.find("many"), std::string::npos) << what;
  }
  EXPECT_EQ(c.stat().variables, 1u);
  EXPECT_EQ(code_of([&] { c.undefine(std::vector<std::string>{}); }), Code::InvalidArgument);
}

// A put_local piece deleted or undefined while a reader holds a lease on it:
// its writer's release still waits for the reader, so that the writer never
// reuses memory a reader is copying.
TEST_F(Staging, ReleaseWaitsForReadersOfDeletedPutLocalPieces) {
  cove::Server server(options());
  for (const bool undefine : {false, true}) {
    Client writer = Client::connect(server.address());
    writer.define("pl", DType(DTypeKind::Float64), 1, V{1024});
    const Box all = Box::from_shape(V{1024});
    std::vector<double> mine(1024, 4.0);
    writer.put_local("pl", 1, all, mine.data(), mine.size() * 8);
    // A reader that has been answered (and so holds a lease) but not copied yet.
    namespace net = cove::net;
    auto ep = net::make_endpoint(across_processes() ? test_transport() : "inproc://pl-reader-" + std::to_string(undefine));
    auto peer = ep->connect(server.address(), net::deadline_in(5000));
    net::greet(*ep, peer, net::Role::Client, ep->address(), server.secret(), net::deadline_in(5000));
    const auto answer = net::call<net::Message<net::Op::Query>>(
        *ep, peer, {"pl", 1, false, all, 0, cove::Layout::c(), 0, std::nullopt}, net::deadline_in(5000));
    ASSERT_EQ(answer.pieces.size(), 1u);
    if (undefine)
      writer.undefine("pl");
    else
      writer.remove("pl", 1);
    auto released = std::async(std::launch::async, [&] { return writer.release("pl", 1, all); });
    EXPECT_EQ(released.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout)
        << "the writer was told to reuse memory a reader may still copy";
    ep->notify(peer, net::encode_request<net::Message<net::Op::LeaseEnd>>({{answer.lease}}, net::next_request_id()),
               net::deadline_in(5000));
    EXPECT_EQ(released.get(), 1u);
  }
}

TEST_F(Staging, EvictionDeleteAndListing) {
  auto o = options();
  o.max_versions = 2;
  cove::Server server(o);
  Client c = Client::connect(server.address());
  c.define("v", DType(DTypeKind::Int64), 1, V{4});
  const Box all = Box::from_shape(V{4});
  std::vector<std::int64_t> d{1, 2, 3, 4};
  for (std::uint64_t v = 1; v <= 4; ++v) c.put("v", v, all, d.data(), 32);
  auto listing = c.list();
  ASSERT_EQ(listing.size(), 1u);
  ASSERT_EQ(listing[0].versions.size(), 2u);
  EXPECT_EQ(listing[0].versions[0].version, 3u);
  EXPECT_EQ(listing[0].versions[1].version, 4u);
  EXPECT_EQ(listing[0].dtype, DType(DTypeKind::Int64));
  EXPECT_EQ(c.stat().owned_bytes, 64u);
  std::vector<std::int64_t> got(4);
  EXPECT_EQ(code_of([&] { c.get("v", 1, all, got.data(), 32, 0); }), Code::NotFound);
  c.remove("v", 3);
  EXPECT_EQ(code_of([&] { c.remove("v", 3); }), Code::NotFound);
  EXPECT_EQ(c.stat().owned_bytes, 32u);
  c.remove("v", 4);
  EXPECT_EQ(c.stat().owned_bytes, 0u);
  EXPECT_EQ(c.latest("v"), std::nullopt);
}

TEST_F(Staging, PutLocalIsReleasedOnDisconnect) {
  cove::Server server(options());
  Client reader = Client::connect(server.address());
  const Box all = Box::from_shape(V{3, 3});
  std::vector<float> d(9, 1.5f), got(9);
  {
    Client writer = Client::connect(server.address());
    writer.define("p", DType(DTypeKind::Float32), 2);
    writer.put_local("p", 1, all, d.data(), 36);
    EXPECT_EQ(reader.stat().local_bytes, 36u);
    EXPECT_EQ(reader.stat().owned_bytes, 0u);
    reader.get("p", 1, all, got.data(), 36, 0);
    EXPECT_EQ(got, d);
  }
  // Released by its Disconnect, not dropped as a dead writer's would be.
  const auto s = reader.stat();
  EXPECT_EQ(s.local_bytes, 0u);
  EXPECT_EQ(s.pieces, 0u);
  EXPECT_EQ(s.lost_pieces, 0u) << "a writer that said goodbye had its pieces counted as lost";
  EXPECT_EQ(code_of([&] { reader.get("p", 1, all, got.data(), 36, 0); }), Code::NotFound);
}

// A writer going (Disconnect, in ~Client) while a reader holds a lease on
// its put_local piece: the Disconnect is answered, and the writer's memory
// given back, only once the reader's lease ends; the piece is released,
// not lost.
TEST_F(Staging, DisconnectWaitsForReadersLeases) {
  cove::Server server(options());
  namespace net = cove::net;
  const Box all = Box::from_shape(V{1024});
  std::vector<double> mine(1024, 4.0);
  auto writer = std::make_unique<Client>(Client::connect(server.address()));
  writer->define("dw", DType(DTypeKind::Float64), 1, V{1024});
  writer->put_local("dw", 1, all, mine.data(), mine.size() * 8);
  // A reader that has been answered (and so holds a lease) but not copied yet.
  auto ep = net::make_endpoint(across_processes() ? test_transport() : "inproc://dw-reader-" + std::to_string(::getpid()));
  auto peer = ep->connect(server.address(), net::deadline_in(5000));
  net::greet(*ep, peer, net::Role::Client, ep->address(), server.secret(), net::deadline_in(5000));
  const auto answer = net::call<net::Message<net::Op::Query>>(
      *ep, peer, {"dw", 1, false, all, 0, cove::Layout::c(), 0, std::nullopt}, net::deadline_in(5000));
  ASSERT_EQ(answer.pieces.size(), 1u);
  auto gone = std::async(std::launch::async, [&] { writer.reset(); });
  EXPECT_EQ(gone.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout)
      << "the writer's Disconnect was answered while a reader may still copy its memory";
  ep->notify(peer, net::encode_request<net::Message<net::Op::LeaseEnd>>({{answer.lease}}, net::next_request_id()),
             net::deadline_in(5000));
  gone.get();
  Client other = Client::connect(server.address());
  const auto s = other.stat();
  EXPECT_EQ(s.local_bytes, 0u);
  EXPECT_EQ(s.pieces, 0u);
  EXPECT_EQ(s.lost_pieces, 0u) << "the Disconnect released nothing: its pieces went as a dead writer's";
}

// With a pre-faulted pool (ServerOptions::pool_reserve) and one version
// kept, a reader's lease on a dropped version keeps its bytes: the blocks
// recycled and made ahead for later versions are never that one, and every
// version reads back as written.
TEST_F(Staging, PreFaultedPoolKeepsALeasedVersionsBytes) {
  auto o = options();
  o.max_versions = 1;
  o.pool_reserve = 8 << 20;
  cove::Server server(o);
  namespace net = cove::net;
  const std::size_t n = std::size_t{1} << 17;  // 1 MiB of float64: a large piece
  const Box all = Box::from_shape(V{n});
  Client writer = Client::connect(server.address()), reader = Client::connect(server.address());
  writer.define("pf", DType(DTypeKind::Float64), 1, V{n});
  std::vector<double> mine(n), got(n);
  const auto put = [&](std::uint64_t v) {
    for (std::size_t i = 0; i < n; ++i) mine[i] = static_cast<double>(v * 10000000 + i);
    writer.put("pf", v, all, mine.data(), n * 8);
  };
  const auto check = [&](std::uint64_t v, const std::vector<double>& d) {
    for (std::size_t i = 0; i < n; ++i)
      if (d[i] != static_cast<double>(v * 10000000 + i)) return false;
    return true;
  };
  put(1);
  // A reader answered for version 1 (holding a lease) that has not copied yet.
  auto ep = net::make_endpoint(across_processes() ? test_transport() : "inproc://pf-reader-" + std::to_string(::getpid()));
  auto peer = ep->connect(server.address(), net::deadline_in(5000));
  net::greet(*ep, peer, net::Role::Client, ep->address(), server.secret(), net::deadline_in(5000));
  const auto answer = net::call<net::Message<net::Op::Query>>(
      *ep, peer, {"pf", 1, false, all, 0, cove::Layout::c(), 0, std::nullopt}, net::deadline_in(5000));
  ASSERT_EQ(answer.pieces.size(), 1u);
  ASSERT_NE(answer.lease, 0u);
  for (std::uint64_t v = 2; v <= 8; ++v) {  // version 1 is dropped at once; its block stays leased
    put(v);
    reader.get("pf", v, all, got.data(), n * 8, 0);
    ASSERT_TRUE(check(v, got)) << "version " << v << " read back wrong";
  }
  const net::RemoteOp op{0, got.data(), n * 8};
  ep->read(peer, answer.pieces[0].key, std::span(&op, 1), net::deadline_in(5000));
  EXPECT_TRUE(check(1, got)) << "a leased version's bytes were reused for a later version";
  ep->notify(peer, net::encode_request<net::Message<net::Op::LeaseEnd>>({{answer.lease}}, net::next_request_id()),
             net::deadline_in(5000));
  for (std::uint64_t v = 9; v <= 12; ++v) {  // its block may now be recycled
    put(v);
    reader.get("pf", v, all, got.data(), n * 8, 0);
    ASSERT_TRUE(check(v, got)) << "version " << v << " read back wrong";
  }
}

// With a reserve larger than a client faults in whole (a chunk over 64 MiB,
// net/segment.hpp), pieces of many sizes from two writers are cut from one
// chunk: each writer and the reader map it once and fault in only their
// windows, and every piece reads back as written, also once removed
// versions' windows are cut again for later ones.
TEST_F(Staging, PiecesCutFromOneLargeChunkReadBackAsWritten) {
  auto o = options();
  o.pool_reserve = std::size_t{80} << 20;
  cove::Server server(o);
  Client a = Client::connect(server.address()), b = Client::connect(server.address());
  Client reader = Client::connect(server.address());
  const std::size_t sizes[] = {(1 << 17) + 3, 3 << 17, 90000, 1 << 19};  // float64 elements, all large pieces
  const std::string names[] = {"c0", "c1", "c2", "c3"};
  for (const auto& name : names) a.define(name, DType(DTypeKind::Float64), 1);
  const auto value = [](std::size_t var, std::uint64_t v, std::size_t i) {
    return static_cast<double>(var * 1000000000 + v * 10000000 + i);
  };
  std::vector<double> data, got;
  for (std::uint64_t v = 1; v <= 6; ++v) {
    for (std::size_t var = 0; var < std::size(sizes); ++var) {
      const std::size_t n = sizes[var];
      data.resize(n);
      for (std::size_t i = 0; i < n; ++i) data[i] = value(var, v, i);
      const auto all = Box::from_shape(V{static_cast<std::int64_t>(n)});
      (var % 2 ? b : a).put(names[var], v, all, data.data(), n * 8);
    }
    for (std::uint64_t w = v > 2 ? v - 2 : 1; w <= v; ++w)  // the versions kept so far
      for (std::size_t var = 0; var < std::size(sizes); ++var) {
        const std::size_t n = sizes[var];
        got.assign(n, -1.0);
        reader.get(names[var], w, Box::from_shape(V{static_cast<std::int64_t>(n)}), got.data(), n * 8, 0);
        for (std::size_t i = 0; i < n; ++i)
          ASSERT_EQ(got[i], value(var, w, i)) << "c" << var << " version " << w << " element " << i;
      }
    if (v > 2)  // its windows go back to the chunk and are cut for the next version
      for (const auto& name : names) a.remove(name, v - 2);
  }
}

// Memory from Client::allocate(): on one host, a segment the reader maps
// (over UCX and in one process, memory read as any other); a release waits
// for no reader, the memory is written again and read again.
TEST_F(Staging, PutLocalOfAllocatedMemory) {
  cove::Server server(options());
  Client writer = Client::connect(server.address());
  Client reader = Client::connect(server.address());
  const Box all = Box::from_shape(V{64, 1024});
  writer.define("a", DType(DTypeKind::Float64), 2);
  cove::SharedBuffer buf = writer.allocate(64 * 1024 * 8);
  ASSERT_TRUE(buf);
  auto* d = reinterpret_cast<double*>(buf.data());
  std::vector<double> got(64 * 1024);
  for (std::uint64_t v = 1; v <= 3; ++v) {
    for (std::size_t i = 0; i < got.size(); ++i) d[i] = static_cast<double>(v * 1000000 + i);
    writer.put_local("a", v, all, d, buf.size());
    reader.get("a", v, all, got.data(), got.size() * 8, 0);
    for (std::size_t i = 0; i < got.size(); i += 517) ASSERT_EQ(got[i], static_cast<double>(v * 1000000 + i));
    // A part of it, in F order: assembled straight from the mapping.
    const Box part = Box::from_bounds(V{3, 100}, V{60, 900});
    std::vector<double> col(static_cast<std::size_t>(part.volume()));
    reader.get("a", v, part, col.data(), col.size() * 8, 0, cove::Layout::f());
    EXPECT_EQ(col[1], static_cast<double>(v * 1000000 + 4 * 1024 + 100));  // (4, 100)
    EXPECT_EQ(writer.release("a", v, all), 1u);
  }
  EXPECT_EQ(code_of([&] { writer.allocate(0); }), Code::InvalidArgument);
}

// In-process, a server may still appear under the name, so the client waits
// out its timeout; a local or UCX address that nobody listens on is refused at once.
TEST_F(Staging, ClientBeforeAnyServerFailsAfterItsTimeout) {
  cove::ConnectOptions co;
  co.timeout_ms = 50;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    Client::connect(dead_address(), co);
    ADD_FAILURE();
  } catch (const cove::Error& e) {
    EXPECT_EQ(e.code(), Code::Unavailable);
    EXPECT_NE(std::string(e.what()).find("no Cove server at"), std::string::npos) << e.what();
  }
  if (!over_ucx()) {
    EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(50));
  }
}

TEST_F(Staging, ReaderWaitingWhileTheServerStopsGetsAnError) {
  auto server = std::make_unique<cove::Server>(options());
  Client c = Client::connect(server->address());
  c.define("w", DType(DTypeKind::UInt8), 1);
  std::vector<std::uint8_t> buf(4);
  auto waiting = std::async(std::launch::async, [&] {
    return code_of([&] { c.get("w", 1, Box::from_shape(V{4}), buf.data(), 4, -1); });
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  server->stop();
  EXPECT_EQ(waiting.get(), Code::Unavailable);
}

}  // namespace

namespace {

TEST_F(Staging, MetadataByVersionNextAndLatest) {
  cove::Server server(options());
  Client c = Client::connect(server.address());
  auto blob = [](const std::string& s) {
    std::vector<std::byte> b(s.size());
    std::memcpy(b.data(), s.data(), s.size());
    return b;
  };
  auto text = [](const cove::Metadata& m) { return std::string(reinterpret_cast<const char*>(m.data.data()), m.data.size()); };
  EXPECT_EQ(code_of([&] { c.get_meta_latest("steps", 0); }), Code::NotFound);
  EXPECT_EQ(code_of([&] { c.get_meta("steps", 1, 30); }), Code::Timeout);
  c.put_meta("steps", 1, blob("one"));
  c.put_meta("steps", 3, blob("three"));
  EXPECT_EQ(text(c.get_meta("steps", 1, 0)), "one");
  EXPECT_EQ(c.get_meta_next("steps", 1, 0).version, 3u);
  EXPECT_EQ(text(c.get_meta_latest("steps", 0)), "three");
  // find_latest_meta: the newest, or none without an error.
  EXPECT_FALSE(c.find_latest_meta("never-put").has_value());
  ASSERT_TRUE(c.find_latest_meta("steps").has_value());
  EXPECT_EQ(c.find_latest_meta("steps")->version, 3u);
  EXPECT_EQ(text(*c.find_latest_meta("steps")), "three");
  c.put_meta("from-zero", 0, blob("zero"));  // version 0 is a version, not "none"
  ASSERT_TRUE(c.find_latest_meta("from-zero").has_value());
  EXPECT_EQ(c.find_latest_meta("from-zero")->version, 0u);
  EXPECT_EQ(text(*c.find_latest_meta("from-zero")), "zero");
  // Waiting for the next one.
  auto next = std::async(std::launch::async, [&] { return c.get_meta_next("steps", 3, 5000); });
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  c.put_meta("steps", 4, blob("four"));
  const auto m = next.get();
  EXPECT_EQ(m.version, 4u);
  EXPECT_EQ(text(m), "four");
  std::vector<std::byte> big(cove::net::kMaxMetaBytes + 1);
  EXPECT_EQ(code_of([&] { c.put_meta("big", 1, big); }), Code::InvalidArgument);
}

// Metadata is memory like data: counted against the budget, shown in the
// statistics, and evicted by max_versions as data is.
TEST_F(Staging, MetadataCountsAgainstTheBudgetAndIsEvicted) {
  auto o = options();
  o.memory_budget = 64 << 10;
  o.max_versions = 2;
  {
    cove::Server server(o);
    Client c = Client::connect(server.address());
    const std::vector<std::byte> blob(8192, std::byte{7});
    for (std::uint64_t v = 1; v <= 10; ++v) c.put_meta("m", v, blob);
    const auto s = c.stat();
    EXPECT_EQ(s.metadata, 2u);
    EXPECT_EQ(s.metadata_bytes, 2u * (8192 + 1 + cove::store::MetadataStore::kEntryBytes));
    EXPECT_EQ(code_of([&] { c.get_meta("m", 8, 0); }), Code::NotFound);  // evicted
    EXPECT_EQ(c.get_meta("m", 10, 0).data.size(), 8192u);
  }
  o.max_versions = 0;  // all kept: the budget stops it
  cove::Server server(o);
  Client c = Client::connect(server.address());
  const std::vector<std::byte> blob(8192, std::byte{9});
  std::uint64_t v = 0;
  while (code_of([&] { c.put_meta("n" + std::to_string(v), 1, blob); }) == Code::Ok) ++v;
  EXPECT_EQ(v, 7u) << "8 KiB blobs in a 64 KiB budget";
  EXPECT_EQ(code_of([&] { c.put_meta("n" + std::to_string(v), 1, blob); }), Code::NoMemory);
  EXPECT_LE(c.stat().metadata_bytes, 64u << 10);
  EXPECT_EQ(c.get_meta("n0", 1, 0).data, blob);  // what was kept is intact
  // Data does not fit beside it either.
  c.define("d", DType(DTypeKind::UInt8), 1, V{16384});
  std::vector<std::uint8_t> d(16384);
  EXPECT_EQ(code_of([&] { c.put("d", 1, Box::from_shape(V{16384}), d.data(), d.size()); }), Code::NoMemory);
}

TEST_F(Staging, SubscriptionsFireForNewCoveringVersions) {
  Group group(over_ucx() ? 1 : 2);
  Client writer = Client::connect(group.addresses()), watcher = Client::connect(group.addresses());
  const V shape{32, 32};  // 8 KiB: two index blocks, top and bottom on one member each
  writer.define("s", DType(DTypeKind::Float64), 2, shape);
  const Box all = Box::from_shape(shape), top = Box::from_start_count(V{0, 0}, V{16, 32}),
            bottom = Box::from_start_count(V{16, 0}, V{16, 32});
  const auto t = encoded(top, shape), b = encoded(bottom, shape);
  writer.put("s", 1, all, encoded(all, shape).data(), 32 * 32 * 8);  // present before: not reported
  std::mutex m;
  std::condition_variable cv;
  std::vector<std::uint64_t> seen;
  auto sub = watcher.subscribe("s", all, [&](const std::string& var, std::uint64_t v) {
    EXPECT_EQ(var, "s");
    std::lock_guard lock(m);
    seen.push_back(v);
    cv.notify_all();
  });
  writer.put("s", 2, top, t.data(), t.size() * 8);  // half: not yet
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  {
    std::lock_guard lock(m);
    EXPECT_TRUE(seen.empty());
  }
  writer.put("s", 2, bottom, b.data(), b.size() * 8);
  writer.put("s", 5, all, encoded(all, shape).data(), 32 * 32 * 8);
  {
    std::unique_lock lock(m);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return seen.size() >= 2; }));
    EXPECT_EQ(seen, (std::vector<std::uint64_t>{2, 5}));
  }
  sub.cancel();
  writer.put("s", 6, all, encoded(all, shape).data(), 32 * 32 * 8);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::lock_guard lock(m);
  EXPECT_EQ(seen.size(), 2u);
}

TEST_F(Staging, NonBlockingPut) {
  cove::Server server(options());
  Client c = Client::connect(server.address());
  const V shape{256, 256};
  c.define("nb", DType(DTypeKind::Float64), 2, shape);
  const Box all = Box::from_shape(shape);
  const auto d = encoded(all, shape);
  auto h = c.put_async("nb", 1, all, d.data(), d.size() * 8);
  h.wait();
  EXPECT_TRUE(h.test());
  std::vector<double> got(d.size());
  c.get("nb", 1, all, got.data(), got.size() * 8, 0);
  EXPECT_EQ(got, d);
  auto bad = c.put_async("nb", 1, Box::from_shape(V{300, 2}), d.data(), 300 * 2 * 8);
  EXPECT_THROW(bad.wait(), cove::Error);
}

}  // namespace

namespace {

// Large enough that same-host copies are split over several threads.
TEST_F(Staging, LargePiecesArriveIntact) {
  cove::Server server(options());
  Client c = Client::connect(server.address());
  const V shape{256, 256, 48};  // 24 MiB of float64
  const Box all = Box::from_shape(shape);
  c.define("big", DType(DTypeKind::Float64), 3, shape);
  const auto data = encoded(all, shape);
  c.put("big", 1, all, data.data(), data.size() * 8);
  std::vector<double> got(data.size(), -1);
  c.get("big", 1, all, got.data(), got.size() * 8, 0);
  EXPECT_EQ(got, data);
  const Box part = Box::from_start_count(V{3, 5, 1}, V{250, 240, 46});  // short runs: read as one span
  std::vector<double> sub(static_cast<std::size_t>(part.volume()), -1);
  c.get("big", 1, part, sub.data(), sub.size() * 8, 0, Layout::f());
  EXPECT_EQ(sub, encoded(part, shape, Layout::f()));
}

}  // namespace
