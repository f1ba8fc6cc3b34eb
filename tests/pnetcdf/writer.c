/* An unmodified PnetCDF writer: only pnetcdf.h and MPI. Writes coupled.nc
 * (1-D to 4-D variables, a record dimension, vara/vars/varm/varn, iput with
 * wait_all, attributes, text, a scalar) `steps` times, split along y, and
 * an uncoupled plain.nc.
 *   writer STEPS [DIR [LINGER]]   files go to DIR (default .); with LINGER,
 *   the writer stays until that file exists */
#include "values.h"

#include <pnetcdf.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


#define CHECK(call)                                                              \
  do {                                                                           \
    int err_ = (call);                                                           \
    if (err_ != NC_NOERR) {                                                      \
      fprintf(stderr, "writer: line %d: %s: %s\n", __LINE__, #call, ncmpi_strerror(err_)); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                              \
    }                                                                            \
  } while (0)

static void write_plain(const char* dir, int rank, int size) {
  char path[4096];
  snprintf(path, sizeof path, "%s/plain.nc", dir);
  int nc, dx, v;
  CHECK(ncmpi_create(MPI_COMM_WORLD, path, NC_CLOBBER, MPI_INFO_NULL, &nc));
  CHECK(ncmpi_def_dim(nc, "x", NX, &dx));
  CHECK(ncmpi_def_var(nc, "plain", NC_INT, 1, &dx, &v));
  CHECK(ncmpi_enddef(nc));
  MPI_Offset s, c;
  block(NX, size, rank, &s, &c);
  int buf[NX];
  for (MPI_Offset i = 0; i < c; ++i) buf[i] = (int)(7 * (s + i));
  CHECK(ncmpi_put_vara_int_all(nc, v, &s, &c, buf));
  CHECK(ncmpi_close(nc));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
#ifdef COVE_TEST_DTF
  if (dtf_init(getenv("DTF_CONFIG"), "wrt") != 0) MPI_Abort(MPI_COMM_WORLD, 1);
#endif
  int steps = argc > 1 ? atoi(argv[1]) : 1;
  const char* dir = argc > 2 ? argv[2] : ".";
  char path[4096];
  snprintf(path, sizeof path, "%s/coupled.nc", dir);
  MPI_Offset y0, ny, x0, nx;
  block(NY, size, rank, &y0, &ny);
  block(NX, size, rank, &x0, &nx);
  for (int step = 1; step <= steps; ++step) {
    int nc, dt, dz, dy, dx, v1, v2, v3, v4, vbig, vstep, vname, vnarrow;
    CHECK(ncmpi_create(MPI_COMM_WORLD, path, NC_CLOBBER | NC_64BIT_DATA, MPI_INFO_NULL, &nc));
    CHECK(ncmpi_def_dim(nc, "time", NC_UNLIMITED, &dt));
    CHECK(ncmpi_def_dim(nc, "z", NZ, &dz));
    CHECK(ncmpi_def_dim(nc, "y", NY, &dy));
    CHECK(ncmpi_def_dim(nc, "x", NX, &dx));
    int d2[2] = {dy, dx}, d3[3] = {dt, dy, dx}, d4[4] = {dt, dz, dy, dx};
    CHECK(ncmpi_def_var(nc, "v1", NC_DOUBLE, 1, &dx, &v1));
    CHECK(ncmpi_def_var(nc, "v2", NC_FLOAT, 2, d2, &v2));
    CHECK(ncmpi_def_var(nc, "v3", NC_INT, 3, d3, &v3));
    CHECK(ncmpi_def_var(nc, "v4", NC_DOUBLE, 4, d4, &v4));
    CHECK(ncmpi_def_var(nc, "big", NC_DOUBLE, 1, &dx, &vbig));
    CHECK(ncmpi_def_var(nc, "step", NC_INT, 0, NULL, &vstep));
    CHECK(ncmpi_def_var(nc, "name", NC_CHAR, 1, &dx, &vname));
    CHECK(ncmpi_def_var(nc, "narrow", NC_SHORT, 1, &dx, &vnarrow));
    CHECK(ncmpi_put_att_text(nc, NC_GLOBAL, "title", 17, "cove pnetcdf test"));
    int answers[3] = {1, 2, step};
    CHECK(ncmpi_put_att_int(nc, NC_GLOBAL, "answers", NC_INT, 3, answers));
    CHECK(ncmpi_put_att_text(nc, NC_GLOBAL, "dir", (MPI_Offset)strlen(dir), dir));
    CHECK(ncmpi_put_att_text(nc, v1, "units", 3, "m/s"));
    double scale = 0.5;
    CHECK(ncmpi_put_att_double(nc, v1, "scale", NC_FLOAT, 1, &scale));
    CHECK(ncmpi_enddef(nc));

    /* v1, big: blocks of x. */
    double b1[NX], bb[NX];
    for (MPI_Offset i = 0; i < nx; ++i) {
      b1[i] = value_of(1, step, x0 + i);
      bb[i] = (double)(x0 + i) * 1e9;
    }
    CHECK(ncmpi_put_vara_double_all(nc, v1, &x0, &nx, b1));
    CHECK(ncmpi_put_vara_double_all(nc, vbig, &x0, &nx, bb));
    /* narrow: ints put into shorts; the out-of-range ones are NC_ERANGE and stored as NC_FILL_SHORT */
    int bn[NX], out_of_range = 0;
    for (MPI_Offset i = 0; i < nx; ++i) {
      bn[i] = (int)(x0 + i) * 10000;
      out_of_range |= bn[i] > 32767;
    }
    int rc = ncmpi_put_vara_int_all(nc, vnarrow, &x0, &nx, bn);
    if (rc != (out_of_range ? NC_ERANGE : NC_NOERR)) {
      fprintf(stderr, "writer: put_vara_int_all into a short returned %d (%s)\n", rc, ncmpi_strerror(rc));
      MPI_Abort(MPI_COMM_WORLD, 1);
    }

    /* v2: rows y0..y0+ny; even columns with vars, odd ones with varm from a column-major buffer. */
    float even[NY * NX], odd[NY * NX];
    for (MPI_Offset r = 0; r < ny; ++r) {
      for (int c = 0; c < NX / 2; ++c) {
        even[r * (NX / 2) + c] = (float)value_of(2, step, (y0 + r) * NX + 2 * c);
        odd[c * ny + r] = (float)value_of(2, step, (y0 + r) * NX + 2 * c + 1);
      }
    }
    MPI_Offset s2[2] = {y0, 0}, c2[2] = {ny, NX / 2}, st2[2] = {1, 2}, im2[2] = {1, ny};
    CHECK(ncmpi_put_vars_float_all(nc, v2, s2, c2, st2, even));
    s2[1] = 1;
    CHECK(ncmpi_put_varm_float_all(nc, v2, s2, c2, st2, im2, odd));

    /* v3: one iput per record, then wait_all. */
    int b3[NT3][NY * NX], reqs[NT3], statuses[NT3];
    for (int t = 0; t < NT3; ++t) {
      for (MPI_Offset r = 0; r < ny; ++r)
        for (int c = 0; c < NX; ++c) b3[t][r * NX + c] = (int)value_of(3, step, (t * NY + y0 + r) * NX + c);
      MPI_Offset s3[3] = {t, y0, 0}, c3[3] = {1, ny, NX};
      CHECK(ncmpi_iput_vara_int(nc, v3, s3, c3, b3[t], &reqs[t]));
    }
    CHECK(ncmpi_wait_all(nc, NT3, reqs, statuses));
    for (int t = 0; t < NT3; ++t) CHECK(statuses[t]);

    /* v4: varn, one request per (record, half of z). */
    static double b4[NT4 * NZ * NY * NX];
    MPI_Offset starts[4][4], counts[4][4];
    MPI_Offset* sp[4];
    MPI_Offset* cp[4];
    size_t k = 0;
    for (int q = 0; q < 4; ++q) {
      int t = q / 2, z0 = (q % 2) * (NZ / 2);
      MPI_Offset s4[4] = {t, z0, y0, 0}, c4[4] = {1, NZ / 2, ny, NX};
      memcpy(starts[q], s4, sizeof s4);
      memcpy(counts[q], c4, sizeof c4);
      sp[q] = starts[q];
      cp[q] = counts[q];
      for (int z = 0; z < NZ / 2; ++z)
        for (MPI_Offset r = 0; r < ny; ++r)
          for (int c = 0; c < NX; ++c) b4[k++] = value_of(4, step, ((t * NZ + z0 + z) * NY + y0 + r) * NX + c);
    }
    CHECK(ncmpi_put_varn_double_all(nc, v4, 4, sp, cp, b4));

    int sv = step;
    CHECK(ncmpi_put_var_int_all(nc, vstep, &sv));

    /* name: rank 0 alone, in independent mode. */
    CHECK(ncmpi_begin_indep_data(nc));
    if (rank == 0) CHECK(ncmpi_put_var_text(nc, vname, "abcdefghij"));
    CHECK(ncmpi_end_indep_data(nc));
#ifdef COVE_TEST_DTF
    CHECK(dtf_transfer(path));
    /* The version is published: a put now would change it under its readers. */
    int late = -1;
    if (ncmpi_put_var_int_all(nc, vstep, &late) != NC_EPERM) {
      fprintf(stderr, "writer: a put after dtf_transfer did not fail with NC_EPERM\n");
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    CHECK(dtf_transfer(path)); /* nothing left to publish */
#endif
    CHECK(ncmpi_close(nc));
  }
  write_plain(dir, rank, size);
  if (argc > 3) { /* stay until the file argv[3] exists (a shallow writer's data lives here) */
    if (rank == 0) printf("writer: waiting for %s\n", argv[3]);
    fflush(stdout);
    int present = 0;
    while (!present) {
      if (rank == 0) {
        FILE* f = fopen(argv[3], "r");
        present = f != NULL;
        if (f) fclose(f);
      }
      MPI_Bcast(&present, 1, MPI_INT, 0, MPI_COMM_WORLD);
      if (!present) usleep(20000);
    }
  }
  if (rank == 0) printf("writer: wrote %d step(s) of %s from %d ranks\n", steps, path, size);
#ifdef COVE_TEST_DTF
  dtf_finalize();
#endif
  MPI_Finalize();
  return 0;
}
