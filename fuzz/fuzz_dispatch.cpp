// The server's dispatch on arbitrary messages, through the in-process
// transport: an in-process server, and a connection that has said hello and
// proved the secret, sends each input as one request. Every request must get
// a reply (any status) or time out waiting for data; the server must never
// crash, leak or stop serving. Stop itself is left out (it would end the
// run), and the server is made afresh every 4096 inputs so that requests
// parked with long timeouts do not pile up.
#include "net/handshake.hpp"
#include "net/messages.hpp"
#include "net/transport.hpp"

#include <cove/client.hpp>
#include <cove/server.hpp>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

namespace {

namespace net = cove::net;

struct Target {
  std::unique_ptr<cove::Server> server;
  std::unique_ptr<net::Endpoint> ep;
  net::Peer peer;
  int used = 0;

  void start() {
    static int generation = 0;
    peer.reset();
    ep.reset();
    server.reset();
    cove::ServerOptions o;
    o.transport = "inproc://fuzz-dispatch-" + std::to_string(++generation);
    o.memory_budget = 64ull << 20;
    o.max_versions = 4;
    server = std::make_unique<cove::Server>(o);
    // A variable for requests to find.
    cove::Client c = cove::Client::connect(server->address());
    c.define("v", cove::DType(cove::DTypeKind::Float64), 2, std::vector<cove::Index>{8, 8});
    ep = net::make_endpoint("inproc://fuzz-sender-" + std::to_string(generation));
    peer = ep->connect(server->address(), net::deadline_in(1000));
    net::greet(*ep, peer, net::Role::Client, ep->address(), server->secret(), net::deadline_in(1000));
    used = 0;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Target t;
  if (!t.server || ++t.used > 4096) t.start();
  net::Bytes m(reinterpret_cast<const std::byte*>(data), reinterpret_cast<const std::byte*>(data) + size);
  std::uint16_t type = 0;
  try {
    type = net::read_header(m).type;
  } catch (const cove::Error&) {
  }
  if (type == static_cast<std::uint16_t>(net::Op::Stop)) return 0;
  try {
    if (type == static_cast<std::uint16_t>(net::Op::LeaseEnd))
      t.ep->notify(t.peer, std::move(m), net::deadline_in(200));
    else
      net::read_header(t.ep->call(t.peer, std::move(m), net::deadline_in(200)));
  } catch (const cove::Error& e) {
    if (e.code() != cove::Code::Timeout) std::abort();  // the server must answer, or be waiting for data
  }
  return 0;
}
