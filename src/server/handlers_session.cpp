// Handlers of a connection's life: Hello, Join (the proof of the group's secret), Disconnect, Stop.
#include "common/auth.hpp"
#include "common/printable.hpp"
#include "common/log.hpp"
#include "core/fail.hpp"
#include "server/service.hpp"

#include <thread>

namespace cove::server {

using detail::fail;

net::HelloReply Service::hello(Session& s, net::HelloRequest&& r) {
  if (r.protocol != net::kProtocolVersion)
    fail(Code::Protocol, "the client speaks protocol version ", r.protocol, " but this server (", common::shown_address(address_),
         ") speaks version ", net::kProtocolVersion);
  // The address is what owns put_local pieces (Release, Disconnect): a
  // connection may only say it is a process it can be.
  if (const auto peer = s.peer.lock(); peer && !peer->may_claim(r.address))
    fail(Code::PermissionDenied, "a hello over ", peer->transport(), " claims the address '", r.address.substr(0, 96),
         "', which is not this connection's process");
  net::HelloReply reply;
  reply.address = address_;
  reply.nonce = common::random_bytes(32);
  bool first = false;
  {
    std::lock_guard lock(s.mutex);
    first = !s.greeted;
    s.greeted = true;
    s.role = r.role;
    s.proven = false;
    s.member = false;
    s.address = r.address;
    s.nonce = reply.nonce;
  }
  if (first) ++connections_;
  log::info("hello from a {} at {}", r.role == net::Role::Server ? "server" : "client", common::shown_address(r.address));
  return reply;
}

net::Empty Service::join(Session& s, net::JoinRequest&& r) {
  const std::string secret = group_->secret();
  std::lock_guard state(mutex);  // member_connections_
  std::lock_guard lock(s.mutex);
  const bool server = s.role == net::Role::Server;
  if (s.nonce.empty() || !common::verify(secret, s.nonce, r.proof)) {
    s.nonce.clear();  // one try per challenge: another needs another hello
    log::warn("a {} at {} could not prove it holds this group's secret", server ? "server" : "client",
              common::shown_address(s.address));
    fail(Code::PermissionDenied, "join refused: the proof does not match this group's secret");
  }
  s.proven = true;
  if (server && !s.member) ++member_connections_[s.address];
  s.member = server;
  s.nonce.clear();  // one proof per challenge
  return {};
}

void Service::disconnect(Session& s, net::DisconnectRequest&& r, Responder answer) {
  if (r.owner != s.peer_address())
    fail(Code::PermissionDenied, "disconnect for '", common::shown_address(r.owner), "', which is not this connection's address");
  std::vector<std::unique_ptr<store::Piece>> gone;
  {
    std::lock_guard lock(mutex);
    gone = store_.remove_owner(r.owner);
  }
  if (!gone.empty()) log::info("a writer left: {} of its pieces released", gone.size());
  answer_when_unleased<net::Message<net::Op::Disconnect>>(std::move(gone), std::move(answer));
}

void Service::stop_request(Responder answer) {
  answer.reply<net::Message<net::Op::Stop>>({});
  log::info("stop requested by a client");
  std::thread([self = shared_from_this()] { self->stop(); }).detach();
}

}  // namespace cove::server
