// The wire format never reads past a message and rejects malformed ones.
#include "net/protocol.hpp"
#include "net/wire.hpp"

#include <gtest/gtest.h>

#include "expect_error.hpp"

#include <random>

namespace {

using cove::Box;
using cove::Code;
using cove::Index;
namespace net = cove::net;

net::Bytes sample() {
  net::WireWriter w(7, 42);
  w.str("temperature").u64(3).box(Box::from_start_count(std::vector<Index>{1, -2}, std::vector<Index>{4, 5}));
  w.f64(2.5).bytes(std::vector<std::byte>(9, std::byte{7}));
  return std::move(w).finish();
}

TEST(Wire, RoundTrip) {
  const auto m = sample();
  const auto h = net::read_header(m);
  EXPECT_EQ(h.type, 7);
  EXPECT_EQ(h.request_id, 42u);
  EXPECT_EQ(h.status, Code::Ok);
  net::WireReader r(m);
  EXPECT_EQ(r.str(), "temperature");
  EXPECT_EQ(r.u64(), 3u);
  EXPECT_EQ(r.box(), Box::from_start_count(std::vector<Index>{1, -2}, std::vector<Index>{4, 5}));
  EXPECT_EQ(r.f64(), 2.5);
  EXPECT_EQ(r.bytes().size(), 9u);
  r.expect_end();
}

using cove_test::code_of;

// Reads every field of sample() from `m`.
void read_all(const net::Bytes& m) {
  net::read_header(m);
  net::WireReader r(m);
  r.str();
  r.u64();
  r.box();
  r.f64();
  r.bytes();
  r.expect_end();
}

TEST(Wire, EveryTruncationIsRejected) {
  const auto m = sample();
  for (std::size_t n = 0; n < m.size(); ++n) {
    net::Bytes cut(m.begin(), m.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_EQ(code_of([&] { read_all(cut); }), Code::Protocol) << "cut at " << n;
  }
  // A consistent header with a shorter body: fields run off the end.
  for (std::size_t n = net::kHeaderBytes; n < m.size(); ++n) {
    net::Bytes cut(m.begin(), m.begin() + static_cast<std::ptrdiff_t>(n));
    const auto body = static_cast<std::uint32_t>(n - net::kHeaderBytes);
    std::memcpy(cut.data() + 20, &body, 4);
    EXPECT_EQ(code_of([&] { read_all(cut); }), Code::Protocol) << "body cut at " << n;
  }
}

TEST(Wire, RandomCorruptionNeverCrashes) {
  std::mt19937_64 rng(11);
  const auto m = sample();
  for (int i = 0; i < 5000; ++i) {
    auto bad = m;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) bad[rng() % bad.size()] = static_cast<std::byte>(rng());
    try {
      read_all(bad);
    } catch (const cove::Error& e) {
      EXPECT_TRUE(e.code() == Code::Protocol || e.code() == Code::InvalidArgument) << e.what();
    }
  }
}

TEST(Wire, RejectsForeignMessages) {
  auto m = sample();
  auto bad_magic = m;
  bad_magic[0] = std::byte{'X'};
  EXPECT_EQ(code_of([&] { net::read_header(bad_magic); }), Code::Protocol);
  auto bad_version = m;
  bad_version[4] = std::byte{99};
  EXPECT_EQ(net::read_header(bad_version).version, 99);  // read, so that a hello can say why it is refused
  EXPECT_EQ(code_of([&] { net::check_version(net::read_header(bad_version)); }), Code::Protocol);
  net::WireWriter w(1, 1);
  w.u8(11);  // a box of 11 dimensions
  auto big_box = std::move(w).finish();
  EXPECT_EQ(code_of([&] { net::WireReader(big_box).box(); }), Code::Protocol);
}

TEST(Wire, ErrorRepliesCarryTheirMessage) {
  const auto reply = net::error_reply(5, 9, Code::Timeout, "waited too long");
  try {
    net::check_reply(reply, 5, 9);
    ADD_FAILURE();
  } catch (const cove::Error& e) {
    EXPECT_EQ(e.code(), Code::Timeout);
    EXPECT_NE(std::string(e.what()).find("waited too long"), std::string::npos);
  }
  EXPECT_EQ(code_of([&] { net::check_reply(reply, 5, 10); }), Code::Protocol);
}

}  // namespace
