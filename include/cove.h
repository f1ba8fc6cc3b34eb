/* Cove C API.
 *
 * Every function returns or reports a cove_status from the one status table
 * (cove/status_table.h); none throws or aborts. Strings returned are static
 * and owned by the library. All functions here are thread-safe.
 * The data API (connect, put, get, ...) arrives with the staging service. */
#ifndef COVE_H
#define COVE_H

#include <cove/export.hpp>
#include <cove/status_table.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cove_status {
#define COVE_X(c_name, cpp_name, value, text) c_name = value,
  COVE_STATUS_TABLE(COVE_X)
#undef COVE_X
} cove_status;

/* One-line description of a status, e.g. "invalid argument";
 * "unknown status code" for a value outside the table. */
COVE_EXPORT const char* cove_strerror(cove_status status);
/* The status's name without prefix, e.g. "INVALID_ARGUMENT"; "UNKNOWN" outside the table. */
COVE_EXPORT const char* cove_status_name(cove_status status);

#ifdef __cplusplus
}
#endif

#endif /* COVE_H */
