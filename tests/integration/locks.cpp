// The lock manager through a real cove-server (locks.sh): FIFO order,
// exclusion (no reader under a read lock sees a half-written version),
// errors naming the object, and a holder that is killed.
//   cove-test-locks fifo | exclusion | errors | capi   exit 0 when every check passes
//   cove-test-locks hold NAME                       takes a write lock, says "locked", sleeps
//   cove-test-locks wait NAME                       takes a write lock (20 s at most), says "acquired"
// The server is the one COVE_CONNECT names.
#include <cove.h>
#include <cove/cove.hpp>

#include <algorithm>
#include <atomic>
#include <functional>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;

int failures = 0;

void check(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "FAILED: %s\n", what.c_str());
    ++failures;
  }
}

// The error's code and message of fn, or Ok.
std::pair<cove::Code, std::string> error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const cove::Error& e) {
    return {e.code(), e.what()};
  }
  return {cove::Code::Ok, ""};
}

const std::vector<cove::Index> kNone;

int fifo() {
  cove::Client a = cove::Client::connect(), b = cove::Client::connect(), c = cove::Client::connect();
  a.lock_write("f", kNone, kNone, 1000);
  std::atomic<int> order{0};
  int b_at = 0, c_at = 0;
  std::thread tb([&] {
    b.lock_write("f", kNone, kNone, 20000);
    b_at = ++order;
    std::this_thread::sleep_for(300ms);
    b.unlock("f", kNone, kNone);
  });
  std::this_thread::sleep_for(300ms);  // b waits first
  std::thread tc([&] {
    c.lock_read("f", kNone, kNone, 20000);
    c_at = ++order;
    c.unlock("f", kNone, kNone);
  });
  std::this_thread::sleep_for(300ms);
  check(order == 0, "nobody is granted while the writer holds the lock");
  a.unlock("f", kNone, kNone);
  tb.join();
  tc.join();
  check(b_at == 1 && c_at == 2, "the waiting writer goes before the reader that came after it (b " +
                                    std::to_string(b_at) + ", c " + std::to_string(c_at) + ")");
  // Readers share: two at once.
  a.lock_read("f", kNone, kNone, 1000);
  check(error_of([&] { b.lock_read("f", kNone, kNone, 1000); }).first == cove::Code::Ok, "two readers share");
  a.unlock("f", kNone, kNone);
  b.unlock("f", kNone, kNone);
  return failures;
}

int exclusion() {
  constexpr cove::Index n = 1 << 14;
  const std::vector<cove::Index> shape{n};
  cove::Client w = cove::Client::connect();
  w.define("x", cove::DType::parse("i8"), 1, shape);
  std::atomic<bool> done{false};
  std::atomic<int> reads{0};
  std::thread writer([&] {
    std::vector<std::int64_t> half(n / 2);
    for (std::uint64_t v = 1; v <= 40; ++v) {
      w.lock_write("x", kNone, kNone, 20000);
      std::fill(half.begin(), half.end(), static_cast<std::int64_t>(v));
      const std::vector<cove::Index> s0{0}, s1{n / 2}, c{n / 2};
      w.put("x", v, cove::Box::from_start_count(s0, c), half.data(), half.size() * 8);
      std::this_thread::sleep_for(2ms);  // half written: a reader now would see it
      w.put("x", v, cove::Box::from_start_count(s1, c), half.data(), half.size() * 8);
      w.unlock("x", kNone, kNone);
    }
    done = true;
  });
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&] {
      cove::Client c = cove::Client::connect();
      std::vector<std::int64_t> all(n);
      while (!done) {
        c.lock_read("x", kNone, kNone, 20000);
        if (auto v = c.latest("x")) {
          const std::vector<cove::Index> s{0}, k{n};
          const auto e = error_of([&] { c.get("x", *v, cove::Box::from_start_count(s, k), all.data(), all.size() * 8, 0); });
          check(e.first == cove::Code::Ok, "version " + std::to_string(*v) + " complete under a read lock: " + e.second);
          if (e.first == cove::Code::Ok) {
            bool same = std::all_of(all.begin(), all.end(), [&](std::int64_t x) { return x == static_cast<std::int64_t>(*v); });
            check(same, "every element of version " + std::to_string(*v) + " is " + std::to_string(*v));
          }
          ++reads;
        }
        c.unlock("x", kNone, kNone);
      }
    });
  }
  writer.join();
  for (auto& t : readers) t.join();
  check(reads > 0, "the readers read");
  std::printf("exclusion: %d reads checked\n", reads.load());
  return failures;
}

int errors() {
  cove::Client a = cove::Client::connect(), b = cove::Client::connect();
  const std::vector<cove::Index> shape{8, 8};
  a.define("grid", cove::DType::parse("f8"), 2, shape);
  const std::vector<cove::Index> s{6, 0}, c{4, 8};
  auto e = error_of([&] { a.lock_read("grid", s, c, 100); });
  check(e.first == cove::Code::InvalidArgument && e.second.find("'grid'[start=(6,0) count=(4,8)]") != std::string::npos,
        "a region outside the domain names the object: " + e.second);
  e = error_of([&] { a.unlock("grid", kNone, kNone); });
  check(e.first == cove::Code::NotFound && e.second.find("'grid'") != std::string::npos,
        "an unlock without a lock names the object: " + e.second);
  a.lock_write("grid", kNone, kNone, 100);
  e = error_of([&] { b.unlock("grid", kNone, kNone); });
  check(e.first == cove::Code::PermissionDenied && e.second.find("'grid'") != std::string::npos,
        "an unlock by another client names the object: " + e.second);
  e = error_of([&] { b.lock_read("grid", kNone, kNone, 200); });
  check(e.first == cove::Code::Timeout && e.second.find("'grid'") != std::string::npos,
        "a wait that times out names the object: " + e.second);
  e = error_of([&] { b.lock_read("grid", kNone, kNone, 0); });
  check(e.first == cove::Code::Timeout, "timeout 0 fails at once while held: " + e.second);
  a.unlock("grid", kNone, kNone);
  check(error_of([&] { b.lock_read("grid", kNone, kNone, 0); }).first == cove::Code::Ok, "free again after unlock");
  return failures;
}

// The same through the C API: a write lock on a region, a second C client
// timing out on an overlapping one, errors as status codes.
int capi() {
  cove_client_t *a = nullptr, *b = nullptr;
  check(cove_connect(nullptr, 5000, &a) == COVE_OK && cove_connect(nullptr, 5000, &b) == COVE_OK, "C clients connect");
  const std::int64_t s0[2] = {0, 0}, c0[2] = {4, 4}, s1[2] = {2, 2}, c1[2] = {4, 4}, s2[2] = {4, 4};
  check(cove_lock_write(a, "c", 2, s0, c0, 1000) == COVE_OK, "C write lock on a region");
  check(cove_lock_read(b, "c", 2, s1, c1, 100) == COVE_TIMEOUT, "an overlapping C read lock times out");
  check(std::strstr(cove_last_error(), "'c'[start=(2,2) count=(4,4)]") != nullptr,
        std::string("the timeout names the region: ") + cove_last_error());
  check(cove_lock_read(b, "c", 2, s2, c0, 100) == COVE_OK, "a disjoint C read lock is granted");
  check(cove_unlock(b, "c", 2, s0, c0) == COVE_PERMISSION_DENIED, "a C unlock of another's lock is refused");
  check(cove_unlock(a, "c", 2, s0, c0) == COVE_OK && cove_unlock(b, "c", 2, s2, c0) == COVE_OK, "C unlocks");
  check(cove_unlock(a, "c", 0, nullptr, nullptr) == COVE_NOT_FOUND, "a C unlock without a lock is NotFound");
  check(cove_lock_write(a, "c", 0, nullptr, nullptr, 0) == COVE_OK && cove_unlock(a, "c", 0, nullptr, nullptr) == COVE_OK,
        "a C lock on the whole object");
  cove_disconnect(a);
  cove_disconnect(b);
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  try {
    if (mode == "fifo") return fifo();
    if (mode == "exclusion") return exclusion();
    if (mode == "errors") return errors();
    if (mode == "capi") return capi();
    if ((mode == "hold" || mode == "wait") && argc > 2) {
      cove::Client c = cove::Client::connect();
      c.lock_write(argv[2], kNone, kNone, 20000);
      std::printf(mode == "hold" ? "locked\n" : "acquired\n");
      std::fflush(stdout);
      if (mode == "hold") std::this_thread::sleep_for(std::chrono::hours(1));
      return 0;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", mode.c_str(), e.what());
    return 1;
  }
  std::fprintf(stderr, "usage: %s fifo|exclusion|errors|capi|hold NAME|wait NAME\n", argv[0]);
  return 2;
}
