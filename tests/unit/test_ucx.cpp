// The UCX transport's bulk data paths (net/ucx.cpp), between two UCX
// endpoints of this process over TCP on loopback: one-sided (UCX's get and
// put, COVE_UCX_BULK=rma) and two-sided (active messages, COVE_UCX_BULK=am,
// the default without RDMA ports), and the exposer's checks on the
// two-sided path: the key's token, the range, the grant of a write, and a
// region withdrawn while its bytes are on the way.
#include "net/memory_key.hpp"
#include "net/protocol.hpp"
#include "net/transport.hpp"

#include <gtest/gtest.h>

#include "expect_error.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <future>
#include <numeric>
#include <thread>

namespace {

using cove::Code;
using cove_test::expect_error;
namespace net = cove::net;

// Two UCX endpoints: `exposer` listens and serves (it remembers the peer
// that called it, to grant it writes), `user` connects to it and reads
// and writes its memory. COVE_UCX_BULK is set while they start.
struct UcxPair {
  std::unique_ptr<net::Endpoint> exposer, user;
  net::Peer peer;              // the exposer, as the user sees it
  net::Peer caller;            // the user, as the exposer sees it
  explicit UcxPair(const char* bulk) {
    ::setenv("COVE_UCX_BULK", bulk, 1);
    exposer = net::make_ucx_endpoint("", net::kDefaultMaxRequestBytes);
    user = net::make_ucx_endpoint("", net::kDefaultMaxRequestBytes);
    ::unsetenv("COVE_UCX_BULK");
    std::promise<net::Peer> seen;
    exposer->serve([&seen, once = std::make_shared<std::once_flag>()](std::shared_ptr<net::Request> r) {
      std::call_once(*once, [&] { seen.set_value(r->peer()); });
      r->reply({});
    });
    peer = user->connect(exposer->address(), net::deadline_in(10000));
    user->call(peer, net::Bytes(8), net::deadline_in(10000));
    caller = seen.get_future().get();
  }
};

class UcxBulk : public ::testing::TestWithParam<const char*> {};

// 64 MiB each way in one op, and a thousand small runs through a window's
// key: the bytes arrive exactly.
TEST_P(UcxBulk, ReadsAndWritesMoveExactlyTheBytes) {
  UcxPair p(GetParam());
  std::vector<std::uint32_t> data(16 << 20);
  std::iota(data.begin(), data.end(), 1u);
  auto region = p.exposer->expose(data.data(), data.size() * 4);
  region->allow_write(p.caller);
  std::vector<std::uint32_t> got(data.size());
  const net::RemoteOp whole{0, got.data(), got.size() * 4};
  p.user->read(p.peer, region->key(), {&whole, 1}, net::deadline_in(30000));
  EXPECT_EQ(got, data);

  std::vector<std::uint32_t> runs(3000);
  std::vector<net::RemoteOp> ops;
  for (std::size_t i = 0; i < 1000; ++i) ops.push_back({i * 4000, runs.data() + 3 * i, 12});
  const net::Bytes window = region->window_key(400, 8000000);
  p.user->read(p.peer, window, ops, net::deadline_in(10000));
  for (std::size_t i = 0; i < 1000; ++i)
    for (std::size_t j = 0; j < 3; ++j) ASSERT_EQ(runs[3 * i + j], data[100 + i * 1000 + j]) << i;

  std::vector<std::uint32_t> fresh(data.size());
  std::iota(fresh.begin(), fresh.end(), 7u);
  const net::RemoteOp back{0, fresh.data(), fresh.size() * 4};
  p.user->write(p.peer, region->key(), {&back, 1}, net::deadline_in(30000));
  EXPECT_EQ(data, fresh) << "the write is in place when it returns";
  std::vector<std::uint32_t> small(1000, 3u);
  const net::RemoteOp into_window{40, small.data(), small.size() * 4};
  p.user->write(p.peer, window, {&into_window, 1}, net::deadline_in(10000));
  // Byte 40 of the window is byte 440 of the region: elements 110 to 1109.
  EXPECT_EQ(data[109], fresh[109]);
  EXPECT_EQ(data[110], 3u);
  EXPECT_EQ(data[1109], 3u);
  EXPECT_EQ(data[1110], fresh[1110]);
}

INSTANTIATE_TEST_SUITE_P(Modes, UcxBulk, ::testing::Values("am", "rma"));

// Two-sided, the exposer decides: a key with another token names nothing,
// a range past the region is refused, and only a peer the region was
// granted to may write it. Nothing is read or written by a refused op.
TEST(UcxTwoSided, TheExposerChecksTokenRangeAndGrant) {
  UcxPair p("am");
  std::vector<std::byte> secret(1 << 20, std::byte{0x5a});
  auto region = p.exposer->expose(secret.data(), secret.size());
  const net::Bytes key(region->key().begin(), region->key().end());
  std::vector<std::byte> got(4096);
  const net::RemoteOp op{0, got.data(), got.size()};

  // The UCX part's token follows the key header and the region id.
  net::Bytes forged = key;
  std::uint64_t token;
  std::memcpy(&token, forged.data() + sizeof(net::KeyHeader) + 8, 8);
  for (const std::uint64_t t : {std::uint64_t{0}, token ^ 1}) {
    std::memcpy(forged.data() + sizeof(net::KeyHeader) + 8, &t, 8);
    expect_error(Code::NotFound, "wrong token", [&] { p.user->read(p.peer, forged, {&op, 1}, net::deadline_in(10000)); });
  }
  EXPECT_EQ(got, std::vector<std::byte>(4096)) << "no byte of the region arrived";

  // A header that claims more than the region: the reader's own check
  // passes, the exposer's does not.
  net::Bytes longer = key;
  net::KeyHeader h = net::read_key_header(longer);
  h.length *= 2;
  std::memcpy(longer.data(), &h, sizeof h);
  const net::RemoteOp past{secret.size(), got.data(), got.size()};
  expect_error(Code::InvalidArgument, "outside the region",
               [&] { p.user->read(p.peer, longer, {&past, 1}, net::deadline_in(10000)); });

  std::vector<std::byte> scribble(4096, std::byte{0x11});
  const net::RemoteOp write{0, scribble.data(), scribble.size()};
  expect_error(Code::PermissionDenied, "not granted",
               [&] { p.user->write(p.peer, key, {&write, 1}, net::deadline_in(10000)); });
  std::vector<std::byte> big(256 << 10, std::byte{0x22});  // by rendezvous, not inline
  const net::RemoteOp big_write{4096, big.data(), big.size()};
  expect_error(Code::PermissionDenied, "not granted",
               [&] { p.user->write(p.peer, key, {&big_write, 1}, net::deadline_in(10000)); });
  EXPECT_EQ(secret, std::vector<std::byte>(1 << 20, std::byte{0x5a})) << "a refused write changed the region";

  // The connection serves on, and a grant lets the write in.
  p.user->read(p.peer, key, {&op, 1}, net::deadline_in(10000));
  EXPECT_EQ(got, std::vector<std::byte>(4096, std::byte{0x5a}));
  region->allow_write(p.caller);
  p.user->write(p.peer, key, {&big_write, 1}, net::deadline_in(10000));
  EXPECT_EQ(secret[4096], std::byte{0x22});

  // A withdrawn region names nothing.
  region.reset();
  expect_error(Code::NotFound, "withdrawn", [&] { p.user->read(p.peer, key, {&op, 1}, net::deadline_in(10000)); });
}

// A region withdrawn while a large read of it is on the way, its memory
// then rewritten (as a reused block would be): the reader gets an error, or
// the bytes the region held, never a byte written after the withdrawal.
TEST(UcxTwoSided, ARegionWithdrawnMidAnswerNeverHandsOutItsNewBytes) {
  constexpr std::size_t kBytes = std::size_t{256} << 20;
  int cut = 0, whole = 0;
  for (int delay_ms : {2, 8, 20}) {
    UcxPair p("am");
    std::vector<std::byte> data(kBytes, std::byte{0x11});
    auto region = p.exposer->expose(data.data(), data.size());
    const net::Bytes key(region->key().begin(), region->key().end());
    std::vector<std::byte> got(kBytes);
    auto reading = std::async(std::launch::async, [&] {
      const net::RemoteOp op{0, got.data(), got.size()};
      return cove_test::code_of([&] { p.user->read(p.peer, key, {&op, 1}, net::deadline_in(30000)); });
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    region.reset();
    std::fill(data.begin(), data.end(), std::byte{0x22});
    const Code code = reading.get();
    const auto other = std::find_if(got.begin(), got.end(), [](std::byte b) { return b != std::byte{0x11} && b != std::byte{0}; });
    EXPECT_EQ(other, got.end()) << "a byte written after the withdrawal, at " << (other - got.begin())
                                << " (after " << delay_ms << " ms)";
    if (code == Code::Ok) {
      ++whole;
      EXPECT_EQ(std::count(got.begin(), got.end(), std::byte{0x11}), static_cast<std::ptrdiff_t>(kBytes));
    } else {
      ++cut;
      EXPECT_TRUE(code == Code::Unavailable || code == Code::NotFound) << cove::code_name(code);
    }
  }
  RecordProperty("cut", cut);
  RecordProperty("whole", whole);
}

}  // namespace
