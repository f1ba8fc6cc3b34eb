/* H5Fclose on the producer while a consumer reads slowly (docs/hdf5.md).
 * LowFive's producer blocks in H5Fclose until its consumers have read; the
 * Cove connector's should not wait for them at all. Plain HDF5 + MPI:
 *   close_bench producer FILE STEPS MIB      prints the mean and max H5Fclose time
 *   close_bench consumer FILE STEPS DELAY_MS reads each version, then holds it DELAY_MS
 * bench/h5vol/close_bench.sh runs the producer alone and beside a slow consumer. */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static hid_t fapl(void) {
  hid_t p = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(p, MPI_COMM_WORLD, MPI_INFO_NULL);
  return p;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc < 5) {
    fprintf(stderr, "usage: close_bench producer|consumer FILE STEPS MIB|DELAY_MS\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int steps = atoi(argv[3]), arg = atoi(argv[4]);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (strcmp(argv[1], "producer") == 0) {
    const hsize_t n = (hsize_t)arg * 1048576 / sizeof(double) / (hsize_t)size * (hsize_t)size;
    const hsize_t mine = n / (hsize_t)size, start = mine * (hsize_t)rank;
    double* buf = malloc(mine * sizeof(double));
    double total = 0, worst = 0;
    for (int s = 1; s <= steps; ++s) {
      for (hsize_t i = 0; i < mine; ++i) buf[i] = (double)(start + i) + s;
      hid_t p = fapl();
      hid_t f = H5Fcreate(argv[2], H5F_ACC_TRUNC, H5P_DEFAULT, p);
      hid_t space = H5Screate_simple(1, &n, NULL);
      hid_t d = H5Dcreate2(f, "x", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
      H5Sselect_hyperslab(space, H5S_SELECT_SET, &start, NULL, &mine, NULL);
      hid_t mem = H5Screate_simple(1, &mine, NULL);
      if (f < 0 || d < 0 || H5Dwrite(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, buf) < 0) MPI_Abort(MPI_COMM_WORLD, 1);
      H5Sclose(mem);
      H5Sclose(space);
      H5Dclose(d);
      H5Pclose(p);
      struct timespec t0, t1;
      clock_gettime(CLOCK_MONOTONIC, &t0);
      if (H5Fclose(f) < 0) MPI_Abort(MPI_COMM_WORLD, 1);
      clock_gettime(CLOCK_MONOTONIC, &t1);
      double dt = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
      total += dt;
      if (dt > worst) worst = dt;
    }
    if (rank == 0) printf("H5Fclose mean %.6f s max %.6f s over %d steps\n", total / steps, worst, steps);
    free(buf);
  } else {
    for (int s = 1; s <= steps; ++s) {
      hid_t p = fapl();
      hid_t f = H5Fopen(argv[2], H5F_ACC_RDONLY, p);
      hid_t d = H5Dopen2(f, "x", H5P_DEFAULT);
      hid_t space = H5Dget_space(d);
      hsize_t n = 0;
      H5Sget_simple_extent_dims(space, &n, NULL);
      const hsize_t mine = n / (hsize_t)size, start = mine * (hsize_t)rank;
      double* buf = malloc(mine * sizeof(double));
      H5Sselect_hyperslab(space, H5S_SELECT_SET, &start, NULL, &mine, NULL);
      hid_t mem = H5Screate_simple(1, &mine, NULL);
      if (f < 0 || H5Dread(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, buf) < 0) MPI_Abort(MPI_COMM_WORLD, 1);
      int step = (int)(buf[0] - (double)start);
      for (hsize_t i = 0; i < mine; ++i)
        if (buf[i] != (double)(start + i) + step) {
          fprintf(stderr, "consumer: wrong value at %llu\n", (unsigned long long)(start + i));
          MPI_Abort(MPI_COMM_WORLD, 1);
        }
      struct timespec nap = {arg / 1000, (long)(arg % 1000) * 1000000L};
      nanosleep(&nap, NULL);  /* a slow analysis, holding the version open */
      free(buf);
      H5Sclose(mem);
      H5Sclose(space);
      H5Dclose(d);
      H5Fclose(f);
      H5Pclose(p);
    }
    if (rank == 0) printf("consumer: %d versions read and checked\n", steps);
  }
  MPI_Finalize();
  return 0;
}
