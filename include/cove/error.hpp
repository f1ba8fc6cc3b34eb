// Errors: the status codes of status_table.h and the exception that carries them.
//
// Every Cove C++ function that can fail throws cove::Error; its message names
// the offending field and value. Functions marked noexcept never throw.
#pragma once

#include <cove/export.hpp>
#include <cove/status_table.h>

#include <stdexcept>
#include <string>

namespace cove {

enum class Code : int {
#define COVE_X(c_name, cpp_name, value, text) cpp_name = value,
  COVE_STATUS_TABLE(COVE_X)
#undef COVE_X
};

// "InvalidArgument" for Code::InvalidArgument; "Unknown" for a value outside the table.
COVE_EXPORT const char* code_name(Code code) noexcept;
// The table's one-line description, e.g. "invalid argument".
COVE_EXPORT const char* code_text(Code code) noexcept;

// A failure with a code from the table and a message for people.
// Thread-safety: a value type; copies are independent.
class COVE_EXPORT Error : public std::runtime_error {
 public:
  Error(Code code, const std::string& message);
  Code code() const noexcept { return code_; }

 private:
  Code code_;
};

}  // namespace cove
