/* The layout queries of a file (header size and extent, variable offsets,
 * record size, put/get sizes, striping, the hints of inq_file_info), the
 * enddef errors of the formats' size limits, and vard filetypes built from
 * the offsets over two variables, printed by rank 0: run on
 * real files and through Cove, the outputs must be identical (run.sh
 * layout). Only pnetcdf.h.
 *   cove-test-pnetcdf-layout DIR */
#include <mpi.h>
#include <pnetcdf.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank;
static char dir[4096];

static void say(const char* what, int rc) {
  if (rank == 0) printf("%s: %s\n", what, rc == NC_NOERR ? "ok" : ncmpi_strerrno(rc));
}

static void path_of(char* out, const char* name) { snprintf(out, 4200, "%s/%s", dir, name); }

/* Every layout answer of the file, rank 0's. */
static void show(int ncid, const char* when) {
  MPI_Offset size = -1, extent = -1, recsize = -1;
  int nvars = 0, ss = -1, sc = -1;
  int rc = ncmpi_inq_header_size(ncid, &size);
  rc |= ncmpi_inq_header_extent(ncid, &extent);
  rc |= ncmpi_inq_recsize(ncid, &recsize);
  rc |= ncmpi_inq_striping(ncid, &ss, &sc);
  rc |= ncmpi_inq_nvars(ncid, &nvars);
  if (rank == 0) printf("%s: rc %d header %lld extent %lld recsize %lld striping %d %d\n", when, rc, size, extent, recsize, ss, sc);
  for (int v = 0; v < nvars; ++v) {
    MPI_Offset off = -1;
    rc = ncmpi_inq_varoffset(ncid, v, &off);
    if (rank == 0) printf("  var %d offset %lld (%d)\n", v, off, rc);
  }
  MPI_Offset off = -1;
  say("  varoffset of NC_GLOBAL", ncmpi_inq_varoffset(ncid, NC_GLOBAL, &off));
  say("  varoffset of a bad id", ncmpi_inq_varoffset(ncid, nvars, &off));
  MPI_Info info;
  rc = ncmpi_inq_file_info(ncid, &info);
  const char* keys[] = {"nc_header_align_size", "nc_var_align_size", "nc_record_align_size", "nc_header_read_chunk_size",
                        "nc_in_place_swap", "nc_ibuf_size", "pnetcdf_subfiling", "nc_num_subfiles"};
  for (int k = 0; rc == NC_NOERR && k < 8; ++k) {
    char value[MPI_MAX_INFO_VAL + 1] = "";
    int flag = 0;
    MPI_Info_get(info, keys[k], MPI_MAX_INFO_VAL, value, &flag);
    if (rank == 0) printf("  %s = %s\n", keys[k], flag ? value : "(none)");
  }
  if (rc == NC_NOERR) MPI_Info_free(&info);
}

/* put/get sizes summed over the ranks (collective). */
static MPI_Offset moved(int ncid, int put) {
  MPI_Offset mine = 0, all = 0;
  if (put) ncmpi_inq_put_size(ncid, &mine);
  else ncmpi_inq_get_size(ncid, &mine);
  MPI_Allreduce(&mine, &all, 1, MPI_OFFSET, MPI_SUM, MPI_COMM_WORLD);
  return all;
}

static void one_format(int cmode, const char* name, MPI_Info info) {
  char path[4200];
  path_of(path, name);
  int ncid, rec, x, y, s, v[6];
  say("create", ncmpi_create(MPI_COMM_WORLD, path, cmode | NC_CLOBBER, info, &ncid));
  show(ncid, "define mode");
  ncmpi_def_dim(ncid, "time", NC_UNLIMITED, &rec);
  ncmpi_def_dim(ncid, "x", 7, &x);
  ncmpi_def_dim(ncid, "y_longer_name", 3, &y);
  ncmpi_def_dim(ncid, "s", 5, &s);
  int d2[2] = {x, y}, r2[2] = {rec, y}, r1[1] = {rec}, c1[1] = {s};
  ncmpi_def_var(ncid, "fixed_int", NC_INT, 2, d2, &v[0]);
  ncmpi_def_var(ncid, "rec_double", NC_DOUBLE, 2, r2, &v[1]);
  ncmpi_def_var(ncid, "chars", NC_CHAR, 1, c1, &v[2]);
  ncmpi_def_var(ncid, "rec_short", NC_SHORT, 1, r1, &v[3]);
  ncmpi_def_var(ncid, "scalar", NC_FLOAT, 0, NULL, &v[4]);
  ncmpi_put_att_text(ncid, NC_GLOBAL, "title", 5, "odd!!");
  double d[3] = {1, 2, 3};
  ncmpi_put_att_double(ncid, v[0], "range", NC_DOUBLE, 3, d);
  ncmpi_put_att_text(ncid, v[1], "u", 1, "m");
  show(ncid, "defined, before enddef");
  MPI_Offset put0 = moved(ncid, 1);
  say("enddef", ncmpi_enddef(ncid));
  MPI_Offset delta = moved(ncid, 1) - put0;
  if (rank == 0) printf("enddef put_size %lld\n", delta);
  show(ncid, "after enddef");
  /* A put of the fixed variable, each rank its rows: the bytes it moves. */
  int nprocs;
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  int buf[21];
  for (int i = 0; i < 21; ++i) buf[i] = i;
  MPI_Offset start[2] = {0, 0}, count[2] = {0, 3};
  if (rank < 7) {
    start[0] = rank;
    count[0] = 1;
  }
  put0 = moved(ncid, 1);
  say("put_vara_int_all", ncmpi_put_vara_int_all(ncid, v[0], start, count, buf));
  delta = moved(ncid, 1) - put0;
  if (rank == 0) printf("put_size of the put %lld\n", delta);
  MPI_Offset get0 = moved(ncid, 0);
  say("get_vara_int_all", ncmpi_get_vara_int_all(ncid, v[0], start, count, buf));
  delta = moved(ncid, 0) - get0;
  if (rank == 0) printf("get_size of the get %lld\n", delta);
  /* redef: more header, one more variable of each kind; the old ones keep their offsets
     unless the header grows past them */
  say("redef", ncmpi_redef(ncid));
  ncmpi_put_att_text(ncid, NC_GLOBAL, "history", 40, "a longer attribute that grows the header");
  ncmpi_def_var(ncid, "added_fixed", NC_BYTE, 1, c1, &v[5]);
  int w;
  ncmpi_def_var(ncid, "added_rec", NC_INT, 1, r1, &w);
  show(ncid, "redef, defined");
  say("__enddef", ncmpi__enddef(ncid, 600, 1024, 200, 2048));
  show(ncid, "after __enddef");
  /* nothing new: the offsets stay where the free space put them */
  say("redef", ncmpi_redef(ncid));
  say("enddef", ncmpi_enddef(ncid));
  show(ncid, "after an empty redef");
  say("redef", ncmpi_redef(ncid));
  char more[600];
  memset(more, 'm', sizeof more);
  ncmpi_put_att_text(ncid, NC_GLOBAL, "more", sizeof more, more);
  say("enddef (header past its extent)", ncmpi_enddef(ncid));
  show(ncid, "after the header grew");
  say("close", ncmpi_close(ncid));
  say("open", ncmpi_open(MPI_COMM_WORLD, path, NC_NOWRITE, MPI_INFO_NULL, &ncid));
  show(ncid, "reopened");
  say("close", ncmpi_close(ncid));
}

/* The formats' size limits (PnetCDF's last_large_var): enddef and close fail with NC_EVARSIZE. */
static void limits(void) {
  char path[4200];
  int ncid, x, dims[4], varid;
  path_of(path, "layout_limit.nc");
  const int fmts[3] = {0, NC_64BIT_OFFSET, NC_64BIT_DATA};
  for (int f = 0; f < 3; ++f) {
    if (rank == 0) printf("format %d: four variables of 2 GiB\n", f);
    ncmpi_create(MPI_COMM_WORLD, path, NC_CLOBBER | fmts[f], MPI_INFO_NULL, &ncid);
    ncmpi_def_dim(ncid, "X", 536870911, &x);
    const char* names[4] = {"var1", "var2", "var3", "var4"};
    nc_type types[4] = {NC_INT, NC_FLOAT, NC_SHORT, NC_INT};
    for (int i = 0; i < 4; ++i) ncmpi_def_var(ncid, names[i], types[i], 1, &x, &varid);
    say("enddef", ncmpi_enddef(ncid));
    show(ncid, "after it");
    say("close", ncmpi_close(ncid));
  }
  for (int f = 0; f < 3; ++f) {
    if (rank == 0) printf("format %d: a record variable and a fixed one too large\n", f);
    ncmpi_create(MPI_COMM_WORLD, path, NC_CLOBBER | fmts[f], MPI_INFO_NULL, &ncid);
    ncmpi_def_dim(ncid, "Y", NC_UNLIMITED, &dims[0]);
    ncmpi_def_dim(ncid, "X", 5, &dims[1]);
    ncmpi_def_dim(ncid, "YY", 66661, &dims[2]);
    ncmpi_def_dim(ncid, "XX", 66661, &dims[3]);
    ncmpi_def_var(ncid, "var", NC_INT, 1, dims, &varid);
    ncmpi_def_var(ncid, "var_last", NC_FLOAT, 2, dims + 2, &varid);
    say("enddef", ncmpi_enddef(ncid));
    say("enddef again", ncmpi_enddef(ncid));
    say("close", ncmpi_close(ncid));
  }
  if (rank == 0) printf("one record variable of 3 shorts, bad __enddef arguments\n");
  ncmpi_create(MPI_COMM_WORLD, path, NC_CLOBBER, MPI_INFO_NULL, &ncid);
  ncmpi_def_dim(ncid, "Y", NC_UNLIMITED, &dims[0]);
  ncmpi_def_dim(ncid, "X", 3, &dims[1]);
  ncmpi_def_var(ncid, "only", NC_SHORT, 2, dims, &varid);
  say("__enddef with a negative v_align", ncmpi__enddef(ncid, 0, -1, 0, 0));
  say("__enddef", ncmpi__enddef(ncid, 0, 0, 0, 4096));
  show(ncid, "one record variable");
  say("close", ncmpi_close(ncid));
}

/* vard over two variables at once, the filetype built from inq_varoffset
 * and inq_recsize (PnetCDF's vard_mvars), and vard's type checks. */
static void vard_two(void) {
  char path[4200];
  int ncid, dims[3], v[4], nprocs;
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  path_of(path, "layout_vard.nc");
  say("create", ncmpi_create(MPI_COMM_WORLD, path, NC_CLOBBER | NC_64BIT_OFFSET, MPI_INFO_NULL, &ncid));
  ncmpi_def_dim(ncid, "t", NC_UNLIMITED, &dims[0]);
  ncmpi_def_dim(ncid, "y", 2, &dims[1]);
  ncmpi_def_dim(ncid, "x", 3 * nprocs, &dims[2]);
  ncmpi_def_var(ncid, "fix0", NC_INT, 2, dims + 1, &v[0]);
  ncmpi_def_var(ncid, "fix1", NC_INT, 2, dims + 1, &v[1]);
  ncmpi_def_var(ncid, "rec2", NC_INT, 3, dims, &v[2]);
  ncmpi_def_var(ncid, "rec3", NC_INT, 3, dims, &v[3]);
  say("enddef", ncmpi_enddef(ncid));
  int buf[12];
  for (int i = 0; i < 12; ++i) buf[i] = 100 * rank + i;
  /* this rank's 2x3 block of a variable, then the same block of the next one */
  int sizes[2] = {2, 3 * nprocs}, subsizes[2] = {2, 3}, starts[2] = {0, 3 * rank};
  MPI_Datatype block, twice, mixed;
  MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &block);
  MPI_Type_commit(&block);
  MPI_Offset off0 = 0, off1 = 0, recsize = 0;
  ncmpi_inq_varoffset(ncid, v[0], &off0);
  ncmpi_inq_varoffset(ncid, v[1], &off1);
  int lens[2] = {1, 1};
  MPI_Aint disps[2] = {0, (MPI_Aint)(off1 - off0)};
  MPI_Datatype types[2] = {block, block};
  MPI_Type_create_struct(2, lens, disps, types, &twice);
  MPI_Type_commit(&twice);
  say("put_vard_all over fix0 and fix1", ncmpi_put_vard_all(ncid, v[0], twice, buf, 12, MPI_INT));
  MPI_Type_free(&twice);
  /* the record variables: record 0 of rec2 and rec3, one record size apart from rec2's record 0 */
  ncmpi_inq_varoffset(ncid, v[2], &off0);
  ncmpi_inq_varoffset(ncid, v[3], &off1);
  ncmpi_inq_recsize(ncid, &recsize);
  disps[1] = (MPI_Aint)(off1 - off0);
  MPI_Type_create_struct(2, lens, disps, types, &twice);
  MPI_Type_commit(&twice);
  say("put_vard_all over rec2 and rec3", ncmpi_put_vard_all(ncid, v[2], twice, buf, 12, MPI_INT));
  disps[1] = (MPI_Aint)recsize;
  MPI_Datatype two_records;
  MPI_Type_create_struct(2, lens, disps, types, &two_records);
  MPI_Type_commit(&two_records);
  say("put_vard_all over two records of rec3", ncmpi_put_vard_all(ncid, v[3], two_records, buf, 12, MPI_INT));
  /* the type checks, in PnetCDF's order */
  MPI_Datatype both[2] = {MPI_INT, MPI_FLOAT};
  MPI_Aint near[2] = {0, 4};
  MPI_Type_create_struct(2, lens, near, both, &mixed);
  MPI_Type_commit(&mixed);
  say("a filetype of two types", ncmpi_put_vard_all(ncid, v[0], mixed, buf, 2, MPI_INT));
  say("a buftype of two types", ncmpi_put_vard_all(ncid, v[0], MPI_INT, buf, 2, mixed));
  say("a filetype of the wrong type", ncmpi_put_vard_all(ncid, v[0], MPI_FLOAT, buf, 1, MPI_FLOAT));
  say("more buffer than filetype", ncmpi_put_vard_all(ncid, v[0], MPI_INT, buf, 2, MPI_INT));
  say("a filetype of no bytes", ncmpi_put_vard_all(ncid, v[0], MPI_DATATYPE_NULL, NULL, 0, MPI_INT));
  MPI_Type_free(&mixed);
  say("close", ncmpi_close(ncid));
  say("open", ncmpi_open(MPI_COMM_WORLD, path, NC_NOWRITE, MPI_INFO_NULL, &ncid));
  MPI_Offset nrec = -1;
  ncmpi_inq_dimlen(ncid, dims[0], &nrec);
  if (rank == 0) printf("records: %lld\n", nrec);
  for (int i = 0; i < 4; ++i) {
    int got[2 * 24];
    MPI_Offset start[3] = {0, 0, 0}, count[3] = {1, 2, 3 * nprocs};
    int rc = i < 2 ? ncmpi_get_vara_int_all(ncid, v[i], start + 1, count + 1, got)
                   : ncmpi_get_vara_int_all(ncid, v[i], start, count, got);
    if (rank == 0) {
      printf("var %d (%d):", i, rc);
      for (int k = 0; k < 6 * nprocs; ++k) printf(" %d", got[k]);
      printf("\n");
    }
  }
  /* read back through the same filetype */
  int back[12] = {0};
  say("get_vard_all over two records of rec3", ncmpi_get_vard_all(ncid, v[3], two_records, back, 12, MPI_INT));
  int same = 1;
  for (int i = 0; i < 12; ++i) same = same && back[i] == buf[i];
  MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0) printf("read back: %s\n", same ? "the same" : "different");
  say("close", ncmpi_close(ncid));
  MPI_Type_free(&two_records);
  MPI_Type_free(&twice);
  MPI_Type_free(&block);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc != 2) {
    if (rank == 0) fprintf(stderr, "usage: %s DIR\n", argv[0]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  snprintf(dir, sizeof dir, "%s", argv[1]);
  one_format(0, "layout_cdf1.nc", MPI_INFO_NULL);
  one_format(NC_64BIT_OFFSET, "layout_cdf2.nc", MPI_INFO_NULL);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "nc_header_align_size", "1");
  MPI_Info_set(info, "nc_var_align_size", "197");
  MPI_Info_set(info, "nc_header_read_chunk_size", "1024");
  one_format(NC_64BIT_DATA, "layout_cdf5.nc", info);
  MPI_Info_free(&info);
  /* PNETCDF_HINTS wins over the info */
  setenv("PNETCDF_HINTS", "nc_var_align_size=64; nc_record_align_size=4096;nc_in_place_swap=disable", 1);
  MPI_Info_create(&info);
  MPI_Info_set(info, "nc_var_align_size", "8");
  one_format(0, "layout_env.nc", info);
  MPI_Info_free(&info);
  unsetenv("PNETCDF_HINTS");
  limits();
  vard_two();
  MPI_Finalize();
  return 0;
}
