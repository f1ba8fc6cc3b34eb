/* Bad input and edge cases of an unmodified PnetCDF program, checked for
 * the return codes PnetCDF 1.12 gives on real files.
 *   edges real|cove|crash DIR
 * "real" runs the cases the real library itself gets right; "cove" (under
 * libcove-pnetcdf) also those where the real library's own arithmetic
 * overflows (it answers NC_EFILE or succeeds), for which Cove must give
 * the coordinate error, and two files whose Cove variable names would
 * collide if the path were not delimited. "crash" is a writer that dies
 * before close, run before "cove". */
#include <pnetcdf.h>

#include <stdio.h>
#include <string.h>

static int failures = 0, checks = 0;

#define EXPECT(call, code)                                                                         \
  do {                                                                                             \
    int got_ = (call);                                                                             \
    ++checks;                                                                                      \
    if (got_ != (code)) {                                                                          \
      fprintf(stderr, "edges: line %d: %s gave %d (%s), expected %s\n", __LINE__, #call, got_,     \
              ncmpi_strerror(got_), #code);                                                        \
      ++failures;                                                                                  \
    }                                                                                              \
  } while (0)

/* A one-variable file whose path and variable name both contain ':'. */
static void write_colon(const char* path, const char* var, int base) {
  int nc, dx, v, buf[4];
  EXPECT(ncmpi_create(MPI_COMM_WORLD, path, NC_CLOBBER, MPI_INFO_NULL, &nc), NC_NOERR);
  EXPECT(ncmpi_def_dim(nc, "x", 4, &dx), NC_NOERR);
  EXPECT(ncmpi_def_var(nc, var, NC_INT, 1, &dx, &v), NC_NOERR);
  EXPECT(ncmpi_enddef(nc), NC_NOERR);
  for (int i = 0; i < 4; ++i) buf[i] = base + i;
  EXPECT(ncmpi_put_var_int_all(nc, v, buf), NC_NOERR);
  EXPECT(ncmpi_close(nc), NC_NOERR);
}

static void read_colon(const char* path, const char* var, int base) {
  int nc, v, buf[4] = {0};
  EXPECT(ncmpi_open(MPI_COMM_WORLD, path, NC_NOWRITE, MPI_INFO_NULL, &nc), NC_NOERR);
  EXPECT(ncmpi_inq_varid(nc, var, &v), NC_NOERR);
  EXPECT(ncmpi_get_var_int_all(nc, v, buf), NC_NOERR);
  for (int i = 0; i < 4; ++i) EXPECT(buf[i], base + i);
  EXPECT(ncmpi_close(nc), NC_NOERR);
}

/* crash: puts all of edges-crash.nc and exits without closing it, as a
 * writer that dies would. cove: the next writer puts only the first half;
 * the second half (a variable not in fill mode) reads as a new file's
 * zeros, never the dead writer's bytes. */
static void crashed_writer(const char* path, int crash) {
  int nc, dx, v, buf[4] = {666, 666, 666, 666};
  EXPECT(ncmpi_create(MPI_COMM_WORLD, path, NC_CLOBBER, MPI_INFO_NULL, &nc), NC_NOERR);
  EXPECT(ncmpi_def_dim(nc, "x", 4, &dx), NC_NOERR);
  EXPECT(ncmpi_def_var(nc, "v", NC_INT, 1, &dx, &v), NC_NOERR);
  EXPECT(ncmpi_enddef(nc), NC_NOERR);
  MPI_Offset start = 0, count = crash ? 4 : 2;
  if (!crash) buf[0] = 1, buf[1] = 2;
  EXPECT(ncmpi_put_vara_int_all(nc, v, &start, &count, buf), NC_NOERR);
  if (crash) return;
  EXPECT(ncmpi_close(nc), NC_NOERR);
  EXPECT(ncmpi_open(MPI_COMM_WORLD, path, NC_NOWRITE, MPI_INFO_NULL, &nc), NC_NOERR);
  EXPECT(ncmpi_get_vara_int_all(nc, v, &start, &count, buf), NC_NOERR);
  EXPECT(buf[0] * 10 + buf[1], 12);
  start = 2;
  buf[0] = buf[1] = 666;
  EXPECT(ncmpi_get_vara_int_all(nc, v, &start, &count, buf), NC_NOERR);
  EXPECT(buf[0] * 10 + buf[1], 0);
  buf[0] = buf[1] = 666;
  int req = -1;
  EXPECT(ncmpi_iget_vara_int(nc, v, &start, &count, buf, &req), NC_NOERR);
  EXPECT(ncmpi_wait_all(nc, 1, &req, NULL), NC_NOERR);
  EXPECT(buf[0] * 10 + buf[1], 0);
  EXPECT(ncmpi_close(nc), NC_NOERR);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc != 3) {
    fprintf(stderr, "usage: edges real|cove|crash DIR\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int cove = strcmp(argv[1], "cove") == 0;
  char path[4096], plain[4096], colon[4096], crash[4096];
  snprintf(path, sizeof path, "%s/edges.nc", argv[2]);
  snprintf(plain, sizeof plain, "%s/edges-c.nc", argv[2]);
  snprintf(colon, sizeof colon, "%s/edges-c.nc:b", argv[2]);
  snprintf(crash, sizeof crash, "%s/edges-crash.nc", argv[2]);
  if (strcmp(argv[1], "crash") == 0) {
    crashed_writer(crash, 1);
    MPI_Finalize();
    return failures == 0 ? 0 : 1;
  }

  int nc, dx, dt, v, r, id, one = 1, buf[16] = {0};
  EXPECT(ncmpi_create(MPI_COMM_WORLD, path, NC_CLOBBER | NC_64BIT_OFFSET, MPI_INFO_NULL, &nc), NC_NOERR);
  EXPECT(ncmpi_def_dim(nc, "x", 10, &dx), NC_NOERR);
  EXPECT(ncmpi_def_dim(nc, "time", NC_UNLIMITED, &dt), NC_NOERR);
  EXPECT(ncmpi_def_dim(nc, "huge", 1LL << 40, &id), NC_EDIMSIZE); /* beyond CDF-2's 2^32-4 */
  /* 1000 is no netCDF type; unsigned and 64-bit types need CDF-5. */
  EXPECT(ncmpi_def_var(nc, "a", 1000, 1, &dx, &id), NC_EBADTYPE);
  EXPECT(ncmpi_def_var(nc, "b", NC_UBYTE, 1, &dx, &id), NC_ESTRICTCDF2);
  EXPECT(ncmpi_def_var(nc, "c", NC_INT64, 1, &dx, &id), NC_ESTRICTCDF2);
  EXPECT(ncmpi_put_att_int(nc, NC_GLOBAL, "a", 1000, 1, &one), NC_EBADTYPE);
  EXPECT(ncmpi_put_att_int(nc, NC_GLOBAL, "b", NC_USHORT, 1, &one), NC_ESTRICTCDF2);
  EXPECT(ncmpi_def_var(nc, "v", NC_INT, 1, &dx, &v), NC_NOERR);
  EXPECT(ncmpi_def_var(nc, "r", NC_INT, 1, &dt, &r), NC_NOERR);
  EXPECT(ncmpi_enddef(nc), NC_NOERR);

  MPI_Offset start = 0, count = 10, stride = 1;
  for (int i = 0; i < 10; ++i) buf[i] = 10 + i;
  EXPECT(ncmpi_put_vara_int_all(nc, v, &start, &count, buf), NC_NOERR);
  /* A record far beyond what CDF-2 can count. */
  start = 1LL << 62, count = 1;
  EXPECT(ncmpi_put_vara_int_all(nc, r, &start, &count, buf), NC_EINVALCOORDS);
  if (cove) {
    /* (count-1)*stride wraps around to a small or negative number. */
    start = 1, count = 3, stride = (1LL << 62) + 1;
    EXPECT(ncmpi_get_vars_int_all(nc, v, &start, &count, &stride, buf), NC_EEDGE);
    start = 0, count = 3, stride = 1LL << 62;
    EXPECT(ncmpi_put_vars_int_all(nc, r, &start, &count, &stride, buf), NC_EEDGE);
    start = 0, count = 1LL << 61;
    EXPECT(ncmpi_put_vara_int_all(nc, r, &start, &count, buf), NC_EEDGE);
  }
  start = 0, count = 2;
  for (int i = 0; i < 2; ++i) buf[i] = 70 + i;
  EXPECT(ncmpi_put_vara_int_all(nc, r, &start, &count, buf), NC_NOERR);

  /* A scalar's varn calls need no starts (NULL, as PnetCDF allows). */
  int scalar, x = 5, y = 0;
  EXPECT(ncmpi_redef(nc), NC_NOERR);
  EXPECT(ncmpi_def_var(nc, "scalar", NC_INT, 0, NULL, &scalar), NC_NOERR);
  EXPECT(ncmpi_enddef(nc), NC_NOERR);
  EXPECT(ncmpi_put_varn_int_all(nc, scalar, 1, NULL, NULL, &x), NC_NOERR);
  EXPECT(ncmpi_get_varn_int_all(nc, scalar, 1, NULL, NULL, &y), NC_NOERR);
  EXPECT(y, 5);
  EXPECT(ncmpi_close(nc), NC_NOERR);

  /* The failed puts added no records. */
  MPI_Offset len = -1;
  EXPECT(ncmpi_open(MPI_COMM_WORLD, path, NC_NOWRITE, MPI_INFO_NULL, &nc), NC_NOERR);
  EXPECT(ncmpi_inq_dimlen(nc, dt, &len), NC_NOERR);
  EXPECT(len, 2);
  memset(buf, 0, sizeof buf);
  EXPECT(ncmpi_get_var_int_all(nc, r, buf), NC_NOERR);
  EXPECT(buf[0] * 100 + buf[1], 7071);
  EXPECT(ncmpi_get_var_int_all(nc, v, buf), NC_NOERR);
  EXPECT(buf[9], 19);
  EXPECT(ncmpi_close(nc), NC_NOERR);

  /* "edges-c.nc" + "b:c" and "edges-c.nc:b" + "c", both at version 1, are different variables
   * (only through Cove: MPI-IO takes "...:" in a path for a file system prefix). */
  if (cove) {
    write_colon(plain, "b:c", 100);
    write_colon(colon, "c", 200);
    read_colon(plain, "b:c", 100);
    read_colon(colon, "c", 200);
    crashed_writer(crash, 0);
  }

  printf("edges %s: %d checks, %d failed\n", argv[1], checks, failures);
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
