#include "server/group.hpp"

#include "common/auth.hpp"
#include "core/fail.hpp"
#include "net/handshake.hpp"

#include <algorithm>

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
    net::Peer p = endpoint_.connect(address, std::min(deadline, net::deadline_in(kConnectMs)));
    net::greet(endpoint_, p, net::Role::Server, own_, secret(), deadline);
    return p;
  });
}

int GroupLink::successor(int rank) const {
  std::lock_guard lock(mutex_);
  return (rank + 1) % static_cast<int>(members_.size());
}

std::string GroupLink::address_of(int rank) const {
  std::lock_guard lock(mutex_);
  return members_.at(static_cast<std::size_t>(rank));
}


net::CopyRef GroupLink::copy(int rank, const net::PieceHeader& h, const void* data, const net::Bytes& key,
                             net::Deadline deadline, bool restored) {
  using net::Message;
  using net::Op;
  const std::string address = address_of(rank);
  try {
    const net::Peer p = peer(address, deadline);
    net::CopyRequest request{h, {}, {}, restored};
    if (h.bytes <= net::kEagerBytes) {
      const auto* b = static_cast<const std::byte*>(data);
      request.data.assign(b, b + h.bytes);
    } else {
      request.key = key;
    }
    const net::CopyReply r = net::call<Message<Op::Copy>>(endpoint_, p, request, deadline);
    return {address, r.key, r.id};
  } catch (const Error& e) {
    if (e.code() == Code::Unavailable) peers_.forget(address);
    throw;
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
