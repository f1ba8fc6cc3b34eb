/* A file's life in one process: create with fill values, close, reopen
 * read-only, reopen NC_WRITE and change it, reopen again; and the create
 * checks (NC_NOCLOBBER, NC_NETCDF4), inq_version and inq_file_info;
 * ncmpi_delete and unlink().
 *   life DIR
 * Rank 0 prints every value and return code, so that the run on a real
 * file and the run coupled through Cove can be compared line by line
 * (tests/pnetcdf/run.sh life). Only cells PnetCDF defines are read:
 * written ones, and fill values of variables in fill mode. */
#include <pnetcdf.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int rank = 0;

#define SAY(call)                                                \
  do {                                                           \
    int rc_ = (call);                                            \
    if (rank == 0) printf("%s: %d\n", #call, rc_);               \
  } while (0)

static void show_ints(int nc, const char* name, MPI_Offset n) {
  int v, buf[16];
  MPI_Offset start[2] = {0, 0}, count[2] = {n, 0};
  int rc = ncmpi_inq_varid(nc, name, &v);
  if (rank == 0) printf("inq_varid %s: %d\n", name, rc);
  if (rc != NC_NOERR) return;
  memset(buf, 0, sizeof buf);
  SAY(ncmpi_get_vara_int_all(nc, v, start, count, buf));
  if (rank == 0) {
    printf("%s =", name);
    for (MPI_Offset i = 0; i < n; ++i) printf(" %d", buf[i]);
    printf("\n");
  }
}

/* Every attribute of a variable (or NC_GLOBAL): name, type, length, text values. */
static void show_atts(int nc, int varid) {
  int natts = -1;
  SAY(varid == NC_GLOBAL ? ncmpi_inq_natts(nc, &natts) : ncmpi_inq_varnatts(nc, varid, &natts));
  for (int i = 0; i < natts; ++i) {
    char name[NC_MAX_NAME + 1], text[64] = "";
    nc_type type;
    MPI_Offset len;
    ncmpi_inq_attname(nc, varid, i, name);
    ncmpi_inq_att(nc, varid, name, &type, &len);
    if (type == NC_CHAR && len < 63) ncmpi_get_att_text(nc, varid, name, text);
    if (rank == 0) printf("  att %d of %d: %s type %d len %lld %s\n", i, varid, name, type, len, text);
  }
}

/* rename_att and copy_att on a coupled file and between it and an
 * uncoupled one, in define and data mode. */
static void attributes(const char* dir) {
  char path[4096], plain[4096];
  snprintf(path, sizeof path, "%s/life_att.nc", dir);
  snprintf(plain, sizeof plain, "%s/plain_att.nc", dir);
  int nc, other, x, n = 7;
  SAY(ncmpi_create(MPI_COMM_WORLD, path, NC_CLOBBER, MPI_INFO_NULL, &nc));
  SAY(ncmpi_create(MPI_COMM_WORLD, plain, NC_CLOBBER, MPI_INFO_NULL, &other));
  SAY(ncmpi_put_att_text(nc, NC_GLOBAL, "title", 5, "hello"));
  SAY(ncmpi_put_att_int(nc, NC_GLOBAL, "n", NC_INT, 1, &n));
  SAY(ncmpi_put_att_text(other, NC_GLOBAL, "from_plain", 3, "abc"));
  SAY(ncmpi_def_var(nc, "x", NC_INT, 0, NULL, &x));
  SAY(ncmpi_copy_att(nc, NC_GLOBAL, "title", nc, x));
  SAY(ncmpi_copy_att(nc, NC_GLOBAL, "title", nc, NC_GLOBAL));
  SAY(ncmpi_copy_att(nc, NC_GLOBAL, "title", other, NC_GLOBAL));
  SAY(ncmpi_copy_att(other, NC_GLOBAL, "from_plain", nc, NC_GLOBAL));
  SAY(ncmpi_copy_att(nc, NC_GLOBAL, "missing", nc, x));
  SAY(ncmpi_copy_att(nc, 5, "title", nc, x));
  SAY(ncmpi_copy_att(nc, NC_GLOBAL, "title", nc, 5));
  SAY(ncmpi_copy_att(nc, NC_GLOBAL, "", nc, x));
  SAY(ncmpi_rename_att(nc, NC_GLOBAL, "n", "count"));
  SAY(ncmpi_rename_att(nc, NC_GLOBAL, "count", "title"));
  SAY(ncmpi_rename_att(nc, NC_GLOBAL, "missing", "other"));
  SAY(ncmpi_rename_att(nc, 5, "count", "other"));
  SAY(ncmpi_rename_att(nc, NC_GLOBAL, "count", ""));
  SAY(ncmpi_enddef(nc));
  SAY(ncmpi_enddef(other));
  /* data mode: a name may not grow, a copy not add or grow an attribute */
  SAY(ncmpi_rename_att(nc, NC_GLOBAL, "count", "cnt"));
  SAY(ncmpi_rename_att(nc, NC_GLOBAL, "cnt", "a_longer_name"));
  SAY(ncmpi_put_att_text(other, NC_GLOBAL, "from_plain", 2, "de"));
  SAY(ncmpi_copy_att(other, NC_GLOBAL, "from_plain", nc, NC_GLOBAL));
  SAY(ncmpi_copy_att(nc, NC_GLOBAL, "title", nc, NC_GLOBAL));
  SAY(ncmpi_copy_att(nc, NC_GLOBAL, "cnt", nc, x));
  SAY(ncmpi_copy_att(nc, x, "title", other, NC_GLOBAL));
  SAY(ncmpi_close(other));
  SAY(ncmpi_close(nc));
  SAY(ncmpi_open(MPI_COMM_WORLD, path, NC_NOWRITE, MPI_INFO_NULL, &nc));
  show_atts(nc, NC_GLOBAL);
  show_atts(nc, 0);
  SAY(ncmpi_close(nc));
  SAY(ncmpi_open(MPI_COMM_WORLD, plain, NC_NOWRITE, MPI_INFO_NULL, &other));
  show_atts(other, NC_GLOBAL);
  SAY(ncmpi_close(other));
}

static void show(int nc) {
  int v, ndims, nvars, mode = -1, no_fill = -1, fill = 0;
  double d[6];
  MPI_Offset len = -1, start[2] = {0, 0}, count[2] = {1, 3};
  SAY(ncmpi_inq(nc, &ndims, &nvars, NULL, NULL));
  SAY(ncmpi_inq_version(nc, &mode));
  if (rank == 0) printf("ndims %d nvars %d version mode %d\n", ndims, nvars, mode);
  show_ints(nc, "a", 6);
  show_ints(nc, "c", 6);
  show_ints(nc, "s", 6);
  show_ints(nc, "v", 6);
  SAY(ncmpi_inq_varid(nc, "b", &v));
  SAY(ncmpi_get_var_double_all(nc, v, d));
  if (rank == 0) printf("b = %g %g %g %g %g %g\n", d[0], d[1], d[2], d[3], d[4], d[5]);
  SAY(ncmpi_inq_var_fill(nc, v, &no_fill, d));
  if (rank == 0) printf("b no_fill %d fill %g\n", no_fill, d[0]);
  SAY(ncmpi_inq_varid(nc, "r", &v));
  SAY(ncmpi_inq_var_fill(nc, v, &no_fill, &fill));
  if (rank == 0) printf("r no_fill %d fill %d\n", no_fill, fill);
  SAY(ncmpi_inq_dimlen(nc, 1, &len));
  if (rank == 0) printf("records %lld\n", (long long)len);
  int r[6] = {0};
  count[1] = 6;
  SAY(ncmpi_get_vara_int_all(nc, v, start, count, r));
  start[0] = 1;
  count[1] = 3;
  SAY(ncmpi_get_vara_int_all(nc, v, start, count, r + 6 - 3));
  if (rank == 0) printf("r = %d %d %d %d %d %d | %d %d %d\n", r[0], r[1], r[2], r[3], r[4], r[5], r[3], r[4], r[5]);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc != 2) {
    fprintf(stderr, "usage: life DIR\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  char path[4096], other[4096];
  snprintf(path, sizeof path, "%s/life.nc", argv[1]);
  snprintf(other, sizeof other, "%s/life4.nc", argv[1]);
  int nc, dx, dt, a, b, c, r, old = -1, dims[2];
  SAY(ncmpi_create(MPI_COMM_WORLD, other, NC_NETCDF4, MPI_INFO_NULL, &nc));
  SAY(ncmpi_create(MPI_COMM_WORLD, other, NC_64BIT_OFFSET | NC_64BIT_DATA, MPI_INFO_NULL, &nc));
  SAY(ncmpi_create(MPI_COMM_WORLD, path, NC_CLOBBER | NC_64BIT_DATA, MPI_INFO_NULL, &nc));
  SAY(ncmpi_set_fill(nc, NC_FILL, &old));
  if (rank == 0) printf("old fill mode %d\n", old);
  SAY(ncmpi_def_dim(nc, "x", 6, &dx));
  SAY(ncmpi_def_dim(nc, "t", NC_UNLIMITED, &dt));
  SAY(ncmpi_def_var(nc, "a", NC_INT, 1, &dx, &a));
  SAY(ncmpi_def_var(nc, "b", NC_DOUBLE, 1, &dx, &b));
  SAY(ncmpi_def_var(nc, "c", NC_INT, 1, &dx, &c));
  int s, vd;
  short sfill = 99;
  SAY(ncmpi_def_var(nc, "v", NC_INT, 1, &dx, &vd));
  SAY(ncmpi_def_var(nc, "s", NC_SHORT, 1, &dx, &s));
  SAY(ncmpi_put_att_short(nc, s, "_FillValue", NC_SHORT, 1, &sfill));
  dims[0] = dt;
  dims[1] = dx;
  SAY(ncmpi_def_var(nc, "r", NC_INT, 2, dims, &r));
  double bfill = -1.5;
  int rfill = 99;
  SAY(ncmpi_def_var_fill(nc, b, 0, &bfill));
  SAY(ncmpi_def_var_fill(nc, c, 1, NULL));
  SAY(ncmpi_put_att_int(nc, r, "_FillValue", NC_INT, 1, &rfill));
  SAY(ncmpi_fill_var_rec(nc, r, 0));
  MPI_Info info = MPI_INFO_NULL;
  SAY(ncmpi_inq_file_info(nc, &info));
  int flag = 0;
  char value[MPI_MAX_INFO_VAL + 1];
  MPI_Info_get(info, "nc_header_align_size", MPI_MAX_INFO_VAL, value, &flag);
  if (rank == 0) printf("nc_header_align_size given: %d\n", flag);
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  SAY(ncmpi_enddef(nc));
  /* Fill mode: enddef wrote the fill values, readable before close; a
   * _FillValue now is too late. */
  show_ints(nc, "a", 6);
  SAY(ncmpi_put_att_short(nc, s, "_FillValue", NC_SHORT, 1, &sfill));
  SAY(ncmpi_redef(nc));
  SAY(ncmpi_put_att_short(nc, s, "_FillValue", NC_SHORT, 1, &sfill));
  SAY(ncmpi_enddef(nc));
  /* Out of NC_SHORT's range: the variable's _FillValue is stored. */
  int big[2] = {70000, 5};
  MPI_Offset s_start = 0, s_count = rank == 0 ? 2 : 0;
  SAY(ncmpi_put_vara_int_all(nc, s, &s_start, &s_count, big));
  /* A collective put has stored every rank's data: the last rank reads rank 0's. */
  int nprocs = 1, seen[2] = {0, 0};
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  MPI_Offset two_cells = 2;
  int seen_rc = ncmpi_get_vara_int_all(nc, s, &s_start, &two_cells, seen);
  /* Printed by rank 0 (one output stream keeps the lines in order). */
  int got_last[3] = {seen[0], seen[1], seen_rc};
  if (nprocs > 1 && rank == nprocs - 1) MPI_Send(got_last, 3, MPI_INT, 0, 0, MPI_COMM_WORLD);
  if (nprocs > 1 && rank == 0) MPI_Recv(got_last, 3, MPI_INT, nprocs - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (rank == 0) printf("last rank reads s = %d %d (%d)\n", got_last[0], got_last[1], got_last[2]);
  /* vard: elements 1..3 of v through a subarray filetype, read back the same way. */
  MPI_Datatype ft;
  int sizes = 6, subsizes = 3, starts = 1, vals[3] = {31, 32, 33}, back[3] = {0, 0, 0};
  MPI_Type_create_subarray(1, &sizes, &subsizes, &starts, MPI_ORDER_C, MPI_INT, &ft);
  MPI_Type_commit(&ft);
  SAY(ncmpi_put_vard_all(nc, vd, ft, vals, 3, MPI_INT));
  SAY(ncmpi_get_vard_all(nc, vd, ft, back, 3, MPI_INT));
  if (rank == 0) printf("vard back = %d %d %d\n", back[0], back[1], back[2]);
  MPI_Type_free(&ft);

  /* a: rank 0 writes a[0:2]; b: b[1]; c: all of it; r: record 0 filled, then r[0][2], then r[1][0:3]. */
  int ones[6] = {1, 2, 7, 7, 7, 7}, rec[3] = {5, 6, 7}, fortytwo = 42;
  double three = 3.0;
  MPI_Offset start[2] = {0, 0}, count[2] = {rank == 0 ? 2 : 0, 0};
  SAY(ncmpi_put_vara_int_all(nc, a, start, count, ones));
  start[0] = 1;
  count[0] = rank == 0 ? 1 : 0;
  SAY(ncmpi_put_vara_double_all(nc, b, start, count, &three));
  start[0] = 0;
  count[0] = rank == 0 ? 6 : 0;
  SAY(ncmpi_put_vara_int_all(nc, c, start, count, ones));
  SAY(ncmpi_fill_var_rec(nc, r, 0));
  start[0] = 0;
  start[1] = 2;
  count[0] = 1;
  count[1] = rank == 0 ? 1 : 0;
  SAY(ncmpi_put_vara_int_all(nc, r, start, count, &fortytwo));
  start[0] = 1;
  start[1] = 0;
  count[1] = rank == 0 ? 3 : 0;
  SAY(ncmpi_put_vara_int_all(nc, r, start, count, rec));
  SAY(ncmpi_close(nc));

  SAY(ncmpi_create(MPI_COMM_WORLD, path, NC_NOCLOBBER, MPI_INFO_NULL, &nc));

  SAY(ncmpi_open(MPI_COMM_WORLD, path, NC_NOWRITE, MPI_INFO_NULL, &nc));
  show(nc);
  SAY(ncmpi_put_var1_int_all(nc, a, start, ones));
  SAY(ncmpi_close(nc));

  /* NC_WRITE: a[5] changes, the rest stays. */
  SAY(ncmpi_open(MPI_COMM_WORLD, path, NC_WRITE, MPI_INFO_NULL, &nc));
  int fiftyfive = 55;
  MPI_Offset five = 5;
  SAY(ncmpi_inq_varid(nc, "a", &a));
  SAY(ncmpi_begin_indep_data(nc));
  if (rank == 0) SAY(ncmpi_put_var1_int(nc, a, &five, &fiftyfive));
  SAY(ncmpi_end_indep_data(nc));
  /* Written cells only: through Cove, what the earlier version left
   * unwritten reads as fill once this version is sealed at close. */
  int got[6] = {0};
  MPI_Offset two = 2;
  start[0] = 0;
  SAY(ncmpi_get_vara_int_all(nc, a, start, &two, got));
  SAY(ncmpi_get_var1_int_all(nc, a, &five, got + 5));
  if (rank == 0) printf("a written = %d %d %d\n", got[0], got[1], got[5]);
  /* Renames: in data mode no longer than before; the data stays. */
  SAY(ncmpi_rename_var(nc, c, "cc"));
  SAY(ncmpi_rename_var(nc, c, "e"));
  SAY(ncmpi_rename_var(nc, b, "e"));
  SAY(ncmpi_rename_dim(nc, dx, "xx"));
  SAY(ncmpi_redef(nc));
  SAY(ncmpi_rename_dim(nc, dx, "xx"));
  SAY(ncmpi_enddef(nc));
  SAY(ncmpi_close(nc));

  SAY(ncmpi_open(MPI_COMM_WORLD, path, NC_NOWRITE, MPI_INFO_NULL, &nc));
  show(nc);
  show_ints(nc, "e", 6);
  char dname[NC_MAX_NAME + 1];
  SAY(ncmpi_inq_dimname(nc, 0, dname));
  if (rank == 0) printf("dimension 0: %s\n", dname);
  SAY(ncmpi_close(nc));

  /* ncmpi_delete (rank 0): the file is gone for every rank, until it is
   * created anew (NC_NOCLOBBER then succeeds). */
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) SAY(ncmpi_delete(path, MPI_INFO_NULL));
  MPI_Barrier(MPI_COMM_WORLD);
  SAY(ncmpi_open(MPI_COMM_WORLD, path, NC_NOWRITE, MPI_INFO_NULL, &nc));
  if (rank == 0) SAY(ncmpi_delete(path, MPI_INFO_NULL));
  MPI_Barrier(MPI_COMM_WORLD);
  SAY(ncmpi_create(MPI_COMM_WORLD, path, NC_NOCLOBBER, MPI_INFO_NULL, &nc));
  SAY(ncmpi_def_dim(nc, "y", 2, &dx));
  SAY(ncmpi_close(nc));
  SAY(ncmpi_create(MPI_COMM_WORLD, path, NC_NOCLOBBER, MPI_INFO_NULL, &nc));
  SAY(ncmpi_open(MPI_COMM_WORLD, path, NC_NOWRITE, MPI_INFO_NULL, &nc));
  int ndims = -1, nvars = -1;
  MPI_Offset ylen = -1;
  SAY(ncmpi_inq(nc, &ndims, &nvars, NULL, NULL));
  SAY(ncmpi_inq_dimlen(nc, 0, &ylen));
  if (rank == 0) printf("created anew: %d dimensions (y = %lld), %d variables\n", ndims, ylen, nvars);
  SAY(ncmpi_close(nc));

  /* unlink() (rank 0), as programs clean up with POSIX calls: the file is
   * gone, so an NC_NOCLOBBER create succeeds again; a second unlink finds
   * nothing. */
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    int rc = unlink(path);
    printf("unlink: %d\n", rc);
    rc = unlink(path);
    printf("unlink again: %d (%s)\n", rc, rc != 0 ? strerror(errno) : "no error");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  SAY(ncmpi_create(MPI_COMM_WORLD, path, NC_NOCLOBBER, MPI_INFO_NULL, &nc));
  SAY(ncmpi_close(nc));
  attributes(argv[1]);
  MPI_Finalize();
  return 0;
}
