#include <cove.h>
#include <cove/error.hpp>

extern "C" {

const char* cove_strerror(cove_status status) { return cove::code_text(static_cast<cove::Code>(status)); }

const char* cove_status_name(cove_status status) {
  switch (status) {
#define COVE_X(c_name, cpp_name, value, text) \
  case c_name:                                \
    return &#c_name[5]; /* drop "COVE_" */
    COVE_STATUS_TABLE(COVE_X)
#undef COVE_X
  }
  return "UNKNOWN";
}

}  // extern "C"
