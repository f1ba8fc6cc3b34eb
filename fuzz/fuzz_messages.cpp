// Every message's decoder on arbitrary bodies: the request and the reply of
// one message type (COVE_FUZZ_OP=NAME, e.g. "query"; unset: the input's
// first byte chooses). A body either decodes or is refused with
// cove::Error; one that decodes encodes back to a message that decodes to
// the same value.
#include "net/messages.hpp"

#include <cove/error.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

namespace {

namespace net = cove::net;

std::optional<std::uint16_t> fixed_op() {
  const char* name = std::getenv("COVE_FUZZ_OP");
  if (!name || !*name) return std::nullopt;
  for (const auto& info : net::kOps)
    if (std::strcmp(info.name, name) == 0) return static_cast<std::uint16_t>(info.op);
  std::abort();  // a name that is not a message type: the run would test nothing
}

net::Bytes message(std::uint16_t type, std::span<const std::byte> body) {
  net::Bytes m = net::WireWriter(type, 1).finish();
  m.insert(m.end(), body.begin(), body.end());
  const auto n = static_cast<std::uint32_t>(body.size());
  std::memcpy(m.data() + net::kHeaderBytes - sizeof n, &n, sizeof n);
  return m;
}

template <typename T, typename Encode>
void round_trip(std::span<const std::byte> m, Encode encode) {
  std::optional<T> value;
  try {
    value = net::decode_body<T>(m);
  } catch (const cove::Error&) {
    return;  // refused: fine
  }
  const net::Bytes again = encode(*value);
  if (!(net::decode_body<T>(again) == *value)) std::abort();  // a value that does not survive its own encoding
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::optional<std::uint16_t> fixed = fixed_op();
  std::span<const std::byte> body(reinterpret_cast<const std::byte*>(data), size);
  std::uint16_t type = 0;
  if (fixed) {
    type = *fixed;
  } else {
    if (body.empty()) return 0;
    type = static_cast<std::uint16_t>(1 + std::to_integer<unsigned>(body[0]) % net::kOps.size());
    body = body.subspan(1);
  }
  const net::Bytes m = message(type, body);
  net::visit_op(type, [&]<typename M>() {
    round_trip<typename M::Request>(m, [](const auto& v) { return net::encode_request<M>(v, 1); });
    round_trip<typename M::Reply>(m, [](const auto& v) { return net::encode_reply<M>(v, 1); });
  });
  return 0;
}
