/* What the Fortran and C test programs put and check: the value at 0-based
 * global indices, one formula per rank (each index below 100), the same as
 * values.f90's. Every mismatch is printed and counted. */
#ifndef COVE_TEST_FORTRAN_VALUES_H
#define COVE_TEST_FORTRAN_VALUES_H

#include <cove.h>

#include <stdint.h>
#include <stdio.h>

static int failures = 0;

#define CHECK(cond)                                                                                           \
  do {                                                                                                        \
    if (!(cond)) {                                                                                            \
      failures++;                                                                                             \
      fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", __FILE__, __LINE__, #cond, cove_last_error()); \
    }                                                                                                         \
  } while (0)

static inline int64_t v2(int64_t i, int64_t j) { return 100 * i + j; }
static inline int64_t v3(int64_t i, int64_t j, int64_t k) { return 10000 * i + 100 * j + k; }
static inline int64_t v4(int64_t i, int64_t j, int64_t k, int64_t l) {
  return 1000000 * i + 10000 * j + 100 * k + l;
}

#endif
