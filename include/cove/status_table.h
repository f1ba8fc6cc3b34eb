/* The one table of Cove status codes.
 *
 * Each row is X(C_NAME, CppName, value, "text"). It generates the C enum
 * cove_status and cove_strerror() (cove.h), the C++ cove::Code and
 * cove::Error (cove/error.hpp), and later the Python exception. Values are
 * part of the ABI and of the wire format: append rows, never renumber. */
#ifndef COVE_STATUS_TABLE_H
#define COVE_STATUS_TABLE_H

#define COVE_STATUS_TABLE(X)                                              \
  X(COVE_OK, Ok, 0, "success")                                            \
  X(COVE_INVALID_ARGUMENT, InvalidArgument, 1, "invalid argument")        \
  X(COVE_OUT_OF_RANGE, OutOfRange, 2, "out of range")                     \
  X(COVE_OVERFLOW, Overflow, 3, "arithmetic overflow")                    \
  X(COVE_NOT_FOUND, NotFound, 4, "not found")                             \
  X(COVE_ALREADY_EXISTS, AlreadyExists, 5, "already exists")              \
  X(COVE_TIMEOUT, Timeout, 6, "timed out")                                \
  X(COVE_NO_MEMORY, NoMemory, 7, "out of memory or over memory budget")   \
  X(COVE_UNAVAILABLE, Unavailable, 8, "service unavailable")              \
  X(COVE_PROTOCOL, Protocol, 9, "malformed or incompatible message")      \
  X(COVE_UNSUPPORTED, Unsupported, 10, "unsupported operation")           \
  X(COVE_CANCELLED, Cancelled, 11, "cancelled")                           \
  X(COVE_INTERNAL, Internal, 12, "internal error")                       \
  X(COVE_PERMISSION_DENIED, PermissionDenied, 13, "permission denied")

#endif
