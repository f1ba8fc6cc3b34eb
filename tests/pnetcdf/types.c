/* Every netCDF external type against every memory type, printed so that a
 * run through libcove-pnetcdf can be compared line by line with a run on
 * real PnetCDF files (run.sh types): the return codes of puts that go out of
 * range, and the values and return codes of every typed get. Each external
 * type t has three variables: t<t> (doubles, then ints and an unsigned char
 * over some of them), m<t> (a slice put from each of the eleven memory
 * types, in and out of range), and i<t> (nonblocking puts, out of range in
 * part, and on reading nonblocking gets: their NC_ERANGE comes from wait).
 *   types write DIR | types read DIR */
#include <pnetcdf.h>

#include <limits.h>
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

/* Each memory type's slice of m<t>: K values of that type, large ones among
 * them, so that most external types get some out of range. Left out: values
 * that a float or double variable rounds to 2^31, 2^32, 2^63 or 2^64 (such as
 * INT_MAX or LLONG_MAX): read back as integers, PnetCDF treats each of those
 * its own way (NC_ERANGE for 2^31 and 2^32, the type's maximum for 2^63 and
 * 2^64 on gets, differently again on puts), which libcove-pnetcdf does not
 * copy. */
enum { NMEM = 11, K = 4, NI = 4 };
static const signed char kSchar[K] = {-128, -1, 7, 127};
static const unsigned char kUchar[K] = {0, 7, 200, 255};
static const short kShort[K] = {-32768, -300, 7, 32767};
static const unsigned short kUshort[K] = {0, 7, 40000, 65535};
static const int kInt[K] = {INT_MIN, -70000, 7, 2000000000};
static const unsigned int kUint[K] = {0, 7, 3000000000u, 4000000000u};
static const long kLong[K] = {LONG_MIN, -5000000000L, 7, 1L << 40};
static const float kFloat[K] = {-1e30f, -2.5f, 7.25f, 3e9f};
static const double kDouble[K] = {-1e300, -2.5, 7.75, 1e20};
static const long long kLonglong[K] = {LLONG_MIN, -5000000000LL, 7, 1LL << 62};
static const unsigned long long kUlonglong[K] = {0, 7, 5000000000ULL, 0xC000000000000000ULL};

#define PUT_SLICE(suffix, values, m)                                                              \
  do {                                                                                            \
    MPI_Offset s = (m) * K, c = K;                                                                \
    printf("cdf%d put " #suffix " -> m%d: %d\n", cdf5, type, ncmpi_put_vara_##suffix##_all(nc, var, &s, &c, values)); \
  } while (0)

static void put_every_memory_type(int nc, int var, int cdf5, nc_type type) {
  cdf5 = cdf5 ? 5 : 2;
  PUT_SLICE(schar, kSchar, 0);
  PUT_SLICE(uchar, kUchar, 1);
  PUT_SLICE(short, kShort, 2);
  PUT_SLICE(ushort, kUshort, 3);
  PUT_SLICE(int, kInt, 4);
  PUT_SLICE(uint, kUint, 5);
  PUT_SLICE(long, kLong, 6);
  PUT_SLICE(float, kFloat, 7);
  PUT_SLICE(double, kDouble, 8);
  PUT_SLICE(longlong, kLonglong, 9);
  PUT_SLICE(ulonglong, kUlonglong, 10);
}

/* Nonblocking puts into i<t>: doubles (1e300 is out of range for every type
 * but double) and ints (300 is out of range for the byte types), posted,
 * then waited for; the post, the wait and each request's status printed. */
static void put_nonblocking(int nc, int var, int cdf5, nc_type type) {
  static const double d[2] = {1e300, 2.5};
  static const int i[2] = {7, 300};
  MPI_Offset s0 = 0, s2 = 2, c = 2;
  int reqs[2], statuses[2];
  const int posted_d = ncmpi_iput_vara_double(nc, var, &s0, &c, d, &reqs[0]);
  const int posted_i = ncmpi_iput_vara_int(nc, var, &s2, &c, i, &reqs[1]);
  const int waited = ncmpi_wait_all(nc, 2, reqs, statuses);
  printf("cdf%d iput double, int -> i%d: posted %d %d, wait %d, statuses %d %d\n", cdf5 ? 5 : 2, type, posted_d,
         posted_i, waited, statuses[0], statuses[1]);
}

static void write_file(const char* dir, int cdf5) {
  char path[4096];
  file_path(path, sizeof path, dir, cdf5);
  int nc, dim, mdim, idim, var[NTYPES], mvar[NTYPES], ivar[NTYPES], err;
  if ((err = ncmpi_create(MPI_COMM_WORLD, path, NC_CLOBBER | (cdf5 ? NC_64BIT_DATA : NC_64BIT_OFFSET), MPI_INFO_NULL, &nc))) fail("create", err);
  if ((err = ncmpi_def_dim(nc, "n", N, &dim))) fail("def_dim", err);
  if ((err = ncmpi_def_dim(nc, "m", NMEM * K, &mdim))) fail("def_dim", err);
  if ((err = ncmpi_def_dim(nc, "i", NI, &idim))) fail("def_dim", err);
  int ntypes = cdf5 ? NTYPES : 5;
  for (int t = 0; t < ntypes; ++t) {
    char name[16];
    snprintf(name, sizeof name, "t%d", kTypes[t]);
    if ((err = ncmpi_def_var(nc, name, kTypes[t], 1, &dim, &var[t]))) fail("def_var", err);
    snprintf(name, sizeof name, "m%d", kTypes[t]);
    if ((err = ncmpi_def_var(nc, name, kTypes[t], 1, &mdim, &mvar[t]))) fail("def_var", err);
    snprintf(name, sizeof name, "i%d", kTypes[t]);
    if ((err = ncmpi_def_var(nc, name, kTypes[t], 1, &idim, &ivar[t]))) fail("def_var", err);
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
    put_every_memory_type(nc, mvar[t], cdf5, kTypes[t]);
    put_nonblocking(nc, ivar[t], cdf5, kTypes[t]);
  }
  if ((err = ncmpi_close(nc))) fail("close", err);
}

#define GET(suffix, ctype, fmt)                                                            \
  do {                                                                                     \
    ctype buf[NMEM * K];                                                                   \
    memset(buf, 0, sizeof buf);                                                            \
    int e = ncmpi_get_vara_##suffix##_all(nc, var, &start, &count, buf);                   \
    printf("cdf%d type %d as " #suffix ": %d:", cdf5 ? 5 : 2, type, e);                    \
    for (int i = 0; i < count; ++i) printf(" " fmt, buf[i]);                               \
    printf("\n");                                                                          \
  } while (0)

/* The same read, nonblocking: the post, the wait and the request's status. */
#define IGET(suffix, ctype, fmt)                                                                  \
  do {                                                                                            \
    ctype buf[NMEM * K];                                                                          \
    memset(buf, 0, sizeof buf);                                                                   \
    int req, status = -1;                                                                         \
    int posted = ncmpi_iget_vara_##suffix(nc, var, &start, &count, buf, &req);                    \
    int waited = ncmpi_wait_all(nc, 1, &req, &status);                                            \
    printf("cdf%d type %d as " #suffix ", nonblocking: posted %d, wait %d, status %d:", cdf5 ? 5 : 2, type, posted, \
           waited, status);                                                                       \
    for (int i = 0; i < count; ++i) printf(" " fmt, buf[i]);                                      \
    printf("\n");                                                                                 \
  } while (0)

static void read_file(const char* dir, int cdf5) {
  char path[4096];
  file_path(path, sizeof path, dir, cdf5);
  int nc, nvars, err;
  if ((err = ncmpi_open(MPI_COMM_WORLD, path, NC_NOWRITE, MPI_INFO_NULL, &nc))) fail("open", err);
  if ((err = ncmpi_inq_nvars(nc, &nvars))) fail("inq_nvars", err);
  MPI_Offset start = 0, count;
  for (int var = 0; var < nvars; ++var) {
    nc_type type;
    int dimid;
    if ((err = ncmpi_inq_vartype(nc, var, &type))) fail("inq_vartype", err);
    if ((err = ncmpi_inq_vardimid(nc, var, &dimid))) fail("inq_vardimid", err);
    if ((err = ncmpi_inq_dimlen(nc, dimid, &count))) fail("inq_dimlen", err);
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
    IGET(schar, signed char, "%d");
    IGET(double, double, "%.17g");
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
