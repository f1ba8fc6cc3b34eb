// Internal: what a server knows about one connection, from its hello.
//
// A connection starts unknown; Hello makes it a client or a server that
// still has to prove it holds the group's secret; Join proves it (and makes
// a server a member of the group). The dispatcher checks these before
// anything of a request is decoded.
//
// A session also keeps the reader's leases: what each lease keeps alive
// (piece buffers, which return to the pool only when the last lease on them
// ends, and put_local pieces' holds), until the reader ends it or the
// connection closes.
//
// Thread-safety: the fields are guarded by `mutex`; session_of() may be
// called from any thread.
#pragma once

#include "net/protocol.hpp"
#include "net/transport.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace cove::server {

struct Session {
  std::mutex mutex;
  bool greeted = false;          // Hello accepted
  net::Role role = net::Role::Client;
  bool proven = false;           // Join proved the group's secret
  bool member = false;           // a server of this group (it said hello as one and proved the secret)
  std::string address;           // the peer's own address, as its hello gave it
  net::Bytes nonce;              // the challenge a server's Join answers
  std::weak_ptr<net::PeerHandle> peer;  // the connection (which owns this session)

  bool is_greeted() {
    std::lock_guard lock(mutex);
    return greeted;
  }
  bool is_proven() {
    std::lock_guard lock(mutex);
    return proven;
  }
  bool is_member() {
    std::lock_guard lock(mutex);
    return member;
  }
  std::string peer_address() {
    std::lock_guard lock(mutex);
    return address;
  }

  using Holds = std::vector<std::shared_ptr<const void>>;
  // A new lease keeping `holds` alive; its id.
  std::uint64_t lease(Holds holds) {
    std::lock_guard lock(mutex);
    const std::uint64_t id = next_lease++;
    leases.emplace(id, std::move(holds));
    return id;
  }
  // Ends leases (unknown ids are ignored: a lease ends once). What they
  // kept is let go outside the lock: it may answer a waiting release.
  void end_leases(std::span<const std::uint64_t> ids) {
    std::vector<Holds> ended;  // destroyed after the lock is released
    std::lock_guard lock(mutex);
    for (const std::uint64_t id : ids) {
      auto it = leases.find(id);
      if (it == leases.end()) continue;
      ended.push_back(std::move(it->second));
      leases.erase(it);
    }
  }
  void end_all_leases() {
    std::map<std::uint64_t, Holds> ended;
    {
      std::lock_guard lock(mutex);
      ended.swap(leases);
    }
  }
  std::size_t lease_count() {
    std::lock_guard lock(mutex);
    return leases.size();
  }

 private:
  std::map<std::uint64_t, Holds> leases;  // under mutex
  std::uint64_t next_lease = 1;
};

// The session of a connection, made on first use.
inline std::shared_ptr<Session> session_of(const net::Peer& peer) {
  return std::static_pointer_cast<Session>(peer->context_or([&peer] {
    auto s = std::make_shared<Session>();
    s->peer = peer;
    return s;
  }));
}

}  // namespace cove::server
