#include "net/inet.hpp"

#include "common/printable.hpp"
#include "core/fail.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <cstring>
#include <string_view>

namespace cove::net {

using detail::fail;

std::string host_of(const sockaddr_storage& a) {
  char host[INET6_ADDRSTRLEN] = {0};
  if (a.ss_family == AF_INET) {
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&a)->sin_addr, host, sizeof host);
    return host;
  }
  ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&a)->sin6_addr, host, sizeof host);
  return "[" + std::string(host) + "]";
}

std::string to_string(const sockaddr_storage& a) {
  const auto port = a.ss_family == AF_INET ? reinterpret_cast<const sockaddr_in*>(&a)->sin_port
                                           : reinterpret_cast<const sockaddr_in6*>(&a)->sin6_port;
  return host_of(a) + ":" + std::to_string(ntohs(port));
}

sockaddr_storage numeric_address(const std::string& host, unsigned port, const std::string& what) {
  sockaddr_storage a{};
  auto* in = reinterpret_cast<sockaddr_in*>(&a);
  auto* in6 = reinterpret_cast<sockaddr_in6*>(&a);
  if (::inet_pton(AF_INET, host.c_str(), &in->sin_addr) == 1) {
    in->sin_family = AF_INET;
    in->sin_port = htons(static_cast<std::uint16_t>(port));
  } else if (host.size() > 2 && host.front() == '[' && host.back() == ']' &&
             ::inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), &in6->sin6_addr) == 1) {
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(static_cast<std::uint16_t>(port));
  } else {
    fail(Code::InvalidArgument, what, " '", common::shown_address(host), "' is not an IPv4 address or a bracketed IPv6 one");
  }
  return a;
}

sockaddr_storage parse_inet_address(const std::string& address, const std::string& scheme, const char* kind) {
  if (address.rfind(scheme, 0) != 0 || address.size() > 80)
    fail(Code::InvalidArgument, "address '", common::shown_address(address), "' is not a ", kind, " address (", scheme,
         "IP:PORT)");
  const std::string rest = address.substr(scheme.size());
  const auto colon = rest.rfind(':');
  if (colon == std::string::npos || colon + 1 >= rest.size())
    fail(Code::InvalidArgument, kind, " address '", common::shown_address(address), "' has no port (", scheme, "IP:PORT)");
  const std::string port_text = rest.substr(colon + 1);
  if (port_text.find_first_not_of("0123456789") != std::string::npos || port_text.size() > 5)
    fail(Code::InvalidArgument, kind, " address '", common::shown_address(address), "' has a bad port");
  const unsigned port = static_cast<unsigned>(std::stoul(port_text));
  if (port == 0 || port > 65535)
    fail(Code::InvalidArgument, kind, " address '", common::shown_address(address), "' has port ", port);
  return numeric_address(rest.substr(0, colon), port, std::string(kind) + " address host");
}

sockaddr_storage listen_address(const std::string& where) {
  if (where.empty()) return numeric_address("127.0.0.1", 0, "listen address");
  sockaddr_storage a{};
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) == 0) {
    for (ifaddrs* i = list; i; i = i->ifa_next)
      if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && where == i->ifa_name) {
        std::memcpy(&a, i->ifa_addr, sizeof(sockaddr_in));
        reinterpret_cast<sockaddr_in*>(&a)->sin_port = 0;
        ::freeifaddrs(list);
        return a;
      }
    ::freeifaddrs(list);
  }
  try {
    return numeric_address(where, 0, "listen address");
  } catch (const Error&) {
    fail(Code::InvalidArgument, "listen = '", where, "' is neither an interface with an IPv4 address nor an IP address");
  }
}

namespace {

// Whether `test` holds for some '|'-separated alternative of `address`.
template <typename Test>
bool any_alternative(const std::string& address, Test&& test) {
  std::size_t at = 0;
  while (at <= address.size()) {
    const std::size_t end = std::min(address.find('|', at), address.size());
    if (test(std::string_view(address).substr(at, end - at))) return true;
    at = end + 1;
  }
  return false;
}

}  // namespace

bool has_alternative(const std::string& address, const std::string& prefix) {
  return any_alternative(address, [&](std::string_view one) { return one.size() > prefix.size() && one.starts_with(prefix); });
}

bool claims_host(const std::string& claimed, const std::string& scheme, const std::string& from_ip) {
  return !from_ip.empty() && has_alternative(claimed, scheme + from_ip + ":");
}

bool on_this_host(const std::string& address) {
  return !address.empty() && !any_alternative(address, [](std::string_view one) {
    if (one.starts_with("local:")) return false;
    if (!one.starts_with("tcp:")) return true;
    const std::string_view host = one.substr(4, one.rfind(':') - 4);
    return !host.starts_with("127.") && host != "[::1]";
  });
}

}  // namespace cove::net
