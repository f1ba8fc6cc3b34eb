// Roles for the fault tests (tests/integration/faults.sh). Each prints what
// it saw and exits 0 when it saw what the test expects.
//   cove-test-fault big-put         puts 1 GiB; meant to be killed midway
//   cove-test-fault seed            stores a small variable to check later
//   cove-test-fault hostile-name    defines a variable whose name holds terminal escapes and bytes not UTF-8
//   cove-test-fault check-intact    the small variable is intact, nothing partial is held, serving goes on
//   cove-test-fault wait-on-death   waits (20 s timeout) for data that never comes; expects a failure well before
//   cove-test-fault stopped FILE    connects, waits for FILE, then gets with a 100 ms timeout from a stopped server:
//                                   expects Timeout well before the 30 s a control call may take
//   cove-test-fault garbage         sends malformed messages straight to the server; expects error replies
//   cove-test-fault late            connects before any server exists (waits for the connection file)
//   cove-test-fault hold-local FILE put_locals 8 MiB, waits for FILE to exist, then releases it
//   cove-test-fault lease-hang      leases the put_local piece (a query) and never ends the lease
//   cove-test-fault after-writer    the piece hold-local put is gone (NotFound at once), counted as lost, and
//                                   its version can be put again
//   cove-test-fault group-seed      puts 25 pieces of a 96x96 variable across the group
//   cove-test-fault group-after R   with member R dead: pieces the others hold and index read back exactly,
//                                   the rest fail with Unavailable at once, and the survivors count what was lost
//   cove-test-fault grant-hang      is granted 48 MiB, writes half of it, and never publishes
//   cove-test-fault put-big         puts 48 MiB (room for it must be there), gets it, deletes every version
//   cove-test-fault get-loop        gets a 48 MiB variable over and over, checking it; meant to be killed
//   cove-test-fault replicated-writer VAR FILE
//                                   puts versions 1, 2, ... of VAR (128x128 doubles, in pieces of 8 KiB, 32 KiB
//                                   or one of 128 KiB) until FILE exists; "acked V" once every piece of V was
//                                   stored, "failed V: why" otherwise
//   cove-test-fault replicated-check VAR OUT
//                                   every version OUT (a writer's output) says was acked reads back exactly
// The server comes from COVE_CONNECT.
#include <cove/cove.hpp>

#include "common/shard_map.hpp"

#include "net/handshake.hpp"
#include "net/memory_key.hpp"
#include "net/messages.hpp"
#include "net/region_table.hpp"
#include "net/transport.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

namespace {

using cove::Box;
using cove::Index;
using V = std::vector<Index>;
using Clock = std::chrono::steady_clock;

const Box kSmall = Box::from_shape(V{32, 32});

std::vector<double> small_values() {
  std::vector<double> v(32 * 32);
  std::iota(v.begin(), v.end(), 0.0);
  return v;
}

int seed(cove::Client& c) {
  c.define("small", cove::DType(cove::DTypeKind::Float64), 2, V{32, 32});
  const auto v = small_values();
  c.put("small", 1, kSmall, v.data(), v.size() * 8);
  std::printf("seeded\n");
  return 0;
}

// A name that would clear the screen and retitle the terminal if printed raw.
int hostile_name(cove::Client& c) {
  c.define("evil\x1b]0;pwned\x07\x1b[2J\xff\\end", cove::DType(cove::DTypeKind::UInt8), 1);
  std::printf("defined\n");
  return 0;
}

int check_intact(cove::Client& c) {
  std::vector<double> got(32 * 32);
  c.get("small", 1, kSmall, got.data(), got.size() * 8, 0);
  if (got != small_values()) {
    std::printf("stored data changed\n");
    return 1;
  }
  const auto s = c.stat();
  if (s.owned_bytes != 32 * 32 * 8) {
    std::printf("server holds %llu bytes; expected only the seeded %d\n", (unsigned long long)s.owned_bytes, 32 * 32 * 8);
    return 1;
  }
  // And it still serves new work.
  const auto v = small_values();
  c.put("small", 2, kSmall, v.data(), v.size() * 8);
  c.get("small", 2, kSmall, got.data(), got.size() * 8, 0);
  std::printf("intact: stored data readable, no partial piece, still serving\n");
  return got == v ? 0 : 1;
}

int big_put(cove::Client& c) {
  const V shape{16384, 8192};  // 1 GiB of float64
  c.define("big", cove::DType(cove::DTypeKind::Float64), 2, shape);
  std::vector<double> data(static_cast<std::size_t>(shape[0] * shape[1]), 1.0);
  std::printf("putting\n");
  std::fflush(stdout);
  c.put("big", 1, Box::from_shape(shape), data.data(), data.size() * 8);
  std::printf("put finished (it was meant to be killed first)\n");
  return 1;
}

int wait_on_death(cove::Client& c) {
  c.define("never", cove::DType(cove::DTypeKind::Float64), 1, V{8});
  std::vector<double> buf(8);
  std::printf("waiting\n");
  std::fflush(stdout);
  const auto t0 = Clock::now();
  try {
    c.get("never", 1, Box::from_shape(V{8}), buf.data(), 64, 20000);
  } catch (const cove::Error& e) {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
    std::printf("after %lld ms: %s\n", static_cast<long long>(ms), e.what());
    return e.code() == cove::Code::Unavailable && ms < 15000 ? 0 : 1;
  }
  std::printf("the get succeeded?\n");
  return 1;
}

int gets_from_stopped_server(cove::Client& c, const std::string& go) {
  std::printf("connected\n");
  std::fflush(stdout);
  while (!std::filesystem::exists(go)) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  int failures = 0;
  std::vector<double> buf(32 * 32);
  for (const std::uint64_t version : {1, 2}) {  // held, and not (yet) there
    const auto t0 = Clock::now();
    try {
      c.get("small", version, kSmall, buf.data(), buf.size() * 8, 100);
      std::printf("version %llu: the get succeeded from a stopped server?\n", static_cast<unsigned long long>(version));
      ++failures;
    } catch (const cove::Error& e) {
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
      const bool ok = e.code() == cove::Code::Timeout && ms < 15000;
      std::printf("%s: version %llu after %lld ms: %s\n", ok ? "ok" : "FAIL", static_cast<unsigned long long>(version),
                  static_cast<long long>(ms), e.what());
      failures += ok ? 0 : 1;
    }
  }
  return failures;
}

// ---- leases, grants and mappings of processes that die ----

constexpr Index kHeld = Index{1} << 20;  // doubles: 8 MiB
constexpr Index kBig = Index{6} << 20;   // doubles: 48 MiB

int hold_local(cove::Client& c, const std::string& go) {
  c.define("held", cove::DType(cove::DTypeKind::Float64), 1, V{kHeld});
  std::vector<double> v(static_cast<std::size_t>(kHeld), 4.5);
  const Box all = Box::from_shape(V{kHeld});
  c.put_local("held", 1, all, v.data(), v.size() * 8);
  std::printf("put\n");
  std::fflush(stdout);
  while (!std::filesystem::exists(go)) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  c.release("held", 1, all);  // blocks while a reader holds a lease on it
  std::printf("released\n");
  return 0;
}

int after_writer(cove::Client& c) {
  const Box all = Box::from_shape(V{kHeld});
  std::vector<double> v(static_cast<std::size_t>(kHeld));
  int failures = 0;
  const auto check = [&](bool ok, const std::string& what) {
    std::printf("%s: %s\n", ok ? "ok" : "FAIL", what.c_str());
    failures += ok ? 0 : 1;
  };
  cove::Code code = cove::Code::Ok;
  try {
    c.get("held", 1, all, v.data(), v.size() * 8, 0);
  } catch (const cove::Error& e) {
    code = e.code();
  }
  check(code == cove::Code::NotFound, std::string("a get of the dead writer's version finds nothing: ") +
                                          cove::code_name(code));
  check(c.stat().lost_pieces == 1, "cove stat counts its piece as lost");
  check(c.list().at(0).versions.empty(), "its version is gone from the listing");
  std::fill(v.begin(), v.end(), 6.5);
  c.put("held", 1, all, v.data(), v.size() * 8);
  std::vector<double> got(v.size());
  c.get("held", 1, all, got.data(), got.size() * 8, 0);
  check(got == v, "the version is put again and reads back");
  return failures;
}

// ---- a member of a server group that dies ----

constexpr Index kGroupSide = 96, kGroupPiece = 20;  // pieces that cross the shards' boundaries

std::vector<double> group_values(const Box& b) {
  std::vector<double> v;
  for (Index i = b.lo[0]; i < b.hi[0]; ++i)
    for (Index j = b.lo[1]; j < b.hi[1]; ++j) v.push_back(static_cast<double>(i * kGroupSide + j));
  return v;
}

std::vector<Box> group_pieces() {
  std::vector<Box> out;
  for (Index i = 0; i < kGroupSide; i += kGroupPiece)
    for (Index j = 0; j < kGroupSide; j += kGroupPiece)
      out.push_back(Box::from_start_count(V{i, j}, V{std::min(kGroupPiece, kGroupSide - i), std::min(kGroupPiece, kGroupSide - j)}));
  return out;
}

int group_seed(cove::Client& c) {
  c.define("g", cove::DType(cove::DTypeKind::Float64), 2, V{kGroupSide, kGroupSide});
  for (const Box& b : group_pieces()) {
    const auto v = group_values(b);
    c.put("g", 1, b, v.data(), v.size() * 8);
  }
  std::printf("seeded\n");
  return 0;
}

int group_after(cove::Client& c, int dead) {
  const V shape{kGroupSide, kGroupSide};
  const auto members = static_cast<int>(c.servers().size());
  const cove::common::ShardMap map(Box::from_shape(shape), sizeof(double), members, "g");
  int failures = 0, read = 0, refused = 0;
  std::uint64_t expected_lost = 0;
  for (const Box& b : group_pieces()) {
    const auto shards = map.shards_for(b);
    const bool needs_dead = std::find(shards.begin(), shards.end(), dead) != shards.end();
    if (shards.front() == dead) expected_lost += shards.size() - 1;  // held there; indexed by the others too
    std::vector<double> got(static_cast<std::size_t>(b.volume()));
    try {
      c.get("g", 1, b, got.data(), got.size() * 8, 0);
      if (needs_dead || got != group_values(b)) {
        std::printf("FAIL: %s read %s\n", b.to_string().c_str(), needs_dead ? "through a dead shard?" : "wrong bytes");
        ++failures;
      }
      ++read;
    } catch (const cove::Error& e) {
      if (!needs_dead || e.code() != cove::Code::Unavailable) {
        std::printf("FAIL: %s: %s\n", b.to_string().c_str(), e.what());
        ++failures;
      }
      ++refused;
    }
  }
  std::printf("%d pieces read back exactly from the survivors, %d refused with Unavailable\n", read, refused);
  if (read == 0 || refused == 0) ++failures;
  std::uint64_t lost = 0;
  int unreachable = 0;
  for (const auto& [address, s] : c.stat_each()) {
    if (!s.reachable) ++unreachable;
    lost += s.lost_pieces;
  }
  std::printf("%s: %d member unreachable; the survivors lost %llu index entries (expected %llu)\n",
              unreachable == 1 && lost == expected_lost ? "ok" : "FAIL", unreachable,
              static_cast<unsigned long long>(lost), static_cast<unsigned long long>(expected_lost));
  if (unreachable != 1 || lost != expected_lost || expected_lost == 0) ++failures;
  return failures;
}

// A raw client of the server's (the library's own would end its leases).
struct RawClient {
  std::unique_ptr<cove::net::Endpoint> ep = cove::net::make_endpoint("local");
  cove::net::Peer server;
  RawClient() {
    const cove::ConnectTarget target = cove::Client::resolve_target("", 10000);
    server = ep->connect(target.servers.front(), cove::net::deadline_in(5000));
    cove::net::greet(*ep, server, cove::net::Role::Client, ep->address(), target.secret, cove::net::deadline_in(5000));
  }
  template <cove::net::Op op>
  auto call(const typename cove::net::Message<op>::Request& r) {
    return cove::net::call<cove::net::Message<op>>(*ep, server, r, cove::net::deadline_in(10000));
  }
};

[[noreturn]] void hang(const char* what) {
  std::printf("%s\n", what);
  std::fflush(stdout);
  for (;;) ::pause();
}

int lease_hang() {
  RawClient raw;
  const Box all = Box::from_shape(V{kHeld});
  const auto reply = raw.call<cove::net::Op::Query>({"held", 1, false, all, 0, cove::Layout::c(), 0, std::nullopt});
  if (reply.lease == 0 || reply.pieces.empty()) {
    std::printf("no lease in the answer\n");
    return 1;
  }
  hang("leased");
}

int grant_hang() {
  RawClient raw;
  raw.call<cove::net::Op::Define>({"granted", cove::DType(cove::DTypeKind::Float64), 1, Box::from_shape(V{kBig}), {}, {}});
  cove::net::PieceHeader h{"granted", 1, Box::from_shape(V{kBig}), cove::Layout::c(),
                           cove::DType(cove::DTypeKind::Float64), static_cast<std::uint64_t>(kBig) * 8};
  const auto grant = raw.call<cove::net::Op::PutGrant>({h, std::nullopt});
  const auto window = raw.ep->map(raw.server, grant.key, true, cove::net::deadline_in(10000));
  if (!window) {
    std::printf("the grant is not in a shared-memory segment\n");
    return 1;
  }
  std::memset(window->data, 0x5a, window->size / 2);
  hang("granted");
}

// Puts version `version` of "granted" (48 MiB) and gets it back.
bool put_and_check(cove::Client& c, std::uint64_t version) {
  c.define("granted", cove::DType(cove::DTypeKind::Float64), 1, V{kBig});
  std::vector<double> v(static_cast<std::size_t>(kBig), 2.25);
  c.put("granted", version, Box::from_shape(V{kBig}), v.data(), v.size() * 8);
  std::vector<double> got(v.size());
  c.get("granted", version, Box::from_shape(V{kBig}), got.data(), got.size() * 8, 0);
  return got == v;
}

int put_big(cove::Client& c) {
  const bool ok = put_and_check(c, 100);
  for (const auto& var : c.list())
    if (var.name == "granted")
      for (const auto& ver : var.versions) c.remove("granted", ver.version);
  std::printf("%s\n", ok ? "put and got 48 MiB" : "48 MiB came back wrong");
  return ok ? 0 : 1;
}

int get_loop(cove::Client& c) {
  if (!put_and_check(c, 2)) return 1;
  std::vector<double> got(static_cast<std::size_t>(kBig));
  for (long i = 0;; ++i) {
    std::fill(got.begin(), got.end(), 0.0);
    c.get("granted", 2, Box::from_shape(V{kBig}), got.data(), got.size() * 8, 0);
    if (got.front() != 2.25 || got.back() != 2.25) return 1;
    if (i == 0) {
      std::printf("getting\n");
      std::fflush(stdout);
    }
  }
}

int garbage(const std::string& server) {
  auto ep = cove::net::make_endpoint("ucx");
  auto peer = ep->connect(server, cove::net::deadline_in(5000));
  cove::net::greet(*ep, peer, cove::net::Role::Client, ep->address(), cove::Client::resolve_target("", 10000).secret,
                   cove::net::deadline_in(5000));
  auto status_of = [&](cove::net::Bytes m) {
    const auto reply = ep->call(peer, std::move(m), cove::net::deadline_in(5000));
    return cove::net::read_header(reply).status;
  };
  int bad = 0;
  bad += status_of({std::byte{0xde}, std::byte{0xad}}) != cove::Code::Protocol;
  cove::net::WireWriter w(static_cast<std::uint16_t>(cove::net::Op::Query), 1);
  w.str("small").u64(1).u8(0).u8(200);  // a box of 200 dimensions
  bad += status_of(std::move(w).finish()) != cove::Code::Protocol;
  cove::net::WireWriter t(static_cast<std::uint16_t>(cove::net::Op::Put), 2);
  t.str("small");  // truncated
  bad += status_of(std::move(t).finish()) != cove::Code::Protocol;
  std::printf("%s\n", bad ? "a malformed message was not rejected" : "malformed messages got error replies");
  return bad ? 1 : 0;
}

// Another user's process, with no secret, asks the server at `address`
// (local transport) for its memory by key, guessing the ids: segment
// descriptors (MapRequest) and bytes (ReadRequest, as when the kernel
// refuses process_vm_readv). Every answer must be PermissionDenied; a
// NotFound or an out-of-window error would say the id exists, and a
// descriptor handed out would map the server's pieces.
int steal(const std::string& address) {
  auto ep = cove::net::make_endpoint("local");
  const auto peer = ep->connect(address, cove::net::deadline_in(5000));
  int served = 0, refused = 0;
  for (std::uint64_t id = 0; id < 64; ++id) {
    for (const bool segment : {true, false}) {
      cove::net::KeyHeader k{};
      k.region = segment ? (id | cove::net::RegionTable::kSegmentBit) : id;
      const auto key = cove::net::make_key(k);
      std::byte sink[1];
      const cove::net::RemoteOp op{0, sink, 0};
      try {
        if (segment)
          ep->map(peer, key, false, cove::net::deadline_in(5000));
        else
          ep->read(peer, key, {&op, 1}, cove::net::deadline_in(5000));
        ++served;
        std::printf("%s %llu: answered\n", segment ? "segment" : "region", static_cast<unsigned long long>(id));
      } catch (const cove::Error& e) {
        if (e.code() == cove::Code::PermissionDenied) {
          ++refused;
          continue;
        }
        ++served;
        std::printf("%s %llu: %s\n", segment ? "segment" : "region", static_cast<unsigned long long>(id), e.what());
      }
    }
  }
  std::printf("%d memory requests refused, %d not\n", refused, served);
  return served == 0 ? 0 : 1;
}

}  // namespace

// replicas = 2: versions a writer was told were stored survive a member's death.
constexpr Index kRepSide = 128;

double rep_value(std::uint64_t version, Index i, Index j) {
  return static_cast<double>(version) * 1e6 + static_cast<double>(i * kRepSide + j);
}

int replicated_writer(cove::Client& c, const std::string& var, const std::string& stop) {
  c.define(var, cove::DType(cove::DTypeKind::Float64), 2, V{kRepSide, kRepSide});
  const Index tiles[] = {32, 64, 128};
  for (std::uint64_t version = 1; !std::filesystem::exists(stop) && version < 100000; ++version) {
    const Index tile = tiles[version % 3];
    try {
      for (Index i = 0; i < kRepSide; i += tile)
        for (Index j = 0; j < kRepSide; j += tile) {
          std::vector<double> d;
          for (Index x = i; x < i + tile; ++x)
            for (Index y = j; y < j + tile; ++y) d.push_back(rep_value(version, x, y));
          c.put(var, version, Box::from_start_count(V{i, j}, V{tile, tile}), d.data(), d.size() * 8);
        }
      std::printf("acked %llu\n", static_cast<unsigned long long>(version));
    } catch (const cove::Error& e) {
      std::printf("failed %llu: %s\n", static_cast<unsigned long long>(version), e.what());
    }
    std::fflush(stdout);
  }
  return 0;
}

int replicated_check(cove::Client& c, const std::string& var, const std::string& out) {
  std::FILE* f = std::fopen(out.c_str(), "r");
  if (!f) {
    std::printf("FAIL: cannot read %s\n", out.c_str());
    return 1;
  }
  std::vector<std::uint64_t> acked;
  char line[512];
  while (std::fgets(line, sizeof line, f)) {
    unsigned long long v = 0;
    if (std::sscanf(line, "acked %llu", &v) == 1) acked.push_back(v);
  }
  std::fclose(f);
  int bad = 0;
  std::vector<double> got(kRepSide * kRepSide), want(got.size());
  for (const std::uint64_t v : acked) {
    for (Index i = 0; i < kRepSide; ++i)
      for (Index j = 0; j < kRepSide; ++j) want[static_cast<std::size_t>(i * kRepSide + j)] = rep_value(v, i, j);
    try {
      c.get(var, v, Box::from_shape(V{kRepSide, kRepSide}), got.data(), got.size() * 8, 2000);
      if (got != want) {
        const auto at = static_cast<std::size_t>(std::mismatch(got.begin(), got.end(), want.begin()).first - got.begin());
        std::printf("FAIL: %s version %llu: wrong bytes from element %zu on\n", var.c_str(),
                    static_cast<unsigned long long>(v), at);
        ++bad;
      }
    } catch (const cove::Error& e) {
      std::printf("FAIL: %s version %llu was acknowledged: %s\n", var.c_str(), static_cast<unsigned long long>(v),
                  e.what());
      ++bad;
    }
  }
  std::printf("%s: %zu acknowledged versions, %d not read back exactly\n", var.c_str(), acked.size(), bad);
  return bad == 0 && !acked.empty() ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc < 2 || argc > 4) {
    std::fprintf(stderr,
                 "usage: %s big-put|seed|check-intact|wait-on-death|garbage|late|hold-local FILE|lease-hang|grant-hang|"
                 "put-big|get-loop|replicated-writer VAR FILE|replicated-check VAR OUT|steal ADDRESS (see the source)\n",
                 argv[0]);
    return 2;
  }
  const std::string role = argv[1];
  try {
    if (role == "garbage") return garbage(cove::Client::resolve("", 10000).front());
    if (role == "steal" && argc == 3) return steal(argv[2]);
    if (role == "lease-hang") return lease_hang();
    if (role == "grant-hang") return grant_hang();
    cove::ConnectOptions o;
    o.timeout_ms = role == "late" ? 30000 : 10000;
    cove::Client c = cove::Client::connect("", o);
    if (role == "big-put") return big_put(c);
    if (role == "seed" || role == "late") return seed(c);
    if (role == "hostile-name") return hostile_name(c);
    if (role == "after-writer") return after_writer(c);
    if (role == "group-seed") return group_seed(c);
    if (role == "group-after" && argc == 3) return group_after(c, std::stoi(argv[2]));
    if (role == "stopped" && argc == 3) return gets_from_stopped_server(c, argv[2]);
    if (role == "check-intact") return check_intact(c);
    if (role == "wait-on-death") return wait_on_death(c);
    if (role == "hold-local" && argc == 3) return hold_local(c, argv[2]);
    if (role == "put-big") return put_big(c);
    if (role == "get-loop") return get_loop(c);
    if (role == "replicated-writer" && argc == 4) return replicated_writer(c, argv[2], argv[3]);
    if (role == "replicated-check" && argc == 4) return replicated_check(c, argv[2], argv[3]);
  } catch (const cove::Error& e) {
    std::printf("%s: %s\n", role.c_str(), e.what());
    return 1;
  }
  return 2;
}
