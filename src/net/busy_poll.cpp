#include "net/busy_poll.hpp"

#include "core/fail.hpp"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace cove::net {

using detail::fail;

namespace {

int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return CPU_COUNT(&set);
}

// The kernel's count of runnable tasks (the fourth field of /proc/loadavg,
// "running/total"), the caller included; -1 when it cannot be read.
int runnable_tasks() {
  std::FILE* f = std::fopen("/proc/loadavg", "re");
  if (!f) return -1;
  double a, b, c;
  int running = -1, total = 0;
  if (std::fscanf(f, "%lf %lf %lf %d/%d", &a, &b, &c, &running, &total) != 5) running = -1;
  std::fclose(f);
  return running;
}

// This thread's window, once adapted (0: the configured one).
thread_local std::chrono::microseconds adapted{0};

}  // namespace

std::chrono::microseconds BusyPoll::thread_window() { return adapted.count() ? adapted : window(); }

void BusyPoll::slept(Clock::duration how_long) {
  const auto base = window();
  if (base.count() == 0) return;  // polling is off
  const auto widest = 4 * base;
  adapted = how_long <= widest ? std::min(widest, 2 * thread_window()) : base;
}

std::chrono::microseconds BusyPoll::parse_window(const char* text) {
  if (!text || !*text) return std::chrono::microseconds(50);
  char* end = nullptr;
  errno = 0;
  const long us = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || us < 0 || us > 1000000)
    fail(Code::InvalidArgument, "COVE_SPIN_US = '", text, "'; expected microseconds from 0 to 1000000");
  return std::chrono::microseconds(us);
}

std::chrono::microseconds BusyPoll::window() {
  static const std::chrono::microseconds w =
      usable_cores() < 2 ? std::chrono::microseconds(0) : parse_window(std::getenv("COVE_SPIN_US"));
  return w;
}

bool BusyPoll::cores_free() {
  static const int cores = usable_cores();
  static std::atomic<std::int64_t> sampled_at{0};  // steady clock, ns; 0: never
  static std::atomic<bool> free{false};
  const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
  constexpr std::int64_t kResample = 1'000'000;  // 1 ms (a read costs a few microseconds)
  std::int64_t last = sampled_at.load(std::memory_order_relaxed);
  if (last == 0 || now - last >= kResample) {
    if (sampled_at.compare_exchange_strong(last, now, std::memory_order_relaxed)) {
      const int running = runnable_tasks();
      free.store(running > 0 && running <= cores, std::memory_order_relaxed);
    }
  }
  return free.load(std::memory_order_relaxed);
}

bool BusyPoll::poll() const {
  if (!open_ || Clock::now() >= until_) return false;
  ::sched_yield();
  return true;
}

BusyPoll BusyPoll::awaiting(Clock::time_point heard) {
  if (Clock::now() - heard > 4 * window()) return BusyPoll(Closed{});
  return BusyPoll();
}

BusyPoll::BusyPoll() {
  const auto w = thread_window();
  if (w.count() == 0 || !cores_free()) return;
  open_ = true;
  until_ = Clock::now() + w;
}

}  // namespace cove::net
