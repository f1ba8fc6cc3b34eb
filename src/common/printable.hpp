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

}  // namespace cove::common
