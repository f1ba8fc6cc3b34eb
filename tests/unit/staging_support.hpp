// Helpers shared by the staging and reorganization tests: the transport a
// test server uses (COVE_TEST_TRANSPORT) and values that encode their global
// index, so that every element read can be checked.
#pragma once

#include <cove/box.hpp>
#include <cove/error.hpp>
#include <cove/layout.hpp>
#include <cove/server.hpp>

#include "expect_error.hpp"
#include "net/transport.hpp"

#include <atomic>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace cove_test {

using V = std::vector<cove::Index>;

// The transport the staging tests run over: COVE_TEST_TRANSPORT = inproc
// (default), local or ucx.
inline std::string test_transport() {
  const char* t = std::getenv("COVE_TEST_TRANSPORT");
  return t && *t ? t : "inproc";
}
inline bool over_ucx() { return test_transport() == "ucx"; }
inline bool across_processes() { return test_transport() != "inproc"; }

// Where a test server listens: a fresh in-process name, or UCX.
inline std::string unique_name(const char* base) {
  static std::atomic<int> n{0};
  if (across_processes()) return test_transport();
  return std::string("inproc://") + base + "-" + std::to_string(++n);
}

// An address at which nobody answers.
inline std::string dead_address() {
  if (!across_processes()) return unique_name("nobody");
  return cove::net::make_endpoint(test_transport())->address();  // the endpoint is gone when this returns
}

// Values of `box` of a global array of shape `shape`: element x holds its C-order global linear index.
inline std::vector<double> encoded(const cove::Box& box, const V& shape, const cove::Layout& layout = cove::Layout::c()) {
  std::vector<double> out(static_cast<std::size_t>(box.volume()));
  const auto strides = layout.strides(box);
  std::vector<cove::Index> x(box.lo.begin(), box.lo.begin() + box.ndim);
  if (box.empty()) return out;
  for (;;) {
    cove::Index global = 0, local = 0;
    for (int d = 0; d < box.ndim; ++d) {
      global = global * shape[d] + x[d];
      local += (x[d] - box.lo[d]) * strides[d];
    }
    out[static_cast<std::size_t>(local)] = static_cast<double>(global);
    int d = box.ndim - 1;
    for (; d >= 0; --d) {
      if (++x[d] < box.hi[d]) break;
      x[d] = box.lo[d];
    }
    if (d < 0) return out;
  }
}

using cove_test::code_of;

// A group of `n` servers with options `base` (each listening at a fresh
// address), joined so that indexes are sharded across them.
struct Group {
  std::vector<cove::Server> servers;
  explicit Group(int n, const cove::ServerOptions& base = {}) {
    std::vector<std::string> addresses;
    for (int i = 0; i < n; ++i) {
      cove::ServerOptions o = base;
      o.transport = unique_name("group");
      servers.emplace_back(o);
      addresses.push_back(servers.back().address());
    }
    const std::string secret = "test group secret " + std::to_string(reinterpret_cast<std::uintptr_t>(this));
    for (int i = 0; i < n; ++i) servers[i].join_group(addresses, i, secret);
  }
  std::string addresses() const {
    std::string all;
    for (const auto& s : servers) {
      if (!all.empty()) all += ',';
      all += s.address();
    }
    return all;
  }
};

}  // namespace cove_test
