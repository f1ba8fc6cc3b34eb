// Internal helpers to raise cove::Error with a message built from parts.
#pragma once

#include <cove/error.hpp>

#include <cstdint>
#include <sstream>
#include <string>

namespace cove::detail {

template <typename... Parts>
std::string concat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

template <typename... Parts>
[[noreturn]] void fail(Code code, const Parts&... parts) {
  throw Error(code, concat(parts...));
}

// The message of `e` without the code name that what() starts with, for
// errors re-raised with more context.
inline std::string message_of(const Error& e) {
  const std::string what = e.what();
  const std::string prefix = std::string(code_name(e.code())) + ": ";
  return what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what;
}

// a * b and a + b on int64, raising Code::Overflow with `what` in the message.
inline std::int64_t checked_mul(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) fail(Code::Overflow, what, ": ", a, " * ", b, " overflows 64 bits");
  return r;
}
inline std::int64_t checked_add(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r)) fail(Code::Overflow, what, ": ", a, " + ", b, " overflows 64 bits");
  return r;
}

}  // namespace cove::detail
