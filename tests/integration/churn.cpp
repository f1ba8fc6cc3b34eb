// Churn: gets while the data they read is replaced, evicted and deleted
// under them, against a real cove-server (COVE_CONNECT), every byte checked.
//
//   cove-test-churn staged SECONDS   a writer puts new versions as fast as it
//                                    can (the server keeps one: --max-versions 1),
//                                    a deleter deletes the newest, two readers get
//                                    the latest, older versions and sub-regions in
//                                    the other layout;
//   cove-test-churn local SECONDS    the writer put_locals one buffer, releases it
//                                    and refills it for the next version, while two
//                                    readers get the latest.
//
// Every get that succeeds must hold exactly the version it names: element
// (i, j) of version v is v * 2^32 + i * kCols + j. A get may fail with
// NotFound or Timeout (the version went, or none is there yet), nothing
// else. The processes are forked before any of them connects; each prints
// its counts, and the exit status is 1 when any get returned a wrong byte
// or failed otherwise, or when too few gets succeeded to have tested.
#include <cove/cove.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
constexpr cove::Index kRows = 256, kCols = 512;  // 1 MiB of uint64
const char* kVar = "churn";

cove::Box box(cove::Index r0, cove::Index c0, cove::Index r1, cove::Index c1) {
  const cove::Index lo[] = {r0, c0}, hi[] = {r1, c1};
  return cove::Box::from_bounds(lo, hi);
}

std::uint64_t expected(std::uint64_t version, cove::Index i, cove::Index j) {
  return (version << 32) + static_cast<std::uint64_t>(i * kCols + j);
}

void fill(std::vector<std::uint64_t>& buf, std::uint64_t version, cove::Index row0, cove::Index rows) {
  for (cove::Index i = 0; i < rows; ++i)
    for (cove::Index j = 0; j < kCols; ++j) buf[static_cast<std::size_t>(i * kCols + j)] = expected(version, row0 + i, j);
}

struct Counts {
  long ok = 0, missing = 0, wrong = 0, failed = 0;
};

cove::Client connect_defined() {
  cove::Client c = cove::Client::connect();
  const std::vector<cove::Index> shape{kRows, kCols};
  c.define(kVar, cove::DType(cove::DTypeKind::UInt64), 2, shape);
  return c;
}

// Checks `buf`, holding `region` of `version` in `layout`; counts it.
void check(const std::vector<std::uint64_t>& buf, const cove::Box& region, const cove::Layout& layout,
           std::uint64_t version, Counts& n, const char* what) {
  const cove::Index rows = region.hi[0] - region.lo[0], cols = region.hi[1] - region.lo[1];
  const bool fortran = layout == cove::Layout::f();
  long bad = 0;
  for (cove::Index i = 0; i < rows; ++i)
    for (cove::Index j = 0; j < cols; ++j) {
      const std::size_t at = static_cast<std::size_t>(fortran ? j * rows + i : i * cols + j);
      if (buf[at] != expected(version, region.lo[0] + i, region.lo[1] + j)) ++bad;
    }
  if (bad == 0) {
    ++n.ok;
    return;
  }
  if (n.wrong < 5)
    std::printf("WRONG: %s of version %llu: %ld of %lld words wrong\n", what, static_cast<unsigned long long>(version),
                bad, static_cast<long long>(rows * cols));
  ++n.wrong;
}

template <typename Get>
void attempt(Counts& n, Get&& get) {
  try {
    get();
  } catch (const cove::Error& e) {
    if (e.code() == cove::Code::NotFound || e.code() == cove::Code::Timeout) {
      ++n.missing;
    } else {
      if (n.failed < 5) std::printf("FAILED: %s\n", e.what());
      ++n.failed;
    }
  }
}

int report(const char* who, const Counts& n) {
  std::printf("%s: %ld correct, %ld not found, %ld wrong, %ld other failures\n", who, n.ok, n.missing, n.wrong,
              n.failed);
  if (n.ok < 10) std::printf("%s: too few gets succeeded to have tested anything\n", who);
  std::fflush(stdout);
  return n.wrong || n.failed || n.ok < 10 ? 1 : 0;
}

// ---- the processes ----

int staged_writer(Clock::time_point end) {
  cove::Client c = connect_defined();
  const cove::Index half = kRows / 2;
  std::vector<std::uint64_t> top(static_cast<std::size_t>(half * kCols)), bottom(top.size());
  std::uint64_t v = 0;
  while (Clock::now() < end) {
    ++v;
    fill(top, v, 0, half);
    fill(bottom, v, half, half);
    c.put(kVar, v, box(0, 0, half, kCols), top.data(), top.size() * 8);
    c.put(kVar, v, box(half, 0, kRows, kCols), bottom.data(), bottom.size() * 8);
  }
  std::printf("writer: %llu versions\n", static_cast<unsigned long long>(v));
  return 0;
}

int deleter(Clock::time_point end) {
  cove::Client c = connect_defined();
  long deleted = 0;
  while (Clock::now() < end) {
    try {
      if (auto v = c.latest(kVar)) {
        c.remove(kVar, *v);
        ++deleted;
      }
    } catch (const cove::Error& e) {
      if (e.code() != cove::Code::NotFound) throw;
    }
    ::usleep(2000);
  }
  std::printf("deleter: %ld versions deleted\n", deleted);
  return 0;
}

int staged_reader(Clock::time_point end, int which) {
  cove::Client c = connect_defined();
  Counts n;
  const cove::Box all = box(0, 0, kRows, kCols);
  // A block across both pieces, read in the other layout (a reorganizing copy).
  const cove::Box block = box(kRows / 4, 100, 3 * kRows / 4, 300);
  std::vector<std::uint64_t> buf(static_cast<std::size_t>(kRows * kCols));
  std::uint64_t last = 1;
  for (long i = 0; Clock::now() < end; ++i) {
    switch ((i + which) % 3) {
      case 0:
        attempt(n, [&] {
          last = c.get_latest(kVar, all, buf.data(), buf.size() * 8, 100);
          check(buf, all, cove::Layout::c(), last, n, "get_latest");
        });
        break;
      case 1:  // an older version: evicted by now, or still there
        attempt(n, [&] {
          const std::uint64_t v = last > 1 ? last - 1 : 1;
          c.get(kVar, v, all, buf.data(), buf.size() * 8, 0);
          check(buf, all, cove::Layout::c(), v, n, "get of an older version");
        });
        break;
      default:
        attempt(n, [&] {
          const std::size_t bytes = static_cast<std::size_t>(block.volume()) * 8;
          last = c.get_latest(kVar, block, buf.data(), bytes, 100, cove::Layout::f());
          check(buf, block, cove::Layout::f(), last, n, "get_latest of a block in F order");
        });
    }
  }
  return report(which == 0 ? "reader 0" : "reader 1", n);
}

int local_writer(Clock::time_point end) {
  cove::Client c = connect_defined();
  const cove::Box all = box(0, 0, kRows, kCols);
  std::vector<std::uint64_t> buf(static_cast<std::size_t>(kRows * kCols));
  std::uint64_t v = 0;
  while (Clock::now() < end) {
    if (v) c.release(kVar, v, all);  // returns once no reader copies it: then it is refilled
    ++v;
    fill(buf, v, 0, kRows);
    c.put_local(kVar, v, all, buf.data(), buf.size() * 8);
    ::usleep(200);  // readers find it there now and then
  }
  c.release(kVar, v, all);
  std::printf("writer: %llu versions\n", static_cast<unsigned long long>(v));
  return 0;
}

int local_reader(Clock::time_point end, int which) {
  cove::Client c = connect_defined();
  Counts n;
  const cove::Box all = box(0, 0, kRows, kCols);
  std::vector<std::uint64_t> buf(static_cast<std::size_t>(kRows * kCols));
  while (Clock::now() < end)
    attempt(n, [&] {
      const std::uint64_t v = c.get_latest(kVar, all, buf.data(), buf.size() * 8, 100);
      check(buf, all, cove::Layout::c(), v, n, "get_latest");
    });
  return report(which == 0 ? "reader 0" : "reader 1", n);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || (std::strcmp(argv[1], "staged") != 0 && std::strcmp(argv[1], "local") != 0)) {
    std::fprintf(stderr, "usage: %s staged|local SECONDS\n", argv[0]);
    return 2;
  }
  const bool staged = std::strcmp(argv[1], "staged") == 0;
  const double seconds = std::atof(argv[2]);
  const auto end = Clock::now() + std::chrono::milliseconds(static_cast<long>(seconds * 1000));
  std::vector<std::function<int()>> roles;
  if (staged) {
    roles = {[&] { return staged_writer(end); }, [&] { return deleter(end); },
             [&] { return staged_reader(end, 0); }, [&] { return staged_reader(end, 1); }};
  } else {
    roles = {[&] { return local_writer(end); }, [&] { return local_reader(end, 0); },
             [&] { return local_reader(end, 1); }};
  }
  std::vector<pid_t> children;
  for (auto& role : roles) {
    const pid_t pid = ::fork();
    if (pid < 0) {
      std::perror("fork");
      return 1;
    }
    if (pid == 0) {
      int status = 1;
      try {
        status = role();
      } catch (const std::exception& e) {
        std::printf("process failed: %s\n", e.what());
      }
      std::fflush(stdout);
      std::_Exit(status);
    }
    children.push_back(pid);
  }
  int status = 0;
  for (const pid_t pid : children) {
    int s = 0;
    ::waitpid(pid, &s, 0);
    if (!WIFEXITED(s) || WEXITSTATUS(s) != 0) status = 1;
  }
  return status;
}
