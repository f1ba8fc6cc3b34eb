/* The writer of fortran.reader_first, started after the Fortran reader:
 * defines "late" (double x[5][4]) with the fill value -9, puts rows 1..3
 * and seals version 1, so that the reader's get of the whole array ends
 * with the fill value where no put went. Exits 1 on failure. */
#include "values.h"

int main(void) {
  cove_client_t* c = NULL;
  CHECK(cove_connect(NULL, 10000, &c) == COVE_OK);
  double rows[3][4];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) rows[i][j] = (double)v2(i + 1, j);
  const int64_t shape[2] = {5, 4}, start[2] = {1, 0}, count[2] = {3, 4};
  const double fill = -9;
  CHECK(cove_define_fill(c, "late", "f8", 2, shape, &fill, sizeof fill) == COVE_OK);
  CHECK(cove_put(c, "late", 1, 2, start, count, rows, sizeof rows, "C") == COVE_OK);
  CHECK(cove_seal(c, "late", 1, NULL) == COVE_OK);
  CHECK(cove_disconnect(c) == COVE_OK);
  printf("c late writer: %d failed\n", failures);
  return failures == 0 ? 0 : 1;
}
