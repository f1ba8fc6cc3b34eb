// The promises the store keeps to programs (docs/staging.md, "What a
// version promises"): within a version the last acknowledged put wins for
// every cell, whatever the pieces' holders, shards, copies and readers.
// Each test compares every cell read with a reference array painted in the
// same order. The transport is COVE_TEST_TRANSPORT, as for the staging
// suite (tests/CMakeLists.txt runs these over every data path too).
#include <cove/client.hpp>
#include <cove/error.hpp>
#include <cove/server.hpp>

#include "staging_support.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
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

// A box inside `shape` with random corners (never empty).
Box random_box(std::mt19937& rng, const V& shape) {
  V lo(shape.size()), count(shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d) {
    std::uniform_int_distribution<Index> a(0, shape[d] - 1);
    Index x = a(rng), y = a(rng);
    if (x > y) std::swap(x, y);
    lo[d] = x;
    count[d] = y - x + 1;
  }
  return Box::from_start_count(lo, count);
}

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
    std::string reader_error;
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
        if (!reader_error.empty()) return;
      }
    });
    std::vector<double> ref(static_cast<std::size_t>(all.volume()), -1.0);
    std::vector<std::vector<double>> kept;  // put_local bytes stay until released
    std::vector<std::pair<int, Box>> local;  // writer, box
    // The readers get a turn now and then (a loaded machine may not give
    // their thread one otherwise), at most a few seconds each.
    const auto let_readers_read = [&] {
      const long before = reads.load();
      for (int i = 0; i < 5000 && reads.load() == before && reader_error.empty(); ++i)
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

INSTANTIATE_TEST_SUITE_P(Semantics, LastWriteWins,
                         ::testing::Values(Painter{1, 1}, Painter{3, 1}, Painter{3, 2}),
                         [](const auto& case_info) {
                           return std::to_string(case_info.param.servers) + "servers_replicas" +
                                  std::to_string(case_info.param.replicas);
                         });

}  // namespace
