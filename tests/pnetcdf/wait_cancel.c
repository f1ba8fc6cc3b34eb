/* ncmpi_wait and ncmpi_cancel are not ncmpi_wait_all: each has its own
 * mode rules and effect in PnetCDF 1.12, which the preload must keep.
 *   wait_cancel file|coupled PATH
 * "file": PATH is a real file (natively, or preloaded with no rule matching
 * it); "coupled": PATH is coupled through Cove. Either way a cancelled put
 * is never written (7 is read back, not 8), wait needs independent mode
 * (NC_ENOTINDEP) and wait_all collective mode (NC_EINDEP), a refused wait
 * leaves its request pending, and a put still pending at close is
 * cancelled (NC_EPENDING). Prints one line per call, the same for both, so
 * that runs can be compared, and exits 1 on a wrong code or value. */
#include <pnetcdf.h>

#include <stdio.h>
#include <string.h>

static int failures = 0, rank = 0;

#define EXPECT(call, code)                                                                         \
  do {                                                                                             \
    int got_ = (call);                                                                             \
    if (rank == 0) printf("%s: %d\n", #call, got_);                                                               \
    if (got_ != (code)) {                                                                          \
      fprintf(stderr, "wait_cancel: line %d: %s gave %d (%s), expected %s\n", __LINE__, #call,     \
              got_, ncmpi_strerror(got_), #code);                                                  \
      ++failures;                                                                                  \
    }                                                                                              \
  } while (0)

#define VALUE(got, want)                                                                           \
  do {                                                                                             \
    if (rank == 0) printf("%s = %d\n", #got, (int)(got));                                                         \
    if ((got) != (want)) {                                                                         \
      fprintf(stderr, "wait_cancel: line %d: %s is %d, expected %d\n", __LINE__, #got, (int)(got), \
              (int)(want));                                                                        \
      ++failures;                                                                                  \
    }                                                                                              \
  } while (0)

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int nprocs = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  if (argc != 3 || (strcmp(argv[1], "file") != 0 && strcmp(argv[1], "coupled") != 0)) {
    fprintf(stderr, "usage: wait_cancel file|coupled PATH\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int nc, dx, v, req, status, nreqs, buf[4], got[4];
  EXPECT(ncmpi_create(MPI_COMM_WORLD, argv[2], NC_CLOBBER, MPI_INFO_NULL, &nc), NC_NOERR);
  EXPECT(ncmpi_def_dim(nc, "x", 4, &dx), NC_NOERR);
  EXPECT(ncmpi_def_var(nc, "x", NC_INT, 1, &dx, &v), NC_NOERR);
  /* Nonblocking calls may be posted in define mode, but not waited for. */
  EXPECT(ncmpi_wait_all(nc, NC_REQ_ALL, NULL, NULL), NC_EINDEFINE);
  EXPECT(ncmpi_wait(nc, NC_REQ_ALL, NULL, NULL), NC_EINDEFINE);
  EXPECT(ncmpi_enddef(nc), NC_NOERR);
  for (int i = 0; i < 4; ++i) buf[i] = 7;
  EXPECT(ncmpi_put_var_int_all(nc, v, buf), NC_NOERR);

  /* A cancelled put is never written. */
  for (int i = 0; i < 4; ++i) buf[i] = 8;
  EXPECT(ncmpi_iput_var_int(nc, v, buf, &req), NC_NOERR);
  VALUE(req % 2, 0); /* PnetCDF's put requests have even ids */
  EXPECT(ncmpi_cancel(nc, 1, &req, &status), NC_NOERR);
  VALUE(req, NC_REQ_NULL);
  VALUE(status, NC_NOERR);
  EXPECT(ncmpi_inq_nreqs(nc, &nreqs), NC_NOERR);
  VALUE(nreqs, 0);
  EXPECT(ncmpi_wait_all(nc, NC_REQ_ALL, NULL, NULL), NC_NOERR);
  memset(got, 0, sizeof got);
  EXPECT(ncmpi_get_var_int_all(nc, v, got), NC_NOERR);
  for (int i = 0; i < 4; ++i) VALUE(got[i], 7);
  /* Cancelled by NC_PUT_REQ_ALL, and before a wait that would store it. */
  EXPECT(ncmpi_iput_var_int(nc, v, buf, &req), NC_NOERR);
  EXPECT(ncmpi_cancel(nc, NC_PUT_REQ_ALL, NULL, NULL), NC_NOERR);
  EXPECT(ncmpi_wait_all(nc, NC_REQ_ALL, NULL, NULL), NC_NOERR);
  memset(got, 0, sizeof got);
  EXPECT(ncmpi_get_var_int_all(nc, v, got), NC_NOERR);
  for (int i = 0; i < 4; ++i) VALUE(got[i], 7);
  /* A get waited for with a put reads what the put wrote: PnetCDF's wait
   * does the puts first. */
  int both[2];
  for (int i = 0; i < 4; ++i) buf[i] = 6, got[i] = 0;
  EXPECT(ncmpi_iget_var_int(nc, v, got, &both[0]), NC_NOERR);
  EXPECT(ncmpi_iput_var_int(nc, v, buf, &both[1]), NC_NOERR);
  VALUE(got[0], 0); /* not read before the wait */
  EXPECT(ncmpi_wait_all(nc, 2, both, NULL), NC_NOERR);
  for (int i = 0; i < 4; ++i) VALUE(got[i], 6);
  for (int i = 0; i < 4; ++i) buf[i] = 7;
  EXPECT(ncmpi_put_var_int_all(nc, v, buf), NC_NOERR);
  EXPECT(ncmpi_cancel(nc, 0, NULL, NULL), NC_NOERR);
  EXPECT(ncmpi_cancel(nc, -4, NULL, NULL), NC_EINVAL);

  /* wait in collective mode and wait_all in independent mode are refused,
   * and the request stays pending for the right one. */
  buf[0] = 9;
  MPI_Offset start = rank % 4;
  EXPECT(ncmpi_iput_var1_int(nc, v, &start, buf, &req), NC_NOERR);
  EXPECT(ncmpi_wait(nc, 1, &req, &status), NC_ENOTINDEP);
  EXPECT(ncmpi_inq_nreqs(nc, &nreqs), NC_NOERR);
  VALUE(nreqs, 1);
  EXPECT(ncmpi_begin_indep_data(nc), NC_NOERR);
  EXPECT(ncmpi_wait_all(nc, 1, &req, &status), NC_EINDEP);
  EXPECT(ncmpi_inq_nreqs(nc, &nreqs), NC_NOERR);
  VALUE(nreqs, 1);
  VALUE(req == NC_REQ_NULL, 0);
  status = -1;
  EXPECT(ncmpi_wait(nc, 1, &req, &status), NC_NOERR);
  VALUE(status, NC_NOERR);
  VALUE(req, NC_REQ_NULL);
  EXPECT(ncmpi_wait(nc, 0, NULL, NULL), NC_NOERR);
  EXPECT(ncmpi_inq_nreqs(nc, &nreqs), NC_NOERR);
  VALUE(nreqs, 0);

  /* A get can be cancelled on either; waiting for a cancelled id is an error. */
  EXPECT(ncmpi_iget_var_int(nc, v, got, &req), NC_NOERR);
  VALUE(req % 2, 1); /* and gets odd ones */
  int cancelled = req;
  EXPECT(ncmpi_cancel(nc, 1, &req, &status), NC_NOERR);
  VALUE(req, NC_REQ_NULL);
  EXPECT(ncmpi_inq_nreqs(nc, &nreqs), NC_NOERR);
  VALUE(nreqs, 0);
  EXPECT(ncmpi_wait(nc, 1, &cancelled, &status), NC_EINVAL_REQUEST);
  VALUE(status, NC_EINVAL_REQUEST);
  EXPECT(ncmpi_end_indep_data(nc), NC_NOERR);
  memset(got, 0, sizeof got);
  EXPECT(ncmpi_get_var_int_all(nc, v, got), NC_NOERR);
  for (int i = 0; i < 4; ++i) VALUE(got[i], i < nprocs ? 9 : 7);
  /* The entry points that answer from another one for coupled files. */
  int ndims = -1, nvars = -1;
  EXPECT(ncmpi_inq_ndims(nc, &ndims), NC_NOERR);
  EXPECT(ncmpi_inq_nvars(nc, &nvars), NC_NOERR);
  VALUE(ndims, 1);
  VALUE(nvars, 1);
  EXPECT(ncmpi_close(nc), NC_NOERR);
  /* A put still pending at close is cancelled (NC_EPENDING), not written. */
  EXPECT(ncmpi_open(MPI_COMM_WORLD, argv[2], NC_WRITE, MPI_INFO_NULL, &nc), NC_NOERR);
  for (int i = 0; i < 4; ++i) buf[i] = 5;
  EXPECT(ncmpi_iput_var_int(nc, v, buf, &req), NC_NOERR);
  EXPECT(ncmpi_close(nc), NC_EPENDING);
  EXPECT(ncmpi_open(MPI_COMM_WORLD, argv[2], NC_NOWRITE, MPI_INFO_NULL, &nc), NC_NOERR);
  memset(got, 0, sizeof got);
  EXPECT(ncmpi_get_var_int_all(nc, v, got), NC_NOERR);
  for (int i = 0; i < 4; ++i) VALUE(got[i], i < nprocs ? 9 : 7);
  EXPECT(ncmpi_close(nc), NC_NOERR);
  if (failures) fprintf(stderr, "wait_cancel: %d failures\n", failures);
  MPI_Finalize();
  return failures ? 1 : 0;
}
