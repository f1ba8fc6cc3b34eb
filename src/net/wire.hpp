// Internal: Cove's wire format.
//
// A message is a fixed 24-byte header followed by a body of body_bytes:
//   magic "COVE" (u32) | version (u16) | type (u16) | request id (u64) |
//   status (i32, a cove_status) | body_bytes (u32)
// All integers little-endian. Bodies are built with WireWriter and read with
// WireReader, which checks every read against the end of the message: a
// truncated or malformed message is a Code::Protocol error, never a read
// past the end, and no count is believed before the bytes it needs are
// there. The version is the protocol version (protocol.hpp): read_header
// reports it, and the receivers refuse another one (after the hello, which
// says why).
#pragma once

#include <cove/box.hpp>
#include <cove/error.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace cove::net {

using Bytes = std::vector<std::byte>;

inline constexpr std::uint32_t kMagic = 0x45564F43u;  // "COVE" read as little-endian bytes
inline constexpr std::uint16_t kWireVersion = 14;  // 14: MetaGet's mode LatestIfAny and its reply's found flag
inline constexpr std::size_t kHeaderBytes = 24;
inline constexpr std::size_t kMaxBodyBytes = std::size_t{1} << 30;  // bulk data never travels in bodies
inline constexpr std::size_t kMaxStringBytes = 4096;

struct Header {
  std::uint16_t version = 0;
  std::uint16_t type = 0;
  std::uint64_t request_id = 0;
  Code status = Code::Ok;
  std::uint32_t body_bytes = 0;
};

class WireWriter {
 public:
  WireWriter(std::uint16_t type, std::uint64_t request_id, Code status = Code::Ok);

  WireWriter& u8(std::uint8_t v) { return pod(v); }
  WireWriter& u16(std::uint16_t v) { return pod(v); }
  WireWriter& u32(std::uint32_t v) { return pod(v); }
  WireWriter& u64(std::uint64_t v) { return pod(v); }
  WireWriter& i32(std::int32_t v) { return pod(v); }
  WireWriter& i64(std::int64_t v) { return pod(v); }
  WireWriter& f64(double v) { return pod(v); }
  WireWriter& str(std::string_view s);               // u32 length + bytes; at most kMaxStringBytes
  WireWriter& bytes(std::span<const std::byte> b);   // u32 length + bytes
  WireWriter& box(const Box& b);                     // u8 ndim + lo[ndim] + hi[ndim]

  // The finished message; the header's body_bytes is filled in here.
  std::vector<std::byte> finish() &&;

 private:
  template <typename T>
  WireWriter& pod(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto* p = reinterpret_cast<const std::byte*>(&v);
    buf_.insert(buf_.end(), p, p + sizeof(T));
    return *this;
  }
  std::vector<std::byte> buf_;
};

// Parses the header of `message` (throws Protocol on a short message, a bad
// magic, or a body length that does not match). The version is not checked.
Header read_header(std::span<const std::byte> message);
// Throws Protocol unless `h` is of this build's version.
void check_version(const Header& h);

class WireReader {
 public:
  // Reads the body of a message whose header read_header() accepted.
  explicit WireReader(std::span<const std::byte> message);

  std::uint8_t u8() { return pod<std::uint8_t>("u8"); }
  std::uint16_t u16() { return pod<std::uint16_t>("u16"); }
  std::uint32_t u32() { return pod<std::uint32_t>("u32"); }
  std::uint64_t u64() { return pod<std::uint64_t>("u64"); }
  std::int32_t i32() { return pod<std::int32_t>("i32"); }
  std::int64_t i64() { return pod<std::int64_t>("i64"); }
  double f64() { return pod<double>("f64"); }
  std::string str();
  std::span<const std::byte> bytes();
  Box box();  // validated: ndim in 1..kMaxDims, lo <= hi
  // A count of items that take at least min_item_bytes each: Protocol
  // unless it is at most `max` and that many items can fit in what remains.
  std::uint32_t count(const char* what, std::size_t min_item_bytes, std::uint32_t max);

  std::size_t remaining() const noexcept { return body_.size() - pos_; }
  // Throws Protocol unless the whole body was read.
  void expect_end() const;

 private:
  void need(std::size_t n, const char* what) const;
  template <typename T>
  T pod(const char* what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, body_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::span<const std::byte> body_;
  std::size_t pos_ = 0;
};

}  // namespace cove::net
