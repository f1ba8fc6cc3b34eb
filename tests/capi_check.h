/* Checks for the C API's test programs (pure C11 against cove.h): each
 * counts into the including file's `passed` and `failed`, which it defines
 * (static int passed = 0, failed = 0;), and a failure prints where, what
 * and cove_last_error(). */
#ifndef COVE_TESTS_CAPI_CHECK_H
#define COVE_TESTS_CAPI_CHECK_H

#include <cove.h>

#include <stdio.h>
#include <string.h>

#define CHECK(cond)                                                                                              \
  do {                                                                                                           \
    if (cond) {                                                                                                  \
      passed++;                                                                                                  \
    } else {                                                                                                     \
      failed++;                                                                                                  \
      fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", __FILE__, __LINE__, #cond, cove_last_error()); \
    }                                                                                                            \
  } while (0)

/* The status is `want` and the message names `text`. */
#define CHECK_ERROR(call, want, text)                                                            \
  do {                                                                                           \
    const cove_status got_ = (call);                                                             \
    CHECK(got_ == (want));                                                                       \
    if (got_ != (want)) fprintf(stderr, "  got %s, wanted %s\n", cove_status_name(got_), #want); \
    CHECK(strstr(cove_last_error(), (text)) != NULL);                                            \
  } while (0)

#endif
