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

namespace {

net::PlaceReply reply_of(const store::placement::Decision& d) {
  return {static_cast<std::uint32_t>(d.node), d.sequence, store::placement::policy_name(d.applied)};
}

}  // namespace

// Closes the prioritization window at its deadline; nothing else answers it.
class Service::PlaceWindow final : public ParkedRequest {
 public:
  PlaceWindow(Service& service, net::Deadline until) : ParkedRequest("p:", until), service_(service) {}
  bool retry(store::Store::Freed&) override { return false; }
  void expire() override { service_.place_window(); }
  void cancel() override {
    for (auto& [request, answer] : service_.place_waiters_)
      answer.fail(Code::Unavailable, "the server is shutting down");
    service_.place_waiters_.clear();
    service_.place_window_open_ = false;
  }

 private:
  Service& service_;
};

// Server 0 places; a client asking another server is told so (it then
// puts where the sharding says). With a window, the request waits (parked,
// the server goes on serving) until the window closes.
void Service::place(net::PlaceRequest&& r, Responder answer) {
  int rank = 0, servers = 1;
  {
    std::lock_guard lock(mutex);
    rank = static_cast<int>(group_->rank());
    servers = static_cast<int>(group_->size());
  }
  if (rank != 0) detail::fail(Code::Unsupported, "placement of '", r.var, "' is decided by server 0, not ", rank);
  if (placement_->window_ms() == 0) {  // placed now, without the state lock (the first may run METIS)
    answer.reply<net::Message<net::Op::Place>>(reply_of(placement_->place(r.var, r.box, r.bytes, servers)));
    return;
  }
  if (!placement_->policy_of(r.var))
    detail::fail(Code::Unsupported, "placement is off for '", r.var, "' (server.placement)");
  std::lock_guard lock(mutex);
  place_waiters_.emplace_back(std::move(r), std::move(answer));
  if (place_window_open_) return;
  place_window_open_ = true;
  parked_->park(std::make_unique<PlaceWindow>(*this, net::deadline_in(placement_->window_ms())));
}

void Service::place_window() {
  auto waiters = std::move(place_waiters_);
  place_waiters_.clear();
  place_window_open_ = false;
  std::vector<PlacementService::Query> queries;
  for (const auto& [r, answer] : waiters) queries.push_back({r.var, r.box, r.bytes});
  try {
    const auto decisions = placement_->place_window(queries, static_cast<int>(group_->size()));
    log::debug("placement window: {} requests placed together", waiters.size());
    for (std::size_t i = 0; i < waiters.size(); ++i) {
      Responder& answer = waiters[i].second;
      if (decisions[i]) answer.reply<net::Message<net::Op::Place>>(reply_of(*decisions[i]));
      else answer.fail(Code::Unsupported, "placement is off for '" + queries[i].var + "' (server.placement)");
    }
  } catch (const Error& e) {
    for (auto& [r, answer] : waiters) answer.fail(e.code(), e.what());
  }
}

net::Empty Service::dataflow(net::DataflowRequest&& r) {
  {
    std::lock_guard lock(mutex);
    if (group_->rank() != 0)
      detail::fail(Code::Unsupported, "dataflow graph ", r.source, ": placement is decided by server 0, not ",
                   group_->rank());
  }
  placement_->set_dataflow(r.source, r.toml, r.text);
  return {};
}

net::PlacementsReply Service::placements(net::PlacementsRequest&& r) {
  {
    std::lock_guard lock(mutex);
    if (group_->rank() != 0)
      detail::fail(Code::Unsupported, "placement decisions are kept by server 0, not ", group_->rank());
  }
  return {placement_->decisions(), placement_->recent(r.max)};
}

net::Empty Service::task_done(net::TaskDoneRequest&& r) {
  placement_->task_done(r.var, r.box, r.seconds);
  return {};
}

}  // namespace cove::server
