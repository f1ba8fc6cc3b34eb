#include "net/wire.hpp"

#include "core/fail.hpp"

#include <bit>

namespace cove::net {

using detail::fail;

static_assert(std::endian::native == std::endian::little, "the wire format assumes a little-endian host");

WireWriter::WireWriter(std::uint16_t type, std::uint64_t request_id, Code status) {
  buf_.reserve(128);
  u32(kMagic).u16(kWireVersion).u16(type).u64(request_id).u32(static_cast<std::uint32_t>(status)).u32(0);
}

WireWriter& WireWriter::str(std::string_view s) {
  if (s.size() > kMaxStringBytes)
    fail(Code::InvalidArgument, "string of ", s.size(), " bytes is longer than the wire limit ", kMaxStringBytes);
  u32(static_cast<std::uint32_t>(s.size()));
  const auto* p = reinterpret_cast<const std::byte*>(s.data());
  buf_.insert(buf_.end(), p, p + s.size());
  return *this;
}

WireWriter& WireWriter::bytes(std::span<const std::byte> b) {
  if (b.size() > kMaxBodyBytes) fail(Code::InvalidArgument, "a wire blob of ", b.size(), " bytes is too large");
  u32(static_cast<std::uint32_t>(b.size()));
  buf_.insert(buf_.end(), b.begin(), b.end());
  return *this;
}

WireWriter& WireWriter::box(const Box& b) {
  u8(static_cast<std::uint8_t>(b.ndim));
  for (int d = 0; d < b.ndim; ++d) i64(b.lo[d]);
  for (int d = 0; d < b.ndim; ++d) i64(b.hi[d]);
  return *this;
}

std::vector<std::byte> WireWriter::finish() && {
  const std::size_t body = buf_.size() - kHeaderBytes;
  if (body > kMaxBodyBytes) fail(Code::InvalidArgument, "message body of ", body, " bytes is too large");
  const auto n = static_cast<std::uint32_t>(body);
  std::memcpy(buf_.data() + 20, &n, sizeof n);
  return std::move(buf_);
}

Header read_header(std::span<const std::byte> m) {
  if (m.size() < kHeaderBytes)
    fail(Code::Protocol, "message of ", m.size(), " bytes is shorter than the ", kHeaderBytes, "-byte header");
  std::uint32_t magic, status, body;
  std::uint16_t version;
  Header h;
  std::memcpy(&magic, m.data(), 4);
  std::memcpy(&version, m.data() + 4, 2);
  std::memcpy(&h.type, m.data() + 6, 2);
  std::memcpy(&h.request_id, m.data() + 8, 8);
  std::memcpy(&status, m.data() + 16, 4);
  std::memcpy(&body, m.data() + 20, 4);
  if (magic != kMagic) fail(Code::Protocol, "not a Cove message (magic 0x", std::hex, magic, ")");
  if (body != m.size() - kHeaderBytes)
    fail(Code::Protocol, "header announces ", body, " body bytes but ", m.size() - kHeaderBytes, " arrived");
  h.version = version;
  h.status = static_cast<Code>(status);
  h.body_bytes = body;
  return h;
}

void check_version(const Header& h) {
  if (h.version != kWireVersion)
    fail(Code::Protocol, "message of protocol version ", h.version, "; this build speaks version ", kWireVersion);
}

WireReader::WireReader(std::span<const std::byte> message) : body_(message.subspan(kHeaderBytes)) {}

void WireReader::need(std::size_t n, const char* what) const {
  if (n > body_.size() - pos_)
    fail(Code::Protocol, "message truncated: reading ", what, " needs ", n, " bytes at body offset ", pos_, " of ",
         body_.size());
}

std::string WireReader::str() {
  const std::uint32_t n = u32();
  if (n > kMaxStringBytes) fail(Code::Protocol, "string length ", n, " exceeds the wire limit ", kMaxStringBytes);
  need(n, "string");
  std::string s(reinterpret_cast<const char*>(body_.data() + pos_), n);
  pos_ += n;
  return s;
}

std::span<const std::byte> WireReader::bytes() {
  const std::uint32_t n = u32();
  need(n, "blob");
  auto s = body_.subspan(pos_, n);
  pos_ += n;
  return s;
}

Box WireReader::box() {
  const int nd = u8();
  if (nd < 1 || nd > kMaxDims) fail(Code::Protocol, "box with ", nd, " dimensions in message");
  Box b;
  b.ndim = nd;
  for (int d = 0; d < nd; ++d) b.lo[d] = i64();
  for (int d = 0; d < nd; ++d) b.hi[d] = i64();
  for (int d = 0; d < nd; ++d)
    if (b.lo[d] > b.hi[d]) fail(Code::Protocol, "box in message has lo[", d, "] > hi[", d, "]");
  return b;
}

std::uint32_t WireReader::count(const char* what, std::size_t min_item_bytes, std::uint32_t max) {
  const std::uint32_t n = u32();
  if (n > max) fail(Code::Protocol, "message announces ", n, " ", what, "; at most ", max, " are allowed");
  if (min_item_bytes && n > remaining() / min_item_bytes)
    fail(Code::Protocol, "message announces ", n, " ", what, " but only ", remaining(), " bytes remain");
  return n;
}

void WireReader::expect_end() const {
  if (pos_ != body_.size())
    fail(Code::Protocol, "message has ", body_.size() - pos_, " unread bytes after its last field");
}

}  // namespace cove::net
