// Every message of the protocol: each request and reply type round-trips
// through its encode and decode, every truncation of it is rejected, and
// random corruption never makes a decoder crash or read past the end.
#include "net/messages.hpp"

#include <gtest/gtest.h>

#include "expect_error.hpp"

#include <cmath>
#include <random>
#include <set>

namespace {

using cove::Box;
using cove::Code;
using cove::DType;
using cove::DTypeKind;
using cove::Index;
using cove::Layout;
using cove::Reorg;
using cove::PlacementDecision;
namespace net = cove::net;
using V = std::vector<Index>;

const Box kBox = Box::from_start_count(V{1, -2, 3}, V{4, 5, 6});
net::Bytes bytes(std::size_t n, int seed) {
  net::Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::byte>(seed + 7 * i);
  return b;
}
net::PieceHeader header() { return {"temperature", 7, kBox, Layout::parse("P2,0,1"), DType(DTypeKind::Float64), 960, std::nullopt}; }

// One sample of every message body; a type without one fails to link.
template <typename T>
T sample();
template <>
net::Empty sample() { return {}; }
template <>
net::HelloRequest sample() { return {net::kProtocolVersion, net::Role::Server, "ucx:127.0.0.1:4000"}; }
template <>
net::HelloReply sample() { return {net::kProtocolVersion, "inproc://s", bytes(32, 1)}; }
template <>
net::JoinRequest sample() { return {bytes(32, 2)}; }
template <>
net::DefineRequest sample() {
  return {"temperature", DType(DTypeKind::Float32), 3, kBox, Reorg::Sahr, {Layout::f(), Layout::parse("P1,2,0")},
          bytes(4, 1)};
}
template <>
net::PutRequest sample() { return {header(), bytes(40, 3), Reorg::Rasar}; }
template <>
net::PutGrantRequest sample() {  // a first put: the piece carries its variable's definition
  net::PieceHeader h = header();
  h.define = sample<net::DefineRequest>();
  return {std::move(h), Reorg::Sahr, bytes(40, 14)};
}
template <>
net::PutGrantReply sample() { return {77, bytes(48, 12)}; }
template <>
net::PutPublishRequest sample() { return {77}; }
template <>
net::PutLocalRequest sample() { return {header(), "inproc://writer", bytes(40, 4), std::nullopt}; }
template <>
net::PutInlineRequest sample() {
  auto h = header();
  h.bytes = 24;
  return {h, bytes(24, 5), Reorg::Rad};
}
template <>
net::IndexAddRequest sample() {
  return {header(), "inproc://holder", bytes(16, 6), 31, {"inproc://copy", bytes(16, 13), 32}};
}
template <>
net::CopyRequest sample() { return {header(), bytes(16, 14), {}, true}; }
template <>
net::CopyReply sample() { return {33, bytes(16, 15)}; }
template <>
net::ReleaseRequest sample() { return {"v", 3, kBox, "inproc://writer"}; }
template <>
net::CountReply sample() { return {42}; }
template <>
net::QueryRequest sample() { return {"v", 9, true, kBox, -1, Layout::f(), 65536, Reorg::Rasia, 2}; }
template <>
net::QueryReply sample() {
  net::QueryReply r{12, DType(DTypeKind::Int16), kBox, Reorg::Sahr, std::nullopt, {}, 41, {}, {}};
  r.pieces.push_back({kBox, Layout::c(), "", bytes(8, 7), false, bytes(8, 7), 0, {}, {kBox}});
  r.pieces.push_back({kBox, Layout::f(), "inproc://w", bytes(8, 8), true, bytes(12, 9), 5, {}, {}});
  r.pieces.push_back({kBox, Layout::c(), "inproc://s1", bytes(8, 7), false, bytes(8, 7), 6, {"inproc://s2", bytes(8, 16), 7},
                      {kBox, kBox}});
  r.holes = {kBox};
  r.fill = bytes(2, 5);
  return r;
}
template <>
net::VarRequest sample() { return {"v"}; }
template <>
net::LatestReply sample() { return {std::uint64_t{17}}; }
template <>
net::DeleteRequest sample() { return {"v", 4}; }
template <>
net::DeleteReply sample() { return {true}; }
template <>
net::ListReply sample() {
  cove::VariableInfo v{"field", DType(DTypeKind::Float64), 3, kBox, {}, Reorg::Rasar, {Layout::f()}, {}};
  const net::Bytes fill = bytes(8, 2);
  v.fill.assign(fill.begin(), fill.end());
  cove::PieceInfo p{kBox, 960, "inproc://s", false, {{kBox, Layout::f(), 960, true}}, "inproc://t"};
  v.versions.push_back({3, {p, p}, true});
  v.versions.push_back({4, {p}, false});
  return {{v, v}};
}
template <>
net::StatReply sample() {
  net::StatReply r;
  std::uint64_t n = 1;
  for (auto* f : {&r.stats.variables, &r.stats.versions, &r.stats.pieces, &r.stats.owned_bytes, &r.stats.local_bytes,
                  &r.stats.memory_budget, &r.stats.requests, &r.stats.bytes_in, &r.stats.bytes_out, &r.stats.replicas,
                  &r.stats.replica_bytes, &r.stats.reorganizations, &r.stats.replica_answers, &r.stats.patterns,
                  &r.stats.parked_gets, &r.stats.clients, &r.stats.uptime_ms, &r.stats.lost_pieces,
                  &r.stats.replication, &r.stats.copies, &r.stats.copy_bytes, &r.stats.single_copies,
                  &r.stats.moved_pieces, &r.stats.lost_members, &r.stats.partly_covered, &r.stats.partly_covered_bytes,
                  &r.stats.restored_copies, &r.stats.restored_backups})
    *f = n++;
  r.stats.reorg = Reorg::Rasia;
  r.stats.layouts = {Layout::f()};
  return r;
}
template <>
net::DisconnectRequest sample() { return {"inproc://writer"}; }
template <>
net::MetaPutRequest sample() { return {"done", 5, bytes(100, 10)}; }
template <>
net::MetaGetRequest sample() { return {"done", net::MetaMode::Next, 5, 2500}; }
template <>
net::MetaGetReply sample() { return {false, 6, bytes(50, 11)}; }
template <>
net::LeaseRequest sample() { return {"v", 6, {3, 9, 27}}; }
template <>
net::LeaseReply sample() { return {88}; }
template <>
net::LeaseEndRequest sample() { return {{88, 89}}; }
template <>
net::PatternRequest sample() { return {"v", Layout::f(), kBox, 3, 8}; }
template <>
net::LockRequest sample() { return {"rho", true, {1, 2}, {3, 4}, 2500}; }
template <>
net::UnlockRequest sample() { return {"rho", {1, 2}, {3, 4}}; }
template <>
net::WorkerRequest sample() { return {"worker-1"}; }
template <>
net::WorkerReply sample() { return {2, 4, 3}; }
template <>
net::PlaceRequest sample() { return {"rho", kBox, 32768}; }
template <>
net::PlaceReply sample() { return {1, 77, "hybrid"}; }
template <>
net::TaskDoneRequest sample() { return {"rho", kBox, 0.25}; }
template <>
net::DataflowRequest sample() { return {"g.json", false, R"({"objects": [], "tasks": []})"}; }
template <>
net::PlacementsRequest sample() { return {8}; }
template <>
net::PlacementsReply sample() {
  PlacementDecision d;
  d.sequence = 41;
  d.var = "rho";
  d.box = kBox;
  d.bytes = 32768;
  d.policy = "hybrid";
  d.applied = "time";
  d.server = 1;
  d.slot = 3;
  d.eet = 0.25;
  d.dat = 1.5;
  d.eat = 1.25;
  d.ect = 1.75;
  d.min_ect = 1.75;
  d.group = 2;
  d.affinity = 3;
  d.candidates = 2;
  net::PlacementsReply r{42, {d, d}};
  r.decisions[1].sequence = 42;
  r.decisions[1].group = -1;
  return r;
}

template <>
net::LookupRequest sample() { return {"temperature", -1}; }
template <>
net::LookupReply sample() { return {DType(DTypeKind::Float32), 3, kBox, bytes(4, 6)}; }
template <>
net::SealRequest sample() { return {{"temperature", "pressure"}, 12, net::MetaPutRequest{"h5:out.h5", 12, bytes(5, 2)}}; }
template <>
net::SealReply sample() { return {{true, false}}; }
template <>
net::DeriveRequest sample() { return {{"temperature", "pressure"}, 12, 13, true}; }
template <>
net::RecopyRequest sample() { return {"temperature", 12, "inproc://s1", 44, {"inproc://s2", bytes(8, 3), 45}}; }
template <>
net::BackupRequest sample() {
  net::BackupRequest r;
  r.shard = 2;
  r.stage = net::BackupRequest::Stage::Snapshot;
  r.var = "temperature";
  r.version = 12;
  r.entries.push_back({sample<net::IndexAddRequest>(), {kBox}});
  return r;
}
template <>
net::VarsReply sample() { return {{true, false}, 17}; }
template <>
net::UndefineRequest sample() { return {{"temperature", "h5:out.h5:/grid"}}; }

template <typename T>
net::Bytes message_of(std::uint16_t type) {
  net::WireWriter out(type, 99);
  sample<T>().encode(out);
  return std::move(out).finish();
}

using cove_test::code_of;

// Runs fn.template operator()<T>(op name, type) for the request and the reply of every Op.
template <typename Fn>
void for_every_message(Fn&& fn) {
  for (const net::OpInfo& info : net::kOps)
    ASSERT_TRUE(net::visit_op(static_cast<std::uint16_t>(info.op), [&]<typename M>() {
      fn.template operator()<typename M::Request>(std::string(info.name) + " request", info.op);
      fn.template operator()<typename M::Reply>(std::string(info.name) + " reply", info.op);
    }));
}

TEST(Protocol, EveryOpHasOneEntryAndOneName) {
  std::set<std::uint16_t> types;
  std::set<std::string> names;
  for (const net::OpInfo& info : net::kOps) {
    EXPECT_TRUE(types.insert(static_cast<std::uint16_t>(info.op)).second);
    EXPECT_TRUE(names.insert(info.name).second);
    EXPECT_EQ(net::op_info(static_cast<std::uint16_t>(info.op)), &info);
  }
  EXPECT_EQ(net::op_info(0), nullptr);
  EXPECT_EQ(net::op_info(999), nullptr);
  // Only the hello may come from a stranger; only IndexAdd and Copy are the servers' own.
  EXPECT_EQ(net::op_info(static_cast<std::uint16_t>(net::Op::Hello))->sender, net::Sender::Anyone);
  EXPECT_EQ(net::op_info(static_cast<std::uint16_t>(net::Op::IndexAdd))->sender, net::Sender::Server);
  EXPECT_EQ(net::op_info(static_cast<std::uint16_t>(net::Op::Copy))->sender, net::Sender::Server);
}

TEST(Protocol, WorkerMessagesAreCheckedAtDecode) {
  EXPECT_EQ(net::op_info(static_cast<std::uint16_t>(net::Op::Worker))->sender, net::Sender::Client);
  auto reply = [](std::uint32_t slot, std::uint32_t slots, std::uint32_t workers) {
    net::WireWriter w(static_cast<std::uint16_t>(net::Op::Worker), 1);
    w.u32(slot).u32(slots).u32(workers);
    const auto m = std::move(w).finish();
    return code_of([&] { net::decode_body<net::WorkerReply>(m); });
  };
  EXPECT_EQ(reply(0, 1, 1), Code::Ok);
  EXPECT_EQ(reply(3, 4, 4), Code::Ok);
  EXPECT_EQ(reply(4, 4, 1), Code::Protocol);  // a slot past the slots
  EXPECT_EQ(reply(0, 0, 0), Code::Protocol);  // no slots: nobody could be a worker
  EXPECT_EQ(reply(1, 4, 5), Code::Protocol);  // more workers than slots
  net::WireWriter w(static_cast<std::uint16_t>(net::Op::Worker), 1);
  w.str("");
  const auto m = std::move(w).finish();
  EXPECT_EQ(code_of([&] { net::decode_body<net::WorkerRequest>(m); }), Code::InvalidArgument);
}

TEST(Protocol, TaskTimesMustBeFiniteAndNotNegative) {
  for (double bad : {-1.0, std::nan(""), HUGE_VAL}) {
    net::WireWriter w(static_cast<std::uint16_t>(net::Op::TaskDone), 1);
    w.str("rho").box(kBox).f64(bad);
    const auto m = std::move(w).finish();
    EXPECT_EQ(code_of([&] { net::decode_body<net::TaskDoneRequest>(m); }), Code::InvalidArgument) << bad;
  }
}

TEST(Protocol, PlacementMessagesAreCheckedAtDecode) {
  EXPECT_EQ(net::op_info(static_cast<std::uint16_t>(net::Op::Placements))->sender, net::Sender::Client);
  auto request = [](std::uint32_t max) {
    net::WireWriter w(static_cast<std::uint16_t>(net::Op::Placements), 1);
    w.u32(max);
    const auto m = std::move(w).finish();
    return code_of([&] { net::decode_body<net::PlacementsRequest>(m); });
  };
  EXPECT_EQ(request(1), Code::Ok);
  EXPECT_EQ(request(net::kMaxPlacements), Code::Ok);
  EXPECT_EQ(request(0), Code::InvalidArgument);
  EXPECT_EQ(request(net::kMaxPlacements + 1), Code::InvalidArgument);
  auto reply = [](const net::PlacementsReply& r) {
    net::WireWriter w(static_cast<std::uint16_t>(net::Op::Placements), 1);
    r.encode(w);
    const auto m = std::move(w).finish();
    return code_of([&] { net::decode_body<net::PlacementsReply>(m); });
  };
  const net::PlacementsReply good = sample<net::PlacementsReply>();
  EXPECT_EQ(reply(good), Code::Ok);
  auto bad = good;
  bad.total = 1;  // more decisions than were made
  EXPECT_EQ(reply(bad), Code::Protocol);
  for (double t : {-1.0, std::nan(""), HUGE_VAL}) {
    bad = good;
    bad.decisions[0].ect = t;
    EXPECT_EQ(reply(bad), Code::Protocol) << t;
  }
  bad = good;
  bad.decisions[1].group = -2;
  EXPECT_EQ(reply(bad), Code::Protocol);
  bad = good;
  bad.total = 5000;
  bad.decisions.assign(net::kMaxPlacements + 1, good.decisions[0]);
  EXPECT_EQ(reply(bad), Code::Protocol);
}

TEST(Protocol, EveryMessageRoundTrips) {
  for_every_message([]<typename T>(const std::string& what, net::Op op) {
    const net::Bytes m = message_of<T>(static_cast<std::uint16_t>(op));
    const net::Header h = net::read_header(m);
    EXPECT_EQ(h.type, static_cast<std::uint16_t>(op));
    EXPECT_EQ(h.request_id, 99u);
    EXPECT_TRUE(net::decode_body<T>(m) == sample<T>()) << what;
  });
}

TEST(Protocol, EveryTruncationOfEveryMessageIsRejected) {
  for_every_message([]<typename T>(const std::string& what, net::Op op) {
    const net::Bytes m = message_of<T>(static_cast<std::uint16_t>(op));
    for (std::size_t n = net::kHeaderBytes; n < m.size(); ++n) {
      // A consistent header with a shorter body: fields run off the end.
      net::Bytes cut(m.begin(), m.begin() + static_cast<std::ptrdiff_t>(n));
      const auto body = static_cast<std::uint32_t>(n - net::kHeaderBytes);
      std::memcpy(cut.data() + 20, &body, 4);
      EXPECT_EQ(code_of([&] { net::decode_body<T>(cut); }), Code::Protocol) << what << " cut at " << n;
    }
    if (m.size() > net::kHeaderBytes || !std::is_same_v<T, net::Empty>) {
      net::Bytes longer = m;
      longer.push_back(std::byte{0});
      const auto body = static_cast<std::uint32_t>(longer.size() - net::kHeaderBytes);
      std::memcpy(longer.data() + 20, &body, 4);
      EXPECT_EQ(code_of([&] { net::decode_body<T>(longer); }), Code::Protocol) << what << " with a trailing byte";
    }
  });
}

TEST(Protocol, RandomCorruptionOfEveryMessageNeverCrashes) {
  std::mt19937_64 rng(23);
  for_every_message([&]<typename T>(const std::string& what, net::Op op) {
    const net::Bytes m = message_of<T>(static_cast<std::uint16_t>(op));
    if (m.size() == net::kHeaderBytes) return;
    for (int i = 0; i < 2000; ++i) {
      auto bad = m;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int f = 0; f < flips; ++f)
        bad[net::kHeaderBytes + rng() % (bad.size() - net::kHeaderBytes)] = static_cast<std::byte>(rng());
      const Code c = code_of([&] { net::decode_body<T>(bad); });
      EXPECT_TRUE(c == Code::Ok || c == Code::Protocol || c == Code::InvalidArgument) << what << ": " << int(c);
    }
  });
}

TEST(Protocol, CountsAreCheckedBeforeAnythingIsAllocated) {
  // A listing announcing 2^24 variables in a 4-byte body, and one announcing
  // more than the limit: both refused at once, without a huge allocation.
  for (std::uint32_t n : {net::kMaxCount, 0xffffffffu}) {
    net::WireWriter w(static_cast<std::uint16_t>(net::Op::List), 1);
    w.u32(n);
    const auto m = std::move(w).finish();
    EXPECT_EQ(code_of([&] { net::decode_body<net::ListReply>(m); }), Code::Protocol) << n;
  }
  net::WireWriter d(static_cast<std::uint16_t>(net::Op::Define), 1);
  d.str("x").str("<f8").u8(1).u8(0).u8(0).u32(0x7fffffff);  // 2^31 layouts announced, none sent
  const auto m = std::move(d).finish();
  EXPECT_EQ(code_of([&] { net::decode_body<net::DefineRequest>(m); }), Code::Protocol);
}

TEST(Protocol, MetadataModesAreChecked) {
  auto mode = [](std::uint8_t m) {
    net::WireWriter w(static_cast<std::uint16_t>(net::Op::MetaGet), 1);
    w.str("h5:/run/out.h5").u8(m).u64(0).i64(0);
    return std::move(w).finish();
  };
  for (auto m : {net::MetaMode::Exact, net::MetaMode::Next, net::MetaMode::Latest, net::MetaMode::LatestIfAny})
    EXPECT_EQ(net::decode_body<net::MetaGetRequest>(mode(static_cast<std::uint8_t>(m))).mode, m);
  const auto bad = mode(4);
  EXPECT_EQ(code_of([&] { net::decode_body<net::MetaGetRequest>(bad); }), Code::InvalidArgument);
}

TEST(Protocol, ReorganizationCodesAreChecked) {
  EXPECT_EQ(net::decode_reorg(0), std::nullopt);
  for (Reorg m : {Reorg::Rad, Reorg::Rasar, Reorg::Rasia, Reorg::Sahr}) EXPECT_EQ(net::decode_reorg(net::encode_reorg(m)), m);
  EXPECT_EQ(code_of([] { net::decode_reorg(5); }), Code::Protocol);
}

}  // namespace
