/* The C writer of fortran.c_to_fortran: puts in C order what
 * fortran_reader.f90 checks (x[i][j] is the reader's a(i+1,j+1)): a 2-D
 * double field, a 3-D int64 one in two pieces, a 2-D float one, a 4-D
 * int32 one, and metadata of 1000 bytes and of a few. Exits 1 on failure. */
#include "values.h"

#include <string.h>

int main(void) {
  cove_client_t* c = NULL;
  CHECK(cove_connect(NULL, 10000, &c) == COVE_OK);

  double c2[6][4];
  const int64_t o2[2] = {0, 0}, n2[2] = {6, 4};
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 4; ++j) c2[i][j] = (double)v2(i, j) + 0.5;
  CHECK(cove_define(c, "c2", "f8", 2, n2) == COVE_OK);
  CHECK(cove_put(c, "c2", 1, 2, o2, n2, c2, sizeof c2, "C") == COVE_OK);

  /* Two pieces along the first dimension: i = 0 and i = 1..2. */
  int64_t first[1][5][4], rest[2][5][4];
  const int64_t n3[3] = {3, 5, 4}, o3[3] = {0, 0, 0}, one[3] = {1, 5, 4}, s3[3] = {1, 0, 0}, two[3] = {2, 5, 4};
  for (int j = 0; j < 5; ++j)
    for (int k = 0; k < 4; ++k) {
      first[0][j][k] = v3(0, j, k);
      for (int i = 0; i < 2; ++i) rest[i][j][k] = v3(i + 1, j, k);
    }
  CHECK(cove_define(c, "c3", "i8", 3, n3) == COVE_OK);
  CHECK(cove_put(c, "c3", 1, 3, o3, one, first, sizeof first, "C") == COVE_OK);
  CHECK(cove_put(c, "c3", 1, 3, s3, two, rest, sizeof rest, "C") == COVE_OK);

  float c2f[4][9];
  const int64_t nf[2] = {4, 9};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 9; ++j) c2f[i][j] = (float)v2(i, j) + 0.5f;
  CHECK(cove_define(c, "c2f", "f4", 2, nf) == COVE_OK);
  CHECK(cove_put(c, "c2f", 1, 2, o2, nf, c2f, sizeof c2f, "C") == COVE_OK);

  int32_t c4[3][2][4][3];
  const int64_t o4[4] = {0, 0, 0, 0}, n4[4] = {3, 2, 4, 3};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 4; ++k)
        for (int l = 0; l < 3; ++l) c4[i][j][k][l] = (int32_t)v4(i, j, k, l);
  CHECK(cove_define(c, "c4", "i4", 4, n4) == COVE_OK);
  CHECK(cove_put(c, "c4", 1, 4, o4, n4, c4, sizeof c4, "C") == COVE_OK);

  const char* note = "written by C: c2 is 6 x 4";
  CHECK(cove_put_meta(c, "cnote", 2, note, strlen(note)) == COVE_OK);
  char text[1000];
  for (int i = 0; i < 1000; ++i) text[i] = (char)('a' + i % 26);
  CHECK(cove_put_meta(c, "clong", 5, text, sizeof text) == COVE_OK);

  CHECK(cove_disconnect(c) == COVE_OK);
  printf("c writer: %d failed\n", failures);
  return failures == 0 ? 0 : 1;
}
