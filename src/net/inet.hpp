// Internal: IP socket addresses as the network transports write and read
// them ("SCHEME:IP:PORT", "SCHEME:[IP6]:PORT"), and where an endpoint
// listens. Shared by Cove's TCP transport (local.cpp) and UCX (ucx.cpp).
//
// Errors: InvalidArgument naming the bad text. Thread-safe (no state).
#pragma once

#include <sys/socket.h>

#include <string>

namespace cove::net {

// "IP:PORT" or "[IP6]:PORT".
std::string to_string(const sockaddr_storage& a);
// "IP" (no port).
std::string host_of(const sockaddr_storage& a);
// "IP" or "[IP6]" and a port -> a socket address; `what` names the text in errors.
sockaddr_storage numeric_address(const std::string& host, unsigned port, const std::string& what);
// "SCHEME:IP:PORT" (scheme with its colon, e.g. "tcp:") -> its socket
// address; `kind` names the transport in errors. Everything is checked
// here, before any of it reaches a socket or a library.
sockaddr_storage parse_inet_address(const std::string& address, const std::string& scheme, const char* kind);
// Where to listen, from a `listen` setting: "" is loopback (127.0.0.1), an
// interface's name its first IPv4 address, else an IP address. Port 0.
sockaddr_storage listen_address(const std::string& where);
// Whether `address` (with '|'-separated alternatives) has an alternative
// that starts with `prefix` and goes on past it.
bool has_alternative(const std::string& address, const std::string& prefix);
// Whether `claimed` has an alternative "SCHEME:IP:PORT" with the IP of
// `from_ip`: what a peer that connected from `from_ip` over that transport
// may say it is.
bool claims_host(const std::string& claimed, const std::string& scheme, const std::string& from_ip);
// Whether every alternative of `address` is on this host whatever the
// network does: "local:" (a Unix socket) or "tcp:" to a loopback IP.
// Nothing can cut the way to such an address: a refused connect there
// means nobody listens.
bool on_this_host(const std::string& address);

}  // namespace cove::net
