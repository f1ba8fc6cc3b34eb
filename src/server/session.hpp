// Internal: what a server knows about one connection, from its hello.
//
// A connection starts unknown; Hello makes it a client (or a server that
// still has to prove it), Join makes a server a member of the group. The
// dispatcher checks these before anything of a request is decoded.
//
// Thread-safety: the fields are guarded by `mutex`; session_of() may be
// called from any thread.
#pragma once

#include "net/protocol.hpp"
#include "net/transport.hpp"

#include <memory>
#include <mutex>
#include <string>

namespace cove::server {

struct Session {
  std::mutex mutex;
  bool greeted = false;          // Hello accepted
  net::Role role = net::Role::Client;
  bool member = false;           // a server of this group (Join proved it)
  std::string address;           // the peer's own address, as its hello gave it
  net::Bytes nonce;              // the challenge a server's Join answers
  std::weak_ptr<net::PeerHandle> peer;  // the connection (which owns this session)

  bool is_greeted() {
    std::lock_guard lock(mutex);
    return greeted;
  }
  bool is_member() {
    std::lock_guard lock(mutex);
    return member;
  }
  std::string peer_address() {
    std::lock_guard lock(mutex);
    return address;
  }
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
