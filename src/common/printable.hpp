// Internal: text from outside (variable names, addresses, error messages
// quoting them) made safe to print: bytes that are not printable ASCII
// become \xNN and a backslash becomes \\, so no name can move a terminal's
// cursor, retitle it or fake a line of output.
//
// Thread-safety: a pure function.
#pragma once

#include <string>
#include <string_view>

namespace cove::common {

std::string printable(std::string_view text);

// An address (or a name holding one) shortened for a message: whole up to
// 200 bytes, else its first 120 and last 60 bytes around "...", so that
// the port at its end is kept.
inline std::string shown_address(std::string_view address) {
  if (address.size() <= 200) return std::string(address);
  return std::string(address.substr(0, 120)) + "..." + std::string(address.substr(address.size() - 60));
}

}  // namespace cove::common
