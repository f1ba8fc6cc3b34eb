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
using cove_test::expect_error;

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

// Every truncation is refused where it happens: a cut message by the
// header (its body length no longer matches), a cut body with a matching
// header by the first field that runs off its end, naming that field, its
// size, its offset and the body's length; never later (by expect_end, or a
// read past the end that happened to land on the right code).
TEST(Wire, EveryTruncationIsRejected) {
  const auto m = sample();
  for (std::size_t n = 0; n < m.size(); ++n) {
    net::Bytes cut(m.begin(), m.begin() + static_cast<std::ptrdiff_t>(n));
    SCOPED_TRACE("cut at " + std::to_string(n));
    if (n < net::kHeaderBytes) {
      expect_error(Code::Protocol, "message of " + std::to_string(n) + " bytes is shorter than the 24-byte header",
                   [&] { read_all(cut); });
    } else {
      expect_error(Code::Protocol,
                   "header announces " + std::to_string(m.size() - net::kHeaderBytes) + " body bytes but " +
                       std::to_string(n - net::kHeaderBytes) + " arrived",
                   [&] { read_all(cut); });
    }
  }
  // The reads of read_all(), in order: what each is called and its size.
  struct Field {
    const char* what;
    std::size_t bytes;
  };
  const std::vector<Field> fields{{"u32", 4}, {"string", 11},                       // "temperature"
                                  {"u64", 8},                                       // 3
                                  {"u8", 1},  {"i64", 8}, {"i64", 8}, {"i64", 8}, {"i64", 8},  // a 2-D box
                                  {"f64", 8},                                       // 2.5
                                  {"u32", 4}, {"blob", 9}};                         // 9 bytes
  std::size_t total = 0;
  for (const auto& f : fields) total += f.bytes;
  ASSERT_EQ(net::kHeaderBytes + total, m.size());
  // A consistent header with a shorter body: fields run off the end.
  for (std::size_t body = 0; body < total; ++body) {
    net::Bytes cut(m.begin(), m.begin() + static_cast<std::ptrdiff_t>(net::kHeaderBytes + body));
    const auto b = static_cast<std::uint32_t>(body);
    std::memcpy(cut.data() + 20, &b, 4);
    std::size_t at = 0;
    const Field* first_short = nullptr;
    for (const auto& f : fields) {
      if (f.bytes > body - at) {
        first_short = &f;
        break;
      }
      at += f.bytes;
    }
    ASSERT_NE(first_short, nullptr);
    SCOPED_TRACE("body cut at " + std::to_string(body));
    expect_error(Code::Protocol,
                 "message truncated: reading " + std::string(first_short->what) + " needs " +
                     std::to_string(first_short->bytes) + " bytes at body offset " + std::to_string(at) + " of " +
                     std::to_string(body),
                 [&] { read_all(cut); });
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
