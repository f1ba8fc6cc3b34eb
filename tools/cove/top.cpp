// `cove top`: the service's figures, redrawn once a second (or every
// --interval), one row per server. Rates are over the last interval.
#include "commands.hpp"

#include <cove/error.hpp>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <unistd.h>

namespace cove::tool {
namespace {

using Clock = std::chrono::steady_clock;
using Sample = std::vector<std::pair<std::string, ServerStats>>;

std::string memory_text(const ServerStats& s) {
  const double held = static_cast<double>(s.owned_bytes + s.replica_bytes + s.metadata_bytes);
  if (!s.memory_budget) return human_bytes(held) + " / unlimited";
  return fmt::format("{} / {} ({:.0f}%)", human_bytes(held), human_bytes(static_cast<double>(s.memory_budget)),
                     100.0 * held / static_cast<double>(s.memory_budget));
}

void draw(const Sample& now, const std::map<std::string, ServerStats>& before, double seconds, bool clear,
          const std::vector<PlacementDecision>& recent) {
  if (clear) fmt::print("\x1b[H\x1b[2J");
  const auto uptime = std::chrono::seconds(now.empty() ? 0 : now.front().second.uptime_ms / 1000);
  fmt::print("cove top: {} server{}, up {:%H:%M:%S}, rates over {:.1f} s\n", now.size(), now.size() == 1 ? "" : "s",
             uptime, seconds);
  fmt::print("{:<6} {:>30} {:>6} {:>8} {:>8} {:>9} {:>11} {:>11} {:>7} {:>7} {:>8} {:>8}\n", "server", "memory / budget",
             "vars", "versions", "pieces", "req/s", "in/s", "out/s", "parked", "clients", "replicas", "workers");
  int i = 0;
  for (const auto& [address, s] : now) {
    if (!s.reachable) {
      fmt::print("{:<6} unreachable\n", i++);
      continue;
    }
    const auto it = before.find(address);
    const ServerStats& b = it != before.end() ? it->second : s;
    auto rate = [&](std::uint64_t later, std::uint64_t earlier) {
      return seconds > 0 && later >= earlier ? static_cast<double>(later - earlier) / seconds : 0.0;
    };
    fmt::print("{:<6} {:>30} {:>6} {:>8} {:>8} {:>9.1f} {:>9}/s {:>9}/s {:>7} {:>7} {:>8} {:>8}\n", i++, memory_text(s),
               s.variables, s.versions, s.pieces, rate(s.requests, b.requests),
               human_bytes(rate(s.bytes_in, b.bytes_in)), human_bytes(rate(s.bytes_out, b.bytes_out)), s.parked_gets,
               s.clients, s.replicas, fmt::format("{}/{}", s.workers, s.worker_slots));
  }
  if (!recent.empty()) {
    fmt::print("placements (newest {}, oldest first):\n", recent.size());
    for (const auto& d : recent) fmt::print("  {}\n", placement_line(d));
  }
  std::fflush(stdout);
}

}  // namespace

int top(Client& client, double interval_s, int count, int placements) {
  const bool clear = ::isatty(STDOUT_FILENO) != 0;
  const auto interval = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(interval_s));
  std::map<std::string, ServerStats> before;
  for (const auto& [address, s] : client.stat_each()) before[address] = s;
  auto then = Clock::now();
  for (int frame = 0; count == 0 || frame < count; ++frame) {
    std::this_thread::sleep_until(then + interval);
    const Sample now = client.stat_each();
    // Only server 0 decides; a group without placements is not asked.
    std::vector<PlacementDecision> recent;
    if (placements > 0 && !now.empty() && now.front().second.reachable && now.front().second.placements > 0) try {
        recent = client.placements(static_cast<std::size_t>(placements));
      } catch (const Error&) {
      }
    const auto at = Clock::now();
    draw(now, before, std::chrono::duration<double>(at - then).count(), clear, recent);
    before.clear();
    for (const auto& [address, s] : now) before[address] = s;
    then = at;
  }
  return 0;
}

}  // namespace cove::tool
