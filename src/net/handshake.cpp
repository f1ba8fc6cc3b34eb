#include "net/handshake.hpp"
#include "common/printable.hpp"

#include "common/auth.hpp"
#include "core/fail.hpp"

#include <atomic>

namespace cove::net {

std::uint64_t next_request_id() noexcept {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

HelloReply greet(Endpoint& endpoint, const Peer& peer, Role role, const std::string& own_address,
                 std::string_view group_secret, Deadline deadline) {
  HelloRequest hello;
  hello.role = role;
  hello.address = own_address;
  HelloReply reply;
  try {
    reply = call<Message<Op::Hello>>(endpoint, peer, hello, deadline);
  } catch (const Error& e) {
    if (e.code() != Code::Protocol) throw;
    detail::fail(Code::Protocol, "hello to ", common::shown_address(peer->address()), " refused: ", detail::message_of(e));
  }
  if (reply.protocol != kProtocolVersion)
    detail::fail(Code::Protocol, "this process speaks protocol version ", kProtocolVersion, " but ",
                 common::shown_address(peer->address()), " speaks version ", reply.protocol);
  if (group_secret.empty() && role == Role::Client) return reply;  // not admitted: only hello was said
  try {
    call<Message<Op::Join>>(endpoint, peer, JoinRequest{common::prove(group_secret, reply.nonce)}, deadline);
  } catch (const Error& e) {
    if (e.code() != Code::PermissionDenied) throw;
    detail::fail(Code::PermissionDenied, "the Cove server at ", common::shown_address(peer->address()),
                 " refused this process's proof of the group's secret: is it the secret of this group?");
  }
  return reply;
}

}  // namespace cove::net
