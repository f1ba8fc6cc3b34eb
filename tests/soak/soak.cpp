// The soak's clients (tests/soak/soak.sh): N processes doing mixed put,
// put_local, get, delete, metadata, subscribe and list operations against a
// server group (COVE_CONNECT) for a set time, every get checked.
//
//   cove-soak CLIENTS SECONDS
//
// Client i owns variables "s.i" (256 x 256 uint64, put whole or in four
// quarters; the server keeps 4 versions) and "l.i" (64 x 64, put_local) and
// the metadata name "m.i". After every acknowledged put it reads the version
// back, and it reads older versions it still expects to be there: a put that
// was acknowledged and not deleted or evicted must read back exactly (no
// lost put). It also reads other clients' newest versions (those may be
// gone: NotFound, but never wrong bytes), and lists now and then. Element
// (r, c) of version v of client i's variables is i << 48 | v << 20 | r * 256 + c.
//
// Each client prints one line of counts; the exit status is 1 when any get
// returned a wrong byte, an acknowledged put was lost, or an operation
// failed unexpectedly.
#include <cove/cove.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <random>
#include <string>
#include <vector>

namespace {

using cove::Box;
using cove::Index;
using V = std::vector<Index>;
using Clock = std::chrono::steady_clock;

constexpr Index kSide = 256, kLocalSide = 64;
constexpr std::size_t kKept = 4;  // the server's max_versions (soak.sh)

std::uint64_t value(int client, std::uint64_t version, Index r, Index c, Index side) {
  return (static_cast<std::uint64_t>(client) << 48) | (version << 20) | static_cast<std::uint64_t>(r * side + c);
}

std::vector<std::uint64_t> values(int client, std::uint64_t version, const Box& b, Index side) {
  std::vector<std::uint64_t> out;
  out.reserve(static_cast<std::size_t>(b.volume()));
  for (Index r = b.lo[0]; r < b.hi[0]; ++r)
    for (Index c = b.lo[1]; c < b.hi[1]; ++c) out.push_back(value(client, version, r, c, side));
  return out;
}

std::vector<std::byte> meta_blob(int client, std::uint64_t version) {
  std::vector<std::byte> b(256);
  for (std::size_t k = 0; k < b.size(); ++k) b[k] = static_cast<std::byte>((client * 31 + version * 7 + k) & 0xff);
  return b;
}

struct Counts {
  long puts = 0, put_locals = 0, gets = 0, cross_gets = 0, missing = 0, deletes = 0, metas = 0, lists = 0,
       notices = 0, wrong = 0, lost = 0, failed = 0;
};

int run_client(int me, int clients, double seconds) {
  Counts n;
  std::mt19937_64 rng(static_cast<std::uint64_t>(me) * 7919 + 1);
  const auto report = [&](const char* what, const cove::Error& e) {
    ++n.failed;
    std::printf("client %d: %s failed: %s\n", me, what, e.what());
  };
  try {
    cove::Client c = cove::Client::connect();
    const Box all = Box::from_shape(V{kSide, kSide});
    const Box local_all = Box::from_shape(V{kLocalSide, kLocalSide});
    const std::string var = "s." + std::to_string(me), local = "l." + std::to_string(me),
                      meta = "m." + std::to_string(me);
    c.define(var, cove::DType(cove::DTypeKind::UInt64), 2, V{kSide, kSide});
    c.define(local, cove::DType(cove::DTypeKind::UInt64), 2, V{kLocalSide, kLocalSide});
    std::atomic<long> notices{0};
    std::atomic<Clock::rep> last_notice{Clock::now().time_since_epoch().count()};
    cove::Subscription sub = c.subscribe(var, all, [&](const std::string&, std::uint64_t) {
      ++notices;
      last_notice = Clock::now().time_since_epoch().count();
    });
    std::deque<std::uint64_t> kept;  // versions of `var` that must be there, oldest first
    std::vector<std::uint64_t> got(static_cast<std::size_t>(all.volume()));
    const auto check = [&](std::uint64_t version, const Box& b, const std::vector<std::uint64_t>& data, int owner,
                           Index side) {
      if (data != values(owner, version, b, side)) {
        ++n.wrong;
        std::printf("client %d: WRONG BYTES in version %llu of client %d's %s\n", me,
                    static_cast<unsigned long long>(version), owner, b.to_string().c_str());
      }
    };
    const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
    for (std::uint64_t v = 1; Clock::now() < deadline; ++v) {
      // A put, whole or in quarters, read back at once.
      try {
        if (rng() % 2) {
          const auto d = values(me, v, all, kSide);
          c.put(var, v, all, d.data(), d.size() * 8);
        } else {
          for (Index qr = 0; qr < 2; ++qr)
            for (Index qc = 0; qc < 2; ++qc) {
              const Box q = Box::from_start_count(V{qr * kSide / 2, qc * kSide / 2}, V{kSide / 2, kSide / 2});
              const auto d = values(me, v, q, kSide);
              c.put(var, v, q, d.data(), d.size() * 8);
            }
        }
        ++n.puts;
        kept.push_back(v);
        while (kept.size() > kKept) kept.pop_front();  // evicted by the server
      } catch (const cove::Error& e) {
        report("put", e);
        continue;
      }
      // Every version still expected reads back exactly (one of them each round).
      const std::uint64_t want = kept[rng() % kept.size()];
      try {
        c.get(var, want, all, got.data(), got.size() * 8, 0);
        check(want, all, got, me, kSide);
        ++n.gets;
      } catch (const cove::Error& e) {
        if (e.code() == cove::Code::NotFound) {
          ++n.lost;
          std::printf("client %d: LOST acknowledged version %llu: %s\n", me, static_cast<unsigned long long>(want),
                      e.what());
        } else {
          report("get", e);
        }
      }
      // Now and then, the oldest kept version is deleted.
      if (rng() % 8 == 0 && kept.size() > 1) {
        try {
          c.remove(var, kept.front());
          kept.pop_front();
          ++n.deletes;
        } catch (const cove::Error& e) {
          report("delete", e);
        }
      }
      // put_local of a buffer, read back, released.
      if (rng() % 4 == 0) {
        try {
          const auto d = values(me, v, local_all, kLocalSide);
          c.put_local(local, v, local_all, d.data(), d.size() * 8);
          std::vector<std::uint64_t> back(d.size());
          c.get(local, v, local_all, back.data(), back.size() * 8, 0);
          check(v, local_all, back, me, kLocalSide);
          c.release(local, v, local_all);
          ++n.put_locals;
        } catch (const cove::Error& e) {
          report("put_local", e);
        }
      }
      // Metadata, put and read back.
      try {
        c.put_meta(meta, v, meta_blob(me, v));
        const cove::Metadata m = c.get_meta_latest(meta, 0);
        if (m.version != v || m.data != meta_blob(me, v)) {
          ++n.wrong;
          std::printf("client %d: WRONG METADATA version %llu\n", me, static_cast<unsigned long long>(m.version));
        }
        ++n.metas;
      } catch (const cove::Error& e) {
        report("metadata", e);
      }
      // Another client's newest version: may be gone, never wrong.
      if (clients > 1) {
        const int other = static_cast<int>((me + 1 + rng() % static_cast<std::uint64_t>(clients - 1)) % clients);
        const Box part = Box::from_start_count(V{static_cast<Index>(rng() % 128), static_cast<Index>(rng() % 128)},
                                               V{64, 64});
        std::vector<std::uint64_t> p(static_cast<std::size_t>(part.volume()));
        try {
          const std::uint64_t ov = c.get_latest("s." + std::to_string(other), part, p.data(), p.size() * 8, 0);
          check(ov, part, p, other, kSide);
          ++n.cross_gets;
        } catch (const cove::Error& e) {
          if (e.code() == cove::Code::NotFound) ++n.missing;
          else report("get of another client's", e);
        }
      }
      if (rng() % 16 == 0) {
        try {
          c.list();
          ++n.lists;
        } catch (const cove::Error& e) {
          report("list", e);
        }
      }
    }
    // A subscription that ended early (it logs why) stops its notices
    // while puts go on.
    const Clock::time_point last{Clock::duration(last_notice.load())};
    if (Clock::now() - last > std::chrono::seconds(10)) {
      ++n.failed;
      std::printf("client %d: FAILED: no notice for the last %.0f s: the subscription ended\n", me,
                  std::chrono::duration<double>(Clock::now() - last).count());
    }
    sub.cancel();
    n.notices = notices;
  } catch (const cove::Error& e) {
    report("the client", e);
  }
  std::printf("client %d: %ld puts, %ld put_locals, %ld gets, %ld other clients' gets (%ld gone), %ld deletes, "
              "%ld metadata, %ld lists, %ld notices; %ld wrong, %ld lost, %ld failed\n",
              me, n.puts, n.put_locals, n.gets, n.cross_gets, n.missing, n.deletes, n.metas, n.lists, n.notices,
              n.wrong, n.lost, n.failed);
  return n.wrong || n.lost || n.failed || n.puts == 0 || n.notices == 0 ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s CLIENTS SECONDS\n", argv[0]);
    return 2;
  }
  const int clients = std::atoi(argv[1]);
  const double seconds = std::atof(argv[2]);
  std::fflush(stdout);
  std::vector<pid_t> pids;
  for (int i = 0; i < clients; ++i) {
    const pid_t pid = ::fork();
    if (pid < 0) {
      std::perror("fork");
      return 1;
    }
    if (pid == 0) {
      const int status = run_client(i, clients, seconds);
      std::fflush(stdout);
      ::_exit(status);
    }
    pids.push_back(pid);
  }
  int failed = 0;
  for (const pid_t pid : pids) {
    int s = 0;
    ::waitpid(pid, &s, 0);
    if (!WIFEXITED(s) || WEXITSTATUS(s) != 0) ++failed;
  }
  std::printf("%s: %d of %d clients saw a problem\n", failed ? "FAIL" : "ok", failed, clients);
  return failed ? 1 : 0;
}
