// Hostile and careless clients against a real cove-server process
// (tests/integration/security.sh). Each role tries one kind of attack, checks
// that it is refused with a clear error, and that the server serves on with
// nothing stored changed. Exit status 0 when all of that holds.
//
//   cove-test-security hold-secret FILE       keeps a secret in memory; writes "PID ADDRESS" to FILE
//   cove-test-security forge-keys FILE SPID   memory keys naming another process, the server (pid SPID),
//                                             an address outside the registration, a huge length
//   cove-test-security forge-ucx              a put over UCX whose key is the server's own
//   cove-test-security server-ops             server-to-server messages from a client and a false server
//   cove-test-security oversize SPID          messages announcing more bytes than allowed
//   cove-test-security bad-hello              garbage and other versions at the hello, garbage at UCX's door
//   cove-test-security bad-connection-file F  a connection file with a malformed ucx: address
//   cove-test-security hold-local FILE        a writer whose put_local piece stays; writes its address to FILE
//   cove-test-security impersonate FILE       says hello as that writer (local and UCX), releases its piece
//   cove-test-security serves put|check NAME  puts 4 KiB and 1 MiB variables NAME.* (put), or checks every
//                                             value of them and puts and reads back a new version (check)
// The server comes from COVE_CONNECT.
#include <cove/cove.hpp>

#include "net/handshake.hpp"
#include "net/memory_key.hpp"
#include "net/messages.hpp"
#include "net/transport.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using cove::Box;
using cove::Code;
using cove::Index;
namespace net = cove::net;
using V = std::vector<Index>;

int failures = 0;

void check(bool ok, const std::string& what) {
  std::printf("%s: %s\n", ok ? "ok  " : "FAIL", what.c_str());
  if (!ok) ++failures;
}

// Runs fn; checks that it fails with `code` and a message containing `text`.
void expect_refused(Code code, const std::string& text, const std::string& what, const std::function<void()>& fn) {
  try {
    fn();
  } catch (const cove::Error& e) {
    const bool ok = e.code() == code && std::string(e.what()).find(text) != std::string::npos;
    check(ok, what + " -> " + e.what());
    return;
  }
  check(false, what + " was accepted");
}

std::string connect_target() { return cove::Client::resolve("", 10000).front(); }
// The group's secret, from its connection file.
std::string group_secret() { return cove::Client::resolve_target("", 10000).secret; }

// The alternative of an address with the given scheme ("local:" or "ucx:").
std::string alternative(const std::string& address, const std::string& scheme) {
  std::size_t at = 0;
  while (at <= address.size()) {
    const auto bar = std::min(address.find('|', at), address.size());
    const std::string a = address.substr(at, bar - at);
    if (a.rfind(scheme, 0) == 0) return a;
    at = bar + 1;
  }
  return "";
}

// The server's address for other hosts: its tcp: part (the default
// transport), else its ucx: part.
std::string network_address() {
  const std::string tcp = alternative(connect_target(), "tcp:");
  return tcp.empty() ? alternative(connect_target(), "ucx:") : tcp;
}

// A raw connection that has said hello as a client.
struct Raw {
  std::unique_ptr<net::Endpoint> ep = net::make_endpoint("local");
  net::Peer peer;
  explicit Raw(const std::string& address, bool greet = true) {
    peer = ep->connect(address, net::deadline_in(10000));
    if (greet) net::greet(*ep, peer, net::Role::Client, ep->address(), group_secret(), net::deadline_in(10000));
  }
  template <typename M>
  typename M::Reply call(const typename M::Request& r) {
    return net::call<M>(*ep, peer, r, net::deadline_in(10000));
  }
};

net::PieceHeader header(const std::string& var, std::uint64_t version, const Box& box, std::uint64_t bytes) {
  return {var, version, box, cove::Layout::c(), cove::DType(cove::DTypeKind::Float64), bytes};
}

// The server still answers, and the variable still holds only what it held.
void check_intact(cove::Client& c, const std::string& var, std::uint64_t owned_before) {
  const auto s = c.stat();
  check(s.owned_bytes == owned_before, "the server holds " + std::to_string(s.owned_bytes) + " bytes, as before (" +
                                           std::to_string(owned_before) + ")");
  check(!c.latest(var).has_value() || var == "kept", "nothing was stored for '" + var + "'");
}

int hold_secret(const std::string& file) {
  static char secret[4096];
  for (std::size_t i = 0; i < sizeof secret; ++i) secret[i] = static_cast<char>("SECRET!"[i % 7]);
  {
    std::ofstream out(file + ".tmp");
    out << ::getpid() << " " << reinterpret_cast<std::uintptr_t>(secret) << "\n";
  }
  std::rename((file + ".tmp").c_str(), file.c_str());
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
}

int forge_keys(const std::string& file, long server_pid) {
  long holder = 0;
  unsigned long long secret_address = 0;
  std::ifstream in(file);
  in >> holder >> secret_address;
  cove::Client c = cove::Client::connect();
  const V shape{512};
  const Box all = Box::from_shape(shape);
  // Names of this run's own (the role runs twice against one server).
  const std::string forged = "forged-" + std::to_string(::getpid()), huge_var = "huge-" + std::to_string(::getpid());
  c.define(forged, cove::DType(cove::DTypeKind::Float64), 1, shape);
  const std::uint64_t owned = c.stat().owned_bytes;
  Raw raw(alternative(connect_target(), "local:"));
  std::vector<double> mine(512, 1.5);
  // This process's own memory, exposed as a client exposes a put's buffer.
  const auto region = raw.ep->expose(mine.data(), 4096);
  const net::KeyHeader honest = net::read_key_header(region->key());
  const auto mine_address = honest.address;
  const auto me = honest.pid;
  const auto id = honest.region;
  auto put = [&](net::KeyHeader k, const Box& box, std::uint64_t bytes, const std::string* var = nullptr) {
    raw.call<net::Message<net::Op::Put>>({header(var ? *var : forged, 1, box, bytes), net::make_key(k), std::nullopt});
  };
  expect_refused(Code::PermissionDenied, "names pid " + std::to_string(holder), "a key naming another process's secret",
                 [&] { put({secret_address, 4096, 1, static_cast<std::uint64_t>(holder)}, all, 4096); });
  expect_refused(Code::PermissionDenied, "names pid " + std::to_string(server_pid), "a key naming the server itself",
                 [&] { put({secret_address, 4096, 1, static_cast<std::uint64_t>(server_pid)}, all, 4096); });
  expect_refused(Code::InvalidArgument, "outside the 1024-byte region", "a key shorter than the piece",
                 [&] { put({mine_address, 1024, id, me}, all, 4096); });
  expect_refused(Code::InvalidArgument, "does not describe memory", "a key of a huge length",
                 [&] { put({mine_address, std::uint64_t{1} << 62, id, me}, all, 4096); });
  // An address this process does not have: the kernel says so (or, without
  // direct copies, this process's own table does).
  expect_refused(Code::NotFound, "", "a key naming memory this process does not have",
                 [&] { put({0x1000, 4096, 999, me}, all, 4096); });
  const Box huge = Box::from_start_count(V{0}, V{Index{1} << 61});
  c.define(huge_var, cove::DType(cove::DTypeKind::Float64), 1);
  expect_refused(Code::InvalidArgument, "holds more than 2^64 bytes", "a put of 2^61 float64 elements with no bytes",
                 [&] { put({mine_address, 0, id, me}, huge, 0, &huge_var); });
  check_intact(c, forged, owned);
  check_intact(c, huge_var, owned);
  // Its own memory, honestly described, is stored.
  put(honest, all, 4096);
  std::vector<double> got(512);
  c.get(forged, 1, all, got.data(), 4096, 0);
  check(got == mine, "an honest put of the same memory is stored and read back");
  return failures ? 1 : 0;
}

int forge_ucx() {
  cove::Client c = cove::Client::connect();
  const V shape{4096};
  const Box all = Box::from_shape(shape);
  c.define("kept", cove::DType(cove::DTypeKind::Float64), 1, shape);
  std::vector<double> kept(4096, 7.25);
  c.put("kept", 1, all, kept.data(), kept.size() * 8);
  const std::uint64_t owned = c.stat().owned_bytes;
  const std::string ucx = alternative(connect_target(), "ucx:");
  if (ucx.empty()) {
    check(false, "the server has no UCX address");
    return 1;
  }
  auto ep = net::make_endpoint("local");
  net::Peer peer = ep->connect(ucx, net::deadline_in(10000));
  check(std::strcmp(peer->transport(), "ucx") == 0, "connected to the server over UCX");
  net::greet(*ep, peer, net::Role::Client, ep->address(), group_secret(), net::deadline_in(10000));
  // The key of the server's own piece, from a query answer.
  const auto answer = net::call<net::Message<net::Op::Query>>(
      *ep, peer, {"kept", 1, false, all, 0, cove::Layout::c(), 0, std::nullopt}, net::deadline_in(10000));
  check(answer.pieces.size() == 1, "a query over UCX names the server's piece");
  c.define("stolen", cove::DType(cove::DTypeKind::Float64), 1, shape);
  expect_refused(Code::PermissionDenied, "read only from peers this endpoint connected to",
                 "a UCX put whose key is the server's own memory", [&] {
                   net::call<net::Message<net::Op::Put>>(
                       *ep, peer, {header("stolen", 1, all, 4096 * 8), answer.pieces.at(0).key, std::nullopt},
                       net::deadline_in(10000));
                 });
  check_intact(c, "stolen", owned);
  return failures ? 1 : 0;
}

int server_ops() {
  cove::Client c = cove::Client::connect();
  const V shape{64};
  c.define("index", cove::DType(cove::DTypeKind::Float64), 1, shape);
  const std::uint64_t owned = c.stat().owned_bytes;
  const net::IndexAddRequest entry{header("index", 1, Box::from_shape(shape), 512), "local:@nobody", net::Bytes(40)};
  Raw client(alternative(connect_target(), "local:"));
  expect_refused(Code::PermissionDenied, "between the servers of a group", "IndexAdd from a client",
                 [&] { client.call<net::Message<net::Op::IndexAdd>>(entry); });
  // A process that says it is a server but cannot prove the group's secret.
  Raw fake(alternative(connect_target(), "local:"), false);
  expect_refused(Code::PermissionDenied, "refused this process's proof of the group's secret", "a join with a wrong secret",
                 [&] { net::greet(*fake.ep, fake.peer, net::Role::Server, fake.ep->address(), "not the secret at all", net::deadline_in(10000)); });
  expect_refused(Code::PermissionDenied, "between the servers of a group", "IndexAdd after a refused join",
                 [&] { fake.call<net::Message<net::Op::IndexAdd>>(entry); });
  expect_refused(Code::PermissionDenied, "not this connection's address", "a put_local for another client's memory", [&] {
    client.call<net::Message<net::Op::PutLocal>>(
        {header("index", 1, Box::from_shape(shape), 512), "local:@someone-else", net::Bytes(40), std::nullopt});
  });
  check_intact(c, "index", owned);
  return failures ? 1 : 0;
}

long rss_kib(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

// A raw Unix-domain connection to a local address.
int raw_socket(const std::string& local) {
  const std::string name = local.substr(std::strlen("local:@"));
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::memcpy(a.sun_path + 1, name.data(), name.size());
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), len) != 0) return -1;
  return fd;
}

// True when the server closes `fd` within 5 s.
bool closed_by_server(int fd) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, 5000) <= 0) return false;
  char b[64];
  return ::recv(fd, b, sizeof b, 0) <= 0;
}

int oversize(long server_pid) {
  cove::Client c = cove::Client::connect();
  c.define("size", cove::DType(cove::DTypeKind::Float64), 1, V{16});
  const std::uint64_t owned = c.stat().owned_bytes;
  const long rss_before = rss_kib(server_pid);
  // A frame announcing 3 GiB: refused before anything is allocated for it.
  const int fd = raw_socket(alternative(connect_target(), "local:"));
  const std::uint32_t header[4] = {1, 0xC0000000u, 1, 0};  // kind request, 3 GiB, call id 1
  check(::send(fd, header, sizeof header, MSG_NOSIGNAL) == sizeof header, "sent a frame header announcing 3 GiB");
  check(closed_by_server(fd), "the server closes a connection announcing 3 GiB");
  ::close(fd);
  const long rss_after = rss_kib(server_pid);
  check(rss_after >= 0 && rss_after - rss_before < 64 * 1024,
        "the server's memory grew by " + std::to_string(rss_after - rss_before) + " KiB, not 3 GiB");
  // A request over the limit from another host (TCP), and a count larger than its message.
  // Over UCX the server answers it with an error; over TCP, as on the local
  // transport, the frame's length alone closes the connection.
  auto ep = net::make_endpoint("local");
  net::Peer peer = ep->connect(network_address(), net::deadline_in(10000));
  net::greet(*ep, peer, net::Role::Client, ep->address(), group_secret(), net::deadline_in(10000));
  const bool tcp = std::strcmp(peer->transport(), "tcp") == 0;
  expect_refused(tcp ? Code::Unavailable : Code::InvalidArgument, tcp ? "tcp:" : "exceeds the server's limit",
                 "a 2 MiB metadata put over the network", [&] {
    net::call<net::Message<net::Op::MetaPut>>(*ep, peer, {"big", 1, net::Bytes(2 << 20)}, net::deadline_in(10000));
  });
  if (tcp) {
    peer = ep->connect(network_address(), net::deadline_in(10000));
    net::greet(*ep, peer, net::Role::Client, ep->address(), group_secret(), net::deadline_in(10000));
  }
  net::WireWriter d(static_cast<std::uint16_t>(net::Op::Define), 5);
  d.str("x").str("<f8").u8(1).u8(0).u8(0).u32(0x7fffffff);  // 2^31 layouts announced, none sent
  const auto reply = ep->call(peer, std::move(d).finish(), net::deadline_in(10000));
  expect_refused(Code::Protocol, "2147483647 layouts", "a define announcing 2^31 layouts",
                 [&] { net::check_reply(reply, static_cast<std::uint16_t>(net::Op::Define), 5); });
  check_intact(c, "size", owned);
  return failures ? 1 : 0;
}

int bad_hello() {
  cove::Client c = cove::Client::connect();
  c.define("hello", cove::DType(cove::DTypeKind::Float64), 1, V{16});
  const std::uint64_t owned = c.stat().owned_bytes;
  const std::string local = alternative(connect_target(), "local:");
  // Garbage where a hello should be, and requests before any hello.
  Raw raw(local, false);
  auto status_of = [&](net::Bytes m) { return net::read_header(raw.ep->call(raw.peer, std::move(m), net::deadline_in(10000))).status; };
  std::mt19937 rng(212);
  net::Bytes junk(212);
  for (auto& b : junk) b = static_cast<std::byte>(rng());
  check(status_of(junk) == Code::Protocol, "212 bytes of garbage get a Protocol error reply");
  net::WireWriter early(static_cast<std::uint16_t>(net::Op::Stat), 2);
  check(status_of(std::move(early).finish()) == Code::Protocol, "a request before the hello is refused");
  // A hello of another protocol version: refused, naming both versions.
  net::WireWriter other(static_cast<std::uint16_t>(net::Op::Hello), 3);
  net::HelloRequest h;
  h.protocol = 99;
  h.encode(other);
  auto m = std::move(other).finish();
  m[4] = std::byte{99};  // the header's version too
  const auto reply = raw.ep->call(raw.peer, m, net::deadline_in(10000));
  expect_refused(Code::Protocol, "speaks protocol version 99 but this server", "a hello of protocol version 99",
                 [&] { net::check_reply(reply, static_cast<std::uint16_t>(net::Op::Hello), 3); });
  // Garbage at the door of the server's network listener: 212 bytes on its TCP port.
  const std::string network = network_address();  // tcp:IP:PORT or ucx:IP:PORT
  const auto colon = network.rfind(':');
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(std::stoi(network.substr(colon + 1))));
  ::inet_pton(AF_INET, network.substr(4, colon - 4).c_str(), &a.sin_addr);
  for (int i = 0; i < 3; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0)
      [[maybe_unused]] auto n = ::send(fd, junk.data(), junk.size(), MSG_NOSIGNAL);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ::close(fd);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  check_intact(c, "hello", owned);
  cove::Client again = cove::Client::connect();
  check(again.stat().owned_bytes == owned, "a new client connects and is served after the garbage");
  return failures ? 1 : 0;
}

const V kVictimShape{64};

std::vector<double> victim_values() {
  std::vector<double> v(64);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = 3.0 * static_cast<double>(i) + 0.25;
  return v;
}

int hold_local(const std::string& file) {
  cove::Client c = cove::Client::connect();
  c.define("victim", cove::DType(cove::DTypeKind::Float64), 1, kVictimShape);
  static const std::vector<double> values = victim_values();
  c.put_local("victim", 1, Box::from_shape(kVictimShape), values.data(), values.size() * 8);
  const std::string holder = c.list().front().versions.front().pieces.front().holder;
  {
    std::ofstream out(file + ".tmp");
    out << holder << "\n";
  }
  std::rename((file + ".tmp").c_str(), file.c_str());
  std::this_thread::sleep_for(std::chrono::seconds(120));  // stopped by the test, by PID
  return 0;
}

int impersonate(const std::string& file) {
  std::string victim;
  std::ifstream(file) >> victim;
  check(victim.rfind("local:@cove-", 0) == 0, "the writer's address is a local one: " + victim);
  const Box all = Box::from_shape(kVictimShape);
  // Saying hello as the writer, over the local transport: the kernel's pid
  // for this connection is not the one the writer's name carries.
  Raw liar(alternative(connect_target(), "local:"), false);
  expect_refused(Code::PermissionDenied, "is not this connection's process", "a local hello claiming another writer",
                 [&] { net::greet(*liar.ep, liar.peer, net::Role::Client, victim, {}, net::deadline_in(10000)); });
  // The same from another host (TCP), and an address of yet another host.
  const std::string network = network_address();
  const std::string scheme = network.substr(0, 4);  // "tcp:" or "ucx:"
  auto remote = net::make_endpoint(scheme.substr(0, 3));
  const net::Peer up = remote->connect(network, net::deadline_in(10000));
  expect_refused(Code::PermissionDenied, "is not this connection's process", "a network hello claiming a local writer",
                 [&] { net::greet(*remote, up, net::Role::Client, victim, {}, net::deadline_in(10000)); });
  expect_refused(Code::PermissionDenied, "is not this connection's process", "a network hello claiming another host",
                 [&] { net::greet(*remote, up, net::Role::Client, scheme + "10.255.0.1:4000", {}, net::deadline_in(10000)); });
  // An honest connection cannot release or disconnect the writer's pieces.
  Raw honest(alternative(connect_target(), "local:"));
  expect_refused(Code::PermissionDenied, "not this connection's address", "a release of another writer's piece",
                 [&] { honest.call<net::Message<net::Op::Release>>({"victim", 1, all, victim}); });
  expect_refused(Code::PermissionDenied, "not this connection's address", "a disconnect in another writer's name",
                 [&] { honest.call<net::Message<net::Op::Disconnect>>({victim}); });
  // The writer's piece is still there, and reads back exactly.
  cove::Client reader = cove::Client::connect();
  std::vector<double> got(64, -1.0);
  reader.get("victim", 1, all, got.data(), got.size() * 8, 5000);
  check(got == victim_values(), "the writer's piece still reads back exactly");
  return failures ? 1 : 0;
}

const char* const kSomeSecret = "0123456789abcdef0123456789abcdef";

int bad_connection_file(const std::string& file) {
  {
    std::ofstream out(file);
    out << "version = 1\nsecret = \"" << kSomeSecret << "\"\nservers = [\"ucx:" << std::string(424, 'a') << "\"]\n";
  }
  cove::ConnectOptions o;
  o.timeout_ms = 2000;
  expect_refused(Code::InvalidArgument, "is not a UCX address", "a connection file with a malformed ucx: address",
                 [&] { cove::Client::connect(file, o); });
  {
    std::ofstream out(file);
    out << "version = 1\nsecret = \"" << kSomeSecret << "\"\nservers = [\"ucx:127.0.0.1:99999\"]\n";
  }
  expect_refused(Code::InvalidArgument, "port", "a connection file with port 99999",
                 [&] { cove::Client::connect(file, o); });
  return failures ? 1 : 0;
}

}  // namespace

// Values no other variable of these tests holds: `salt` tells the variables apart.
std::vector<double> serves_values(std::size_t n, double salt) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = salt + 0.5 * static_cast<double>(i);
  return v;
}

// The server stores and hands back the right bytes (garbage.sh runs it
// before the garbage, while it is held open, and after).
int serves(const std::string& what, const std::string& name) {
  cove::Client c = cove::Client::connect();
  const std::pair<std::string, Index> vars[] = {{name + ".small", 512}, {name + ".large", Index{1} << 17}};
  double salt = 1;
  for (const auto& [var, n] : vars) {
    const Box all = Box::from_shape(V{n});
    const auto want = serves_values(static_cast<std::size_t>(n), salt += 1000);
    if (what == "put") {
      c.define(var, cove::DType(cove::DTypeKind::Float64), 1, V{n});
      c.put(var, 1, all, want.data(), want.size() * 8);
      check(true, "put " + var);
      continue;
    }
    std::vector<double> got(want.size(), -1);
    c.get(var, 1, all, got.data(), got.size() * 8, 10000);
    check(got == want, "every value of " + var + " version 1 is as it was put");
    auto next = want;
    for (auto& x : next) x = -x;
    const auto version = c.latest(var).value_or(1) + 1;
    c.put(var, version, all, next.data(), next.size() * 8);
    std::fill(got.begin(), got.end(), 0.0);
    c.get(var, version, all, got.data(), got.size() * 8, 10000);
    check(got == next, "a new version of " + var + " is put and read back (version " + std::to_string(version) + ")");
  }
  return failures ? 1 : 0;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s ROLE [ARGS] (see the header of security.cpp)\n", argv[0]);
    return 2;
  }
  const std::string role = argv[1];
  try {
    if (role == "hold-secret" && argc == 3) return hold_secret(argv[2]);
    if (role == "forge-keys" && argc == 4) return forge_keys(argv[2], std::stol(argv[3]));
    if (role == "forge-ucx") return forge_ucx();
    if (role == "server-ops") return server_ops();
    if (role == "oversize" && argc == 3) return oversize(std::stol(argv[2]));
    if (role == "bad-hello") return bad_hello();
    if (role == "bad-connection-file" && argc == 3) return bad_connection_file(argv[2]);
    if (role == "hold-local" && argc == 3) return hold_local(argv[2]);
    if (role == "impersonate" && argc == 3) return impersonate(argv[2]);
    if (role == "serves" && argc == 4 && (std::string(argv[2]) == "put" || std::string(argv[2]) == "check"))
      return serves(argv[2], argv[3]);
  } catch (const cove::Error& e) {
    std::printf("%s: unexpected error: %s\n", role.c_str(), e.what());
    return 1;
  }
  std::fprintf(stderr, "unknown role or arguments: %s\n", role.c_str());
  return 2;
}
