// `cove ls` and `cove stat`: what a running service holds, as a table for
// people or as JSON for scripts (the same figures).
#include "commands.hpp"

#include <cove/error.hpp>
#include <cove/reorg.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <string>

namespace cove::tool {

std::string human_bytes(double bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (bytes >= 1024 && u < 5) {
    bytes /= 1024;
    ++u;
  }
  return u ? fmt::format("{:.1f} {}", bytes, units[u]) : fmt::format("{:.0f} {}", bytes, units[u]);
}

namespace {

using nlohmann::json;

std::string layouts_text(const std::vector<Layout>& layouts) {
  std::string out;
  for (const auto& l : layouts) {
    if (!out.empty()) out += ',';
    out += l.to_string();
  }
  return out;
}

json stats_json(const std::string& address, const ServerStats& s) {
  return {{"address", address},
          {"variables", s.variables},
          {"versions", s.versions},
          {"pieces", s.pieces},
          {"owned_bytes", s.owned_bytes},
          {"local_bytes", s.local_bytes},
          {"memory_budget", s.memory_budget},
          {"requests", s.requests},
          {"bytes_in", s.bytes_in},
          {"bytes_out", s.bytes_out},
          {"replicas", s.replicas},
          {"replica_bytes", s.replica_bytes},
          {"reorganizations", s.reorganizations},
          {"replica_answers", s.replica_answers},
          {"patterns", s.patterns},
          {"metadata", s.metadata},
          {"metadata_bytes", s.metadata_bytes},
          {"lost_pieces", s.lost_pieces},
          {"replication", s.replication},
          {"copies", s.copies},
          {"copy_bytes", s.copy_bytes},
          {"single_copies", s.single_copies},
          {"moved_pieces", s.moved_pieces},
          {"lost_members", s.lost_members},
          {"partly_covered", s.partly_covered},
          {"restored_copies", s.restored_copies},
          {"restored_backups", s.restored_backups},
          {"partly_covered_bytes", s.partly_covered_bytes},
          {"reachable", s.reachable},
          {"parked_gets", s.parked_gets},
          {"clients", s.clients},
          {"worker_slots", s.worker_slots},
          {"workers", s.workers},
          {"placements", s.placements},
          {"placement_fallbacks", s.placement_fallbacks},
          {"task_reports", s.task_reports},
          {"uptime_ms", s.uptime_ms},
          {"reorg", reorg_name(s.reorg)},
          {"layouts", layouts_text(s.layouts)}};
}

// A fill value's bytes as hex, in memory order.
std::string hex_of(const std::vector<std::byte>& bytes) {
  std::string out;
  for (const std::byte b : bytes) out += fmt::format("{:02x}", static_cast<unsigned>(b));
  return out;
}

json ls_json(const std::vector<VariableInfo>& vars) {
  json out = json::array();
  for (const auto& v : vars) {
    json versions = json::array();
    for (const auto& ver : v.versions) {
      json pieces = json::array();
      for (const auto& p : ver.pieces) {
        json replicas = json::array();
        for (const auto& r : p.replicas)
          replicas.push_back(
              {{"box", r.box.to_string()}, {"layout", r.layout.to_string()}, {"bytes", r.bytes}, {"ready", r.ready}});
        pieces.push_back({{"box", p.box.to_string()},
                          {"bytes", p.bytes},
                          {"holder", p.holder},
                          {"on_server", p.on_server},
                          {"copy", p.copy},
                          {"replicas", replicas}});
      }
      versions.push_back({{"version", ver.version}, {"sealed", ver.sealed}, {"pieces", pieces}});
    }
    out.push_back({{"name", v.name},
                   {"dtype", v.dtype.name()},
                   {"ndim", v.ndim},
                   {"shape", v.shape ? json(v.shape->to_string()) : json(nullptr)},
                   {"reorg", v.reorg ? json(reorg_name(*v.reorg)) : json(nullptr)},
                   {"layouts", layouts_text(v.layouts)},
                   {"fill", v.fill.empty() ? json(nullptr) : json(hex_of(v.fill))},
                   {"versions", versions}});
  }
  return out;
}

// JSON strings are escaped by the library; bytes that are not UTF-8 become U+FFFD.
std::string dump(const json& j) { return j.dump(2, ' ', false, json::error_handler_t::replace); }

}  // namespace

int ls(Client& c, bool as_json) {
  const auto vars = c.list();
  if (as_json) {
    fmt::print("{}\n", dump(ls_json(vars)));
    return 0;
  }
  const auto servers = c.servers();
  auto name_of = [&](const std::string& holder) {
    for (std::size_t i = 0; i < servers.size(); ++i)
      if (servers[i] == holder) return fmt::format("server {}", i);
    return fmt::format("writer {}...", printable(holder.substr(0, 16)));
  };
  if (vars.empty()) fmt::print("(no variables)\n");
  for (const auto& v : vars) {
    std::string reorg = v.reorg ? reorg_name(*v.reorg) : "(server's)";
    if (!v.layouts.empty()) reorg += " layouts " + layouts_text(v.layouts);
    fmt::print("{}  {}  ndim {}  shape {}  reorg {}{}\n", printable(v.name), v.dtype.name(), v.ndim,
               v.shape ? v.shape->to_string() : "(none)", reorg, v.fill.empty() ? "" : "  fill 0x" + hex_of(v.fill));
    for (const auto& ver : v.versions) {
      struct Held {
        std::size_t pieces = 0, replicas = 0, copied = 0;
        std::uint64_t bytes = 0, replica_bytes = 0;
      };
      std::map<std::string, Held> by_holder;
      for (const auto& p : ver.pieces) {
        auto& h = by_holder[name_of(p.holder)];
        h.pieces++;
        h.bytes += p.bytes;
        if (!p.copy.empty()) h.copied++;
        for (const auto& r : p.replicas) {
          h.replicas++;
          h.replica_bytes += r.bytes;
        }
      }
      fmt::print("  version {}: {} pieces{}\n", ver.version, ver.pieces.size(), ver.sealed ? "  (sealed)" : "");
      for (const auto& [holder, h] : by_holder) {
        fmt::print("    {:<28} {:>4} pieces  {}", holder, h.pieces, human_bytes(h.bytes));
        if (h.replicas) fmt::print("  + {} replicas  {}", h.replicas, human_bytes(h.replica_bytes));
        if (h.copied) fmt::print("  ({} with a second copy)", h.copied);
        fmt::print("\n");
      }
    }
  }
  return 0;
}

namespace {

struct Replication {
  std::string var;
  std::uint64_t version;
  std::size_t pieces = 0, copied = 0;  // pieces held by servers; those with a second copy
};

// replicas = 2: how many of each version's pieces have their second copy.
std::vector<Replication> replication_of(Client& c) {
  std::vector<Replication> out;
  for (const auto& v : c.list())
    for (const auto& ver : v.versions) {
      Replication r{v.name, ver.version};
      for (const auto& p : ver.pieces)
        if (p.on_server) {
          ++r.pieces;
          if (!p.copy.empty()) ++r.copied;
        }
      out.push_back(std::move(r));
    }
  return out;
}

}  // namespace

std::string placement_line(const PlacementDecision& d) {
  std::string policy = d.policy;
  if (d.applied != d.policy) policy += "->" + d.applied;
  return fmt::format("#{} {} {} {} policy {} server {} slot {} eet {:.6g} dat {:.6g} eat {:.6g} ect {:.6g} "
                     "min_ect {:.6g} group {} affinity {} candidates {}",
                     d.sequence, printable(d.var), d.box.to_string(), human_bytes(d.bytes), policy, d.server, d.slot,
                     d.eet, d.dat, d.eat, d.ect, d.min_ect, d.group, d.affinity, d.candidates);
}

namespace {

json placement_json(const PlacementDecision& d) {
  return {{"sequence", d.sequence}, {"variable", d.var},     {"box", d.box.to_string()}, {"bytes", d.bytes},
          {"policy", d.policy},     {"applied", d.applied},  {"server", d.server},       {"slot", d.slot},
          {"eet", d.eet},           {"dat", d.dat},          {"eat", d.eat},             {"ect", d.ect},
          {"min_ect", d.min_ect},   {"group", d.group},      {"affinity", d.affinity},   {"candidates", d.candidates}};
}

}  // namespace

int stat(Client& c, bool as_json, int placements) {
  const auto all = c.stat_each();
  // Server 0 keeps the decisions; when it is gone, the rest is still shown.
  std::vector<PlacementDecision> recent;
  std::string recent_error;
  if (placements > 0) try {
      recent = c.placements(static_cast<std::size_t>(placements));
    } catch (const Error& e) {
      recent_error = e.what();
    }
  std::uint64_t replication = 1;
  for (const auto& [address, s] : all) replication = std::max(replication, s.reachable ? s.replication : 1);
  const auto versions = replication > 1 ? replication_of(c) : std::vector<Replication>{};
  if (as_json) {
    json servers = json::array();
    for (const auto& [address, s] : all) servers.push_back(stats_json(address, s));
    json copies = json::array();
    for (const auto& r : versions)
      copies.push_back({{"variable", r.var}, {"version", r.version}, {"pieces", r.pieces}, {"with_copy", r.copied}});
    json out{{"servers", servers}, {"replication", copies}};
    if (placements > 0) {
      json decisions = json::array();
      for (const auto& d : recent) decisions.push_back(placement_json(d));
      out["placements"] = decisions;
      if (!recent_error.empty()) out["placements_error"] = recent_error;
    }
    fmt::print("{}\n", dump(out));
    return 0;
  }
  fmt::print("{:<8} {:>9} {:>8} {:>8} {:>12} {:>12} {:>12} {:>10} {:>12} {:>12} {:>8} {:>12} {:>12} {:>7}\n",
             "server", "variables", "versions", "pieces", "memory", "budget", "writers'", "requests", "bytes in",
             "bytes out", "replicas", "replica mem", "metadata", "reorg");
  int i = 0;
  for (const auto& [address, s] : all) {
    if (!s.reachable) {
      fmt::print("{:<8} unreachable ({})\n", i++, printable(address.substr(0, 64)));
      continue;
    }
    fmt::print("{:<8} {:>9} {:>8} {:>8} {:>12} {:>12} {:>12} {:>10} {:>12} {:>12} {:>8} {:>12} {:>12} {:>7}\n", i++,
               s.variables, s.versions, s.pieces, human_bytes(s.owned_bytes),
               s.memory_budget ? human_bytes(s.memory_budget) : "unlimited", human_bytes(s.local_bytes), s.requests,
               human_bytes(s.bytes_in), human_bytes(s.bytes_out), s.replicas, human_bytes(s.replica_bytes),
               human_bytes(s.metadata_bytes), reorg_name(s.reorg));
  }
  if (!all.empty()) {
    const ServerStats& s = all.front().second;
    const std::string layouts = layouts_text(s.layouts);
    std::uint64_t built = 0, answers = 0;
    for (const auto& [address, t] : all) {
      built += t.reorganizations;
      answers += t.replica_answers;
    }
    fmt::print("reorganization: {} (expected layouts {}); built {} replicas, answered {} pieces from them, {} access "
               "patterns\n",
               reorg_name(s.reorg), layouts.empty() ? "C,F" : layouts, built, answers, s.patterns);
    std::uint64_t lost = 0, covered = 0, covered_bytes = 0;
    for (const auto& [address, t] : all) {
      lost += t.lost_pieces;
      covered += t.partly_covered;
      covered_bytes += t.partly_covered_bytes;
    }
    if (covered)
      fmt::print("overwritten: {} pieces partly covered by later puts into their version, holding {}\n", covered,
                 human_bytes(static_cast<double>(covered_bytes)));
    if (lost) fmt::print("lost: {} pieces, with writers or servers that went without releasing them\n", lost);
    std::string workers;
    for (const auto& [address, t] : all)
      if (t.reachable) workers += fmt::format("{}{}/{}", workers.empty() ? "" : ", ", t.workers, t.worker_slots);
    fmt::print("workers (registered/slots, per server): {}\n", workers);
    std::uint64_t placed = 0, fallbacks = 0, reports = 0;
    for (const auto& [address, t] : all) {
      placed += t.placements;
      fallbacks += t.placement_fallbacks;
      reports += t.task_reports;
    }
    if (placed || reports)
      fmt::print("placement: {} decisions ({} data/hybrid placed as time, without affinity), {} task times reported\n",
                 placed, fallbacks, reports);
  }
  if (placements > 0) {
    if (!recent_error.empty()) fmt::print("placements: {}\n", printable(recent_error));
    else fmt::print("placements (newest {} of {}, oldest first):\n", recent.size(), all.empty() ? 0 : all.front().second.placements);
    for (const auto& d : recent) fmt::print("  {}\n", placement_line(d));
  }
  if (replication > 1) {
    std::uint64_t copies = 0, copy_bytes = 0, moved = 0, restored = 0, single = 0, backups = 0;
    for (const auto& [address, t] : all) {
      copies += t.copies;
      copy_bytes += t.copy_bytes;
      moved += t.moved_pieces;
      restored += t.restored_copies;
      single += t.single_copies;
      backups += t.restored_backups;
    }
    fmt::print("replication: {} copies of each piece; {} second copies held ({}); {} pieces read from their second "
               "copy since their server died; {} second copies restored since, {} pieces still with one copy; the index "
               "entries of {} shards sent to a new second owner\n",
               replication, copies, human_bytes(static_cast<double>(copy_bytes)), moved, restored, single, backups);
    // Versions with pieces that lack their second copy (it was lost with a
    // server, or could not be made), the first few by name.
    constexpr std::size_t kShown = 8;
    std::size_t whole = 0, shown = 0;
    for (const auto& r : versions) {
      if (r.copied == r.pieces) {
        ++whole;
        continue;
      }
      if (shown++ < kShown)
        fmt::print("  {} version {}: {} of {} pieces have a second copy\n", printable(r.var), r.version, r.copied,
                   r.pieces);
    }
    if (shown > kShown) fmt::print("  ... and {} more versions with pieces that have one copy\n", shown - kShown);
    fmt::print("  {} of {} versions have a second copy of every piece\n", whole, versions.size());
  }
  return 0;
}

}  // namespace cove::tool
