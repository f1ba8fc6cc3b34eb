/* An unmodified parallel HDF5 writer for the connector's transfers (the
 * config gives each dataset's): STEPS versions of FILE, each with four 1-D
 * double datasets of kShallowN elements per rank, by blocks of rows.
 *   /held       written from two buffers in turn; a buffer is overwritten
 *               with garbage right after the *next* version's write (what
 *               transfer = "shallow" lets a program do)
 *   /converted  written from a float buffer (a conversion), overwritten
 *               with garbage right after its write
 *   /copied     overwritten with garbage right after its write
 *   /deep       overwritten with garbage right after its write
 * H5VOL_TEST_PACE_MS (environment) makes it wait that long after each version.
 * A FILE with %d names a file per step (a series): /held then cycles
 * through H5VOL_TEST_BUFFERS buffers (default 2), and a step's buffer is
 * garbled after the H5Fclose of step + buffers - 1 (with keep_files =
 * buffers - 1, the connector removed that step's file there).
 * Then, with a FLAG path, it waits (up to 120 s) for FLAG to exist before it
 * ends, so that its held versions stay served while a late reader runs.
 * Nothing here knows about Cove.
 *   shallow_writer FILE STEPS [FLAG] */
#include "shallow.h"

#include <unistd.h>

static void fill(double* buf, int step, hsize_t lo, hsize_t n) {
  for (hsize_t i = 0; i < n; ++i) buf[i] = shallow_value(step, lo + i);
}

static void garble(void* buf, size_t bytes) { memset(buf, 0xA5, bytes); }

static hid_t write_one(hid_t file, const char* name, hid_t mem_type, const void* buf, hsize_t lo, hsize_t n,
                       hsize_t total) {
  hid_t space = H5Screate_simple(1, &total, NULL);
  hid_t dset = H5Dcreate2(file, name, H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  CHECK(dset >= 0, "H5Dcreate %s", name);
  H5Sselect_hyperslab(space, H5S_SELECT_SET, &lo, NULL, &n, NULL);
  hid_t mem = H5Screate_simple(1, &n, NULL);
  CHECK(H5Dwrite(dset, mem_type, mem, space, H5P_DEFAULT, buf) >= 0, "H5Dwrite %s", name);
  H5Sclose(mem);
  H5Sclose(space);
  return dset;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  CHECK(argc == 3 || argc == 4, "usage: shallow_writer FILE STEPS [FLAG]");
  const int series = strstr(argv[1], "%d") != NULL;
  const char* nbuf_env = getenv("H5VOL_TEST_BUFFERS");
  const int nbuf = nbuf_env ? atoi(nbuf_env) : 2;
  CHECK(nbuf >= 2 && nbuf <= 8, "H5VOL_TEST_BUFFERS=%d", nbuf);
  char path[256];
  const int steps = atoi(argv[2]);
  int rank, size;
  MPI_Comm_rank(program_comm(), &rank);
  MPI_Comm_size(program_comm(), &size);
  const hsize_t n = kShallowN, lo = n * (hsize_t)rank, total = n * (hsize_t)size;
  double* held[8];
  for (int b = 0; b < nbuf; ++b) held[b] = malloc(n * sizeof(double));
  double* scratch = malloc(n * sizeof(double));
  float* narrow = malloc(n * sizeof(float));
  const char* pace = getenv("H5VOL_TEST_PACE_MS");
  for (int step = 1; step <= steps; ++step) {
    if (pace && step > 1) usleep((useconds_t)atoi(pace) * 1000u);
    snprintf(path, sizeof path, argv[1], step);
    hid_t fapl = mpio_fapl();
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    CHECK(file >= 0, "H5Fcreate %s", path);
    H5Pclose(fapl);
    double* mine = held[step % nbuf];
    fill(mine, step, lo, n);
    H5Dclose(write_one(file, "held", H5T_NATIVE_DOUBLE, mine, lo, n, total));
    /* The previous version's buffer: free to reuse now that /held was written again. */
    if (!series) garble(held[(step + 1) % nbuf], n * sizeof(double));
    for (hsize_t i = 0; i < n; ++i) narrow[i] = (float)shallow_value(step, lo + i);
    H5Dclose(write_one(file, "converted", H5T_NATIVE_FLOAT, narrow, lo, n, total));
    garble(narrow, n * sizeof(float));
    fill(scratch, step, lo, n);
    H5Dclose(write_one(file, "copied", H5T_NATIVE_DOUBLE, scratch, lo, n, total));
    garble(scratch, n * sizeof(double));
    fill(scratch, step, lo, n);
    H5Dclose(write_one(file, "deep", H5T_NATIVE_DOUBLE, scratch, lo, n, total));
    garble(scratch, n * sizeof(double));
    CHECK(H5Fclose(file) >= 0, "H5Fclose");
    if (series) garble(held[(step + 1) % nbuf], n * sizeof(double));
  }
  if (rank == 0) {
    printf("wrote %d versions\n", steps);
    fflush(stdout);
  }
  if (argc == 4) {
    for (int i = 0; i < 1200 && access(argv[3], F_OK) != 0; ++i) usleep(100000);
    CHECK(access(argv[3], F_OK) == 0, "%s did not appear", argv[3]);
  }
  /* The held buffers stay valid until HDF5 closes (H5close, below MPI_Finalize's hooks). */
  H5close();
  for (int b = 0; b < nbuf; ++b) free(held[b]);
  free(scratch);
  free(narrow);
  MPI_Finalize();
  return 0;
}
