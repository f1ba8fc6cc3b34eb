// Internal: a server's link to the other servers of its group: who they
// are (addresses, this server's rank), the group's secret (which clients
// prove too), the connections
// to them (each says hello and proves the secret with Join), and the index
// entries sent to them.
//
// Thread-safety: all functions may be called from any thread.
#pragma once

#include "net/messages.hpp"
#include "net/transport.hpp"

#include <mutex>
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

  // Sends `entry` to the members in `shards` other than this one, in turn.
  void forward(const std::vector<int>& shards, const net::IndexAddRequest& entry);
  // Whether member `address` answers a small request by `deadline`, over
  // this server's connection to it (made first if there is none).
  bool answers(const std::string& address, net::Deadline deadline);

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

}  // namespace cove::server
