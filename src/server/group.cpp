#include "server/group.hpp"

#include "common/auth.hpp"
#include "core/fail.hpp"
#include "net/handshake.hpp"

namespace cove::server {

using detail::fail;

GroupLink::GroupLink(net::Endpoint& endpoint, std::string own_address)
    : endpoint_(endpoint), own_(std::move(own_address)), members_{own_}, secret_(common::random_hex(32)) {}

void GroupLink::join(const std::vector<std::string>& members, int rank, const std::string& secret) {
  if (rank < 0 || static_cast<std::size_t>(rank) >= members.size() || members[rank] != own_)
    fail(Code::InvalidArgument, "join_group: member ", rank, " of ", members.size(), " is not this server's address");
  if (secret.size() < 16)
    fail(Code::InvalidArgument, "join_group: the group secret has ", secret.size(), " bytes; at least 16 are needed");
  std::lock_guard lock(mutex_);
  members_ = members;
  rank_ = rank;
  secret_ = secret;
  peers_.clear();
}

int GroupLink::size() const {
  std::lock_guard lock(mutex_);
  return static_cast<int>(members_.size());
}

int GroupLink::rank() const {
  std::lock_guard lock(mutex_);
  return rank_;
}

std::string GroupLink::secret() const {
  std::lock_guard lock(mutex_);
  return secret_;
}

net::Peer GroupLink::peer(const std::string& address, net::Deadline deadline) {
  return peers_.get(address, [&] {
    net::Peer p = endpoint_.connect(address, deadline);
    net::greet(endpoint_, p, net::Role::Server, own_, secret(), deadline);
    return p;
  });
}

void GroupLink::forward(const std::vector<int>& shards, const net::IndexAddRequest& entry) {
  std::vector<std::string> targets;
  {
    std::lock_guard lock(mutex_);
    for (int s : shards)
      if (s != rank_) targets.push_back(members_.at(static_cast<std::size_t>(s)));
  }
  for (const std::string& address : targets) {
    try {
      const auto deadline = net::deadline_in(net::kForwardTimeoutMs);
      net::call<net::Message<net::Op::IndexAdd>>(endpoint_, peer(address, deadline), entry, deadline);
    } catch (const Error& e) {
      if (e.code() == Code::Unavailable) peers_.forget(address);  // connect afresh next time
      throw;
    }
  }
}

bool GroupLink::answers(const std::string& address, net::Deadline deadline) {
  try {
    net::call<net::Message<net::Op::Stat>>(endpoint_, peer(address, deadline), {}, deadline);
    return true;
  } catch (const Error& e) {
    if (e.code() != Code::Unavailable && e.code() != Code::Timeout) throw;
    peers_.forget(address);  // connect afresh next time
    return false;
  }
}

}  // namespace cove::server
