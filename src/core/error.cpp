#include <cove/error.hpp>

namespace cove {

const char* code_name(Code code) noexcept {
  switch (code) {
#define COVE_X(c_name, cpp_name, value, text) \
  case Code::cpp_name:                        \
    return #cpp_name;
    COVE_STATUS_TABLE(COVE_X)
#undef COVE_X
  }
  return "Unknown";
}

const char* code_text(Code code) noexcept {
  switch (code) {
#define COVE_X(c_name, cpp_name, value, text) \
  case Code::cpp_name:                        \
    return text;
    COVE_STATUS_TABLE(COVE_X)
#undef COVE_X
  }
  return "unknown status code";
}

namespace {

std::string with_code(Code code, const std::string& message) {
  std::string s = code_name(code);
  s.append(": ").append(message);
  return s;
}

}  // namespace

Error::Error(Code code, const std::string& message) : std::runtime_error(with_code(code, message)), code_(code) {}

}  // namespace cove
