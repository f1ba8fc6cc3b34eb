// Internal: a server's link to the other servers of its group: who they
// are (addresses, this server's rank), the group's secret (which clients
// prove too), the connections
// to them (each says hello and proves the secret with Join), and the index
// entries sent to them.
//
// Thread-safety: all functions may be called from any thread.
#pragma once

#include "core/fail.hpp"
#include "net/handshake.hpp"
#include "net/messages.hpp"
#include "net/transport.hpp"

#include <exception>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace cove::server {

class GroupLink {
 public:
  // A group of one, with a random secret of its own (256 bits).
  GroupLink(net::Endpoint& endpoint, std::string own_address);

  // Makes this server member `rank` of the group `members`, whose servers
  // and clients prove they belong by `secret`. InvalidArgument if
  // members[rank] is not this server or the secret is shorter than 16 bytes.
  void join(const std::vector<std::string>& members, int rank, const std::string& secret);
  int size() const;
  int rank() const;
  bool alone() const { return size() == 1; }
  std::string secret() const;

  // The member after `rank` in the group (the keeper of its second copies
  // and of its index entries' backups, replicas = 2).
  int successor(int rank) const;
  std::string address_of(int rank) const;

  // Sends `entry` to the members in `targets` other than this one and
  // those in `skip` (members found dead), in turn. Returns the members it
  // did not reach, with why (a skipped one: Unavailable).
  std::vector<std::pair<int, std::exception_ptr>> forward(const std::vector<int>& targets,
                                                          const net::IndexAddRequest& entry,
                                                          const std::set<std::string>& skip) {
    return send<net::Message<net::Op::IndexAdd>>(targets, entry, skip);
  }
  // The same for any request of message type M between members.
  template <typename M>
  std::vector<std::pair<int, std::exception_ptr>> send(const std::vector<int>& targets,
                                                       const typename M::Request& request,
                                                       const std::set<std::string>& skip);
  // Has member `rank` keep a second copy of piece `h`, whose bytes this
  // server holds at `data` (memory key `key`), by `deadline`: sent with the
  // request up to kEagerBytes, else read by the member over its own
  // connection to this server. Where the copy is.
  net::CopyRef copy(int rank, const net::PieceHeader& h, const void* data, const net::Bytes& key,
                    net::Deadline deadline, bool restored = false);
  // This server's connection to member `address` (made first if there is
  // none): memory of the member is read over it (over UCX, only the
  // connections an endpoint made may read).
  net::Peer member(const std::string& address, net::Deadline deadline) { return peer(address, deadline); }
  // Whether member `address` answers a small request by `deadline`, over
  // this server's connection to it (made first if there is none).
  bool answers(const std::string& address, net::Deadline deadline);
  // The members this server has a connection to.
  std::vector<std::string> connected() { return peers_.addresses(); }
  // Drops every connection to a member (the server stopping): they must go
  // before the endpoint that made them, with what they hold of it (over
  // UCX, the remote keys of members' memory).
  void close() { peers_.clear(); }
  // A connection to a member is given this long at most (one that is gone
  // costs a put that much, not the forward's whole deadline).
  static constexpr std::int64_t kConnectMs = 2000;

 private:
  net::Peer peer(const std::string& address, net::Deadline deadline);

  net::Endpoint& endpoint_;
  const std::string own_;
  mutable std::mutex mutex_;
  std::vector<std::string> members_;
  int rank_ = 0;
  std::string secret_;
  net::PeerCache peers_;
};

template <typename M>
std::vector<std::pair<int, std::exception_ptr>> GroupLink::send(const std::vector<int>& targets,
                                                                const typename M::Request& request,
                                                                const std::set<std::string>& skip) {
  std::vector<std::pair<int, std::string>> to;
  {
    std::lock_guard lock(mutex_);
    for (int s : targets)
      if (s != rank_) to.emplace_back(s, members_.at(static_cast<std::size_t>(s)));
  }
  std::vector<std::pair<int, std::exception_ptr>> failed;
  for (const auto& [rank, address] : to) {
    if (skip.count(address)) {
      failed.emplace_back(rank, std::make_exception_ptr(Error(
                                    Code::Unavailable, detail::concat("server ", rank, " of the group is gone"))));
      continue;
    }
    try {
      const auto deadline = net::deadline_in(net::kForwardTimeoutMs);
      net::call<M>(endpoint_, peer(address, deadline), request, deadline);
    } catch (const Error& e) {
      if (e.code() == Code::Unavailable) peers_.forget(address);  // connect afresh next time
      failed.emplace_back(rank, std::current_exception());
    }
  }
  return failed;
}

}  // namespace cove::server
