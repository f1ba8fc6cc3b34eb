/* An unmodified PnetCDF reader: only pnetcdf.h and MPI. Opens coupled.nc
 * `steps` times (versions FIRST, FIRST+1, ...), reads it split along x
 * (the writer split along y) with vara/vars/varm/varn/iget and a
 * double->float read, and checks every element, the attributes, NC_ERANGE
 * and the coordinate errors.
 *   reader STEPS FIRST [DIR...]   reads DIR/coupled.nc of each DIR (default .) */
#include "values.h"

#include <pnetcdf.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static int failures = 0;

#define EXPECT(call, code)                                                                   \
  do {                                                                                       \
    int err_ = (call);                                                                       \
    if (err_ != (code)) {                                                                    \
      fprintf(stderr, "reader: line %d: %s returned %d (%s), expected %d\n", __LINE__, #call, \
              err_, ncmpi_strerror(err_), code);                                             \
      ++failures;                                                                            \
    }                                                                                        \
  } while (0)
#define CHECK(call) EXPECT(call, NC_NOERR)
#define SAME(what, got, want)                                                                \
  do {                                                                                       \
    if ((double)(got) != (double)(want)) {                                                   \
      if (failures++ < 20)                                                                   \
        fprintf(stderr, "reader: line %d: %s is %.17g, expected %.17g\n", __LINE__, what,    \
                (double)(got), (double)(want));                                              \
    }                                                                                        \
  } while (0)

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
#ifdef COVE_TEST_DTF
  if (dtf_init(getenv("DTF_CONFIG"), "rdr") != 0) MPI_Abort(MPI_COMM_WORLD, 1);
#endif
  int steps = argc > 1 ? atoi(argv[1]) : 1;
  int first = argc > 2 ? atoi(argv[2]) : 1;
  char path[4096];
  MPI_Offset x0, nx;
  block(NX, size, rank, &x0, &nx);
  for (int step = first; step < first + steps; ++step)
  for (int d = 3; d < (argc > 3 ? argc : 4); ++d) { /* each DIR's file, from its own writer */
    snprintf(path, sizeof path, "%s/coupled.nc", argc > d ? argv[d] : ".");
    int nc;
    int err = ncmpi_open(MPI_COMM_WORLD, path, NC_NOWRITE, MPI_INFO_NULL, &nc);
    if (err != NC_NOERR) {
      fprintf(stderr, "reader: ncmpi_open(%s): %s\n", path, ncmpi_strerror(err));
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int ndims, nvars, natts, unlim, v1, v2, v3, v4, vbig, vstep, vname, vnarrow;
    CHECK(ncmpi_inq(nc, &ndims, &nvars, &natts, &unlim));
    SAME("ndims", ndims, 4);
    SAME("nvars", nvars, 8);
    SAME("natts", natts, 3);
    SAME("unlimdim", unlim, 0);
    MPI_Offset nrec;
    CHECK(ncmpi_inq_dimlen(nc, unlim, &nrec));
    SAME("numrecs", nrec, NT3);
    CHECK(ncmpi_inq_varid(nc, "v1", &v1));
    CHECK(ncmpi_inq_varid(nc, "v2", &v2));
    CHECK(ncmpi_inq_varid(nc, "v3", &v3));
    CHECK(ncmpi_inq_varid(nc, "v4", &v4));
    CHECK(ncmpi_inq_varid(nc, "big", &vbig));
    CHECK(ncmpi_inq_varid(nc, "step", &vstep));
    CHECK(ncmpi_inq_varid(nc, "name", &vname));
    CHECK(ncmpi_inq_varid(nc, "narrow", &vnarrow));
    EXPECT(ncmpi_inq_varid(nc, "nothere", &v1), NC_ENOTVAR);
    nc_type type;
    int vndims, dimids[4];
    CHECK(ncmpi_inq_var(nc, v4, NULL, &type, &vndims, dimids, NULL));
    SAME("v4 type", type, NC_DOUBLE);
    SAME("v4 ndims", vndims, 4);
    SAME("v4 dim 0", dimids[0], unlim);

    /* attributes */
    char title[64] = {0};
    MPI_Offset len;
    CHECK(ncmpi_inq_attlen(nc, NC_GLOBAL, "title", &len));
    SAME("title length", len, 17);
    CHECK(ncmpi_get_att_text(nc, NC_GLOBAL, "title", title));
    if (strcmp(title, "cove pnetcdf test") != 0) ++failures, fprintf(stderr, "reader: title '%s'\n", title);
    /* the file of this DIR's writer, not another's */
    char written_in[4096] = {0};
    const char* dir = argc > d ? argv[d] : ".";
    CHECK(ncmpi_inq_attlen(nc, NC_GLOBAL, "dir", &len));
    if (len < (MPI_Offset)sizeof written_in) CHECK(ncmpi_get_att_text(nc, NC_GLOBAL, "dir", written_in));
    if (strcmp(written_in, dir) != 0) ++failures, fprintf(stderr, "reader: %s was written in '%s'\n", path, written_in);
    int answers[3];
    CHECK(ncmpi_get_att_int(nc, NC_GLOBAL, "answers", answers));
    SAME("answers[2]", answers[2], step);
    double scale = 0;
    CHECK(ncmpi_get_att_double(nc, v1, "scale", &scale));
    SAME("scale", scale, 0.5);
    CHECK(ncmpi_inq_atttype(nc, v1, "scale", &type));
    SAME("scale type", type, NC_FLOAT);
    char units[8] = {0};
    CHECK(ncmpi_get_att_text(nc, v1, "units", units));
    if (strcmp(units, "m/s") != 0) ++failures, fprintf(stderr, "reader: units '%s'\n", units);
    EXPECT(ncmpi_get_att_int(nc, v1, "nothere", answers), NC_ENOTATT);

    /* v1 as double and as float */
    double d[NX];
    float fl[NX];
    CHECK(ncmpi_get_vara_double_all(nc, v1, &x0, &nx, d));
    CHECK(ncmpi_get_vara_float_all(nc, v1, &x0, &nx, fl));
    for (MPI_Offset i = 0; i < nx; ++i) {
      SAME("v1", d[i], value_of(1, step, x0 + i));
      SAME("v1 as float", fl[i], (float)value_of(1, step, x0 + i));
    }

    /* v1 through the flexible API: a predefined buftype, and a derived one
     * (every other element of the buffer) of another type */
    double flex[2 * NX];
    CHECK(ncmpi_get_vara_all(nc, v1, &x0, &nx, flex, nx, MPI_DOUBLE));
    for (MPI_Offset i = 0; i < nx; ++i) SAME("v1 flexible", flex[i], value_of(1, step, x0 + i));
    MPI_Datatype every_other;
    MPI_Type_vector((int)nx, 1, 2, MPI_FLOAT, &every_other);
    MPI_Type_commit(&every_other);
    float strided[2 * NX];
    for (int i = 0; i < 2 * NX; ++i) strided[i] = -1;
    CHECK(ncmpi_get_vara_all(nc, v1, &x0, &nx, strided, 1, every_other));
    for (MPI_Offset i = 0; i < nx; ++i) {
      SAME("v1 derived buftype", strided[2 * i], (float)value_of(1, step, x0 + i));
      SAME("v1 derived buftype gap", strided[2 * i + 1], -1);
    }
    MPI_Type_free(&every_other);

    /* v2: all rows of my columns, with vara, and transposed with varm */
    float b2[NY * NX], t2[NY * NX];
    MPI_Offset s2[2] = {0, x0}, c2[2] = {NY, nx}, im2[2] = {1, NY};
    CHECK(ncmpi_get_vara_float_all(nc, v2, s2, c2, b2));
    CHECK(ncmpi_get_varm_float_all(nc, v2, s2, c2, NULL, im2, t2));
    for (int r = 0; r < NY; ++r)
      for (MPI_Offset c = 0; c < nx; ++c) {
        SAME("v2", b2[r * nx + c], (float)value_of(2, step, r * NX + x0 + c));
        SAME("v2 varm", t2[c * NY + r], (float)value_of(2, step, r * NX + x0 + c));
      }
    /* v2 every other row, every third column, read as double */
    double s3d[4 * 4];
    MPI_Offset ss[2] = {1, 0}, sc[2] = {4, 4}, sst[2] = {2, 3};
    CHECK(ncmpi_get_vars_double_all(nc, v2, ss, sc, sst, s3d));
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 4; ++c) SAME("v2 vars", s3d[r * 4 + c], (float)value_of(2, step, (1 + 2 * r) * NX + 3 * c));

    /* v3 with iget per record and wait_all */
    int b3[NT3][NY * NX], reqs[NT3], statuses[NT3];
    for (int t = 0; t < NT3; ++t) {
      MPI_Offset s3[3] = {t, 0, x0}, c3[3] = {1, NY, nx};
      CHECK(ncmpi_iget_vara_int(nc, v3, s3, c3, b3[t], &reqs[t]));
    }
    CHECK(ncmpi_wait_all(nc, NT3, reqs, statuses));
    for (int t = 0; t < NT3; ++t) {
      CHECK(statuses[t]);
      for (int r = 0; r < NY; ++r)
        for (MPI_Offset c = 0; c < nx; ++c) SAME("v3", b3[t][r * nx + c], value_of(3, step, (t * NY + r) * NX + x0 + c));
    }

    /* v4: my columns of both records with vara, and two z slabs with varn */
    static double b4[NT4 * NZ * NY * NX];
    MPI_Offset s4[4] = {0, 0, 0, x0}, c4[4] = {NT4, NZ, NY, nx};
    CHECK(ncmpi_get_vara_double_all(nc, v4, s4, c4, b4));
    size_t k = 0;
    for (int t = 0; t < NT4; ++t)
      for (int z = 0; z < NZ; ++z)
        for (int r = 0; r < NY; ++r)
          for (MPI_Offset c = 0; c < nx; ++c) SAME("v4", b4[k++], value_of(4, step, ((t * NZ + z) * NY + r) * NX + x0 + c));
    MPI_Offset na[4] = {1, 2, 0, x0}, nca[4] = {1, 1, NY, nx}, nb[4] = {0, 5, 3, x0}, ncb[4] = {1, 1, 2, nx};
    MPI_Offset* starts[2] = {na, nb};
    MPI_Offset* counts[2] = {nca, ncb};
    CHECK(ncmpi_get_varn_double_all(nc, v4, 2, starts, counts, b4));
    k = 0;
    for (int r = 0; r < NY; ++r)
      for (MPI_Offset c = 0; c < nx; ++c) SAME("v4 varn a", b4[k++], value_of(4, step, ((1 * NZ + 2) * NY + r) * NX + x0 + c));
    for (int r = 3; r < 5; ++r)
      for (MPI_Offset c = 0; c < nx; ++c) SAME("v4 varn b", b4[k++], value_of(4, step, ((0 * NZ + 5) * NY + r) * NX + x0 + c));

    /* big as int: NC_ERANGE, out-of-range elements become NC_FILL_INT, the others converted */
    int bi[NX];
    EXPECT(ncmpi_get_var_int_all(nc, vbig, bi), NC_ERANGE);
    for (int i = 0; i < NX; ++i) SAME("big as int", bi[i], i * 1e9 <= 2147483647.0 ? i * 1e9 : NC_FILL_INT);

    /* narrow: what the writer's out-of-range puts left */
    CHECK(ncmpi_get_var_int_all(nc, vnarrow, bi));
    for (int i = 0; i < NX; ++i) SAME("narrow", bi[i], i * 10000 <= 32767 ? i * 10000 : NC_FILL_SHORT);
    signed char narrow_sc[NX];
    EXPECT(ncmpi_get_var_schar_all(nc, vnarrow, narrow_sc), NC_ERANGE);
    for (int i = 0; i < NX; ++i) SAME("narrow as schar", narrow_sc[i], i == 0 ? 0 : NC_FILL_BYTE);

    int sv = 0;
    CHECK(ncmpi_get_var_int_all(nc, vstep, &sv));
    SAME("step", sv, step);
    char name[NX + 1] = {0};
    CHECK(ncmpi_get_var_text_all(nc, vname, name));
    if (memcmp(name, "abcdefghij", NX) != 0) ++failures, fprintf(stderr, "reader: name '%s'\n", name);
    EXPECT(ncmpi_get_var_text_all(nc, v1, name), NC_ECHAR);

    /* PnetCDF's own errors for requests outside the dimensions */
    MPI_Offset bad_s = NX, bad_c = 1;
    EXPECT(ncmpi_get_vara_double_all(nc, v1, &bad_s, &bad_c, d), NC_EINVALCOORDS);
    bad_s = NX - 2, bad_c = 3;
    EXPECT(ncmpi_get_vara_double_all(nc, v1, &bad_s, &bad_c, d), NC_EEDGE);
    MPI_Offset rs[3] = {NT3, 0, 0}, rc[3] = {1, 1, 1};
    EXPECT(ncmpi_get_vara_int_all(nc, v3, rs, rc, bi), NC_EINVALCOORDS);
    MPI_Offset zs = 0;
    bad_s = 0, bad_c = 2;
    EXPECT(ncmpi_get_vars_double_all(nc, v1, &bad_s, &bad_c, &zs, d), NC_ESTRIDE);
    EXPECT(ncmpi_get_vara_double(nc, v1, &x0, &nx, d), NC_ENOTINDEP);
#ifdef COVE_TEST_DTF
    CHECK(dtf_transfer(path));
#endif
    CHECK(ncmpi_close(nc));
  }
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("reader: %d rank(s), %d step(s): %s\n", size, steps, all == 0 ? "OK" : "FAILED");
#ifdef COVE_TEST_DTF
  dtf_finalize();
#endif
  MPI_Finalize();
  return all == 0 ? 0 : 1;
}
