#include "h5vol/timing.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

namespace cove::h5vol {
namespace {

struct Totals {
  long long ns = 0;
  long long calls = 0;
};

bool enabled() {
  static const bool on = [] {
    const char* v = std::getenv("COVE_H5VOL_TIMING");
    return v && *v && std::string(v) != "0";
  }();
  return on;
}

long long now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::mutex mutex;
std::map<std::string, Totals>& totals() {
  static auto* t = new std::map<std::string, Totals>;  // outlives the atexit handler that prints it
  return *t;
}

}  // namespace

PhaseTimer::PhaseTimer(const char* phase) : phase_(phase) {
  if (enabled()) start_ns_ = now_ns();
}

PhaseTimer::~PhaseTimer() {
  if (!enabled()) return;
  const long long ns = now_ns() - start_ns_;
  std::lock_guard lock(mutex);
  auto& t = totals()[phase_];
  t.ns += ns;
  ++t.calls;
}

void print_timing() {
  if (!enabled()) return;
  std::lock_guard lock(mutex);
  for (const auto& [phase, t] : totals())
    std::fprintf(stderr, "cove h5vol timing pid %d: %-16s %8lld calls %10.3f ms %9.1f us/call\n", static_cast<int>(getpid()),
                 phase.c_str(), t.calls, static_cast<double>(t.ns) / 1e6,
                 t.calls ? static_cast<double>(t.ns) / 1e3 / static_cast<double>(t.calls) : 0.0);
  totals().clear();
}

}  // namespace cove::h5vol
