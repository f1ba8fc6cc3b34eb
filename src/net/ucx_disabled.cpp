// Built when Cove is configured without UCX.
#include "net/transport.hpp"

#include "core/fail.hpp"

namespace cove::net {

std::unique_ptr<Endpoint> make_ucx_endpoint(const std::string&, std::size_t) {
  detail::fail(Code::Unsupported, "this Cove was built without UCX (COVE_ENABLE_UCX=OFF)");
}

}  // namespace cove::net
