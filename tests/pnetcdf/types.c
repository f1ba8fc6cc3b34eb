/* Every netCDF external type against every memory type, printed so that a
 * run through libcove-pnetcdf can be compared line by line with a run on
 * real PnetCDF files (run.sh types): the return codes of puts that go out of
 * range, and the values and return codes of every typed get.
 *   types write DIR | types read DIR */
#include <pnetcdf.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#define N 12
static const double kValues[N] = {0, 1.7, -2.7, 127.9, -128.5, 255, 300, -40000, 70000.25, 3e9, -5e18, 1e40};
static const nc_type kTypes[] = {NC_BYTE, NC_SHORT, NC_INT, NC_FLOAT, NC_DOUBLE, NC_UBYTE, NC_USHORT, NC_UINT, NC_INT64, NC_UINT64};
enum { NTYPES = sizeof kTypes / sizeof kTypes[0] };

static void fail(const char* what, int err) {
  fprintf(stderr, "types: %s: %s\n", what, ncmpi_strerror(err));
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static void file_path(char* out, size_t n, const char* dir, int cdf5) {
  snprintf(out, n, "%s/types%s.nc", dir, cdf5 ? "5" : "2");
}

static void write_file(const char* dir, int cdf5) {
  char path[4096];
  file_path(path, sizeof path, dir, cdf5);
  int nc, dim, var[NTYPES], err;
  if ((err = ncmpi_create(MPI_COMM_WORLD, path, NC_CLOBBER | (cdf5 ? NC_64BIT_DATA : NC_64BIT_OFFSET), MPI_INFO_NULL, &nc))) fail("create", err);
  if ((err = ncmpi_def_dim(nc, "n", N, &dim))) fail("def_dim", err);
  int ntypes = cdf5 ? NTYPES : 5;
  for (int t = 0; t < ntypes; ++t) {
    char name[16];
    snprintf(name, sizeof name, "t%d", kTypes[t]);
    if ((err = ncmpi_def_var(nc, name, kTypes[t], 1, &dim, &var[t]))) fail("def_var", err);
  }
  if ((err = ncmpi_enddef(nc))) fail("enddef", err);
  MPI_Offset start = 0, count = N;
  for (int t = 0; t < ntypes; ++t) {
    /* doubles into every type, then (over them) ints and signed chars into some elements */
    printf("cdf%d put double -> type %d: %d\n", cdf5 ? 5 : 2, kTypes[t], ncmpi_put_vara_double_all(nc, var[t], &start, &count, kValues));
    int ints[3] = {-1, 65536, 200};
    MPI_Offset s3 = 0, c3 = 3;
    printf("cdf%d put int -> type %d: %d\n", cdf5 ? 5 : 2, kTypes[t], ncmpi_put_vara_int_all(nc, var[t], &s3, &c3, ints));
    unsigned char uc[1] = {250};
    MPI_Offset s1 = 3;
    printf("cdf%d put uchar -> type %d: %d\n", cdf5 ? 5 : 2, kTypes[t], ncmpi_put_var1_uchar_all(nc, var[t], &s1, uc));
  }
  if ((err = ncmpi_close(nc))) fail("close", err);
}

#define GET(suffix, ctype, fmt)                                                            \
  do {                                                                                     \
    ctype buf[N];                                                                          \
    memset(buf, 0, sizeof buf);                                                            \
    int e = ncmpi_get_vara_##suffix##_all(nc, var, &start, &count, buf);                   \
    printf("cdf%d type %d as " #suffix ": %d:", cdf5 ? 5 : 2, type, e);                    \
    for (int i = 0; i < N; ++i) printf(" " fmt, buf[i]);                                   \
    printf("\n");                                                                          \
  } while (0)

static void read_file(const char* dir, int cdf5) {
  char path[4096];
  file_path(path, sizeof path, dir, cdf5);
  int nc, nvars, err;
  if ((err = ncmpi_open(MPI_COMM_WORLD, path, NC_NOWRITE, MPI_INFO_NULL, &nc))) fail("open", err);
  if ((err = ncmpi_inq_nvars(nc, &nvars))) fail("inq_nvars", err);
  MPI_Offset start = 0, count = N;
  for (int var = 0; var < nvars; ++var) {
    nc_type type;
    if ((err = ncmpi_inq_vartype(nc, var, &type))) fail("inq_vartype", err);
    GET(schar, signed char, "%d");
    GET(uchar, unsigned char, "%u");
    GET(short, short, "%d");
    GET(ushort, unsigned short, "%u");
    GET(int, int, "%d");
    GET(uint, unsigned int, "%u");
    GET(long, long, "%ld");
    GET(float, float, "%.9g");
    GET(double, double, "%.17g");
    GET(longlong, long long, "%lld");
    GET(ulonglong, unsigned long long, "%llu");
  }
  if ((err = ncmpi_close(nc))) fail("close", err);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc != 3) {
    fprintf(stderr, "usage: types write|read DIR\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  for (int cdf5 = 0; cdf5 <= 1; ++cdf5) {
    if (strcmp(argv[1], "write") == 0) write_file(argv[2], cdf5);
    else read_file(argv[2], cdf5);
  }
  MPI_Finalize();
  return 0;
}
