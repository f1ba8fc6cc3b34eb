// The promises the store keeps to programs (docs/staging.md, "What a
// version promises"): within a version the last acknowledged put wins for
// every cell, whatever the pieces' holders, shards, copies and readers.
// Each test compares every cell read with a reference array painted in the
// same order. The transport is COVE_TEST_TRANSPORT, as for the staging
// suite (tests/CMakeLists.txt runs these over every data path too).
#include <cove/client.hpp>
#include <cove/error.hpp>
#include <cove/server.hpp>

#include "common/placement.hpp"
#include "net/protocol.hpp"
#include "expect_error.hpp"
#include "random_box.hpp"
#include "staging_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <future>
#include <chrono>
#include <map>
#include <memory>
#include <random>
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

// Cell (i, j) of a 2-D C-order array of `shape`.
std::size_t at(const V& shape, Index i, Index j) { return static_cast<std::size_t>(i * shape[1] + j); }

struct Painter {
  int servers = 1;
  int replicas = 1;
};

class LastWriteWins : public ::testing::TestWithParam<Painter> {};

// Random overlapping boxes, put one after another from three connections
// (put and put_local in turn), each box's cells holding the box's number:
// a get of the whole array, of random parts of it and in F order must
// equal the reference painted in the same order, cell by cell. Readers
// run meanwhile; every cell they read must come from a box that covers it
// and be no older than the last box covering it that was acknowledged
// before their get began.
TEST_P(LastWriteWins, OverlappingPutsReadAsPaintedInOrder) {
  const Painter p = GetParam();
  cove::ServerOptions o;
  o.replicas = p.replicas;
  Group group(p.servers, o);
  std::vector<Client> writers;
  for (int i = 0; i < 3; ++i) writers.push_back(Client::connect(group.addresses()));
  Client reader = Client::connect(group.addresses());
  const V shape{96, 160};  // 120 KiB of doubles: large boxes go through grants, small ones inline
  writers[0].define("paint", DType(DTypeKind::Float64), 2, shape);
  const Box all = Box::from_shape(shape);
  std::mt19937 rng(20261126u + static_cast<unsigned>(p.servers * 10 + p.replicas));
  constexpr int kBoxes = 60;
  for (std::uint64_t version = 1; version <= 3; ++version) {
    std::vector<Box> boxes{all};  // box 0 covers everything, so that every get is answered
    for (int k = 1; k < kBoxes; ++k) boxes.push_back(random_box(rng, shape));
    // acked: boxes acknowledged so far; started: boxes whose put has begun.
    std::atomic<int> acked{0}, started{0};
    std::atomic<bool> done{false};
    std::atomic<long> reads{0};
    std::string reader_error;                 // the reader's own until it is joined
    std::atomic<bool> reader_failed{false};  // what the writer may look at meanwhile
    std::thread readers([&] {
      std::vector<double> got(static_cast<std::size_t>(all.volume()));
      while (!done.load()) {
        const int before = acked.load();
        if (before == 0) {
          std::this_thread::yield();
          continue;
        }
        try {
          reader.get("paint", version, all, got.data(), got.size() * 8, 0);
        } catch (const cove::Error& e) {
          reader_error = e.what();
          reader_failed = true;
          return;
        }
        const int after = started.load();
        ++reads;
        for (Index i = 0; i < shape[0] && reader_error.empty(); ++i)
          for (Index j = 0; j < shape[1]; ++j) {
            const double v = got[at(shape, i, j)];
            const int k = static_cast<int>(v);
            const auto covers = [&](int b) { return boxes[b].contains(Box::from_start_count(V{i, j}, V{1, 1})); };
            bool ok = v == k && k >= 0 && k < after && covers(k);
            for (int newer = k + 1; ok && newer < before; ++newer) ok = !covers(newer);
            if (!ok) {
              reader_error = "cell (" + std::to_string(i) + ", " + std::to_string(j) + ") read " + std::to_string(v) +
                             " with boxes " + std::to_string(before) + " acknowledged";
              break;
            }
          }
        if (!reader_error.empty()) {
          reader_failed = true;
          return;
        }
      }
    });
    std::vector<double> ref(static_cast<std::size_t>(all.volume()), -1.0);
    std::vector<std::vector<double>> kept;  // put_local bytes stay until released
    std::vector<std::pair<int, Box>> local;  // writer, box
    // The readers get a turn now and then (a loaded machine may not give
    // their thread one otherwise), at most a few seconds each.
    const auto let_readers_read = [&] {
      const long before = reads.load();
      for (int i = 0; i < 5000 && reads.load() == before && !reader_failed.load(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    };
    for (int k = 0; k < kBoxes; ++k) {
      if (k % 10 == 1) let_readers_read();
      const Box& b = boxes[k];
      std::vector<double> d(static_cast<std::size_t>(b.volume()), static_cast<double>(k));
      Client& w = writers[k % 3];
      started = k + 1;
      if (k % 2 == 1) {
        kept.push_back(std::move(d));
        w.put_local("paint", version, b, kept.back().data(), kept.back().size() * 8);
        local.emplace_back(k % 3, b);
      } else {
        w.put("paint", version, b, d.data(), d.size() * 8);
      }
      acked = k + 1;
      for (Index i = b.lo[0]; i < b.hi[0]; ++i)
        for (Index j = b.lo[1]; j < b.hi[1]; ++j) ref[at(shape, i, j)] = static_cast<double>(k);
    }
    let_readers_read();
    done = true;
    readers.join();
    EXPECT_EQ(reader_error, "") << "version " << version;
    EXPECT_GT(reads.load(), 0);

    std::vector<double> got(ref.size());
    reader.get("paint", version, all, got.data(), got.size() * 8, 0);
    for (std::size_t c = 0; c < ref.size(); ++c)
      ASSERT_EQ(got[c], ref[c]) << "version " << version << " cell " << c / shape[1] << "," << c % shape[1];
    std::vector<double> in_f(ref.size());
    reader.get("paint", version, all, in_f.data(), in_f.size() * 8, 0, Layout::f());
    for (Index i = 0; i < shape[0]; ++i)
      for (Index j = 0; j < shape[1]; ++j)
        ASSERT_EQ(in_f[static_cast<std::size_t>(j * shape[0] + i)], ref[at(shape, i, j)]) << i << "," << j;
    for (int q = 0; q < 20; ++q) {
      const Box r = random_box(rng, shape);
      std::vector<double> part(static_cast<std::size_t>(r.volume()));
      reader.get("paint", version, r, part.data(), part.size() * 8, 0);
      std::size_t n = 0;
      for (Index i = r.lo[0]; i < r.hi[0]; ++i)
        for (Index j = r.lo[1]; j < r.hi[1]; ++j, ++n) ASSERT_EQ(part[n], ref[at(shape, i, j)]) << r.to_string();
    }
    // Pieces partly covered are counted; those wholly covered are gone
    // unless a writer still holds them (put_local, until released).
    std::uint64_t partly = 0;
    for (const auto& [address, st] : reader.stat_each()) partly += st.partly_covered;
    EXPECT_GT(partly, 0u);
    for (const auto& [w, b] : local) writers[w].release("paint", version, b);
    // Released put_local pieces leave cells uncovered only where no other
    // put covered them: a get then waits, it never reads older bytes.
  }
}

// replicas = 2: overlapping puts, then a member stops. The entries of the
// pieces it held move to their second copies with what later puts covered
// still covered: every acknowledged version reads as painted.
TEST(SemanticsGroup, LastWriteWinsAfterAMemberDies) {
  cove::ServerOptions o;
  o.replicas = 2;
  Group group(3, o);
  Client c = Client::connect(group.addresses());
  const V shape{64, 96};
  c.define("paint", DType(DTypeKind::Float64), 2, shape);
  const Box all = Box::from_shape(shape);
  std::mt19937 rng(31u);
  std::vector<std::vector<double>> refs;
  for (std::uint64_t version = 1; version <= 4; ++version) {
    std::vector<double> ref(static_cast<std::size_t>(all.volume()));
    for (int k = 0; k < 40; ++k) {
      const Box b = k == 0 ? all : random_box(rng, shape);
      const double value = static_cast<double>(version * 1000 + static_cast<std::uint64_t>(k));
      std::vector<double> d(static_cast<std::size_t>(b.volume()), value);
      c.put("paint", version, b, d.data(), d.size() * 8);
      for (Index i = b.lo[0]; i < b.hi[0]; ++i)
        for (Index j = b.lo[1]; j < b.hi[1]; ++j) ref[at(shape, i, j)] = value;
    }
    refs.push_back(std::move(ref));
  }
  group.servers[1].stop();
  std::uint64_t found = 0;
  for (int i = 0; i < 400 && found < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    found = 0;
    for (const auto& [address, st] : c.stat_each()) found += st.reachable ? st.lost_members : 0;
  }
  ASSERT_EQ(found, 2u) << "the survivors did not find server 1 gone";
  for (std::uint64_t version = 1; version <= 4; ++version) {
    std::vector<double> got(refs[version - 1].size());
    c.get("paint", version, all, got.data(), got.size() * 8, 2000);
    for (std::size_t k = 0; k < got.size(); ++k)
      ASSERT_EQ(got[k], refs[version - 1][k]) << "version " << version << " cell " << k / 96 << "," << k % 96;
  }
}

// Sealed versions, for elements of 1 to 48 bytes, in C and F order: cells
// no put covered read as the fill value; without a fill value the get
// fails at once, naming the cells; an unsealed version keeps waiting.
TEST(SemanticsSealed, UncoveredCellsReadAsTheFillValue) {
  for (int servers : {1, 2}) {
    Group group(servers);
    Client c = Client::connect(group.addresses());
    const V shape{12, 20};
    const Box all = Box::from_shape(shape);
    const Box written = Box::from_start_count(V{2, 3}, V{6, 9});
    for (std::size_t elem = 1; elem <= 48; ++elem) {
      const DType t = DType::opaque(elem);
      std::vector<std::byte> fill(elem);
      for (std::size_t b = 0; b < elem; ++b) fill[b] = static_cast<std::byte>(0xA0 + b);
      const std::string with = "filled" + std::to_string(elem), without = "bare" + std::to_string(elem);
      cove::VariableOptions o;
      o.fill = fill;
      c.define(with, t, 2, shape, o);
      c.define(without, t, 2, shape);
      std::vector<std::byte> data(static_cast<std::size_t>(written.volume()) * elem);
      for (std::size_t b = 0; b < data.size(); ++b) data[b] = static_cast<std::byte>(b % 251);
      for (const auto& var : {with, without}) c.put(var, 1, written, data.data(), data.size());
      std::vector<std::byte> got(static_cast<std::size_t>(all.volume()) * elem);
      // Not sealed: the get waits for the rest, and times out.
      EXPECT_EQ(code_of([&] { c.get(with, 1, all, got.data(), got.size(), 50); }), Code::Timeout);
      EXPECT_FALSE(c.seal(with, 1));
      EXPECT_TRUE(c.seal(with, 1)) << "sealing again changes nothing and says so";
      c.seal(without, 1);
      for (const Layout& layout : {Layout::c(), Layout::f()}) {
        c.get(with, 1, all, got.data(), got.size(), -1, layout);
        const auto strides = layout.strides(all);
        for (Index i = 0; i < shape[0]; ++i)
          for (Index j = 0; j < shape[1]; ++j) {
            const std::byte* cell = got.data() + static_cast<std::size_t>(i * strides[0] + j * strides[1]) * elem;
            const bool inside = written.contains(Box::from_start_count(V{i, j}, V{1, 1}));
            const std::byte* want =
                inside ? data.data() + static_cast<std::size_t>((i - 2) * 9 + (j - 3)) * elem : fill.data();
            ASSERT_EQ(std::memcmp(cell, want, elem), 0) << elem << " bytes, cell " << i << "," << j;
          }
      }
      // Without a fill value: NotFound at once, naming what no put covered.
      try {
        c.get(without, 1, all, got.data(), got.size(), 60000);
        ADD_FAILURE() << "a get of unwritten cells without a fill value succeeded";
      } catch (const cove::Error& e) {
        EXPECT_EQ(e.code(), Code::NotFound);
        EXPECT_NE(std::string(e.what()).find("no put covered"), std::string::npos) << e.what();
      }
      // The covered part reads as ever.
      std::vector<std::byte> part(data.size());
      c.get(without, 1, written, part.data(), part.size(), 0);
      EXPECT_EQ(part, data);
    }
    // A sealed version nobody wrote reads as all fill; get_latest takes it.
    std::vector<std::byte> got(static_cast<std::size_t>(all.volume()) * 3);
    c.seal("filled3", 7);
    EXPECT_EQ(c.get_latest("filled3", all, got.data(), got.size(), 0), 7u);
    for (std::size_t k = 0; k < got.size(); ++k) ASSERT_EQ(got[k], static_cast<std::byte>(0xA0 + k % 3));
    const auto listed = c.list();
    for (const auto& v : listed)
      if (v.name == "filled3") {
        ASSERT_EQ(v.versions.size(), 2u);
        EXPECT_TRUE(v.versions[0].sealed && v.versions[1].sealed);
        EXPECT_EQ(v.fill.size(), 3u);
      }
  }
}

// Options of a variable of doubles whose fill value is `v`.
cove::VariableOptions filled_with(double v) {
  cove::VariableOptions o;
  o.fill.resize(sizeof v);
  std::memcpy(o.fill.data(), &v, sizeof v);
  return o;
}

// A get waiting on a version is answered by the seal.
TEST(SemanticsSealed, SealingAnswersWaitingGets) {
  Group group(2);
  Client w = Client::connect(group.addresses()), r = Client::connect(group.addresses());
  const cove::VariableOptions o = filled_with(-1.0);
  w.define("s", DType(DTypeKind::Float64), 1, V{1024}, o);  // 8 KiB: two index blocks, one per member
  std::vector<double> half(512, 2.0);
  w.put("s", 1, Box::from_start_count(V{0}, V{512}), half.data(), 4096);
  auto waiting = std::async(std::launch::async, [&] {
    std::vector<double> got(1024);
    r.get("s", 1, Box::from_shape(V{1024}), got.data(), 8192, 30000);
    return got;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  w.seal("s", 1);
  const auto got = waiting.get();
  for (int i = 0; i < 1024; ++i) ASSERT_EQ(got[static_cast<std::size_t>(i)], i < 512 ? 2.0 : -1.0) << i;
}

// A definition made with_first_put travels with the writer's first put
// instead of a request of its own: no other client sees it before, every
// member knows it after (a piece indexed by another member too, inline and
// bulk), the writer's own seal, undefine and get send it first, and a
// first put that carries a different definition is refused, storing nothing.
TEST(SemanticsDefine, ADefinitionTravelsWithTheFirstPut) {
  for (int servers : {1, 2, 3}) {
    Group group(servers);
    Client w = Client::connect(group.addresses()), r = Client::connect(group.addresses());
    cove::VariableOptions o = filled_with(-1.0);
    o.with_first_put = true;
    for (const Index n : {Index{1024}, Index{1} << 17}) {  // 8 KiB (inline) and 1 MiB (bulk), over every member
      SCOPED_TRACE(std::to_string(servers) + " servers, " + std::to_string(n) + " doubles");
      const std::string var = "first" + std::to_string(n);
      const Box all = Box::from_shape(V{n}), head = Box::from_start_count(V{0}, V{n / 2 + 3});
      w.define(var, DType(DTypeKind::Float64), 1, V{n}, o);
      EXPECT_EQ(code_of([&] { r.definition(var); }), Code::NotFound) << "no request was sent before the put";
      auto waiting = std::async(std::launch::async, [&] {  // a reader that comes first waits for it
        std::vector<double> got(static_cast<std::size_t>(n));
        r.get(var, 1, all, got.data(), got.size() * 8, 30000);
        return got;
      });
      std::vector<double> d(static_cast<std::size_t>(head.volume()));
      for (std::size_t k = 0; k < d.size(); ++k) d[k] = static_cast<double>(k) + 0.5;
      w.put(var, 1, head, d.data(), d.size() * 8);
      const cove::VariableDefinition seen = r.definition(var);
      EXPECT_EQ(seen.ndim, 1);
      ASSERT_EQ(seen.fill.size(), 8u);
      double fill = 0;
      std::memcpy(&fill, seen.fill.data(), 8);
      EXPECT_EQ(fill, -1.0);
      // Another writer's first put with another definition: refused, nothing stored.
      Client w2 = Client::connect(group.addresses());
      cove::VariableOptions other = o;
      other.fill.clear();
      w2.define(var, DType(DTypeKind::Float32), 1, V{n}, other);
      std::vector<float> f(static_cast<std::size_t>(n), 9.0f);
      EXPECT_EQ(code_of([&] { w2.put(var, 1, all, f.data(), f.size() * 4); }), Code::InvalidArgument);
      w.seal(var, 1);
      const auto got = waiting.get();
      for (Index i = 0; i < n; ++i)
        ASSERT_EQ(got[static_cast<std::size_t>(i)], i < head.hi[0] ? static_cast<double>(i) + 0.5 : -1.0) << i;
    }
    // Never put: the seal sends the definition first, and the version reads as all fill.
    w.define("unput", DType(DTypeKind::Float64), 1, V{1024}, o);
    EXPECT_FALSE(w.seal("unput", 4));
    std::vector<double> got(1024);
    r.get("unput", 4, Box::from_shape(V{1024}), got.data(), 8192, 0);
    EXPECT_EQ(got, std::vector<double>(1024, -1.0));
    // Never put, undefined: defined and dropped everywhere, as without.
    w.define("dropped", DType(DTypeKind::Float64), 1, V{1024}, o);
    EXPECT_EQ(w.undefine("dropped"), 0u);
    EXPECT_EQ(code_of([&] { r.definition("dropped"); }), Code::NotFound);
    // The writer's own get sends it first: a reader then waits for data, not for the definition.
    w.define("asked", DType(DTypeKind::Float64), 1, V{1024}, o);
    EXPECT_EQ(code_of([&] { w.get("asked", 1, Box::from_shape(V{1024}), got.data(), 8192, 20); }), Code::Timeout);
    EXPECT_EQ(r.definition("asked").ndim, 1);
  }
}

// A file's close seals all its variables in one request per server: all or
// nothing (a variable a server no longer knows seals none), and each
// variable's answer says whether it was sealed already.
TEST(SemanticsSealed, SeveralVariablesSealAtOnceOrNotAtAll) {
  Group group(2);
  Client w = Client::connect(group.addresses()), other = Client::connect(group.addresses());
  const cove::VariableOptions o = filled_with(-1.0);
  const Box all = Box::from_shape(V{1024}), half = Box::from_start_count(V{0}, V{512});
  const std::vector<std::string> vars{"a", "b", "gone"};
  for (const auto& v : vars) w.define(v, DType(DTypeKind::Float64), 1, V{1024}, o);
  std::vector<double> twos(512, 2.0);
  for (const auto& v : vars) w.put(v, 1, half, twos.data(), 4096);
  // The servers forget "gone" while w still knows it: they refuse the whole seal.
  other.undefine("gone");
  EXPECT_EQ(code_of([&] { w.seal(vars, 1); }), Code::NotFound);
  std::vector<double> got(1024);
  EXPECT_EQ(code_of([&] { other.get("a", 1, all, got.data(), 8192, 0); }), Code::NotFound);  // not sealed: holes wait
  // Neither member sealed any of them: both halves take puts still (the
  // upper one of the fill value's cells, which read the same once sealed).
  const Box upper = Box::from_start_count(V{512}, V{512});
  std::vector<double> fills(512, -1.0);
  for (const std::string v : {"a", "b"}) {
    w.put(v, 1, half, twos.data(), 4096);
    w.put(v, 1, upper, fills.data(), 4096);
  }
  EXPECT_EQ(w.seal(std::vector<std::string>{"a", "b"}, 1), (std::vector<bool>{false, false}));
  EXPECT_EQ(w.seal(std::vector<std::string>{"b", "a"}, 1), (std::vector<bool>{true, true}));
  for (const std::string v : {"a", "b"}) {
    other.get(v, 1, all, got.data(), 8192, 0);
    for (int i = 0; i < 1024; ++i) ASSERT_EQ(got[static_cast<std::size_t>(i)], i < 512 ? 2.0 : -1.0) << v << i;
    EXPECT_EQ(code_of([&] { w.put(v, 1, half, twos.data(), 4096); }), Code::InvalidArgument);
  }
  EXPECT_EQ(code_of([&] { w.seal(std::vector<std::string>{}, 1); }), Code::InvalidArgument);
}

// A file's close: the seal carries the file's metadata to the metadata's
// own member, asked last, so that a reader who finds the metadata finds
// every member sealed. Refused before any member changes when the metadata
// is too large or a variable unknown.
TEST(SemanticsSealed, TheMetadataTravelsWithTheSealAndComesLast) {
  Group group(2);
  Client w = Client::connect(group.addresses()), r = Client::connect(group.addresses());
  const Box all = Box::from_shape(V{1024}), half = Box::from_start_count(V{0}, V{512});
  const std::vector<std::string> vars{"a", "b"};
  for (const auto& v : vars) w.define(v, DType(DTypeKind::Float64), 1, V{1024}, filled_with(-1.0));
  std::vector<double> twos(512, 2.0), got(1024);
  const std::vector<std::byte> meta(100, std::byte{7}), huge(cove::net::kMaxMetaBytes + 1);
  // One metadata name whose own member is each member in turn (version 1: member 0's, 2: member 1's).
  std::vector<std::string> names;
  for (int home = 0; home < 2; ++home)
    for (int i = 0;; ++i)
      if (const std::string n = "file" + std::to_string(i) + ".meta"; cove::common::home_server(n, 2) == home) {
        names.push_back(n);
        break;
      }
  for (std::uint64_t version = 1; version <= 2; ++version) {
    const std::string& name = names[version - 1];
    for (const auto& v : vars) w.put(v, version, half, twos.data(), 4096);
    EXPECT_EQ(code_of([&] { w.seal_and_put_meta(vars, version, name, huge); }), Code::InvalidArgument);
    EXPECT_EQ(code_of([&] { w.seal_and_put_meta(std::vector<std::string>{"a", "nope"}, version, name, meta); }),
              Code::NotFound);
    // Neither refusal changed a member: the holes still wait, no metadata.
    EXPECT_EQ(code_of([&] { r.get("a", version, all, got.data(), 8192, 0); }), Code::NotFound);
    EXPECT_EQ(code_of([&] { r.get_meta(name, version, 0); }), Code::NotFound);
    EXPECT_EQ(w.seal_and_put_meta(vars, version, name, meta), (std::vector<bool>{false, false})) << name;
    EXPECT_EQ(r.get_meta(name, version, 0).data, meta) << name;
    for (const auto& v : vars) {  // sealed on both members: the holes read the fill value at once
      r.get(v, version, all, got.data(), 8192, 0);
      for (int i = 0; i < 1024; ++i) ASSERT_EQ(got[static_cast<std::size_t>(i)], i < 512 ? 2.0 : -1.0) << v << i;
    }
    EXPECT_EQ(w.seal_and_put_meta(vars, version, name, meta), (std::vector<bool>{true, true})) << name;
  }
}

// Readers may come first: get, get_latest, definition() and subscribe()
// of a variable not defined yet wait within their timeout for the
// definition and then the data. Timeout 0 answers at once.
TEST(SemanticsReadersFirst, ReadersWaitForTheDefinitionAndTheData) {
  Group group(2);
  Client w = Client::connect(group.addresses()), r = Client::connect(group.addresses());
  const Box all = Box::from_shape(V{32, 32});  // 8 KiB: two index blocks, one per member
  std::vector<double> got(1024);
  EXPECT_EQ(code_of([&] { r.get("later", 1, all, got.data(), 8192, 0); }), Code::NotFound);
  EXPECT_EQ(code_of([&] { r.definition("later"); }), Code::NotFound);
  EXPECT_EQ(code_of([&] { r.definition("later", 50); }), Code::Timeout);
  std::atomic<int> fired{0};
  auto sub = r.subscribe("later", all, [&](const std::string&, std::uint64_t) { ++fired; });
  auto get = std::async(std::launch::async, [&] {
    std::vector<double> mine(1024);
    r.get("later", 1, all, mine.data(), 8192, 30000);
    return mine;
  });
  auto latest = std::async(std::launch::async, [&] {
    std::vector<double> mine(1024);
    const auto v = r.get_latest("later", all, mine.data(), 8192, 30000);
    return std::make_pair(v, mine);
  });
  auto definition = std::async(std::launch::async, [&] { return r.definition("later", 30000); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  w.define("later", DType(DTypeKind::Float64), 2, V{32, 32});
  EXPECT_EQ(definition.get().ndim, 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::vector<double> d(1024);
  for (std::size_t k = 0; k < 1024; ++k) d[k] = static_cast<double>(k);
  w.put("later", 1, all, d.data(), 8192);
  EXPECT_EQ(get.get(), d);
  const auto [v, mine] = latest.get();
  EXPECT_EQ(v, 1u);
  EXPECT_EQ(mine, d);
  for (int i = 0; i < 200 && fired.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(fired.load(), 1);
  // A timeout that passes before the definition: Timeout, within it.
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(code_of([&] { r.get("never", 1, all, got.data(), 8192, 300); }), Code::Timeout);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
}

// derive: version 2 starts as version 1 without a byte copied (the
// servers' memory does not grow), puts into 2 override it cell by cell,
// and deleting 1 leaves 2 whole. The whole-file form derives several
// variables at once; bad input changes nothing.
TEST(SemanticsDerive, DerivedVersionsShareTheirPiecesAndOverride) {
  for (int servers : {1, 3}) {
    Group group(servers);
    Client c = Client::connect(group.addresses());
    const V shape{64, 64};
    const Box all = Box::from_shape(shape);
    c.define("a", DType(DTypeKind::Float64), 2, shape);
    c.define("b", DType(DTypeKind::Float64), 2, shape);
    std::vector<double> ref(64 * 64);
    for (Index i = 0; i < 64; i += 16) {  // 16 pieces of version 1
      const Box tile = Box::from_start_count(V{i, 0}, V{16, 64});
      std::vector<double> d(16 * 64);
      for (std::size_t k = 0; k < d.size(); ++k) d[k] = ref[static_cast<std::size_t>(i * 64) + k] = static_cast<double>(i * 64) + static_cast<double>(k);
      for (const char* var : {"a", "b"}) c.put(var, 1, tile, d.data(), d.size() * 8);
    }
    const std::uint64_t before = c.stat().owned_bytes;
    const std::vector<std::string> both{"a", "b"};
    EXPECT_GT(c.derive(both, 1, 2), 0u);
    EXPECT_EQ(c.stat().owned_bytes, before) << "derive copied bytes";
    // A partial put into version 2 overrides it there, and only there.
    const Box patch = Box::from_start_count(V{10, 20}, V{30, 7});
    std::vector<double> p(static_cast<std::size_t>(patch.volume()), -5.0);
    c.put("a", 2, patch, p.data(), p.size() * 8);
    std::vector<double> want = ref;
    for (Index i = 10; i < 40; ++i)
      for (Index j = 20; j < 27; ++j) want[static_cast<std::size_t>(i * 64 + j)] = -5.0;
    std::vector<double> got(64 * 64);
    c.remove("a", 1);  // the source goes: version 2 stays whole
    c.remove("b", 1);
    c.get("a", 2, all, got.data(), got.size() * 8, 0);
    EXPECT_EQ(got, want);
    c.get("b", 2, all, got.data(), got.size() * 8, 0);
    EXPECT_EQ(got, ref);
    EXPECT_EQ(code_of([&] { c.get("a", 1, all, got.data(), got.size() * 8, 0); }), Code::NotFound);
    // The bytes are counted once while shared, and given back when the last
    // version using them goes.
    EXPECT_EQ(c.stat().owned_bytes, before + p.size() * 8);
    c.remove("a", 2);
    c.remove("b", 2);
    EXPECT_EQ(c.stat().owned_bytes, 0u);

    // Bad input: nothing changes, each error names what is wrong.
    c.put("a", 5, all, ref.data(), ref.size() * 8);
    const auto refused = [&](Code code, const auto& call, const std::string& words) {
      try {
        call();
        ADD_FAILURE() << "accepted: " << words;
      } catch (const cove::Error& e) {
        EXPECT_EQ(e.code(), code) << e.what();
        EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
      }
    };
    refused(Code::NotFound, [&] { c.derive("a", 4, 6); }, "'a' has no version 4");
    refused(Code::NotFound, [&] { c.derive(std::vector<std::string>{"a", "nothing"}, 5, 6); }, "'nothing'");
    c.put("b", 6, all, ref.data(), ref.size() * 8);
    refused(Code::AlreadyExists, [&] { c.derive(both, 5, 6); }, "'b' has a version 6");
    refused(Code::InvalidArgument, [&] { c.derive("a", 5, 5); }, "itself");
    EXPECT_EQ(code_of([&] { c.get("a", 6, all, got.data(), got.size() * 8, 0); }), Code::NotFound)
        << "a refused derive left version 6 of 'a'";
    c.seal("a", 5);
    refused(Code::InvalidArgument, [&] { c.put("a", 5, all, ref.data(), ref.size() * 8); }, "version 5 of variable 'a' is sealed");
    cove::VariableOptions o;
    o.fill.resize(4);
    refused(Code::InvalidArgument, [&] { c.define("a", DType(DTypeKind::Float64), 2, shape, o); }, "fill value of 4 bytes");
    refused(Code::NotFound, [&] { c.seal("nothing", 1); }, "'nothing'");
    c.get("a", 5, all, got.data(), got.size() * 8, 0);
    EXPECT_EQ(got, ref) << "what a refused request met changed";
    // A sealed version derives like any other; the new one is open.
    c.derive("a", 5, 9);
    c.put("a", 9, patch, p.data(), p.size() * 8);
    c.get("a", 9, patch, got.data(), p.size() * 8, 0);
    EXPECT_EQ(std::vector<double>(got.begin(), got.begin() + static_cast<long>(p.size())), p);
  }
}

// A version derived from a sealed one holds all of its content at once,
// the cells nobody put as the fill value (a read-write reopen of a file
// whose cells not every rank wrote): a get of it never waits for them,
// and a later put into it still overrides them. Derived from a version
// not sealed yet, its holes still wait.
TEST(SemanticsDerive, AVersionDerivedFromASealedOneReadsItsHolesAsFillAtOnce) {
  for (int servers : {1, 2}) {
    Group group(servers);
    Client c = Client::connect(group.addresses());
    const V shape{64, 64};  // 32 KiB of doubles: split over both members of a group
    const Box all = Box::from_shape(shape);
    cove::VariableOptions o;
    const double fill = -1.0;
    o.fill.resize(8);
    std::memcpy(o.fill.data(), &fill, 8);
    c.define("h", DType(DTypeKind::Float64), 2, shape, o);
    c.define("nofill", DType(DTypeKind::Float64), 2, shape);
    const Box top = Box::from_start_count(V{0, 0}, V{32, 64});
    std::vector<double> t(32 * 64);
    for (std::size_t k = 0; k < t.size(); ++k) t[k] = static_cast<double>(k);
    for (const char* var : {"h", "nofill"}) {
      c.put(var, 1, top, t.data(), t.size() * 8);
      c.seal(var, 1);
      c.derive(var, 1, 2);
    }
    std::vector<double> want(64 * 64, fill);
    std::copy(t.begin(), t.end(), want.begin());
    std::vector<double> got(64 * 64);
    c.get("h", 2, all, got.data(), got.size() * 8, 0);  // 0: at once, or NotFound
    EXPECT_EQ(got, want) << servers << " servers";
    // Still open: a put into a hole overrides the fill there.
    const Box patch = Box::from_start_count(V{40, 8}, V{8, 16});
    std::vector<double> p(static_cast<std::size_t>(patch.volume()), 7.0);
    c.put("h", 2, patch, p.data(), p.size() * 8);
    for (Index i = 40; i < 48; ++i)
      for (Index j = 8; j < 24; ++j) want[at(shape, i, j)] = 7.0;
    c.get("h", 2, all, got.data(), got.size() * 8, 0);
    EXPECT_EQ(got, want) << servers << " servers";
    // Without a fill value, its holes fail at once, as the sealed version's do.
    cove_test::expect_error(Code::NotFound, "no fill value",
                            [&] { c.get("nofill", 2, all, got.data(), got.size() * 8, 0); });
    // Derived from a version not sealed: its holes wait for puts, as that one's do.
    c.put("h", 3, top, t.data(), t.size() * 8);
    c.derive("h", 3, 4);
    EXPECT_EQ(code_of([&] { c.get("h", 4, all, got.data(), got.size() * 8, 300); }), Code::Timeout);
    c.get("h", 4, top, got.data(), t.size() * 8, 0);
    EXPECT_EQ(std::vector<double>(got.begin(), got.begin() + static_cast<long>(t.size())), t);
  }
}

// A definition a client remembers without asking (the HDF5 connector's,
// from a file's metadata) is checked against every answer: another dtype
// or global shape fails the get before a byte is copied, and the next get
// asks a server.
TEST(SemanticsReadersFirst, ARememberedDefinitionIsCheckedAgainstTheServers) {
  Group group(2);
  Client w = Client::connect(group.addresses());
  const Box all = Box::from_shape(V{1024});
  w.define("r", DType(DTypeKind::Float64), 1, V{1024});
  std::vector<double> d(1024);
  for (std::size_t k = 0; k < d.size(); ++k) d[k] = static_cast<double>(k);
  w.put("r", 1, all, d.data(), 8192);
  std::vector<double> got(1024);
  Client right = Client::connect(group.addresses());
  right.remember_definition("r", {DType(DTypeKind::Float64), 1, all, {}});
  right.get("r", 1, all, got.data(), 8192, 0);
  EXPECT_EQ(got, d);
  Client typed = Client::connect(group.addresses());
  typed.remember_definition("r", {DType(DTypeKind::Float32), 1, all, {}});
  std::vector<float> wrong(1024);
  cove_test::expect_error(Code::InvalidArgument, "defined with dtype <f8 and global shape [0:1024), not dtype <f4",
                          [&] { typed.get("r", 1, all, wrong.data(), 4096, 0); });
  std::fill(got.begin(), got.end(), 0.0);
  typed.get("r", 1, all, got.data(), 8192, 0);  // asked again
  EXPECT_EQ(got, d);
  // A shape the servers refuse the region of: asked again too.
  Client wide = Client::connect(group.addresses());
  wide.remember_definition("r", {DType(DTypeKind::Float64), 1, Box::from_shape(V{2048}), {}});
  std::vector<double> more(2048);
  EXPECT_EQ(code_of([&] { wide.get("r", 1, Box::from_shape(V{2048}), more.data(), more.size() * 8, 0); }),
            Code::InvalidArgument);
  std::fill(got.begin(), got.end(), 0.0);
  wide.get("r", 1, all, got.data(), 8192, 0);
  EXPECT_EQ(got, d);
  Client shapeless = Client::connect(group.addresses());
  shapeless.remember_definition("r", {DType(DTypeKind::Float64), 1, std::nullopt, {}});
  cove_test::expect_error(Code::InvalidArgument, "not dtype <f8 and no global shape",
                           [&] { shapeless.get("r", 1, all, got.data(), 8192, 0); });
  EXPECT_EQ(code_of([&] { shapeless.remember_definition("x", {DType(DTypeKind::Float64), 0, std::nullopt, {}}); }),
            Code::InvalidArgument);
  EXPECT_EQ(code_of([&] { shapeless.remember_definition("x", {DType(DTypeKind::Float64), 1, std::nullopt, std::vector<std::byte>(4)}); }),
            Code::InvalidArgument);
}

// A put_local piece shared by derive stays its writer's: its release
// withdraws it from both versions (the writer may then reuse the memory),
// and nothing reads it afterwards.
TEST(SemanticsDerive, ReleasingAPutLocalPieceWithdrawsItFromDerivedVersions) {
  Group group(2);
  Client w = Client::connect(group.addresses()), r = Client::connect(group.addresses());
  const Box all = Box::from_shape(V{1024});  // 8 KiB: indexed by both members
  w.define("l", DType(DTypeKind::Float64), 1, V{1024});
  std::vector<double> mine(1024, 3.0);
  w.put_local("l", 1, all, mine.data(), 8192);
  r.derive("l", 1, 2);
  std::vector<double> got(1024);
  r.get("l", 2, all, got.data(), 8192, 0);
  EXPECT_EQ(got, mine);
  w.release("l", 1, all);
  std::fill(mine.begin(), mine.end(), 99.0);  // reused: nobody may read it now
  EXPECT_EQ(code_of([&] { r.get("l", 2, all, got.data(), 8192, 0); }), Code::NotFound);
}

// replicas = 2, two members dying one after the other: the pieces whose
// second copy went with the first get a new one (restore_copies, Recopy to
// their index entries), so that when their own holder dies next they are
// read from it. The index entries live on the variable's home shard and
// the next member, neither of which dies; the pieces are put on another.
TEST(SemanticsGroup, SecondCopiesAreRestoredAfterAMemberDies) {
  cove::ServerOptions o;
  o.replicas = 2;
  constexpr int kServers = 4;
  Group group(kServers, o);
  const std::string var = "restored";
  const int home = cove::common::home_server(var, kServers);  // indexes it, with home + 1
  const int holder = (home + 2) % kServers, first_copy = (home + 3) % kServers;
  Client c = Client::connect(group.addresses());
  c.define(var, DType(DTypeKind::Float64), 1);
  std::mt19937 rng(5u);
  std::vector<std::vector<double>> refs;
  std::uint64_t pieces = 0;
  for (std::uint64_t version = 1; version <= 3; ++version) {
    std::vector<double> ref(4096);
    for (int k = 0; k < 12; ++k) {
      const Box b = k == 0 ? Box::from_shape(V{4096}) : random_box(rng, V{4096});
      const double value = static_cast<double>(version * 100 + static_cast<std::uint64_t>(k));
      std::vector<double> d(static_cast<std::size_t>(b.volume()), value);
      c.put_on(static_cast<std::size_t>(holder), var, version, b, d.data(), d.size() * 8);
      for (Index i = b.lo[0]; i < b.hi[0]; ++i) ref[static_cast<std::size_t>(i)] = value;
    }
    refs.push_back(std::move(ref));
  }
  const auto totals = [&] {
    cove::ServerStats t;
    for (const auto& [address, st] : c.stat_each())
      if (st.reachable) {
        t.lost_members += st.lost_members;
        t.restored_copies += st.restored_copies;
        t.single_copies += st.single_copies;
      }
    return t;
  };
  for (const auto& [address, st] : c.stat_each())
    if (address == group.servers[static_cast<std::size_t>(holder)].address()) pieces = st.pieces - st.copies;
  group.servers[static_cast<std::size_t>(first_copy)].stop();
  cove::ServerStats t;
  for (int i = 0; i < 600; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    t = totals();
    if (t.lost_members > 0 && t.single_copies == 0 && t.restored_copies > 0) break;
  }
  // The holder finds it gone (it sent it copies); others may not have
  // talked to it at all.
  ASSERT_GT(t.lost_members, 0u) << "no survivor found it gone";
  EXPECT_EQ(t.single_copies, 0u) << "pieces still without a second copy";
  EXPECT_GT(t.restored_copies, 0u);
  EXPECT_LE(t.restored_copies, pieces);
  // The holder goes too: readers lease its pieces' new copies.
  group.servers[static_cast<std::size_t>(holder)].stop();
  for (std::uint64_t version = 1; version <= 3; ++version) {
    std::vector<double> got(4096);
    c.get(var, version, Box::from_shape(V{4096}), got.data(), got.size() * 8, 5000);
    EXPECT_EQ(got, refs[version - 1]) << "version " << version;
  }
}

// replicas = 2, a member and then the next one dying, with time between:
// each shard whose second owner changed gets a new one (Backup: its first
// owner's snapshot, then relays), so the entries of the shard both of them
// owned survive; puts between the deaths go to the new owners. Overlapping
// puts on every member, of a variable indexed whole by the first member
// and of one spread over all; every version reads back exactly.
TEST(SemanticsGroup, IndexEntriesSurviveNeighboursDyingInTurn) {
  cove::ServerOptions o;
  o.replicas = 2;
  constexpr int kServers = 4;
  Group group(kServers, o);
  const std::string whole = "whole", spread = "spread";
  const int first = cove::common::home_server(whole, kServers);  // owns "whole" with the next member
  const int second = (first + 1) % kServers;
  Client c = Client::connect(group.addresses());
  c.define(whole, DType(DTypeKind::Float64), 1);
  c.define(spread, DType(DTypeKind::Float64), 1, V{4096});
  std::mt19937 rng(17u);
  std::map<std::pair<std::string, std::uint64_t>, std::vector<double>> refs;
  const auto paint = [&](const std::string& var, std::uint64_t version, const std::vector<int>& holders) {
    std::vector<double> ref(4096);
    for (int k = 0; k < 16; ++k) {
      const Box b = k == 0 ? Box::from_shape(V{4096}) : random_box(rng, V{4096});
      const double value = static_cast<double>(version * 1000 + static_cast<std::uint64_t>(k)) + (var == whole ? 0.5 : 0);
      std::vector<double> d(static_cast<std::size_t>(b.volume()), value);
      c.put_on(static_cast<std::size_t>(holders[static_cast<std::size_t>(k) % holders.size()]), var, version, b, d.data(),
               d.size() * 8);
      for (Index i = b.lo[0]; i < b.hi[0]; ++i) ref[static_cast<std::size_t>(i)] = value;
    }
    refs[{var, version}] = std::move(ref);
  };
  const auto settle = [&](std::uint64_t backups, const char* when) {
    cove::ServerStats t;
    // Each round asks the dead members too (a fresh connection each time):
    // a deadline, not a count of rounds.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      t = {};
      for (const auto& [address, st] : c.stat_each())
        if (st.reachable) {
          t.restored_backups += st.restored_backups;
          t.single_copies += st.single_copies;
        }
      if (t.restored_backups >= backups && t.single_copies == 0) break;
    }
    ASSERT_GE(t.restored_backups, backups) << "shards without a new second owner " << when;
    EXPECT_EQ(t.single_copies, 0u) << "pieces still without a second copy " << when;
  };
  const auto others = [&](std::initializer_list<int> dead) {
    std::vector<int> out;
    for (int m = 0; m < kServers; ++m)
      if (std::find(dead.begin(), dead.end(), m) == dead.end()) out.push_back(m);
    return out;
  };
  for (std::uint64_t version = 1; version <= 3; ++version) {
    paint(whole, version, others({}));
    paint(spread, version, others({}));
  }
  group.servers[static_cast<std::size_t>(first)].stop();
  // The next member sends the shard of the first to the one after; the one
  // before it sends its own to the next member.
  ASSERT_NO_FATAL_FAILURE(settle(2, "after the first death"));
  for (std::uint64_t version = 4; version <= 5; ++version) {
    paint(whole, version, others({first}));
    paint(spread, version, others({first}));
  }
  group.servers[static_cast<std::size_t>(second)].stop();
  // Four more: the shards of both dead members, and of the member before
  // them, go to new second owners (the one sent before went with `second`).
  ASSERT_NO_FATAL_FAILURE(settle(4, "after the second death"));
  // Read by the client that knew the dead members (it tries each again, once
  // a second, and on this host finds at once that it is gone), and by one
  // that connects now, which the dead members do not answer.
  cove::ConnectOptions started;
  started.group_started = true;
  Client late = Client::connect(group.addresses(), started);
  for (const auto& [key, ref] : refs)
    for (Client* reader : {&c, &late}) {
      std::vector<double> got(4096);
      reader->get(key.first, key.second, Box::from_shape(V{4096}), got.data(), got.size() * 8, 5000);
      EXPECT_EQ(got, ref) << key.first << " version " << key.second << (reader == &c ? "" : ", new client");
    }
}

INSTANTIATE_TEST_SUITE_P(Semantics, LastWriteWins,
                         ::testing::Values(Painter{1, 1}, Painter{3, 1}, Painter{3, 2}),
                         [](const auto& case_info) {
                           return std::to_string(case_info.param.servers) + "servers_replicas" +
                                  std::to_string(case_info.param.replicas);
                         });

}  // namespace
