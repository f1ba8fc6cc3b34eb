// Cove's own TCP path (net/local.cpp over TCP): requests, reads of exposed
// memory by key (the key's token checked, nothing mapped, every byte
// through the socket), large reads cut into pieces that land straight in
// the reader's memory, and the choice of TCP by a client (COVE_TRANSPORT).
#include "net/inet.hpp"
#include "net/memory_key.hpp"
#include "net/transport.hpp"
#include "net/wire.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cove/client.hpp>
#include <cove/server.hpp>

#include <gtest/gtest.h>

#include "expect_error.hpp"

#include <cstdlib>
#include <cstring>
#include <numeric>
#include <thread>

namespace {

using cove::Code;
using cove_test::expect_error;
namespace net = cove::net;

// The tcp:IP:PORT alternative of an endpoint's address.
std::string tcp_part(const std::string& address) {
  const auto at = address.find("tcp:");
  return at == std::string::npos ? "" : address.substr(at, address.find('|', at) - at);
}

// A server endpoint listening on TCP (loopback) that echoes requests, and
// a client endpoint connected to it over TCP.
struct Pair {
  std::unique_ptr<net::Endpoint> server = net::make_endpoint("tcp");
  std::unique_ptr<net::Endpoint> client = net::make_endpoint("local");
  net::Peer peer;
  Pair() {
    server->serve([](std::shared_ptr<net::Request> r) {
      const auto m = r->message();
      r->reply(net::Bytes(m.begin(), m.end()));
    });
    peer = client->connect(tcp_part(server->address()), net::deadline_in(5000));
  }
};

// A member a client may take for gone as soon as it refuses (its reconnect
// waits no grace): only one every alternative of which is on this host.
TEST(Tcp, AddressesOnThisHostAreUnixSocketsAndLoopback) {
  using cove::net::on_this_host;
  EXPECT_TRUE(on_this_host("local:@cove-1"));
  EXPECT_TRUE(on_this_host("local:@cove-1|tcp:127.0.0.1:4000"));
  EXPECT_TRUE(on_this_host("tcp:127.0.0.2:4000"));
  EXPECT_TRUE(on_this_host("tcp:[::1]:4000"));
  EXPECT_FALSE(on_this_host("local:@cove-1|tcp:192.0.2.2:4000"));
  EXPECT_FALSE(on_this_host("tcp:10.0.0.1:4000"));
  EXPECT_FALSE(on_this_host("ucx:127.0.0.1:4000"));
  EXPECT_FALSE(on_this_host("local:@cove-1|ucx:127.0.0.1:4000"));
  EXPECT_FALSE(on_this_host("inproc://cove-1"));
  EXPECT_FALSE(on_this_host("tcp:"));
  EXPECT_FALSE(on_this_host(""));
}

TEST(Tcp, AServerListensOnLoopbackAndAnswersOverTcp) {
  Pair p;
  const std::string at = tcp_part(p.server->address());
  ASSERT_EQ(at.rfind("tcp:127.0.0.1:", 0), 0u) << p.server->address();
  EXPECT_STREQ(p.peer->transport(), "tcp");
  const net::Bytes hello(100, std::byte{7});
  EXPECT_EQ(p.client->call(p.peer, hello, net::deadline_in(5000)), hello);
  // The client listens on TCP once it reached a peer by it (put_local readers come back).
  EXPECT_NE(tcp_part(p.client->address()), "");
}

TEST(Tcp, ReadsOfExposedMemoryGoThroughTheSocket) {
  Pair p;
  // 40 MiB: three pieces of at most 16 MiB, asked for ahead of each other.
  std::vector<std::uint32_t> data(10 << 20);
  std::iota(data.begin(), data.end(), 1u);
  auto region = p.server->expose(data.data(), data.size() * 4);
  const auto key = region->key();
  EXPECT_FALSE(p.client->map(p.peer, key, false, net::deadline_in(5000)).has_value()) << "nothing is mapped over TCP";
  auto segment = p.server->allocate(1 << 20);  // a shared-memory segment: on this host only
  EXPECT_FALSE(p.client->map(p.peer, segment->key(), false, net::deadline_in(5000)).has_value());
  std::vector<std::uint32_t> got(data.size());
  const net::RemoteOp whole{0, got.data(), got.size() * 4};
  p.client->read(p.peer, key, {&whole, 1}, net::deadline_in(20000));
  EXPECT_EQ(got, data);
  // Many runs in one read, from a window's key.
  std::vector<std::uint32_t> runs(3000);
  std::vector<net::RemoteOp> ops;
  for (std::size_t i = 0; i < 1000; ++i) ops.push_back({i * 4000, runs.data() + 3 * i, 12});
  const net::Bytes window = region->window_key(400, 8000000);
  p.client->read(p.peer, window, ops, net::deadline_in(5000));
  for (std::size_t i = 0; i < 1000; ++i)
    for (std::size_t j = 0; j < 3; ++j) ASSERT_EQ(runs[3 * i + j], data[100 + i * 1000 + j]) << i;
}

TEST(Tcp, AKeyWithAnotherTokenReadsNothing) {
  Pair p;
  std::vector<std::byte> secret(4096, std::byte{0x5a});
  auto region = p.server->expose(secret.data(), secret.size());
  net::Bytes key(region->key().begin(), region->key().end());
  net::KeyHeader h = net::read_key_header(key);
  ASSERT_NE(h.token, 0u);
  for (const std::uint64_t token : {std::uint64_t{0}, h.token ^ 1, h.token + (std::uint64_t{1} << 63)}) {
    h.token = token;
    const net::Bytes guessed = net::make_key(h);
    std::vector<std::byte> got(4096);
    const net::RemoteOp op{0, got.data(), got.size()};
    expect_error(Code::NotFound, "not what the key names",
                 [&] { p.client->read(p.peer, guessed, {&op, 1}, net::deadline_in(5000)); });
    EXPECT_EQ(got, std::vector<std::byte>(4096)) << "no byte of the region arrived";
  }
  // The connection serves on.
  std::vector<std::byte> got(4096);
  const net::RemoteOp op{0, got.data(), got.size()};
  p.client->read(p.peer, region->key(), {&op, 1}, net::deadline_in(5000));
  EXPECT_EQ(got, secret);
}

TEST(Tcp, AWithdrawnRegionIsNotRead) {
  Pair p;
  std::vector<std::byte> data(1 << 20, std::byte{1});
  auto region = p.server->expose(data.data(), data.size());
  const net::Bytes key(region->key().begin(), region->key().end());
  region.reset();
  std::vector<std::byte> got(data.size());
  const net::RemoteOp op{0, got.data(), got.size()};
  expect_error(Code::NotFound, "withdrawn", [&] { p.client->read(p.peer, key, {&op, 1}, net::deadline_in(5000)); });
}

// A reader that asks for 16 MiB and reads slowly: the answer goes out from
// the region in place as the socket takes it. The region is withdrawn
// mid-answer and its memory rewritten (as a reused block would be): the
// reader gets the bytes the region held, then the connection is cut, and
// never a byte of what the memory holds afterwards.
TEST(Tcp, ARegionWithdrawnMidAnswerCutsTheConnection) {
  auto server = net::make_endpoint("tcp");
  constexpr std::size_t kBytes = std::size_t{16} << 20;
  std::vector<std::byte> data(kBytes, std::byte{0x11});
  auto region = server->expose(data.data(), data.size());
  const net::KeyHeader k = net::read_key_header(region->key());
  // A raw connection with a small receive buffer, asking for all 16 MiB.
  const std::string at = tcp_part(server->address());
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  const int small = 64 << 10;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(std::stoi(at.substr(at.rfind(':') + 1))));
  ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  net::WireWriter w(0, 0);
  w.u64(k.address).u64(k.length).u64(k.region).u64(k.pid).u64(k.token).u32(1).u64(0).u64(kBytes);
  const net::Bytes ask = std::move(w).finish();
  const std::uint32_t header[4] = {3, static_cast<std::uint32_t>(ask.size()), 7, 0};  // ReadRequest, call id 7
  ASSERT_EQ(::send(fd, header, sizeof header, MSG_NOSIGNAL), static_cast<ssize_t>(sizeof header));
  ASSERT_EQ(::send(fd, ask.data(), ask.size(), MSG_NOSIGNAL), static_cast<ssize_t>(ask.size()));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the socket's buffers fill; the rest waits
  region.reset();
  std::fill(data.begin(), data.end(), std::byte{0x22});
  std::vector<std::byte> got;
  std::vector<std::byte> buf(1 << 16);
  const timeval patience{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience);
  for (;;) {
    const ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
    if (n <= 0) break;
    got.insert(got.end(), buf.begin(), buf.begin() + n);
  }
  ::close(fd);
  ASSERT_GT(got.size(), 16u) << "some of the answer came before the region was withdrawn";
  EXPECT_LT(got.size(), 16 + kBytes) << "the whole answer came, though its region was withdrawn";
  const auto first_other = std::find_if(got.begin() + 16, got.end(), [](std::byte b) { return b != std::byte{0x11}; });
  EXPECT_EQ(first_other, got.end()) << "a byte the region did not hold when it was asked for, at "
                                    << (first_other - got.begin() - 16);
}

// A client whose COVE_TRANSPORT is tcp reaches a server of transport tcp
// over TCP, also on the server's own host, and the data round-trips.
TEST(Tcp, AClientChoosesTcpWhenAsked) {
  cove::ServerOptions o;
  o.transport = "tcp";
  cove::Server server(o);
  ::setenv("COVE_TRANSPORT", "tcp", 1);
  struct Unset {
    ~Unset() { ::unsetenv("COVE_TRANSPORT"); }
  } unset;
  cove::ConnectOptions co;
  co.secret = server.secret();
  cove::Client c = cove::Client::connect(server.address(), co);
  EXPECT_NE(c.address().find("|tcp:127.0.0.1:"), std::string::npos) << c.address();
  const std::vector<cove::Index> shape{1 << 20};
  c.define("t", cove::DType(cove::DTypeKind::Float64), 1, shape);
  std::vector<double> a(1 << 20), b(1 << 20);
  std::iota(a.begin(), a.end(), 0.5);
  const cove::Box all = cove::Box::from_shape(shape);
  c.put("t", 1, all, a.data(), a.size() * 8);
  c.get("t", 1, all, b.data(), b.size() * 8, 5000);
  EXPECT_EQ(a, b);
}

}  // namespace
