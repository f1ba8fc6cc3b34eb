// Internal: the connecting side of a connection's first messages.
//
// greet() says Hello (protocol version, role, own address) and answers the
// server's challenge with Join, proving it holds the group's secret: the
// server then serves its requests, and takes a server as a member of the
// group (server-to-server messages). A client greeting with no secret says
// only hello, and is refused everything else (a test of exactly that).
//
// Errors: Protocol naming both versions when the peer speaks another
// protocol version; PermissionDenied when a Join is refused; the call's own
// errors (Unavailable, Timeout).
#pragma once

#include "net/messages.hpp"
#include "net/transport.hpp"

#include <string>
#include <string_view>

namespace cove::net {

HelloReply greet(Endpoint& endpoint, const Peer& peer, Role role, const std::string& own_address,
                 std::string_view group_secret, Deadline deadline);

// The request id for the next request of this process (ids only have to
// tell one caller's requests apart).
std::uint64_t next_request_id() noexcept;

// Sends `request` (of message type M) to `peer` and decodes its reply;
// an error reply is thrown as the error it carries.
template <typename M>
typename M::Reply call(Endpoint& endpoint, const Peer& peer, const typename M::Request& request, Deadline deadline) {
  const std::uint64_t id = next_request_id();
  const Bytes reply = endpoint.call(peer, encode_request<M>(request, id), deadline);
  check_reply(reply, static_cast<std::uint16_t>(M::op), id);
  return decode_body<typename M::Reply>(reply);
}

}  // namespace cove::net
