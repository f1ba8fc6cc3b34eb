/* The C reader of fortran.fortran_to_c: gets what fortran_writer.f90 put,
 * in C order (x[i][j] is the writer's a(i+1,j+1)), and checks every
 * element, a region at an offset, the put_local piece and the metadata.
 * Exits 1 on any failed check. */
#include "values.h"

#include <string.h>

int main(void) {
  cove_client_t* c = NULL;
  CHECK(cove_connect(NULL, 10000, &c) == COVE_OK);

  double f2[5][7];
  const int64_t o2[2] = {0, 0}, n2[2] = {5, 7};
  CHECK(cove_get(c, "f2", 1, 2, o2, n2, f2, sizeof f2, 5000, "C") == COVE_OK);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 7; ++j) CHECK(f2[i][j] == (double)v2(i, j) + 0.5);

  int32_t f3[4][3][6];
  const int64_t o3[3] = {0, 0, 0}, n3[3] = {4, 3, 6};
  CHECK(cove_get(c, "f3", 1, 3, o3, n3, f3, sizeof f3, 5000, "C") == COVE_OK);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 6; ++k) CHECK(f3[i][j][k] == v3(i, j, k));
  /* A region across both of the writer's pieces, at an offset. */
  int32_t part[2][2][3];
  const int64_t s3[3] = {1, 1, 1}, m3[3] = {2, 2, 3};
  CHECK(cove_get(c, "f3", 1, 3, s3, m3, part, sizeof part, 5000, "C") == COVE_OK);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 3; ++k) CHECK(part[i][j][k] == v3(1 + i, 1 + j, 1 + k));

  int64_t f4[2][3][4][5];
  const int64_t o4[4] = {0, 0, 0, 0}, n4[4] = {2, 3, 4, 5};
  CHECK(cove_get(c, "f4", 1, 4, o4, n4, f4, sizeof f4, 5000, "C") == COVE_OK);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k)
        for (int l = 0; l < 5; ++l) CHECK(f4[i][j][k][l] == v4(i, j, k, l));

  float sec[3][4];
  const int64_t ns[2] = {3, 4};
  CHECK(cove_get(c, "fsec", 1, 2, o2, ns, sec, sizeof sec, 5000, "C") == COVE_OK);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) CHECK(sec[i][j] == (float)v2(i, j) + 0.5f);
  CHECK(cove_get(c, "fsec", 2, 2, o2, ns, sec, sizeof sec, 0, "C") == COVE_NOT_FOUND); /* refused put_local */

  double local[8][5];
  const int64_t nl[2] = {8, 5};
  CHECK(cove_get(c, "flocal", 1, 2, o2, nl, local, sizeof local, 5000, "C") == COVE_OK);
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 5; ++j) CHECK(local[i][j] == (double)v2(i, j) + 0.25);

  char note[64] = {0};
  size_t size = 0;
  uint64_t version = 0;
  CHECK(cove_get_meta(c, "fnote", COVE_META_EXACT, 3, 5000, note, sizeof note - 1, &size, &version) == COVE_OK);
  CHECK(strcmp(note, "written by Fortran: f2 is 5 x 7") == 0 && size == strlen(note) && version == 3);
  /* The writer's refused puts left nothing. */
  CHECK(cove_latest(c, "f2", &version) == COVE_OK && version == 1);

  CHECK(cove_disconnect(c) == COVE_OK);
  printf("c reader: %d failed\n", failures);
  return failures == 0 ? 0 : 1;
}
