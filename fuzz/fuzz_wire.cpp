// The wire decoder on arbitrary bytes: read_header, then every kind of
// field a message may hold, until the reader refuses. It must throw
// cove::Error or succeed; never read past the input, crash or hang.
#include "net/wire.hpp"

#include <cove/error.hpp>

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace net = cove::net;
  const std::span<const std::byte> m(reinterpret_cast<const std::byte*>(data), size);
  try {
    const net::Header h = net::read_header(m);
    net::WireReader in(m);
    // The field to read next is chosen by the header's type, so that the
    // fuzzer reaches every reader in every order.
    std::uint32_t program = h.type ^ static_cast<std::uint32_t>(h.request_id);
    for (int i = 0; i < 64 && in.remaining() > 0; ++i, program = program * 1103515245u + 12345u) {
      switch ((program >> 16) % 10) {
        case 0: in.u8(); break;
        case 1: in.u16(); break;
        case 2: in.u32(); break;
        case 3: in.u64(); break;
        case 4: in.i64(); break;
        case 5: in.f64(); break;
        case 6: in.str(); break;
        case 7: in.bytes(); break;
        case 8: in.box(); break;
        default: in.count("items", 1 + program % 16, 1u << 24); break;
      }
    }
    in.expect_end();
  } catch (const cove::Error&) {
  }
  return 0;
}
