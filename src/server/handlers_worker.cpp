// Handlers of in-staging consumer workers (docs/placement.md, "Workers"):
// a connection takes one of the server's worker slots (the paper's staging
// cores) until it closes; connection_closed calls release_worker.
#include "common/log.hpp"
#include "core/fail.hpp"
#include "server/service.hpp"

namespace cove::server {

net::WorkerReply Service::register_worker(Session& s, net::WorkerRequest&& r) {
  std::lock_guard lock(mutex);
  const auto slots = static_cast<std::uint32_t>(options_.worker_slots);
  if (auto it = workers_.find(&s); it != workers_.end())
    detail::fail(Code::AlreadyExists, "this connection is already worker '", it->second.second, "' in slot ",
                 it->second.first, " of server ", address_);
  // The lowest free slot: a worker that went leaves its slot to the next.
  std::vector<bool> used(slots, false);
  for (const auto& [session, w] : workers_) used[w.first] = true;
  std::uint32_t slot = 0;
  while (slot < slots && used[slot]) ++slot;
  if (slot == slots)
    detail::fail(Code::Unavailable, "worker '", r.name, "': all ", slots, " worker slots of server ", address_,
                 " are taken (server.worker_slots)");
  workers_.emplace(&s, std::make_pair(slot, r.name));
  log::info("worker '{}' registered in slot {} of {}", r.name, slot, slots);
  return {slot, slots, static_cast<std::uint32_t>(workers_.size())};
}

void Service::release_worker(Session& s) {
  std::lock_guard lock(mutex);
  auto it = workers_.find(&s);
  if (it == workers_.end()) return;
  log::info("worker '{}' in slot {} left", it->second.second, it->second.first);
  workers_.erase(it);
}

}  // namespace cove::server
