/* An unmodified parallel HDF5 reader for the transfer test (shallow_writer.c):
 * opens STEPS versions of FILE in turn and reads its own block (its ranks
 * cut the datasets differently from the writer's) of each dataset. A read
 * that succeeds must hold exactly the values of that version; a read that
 * fails (a version its producer retired) is reported, and is allowed only
 * for the held datasets, never for /deep. Rank 0 prints per version
 *   step S: held=ok|retired|mixed converted=... copied=... deep=...
 * FILE with %d: a file per step. H5VOL_TEST_DEEP_MAY_GO=1: /deep may fail
 * too (keep_files removed the file).
 * Nothing here knows about Cove.
 *   shallow_reader FILE STEPS */
#include "shallow.h"

static const char* kDatasets[4] = {"held", "converted", "copied", "deep"};

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  CHECK(argc == 3, "usage: shallow_reader FILE STEPS");
  char path[256];
  const int deep_may_go = getenv("H5VOL_TEST_DEEP_MAY_GO") != NULL;
  const int steps = atoi(argv[2]);
  int rank, size;
  MPI_Comm_rank(program_comm(), &rank);
  MPI_Comm_size(program_comm(), &size);
  for (int step = 1; step <= steps; ++step) {
    snprintf(path, sizeof path, argv[1], step);
    hid_t fapl = mpio_fapl();
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    CHECK(file >= 0, "H5Fopen %s (version %d)", path, step);
    H5Pclose(fapl);
    int ok[4], bad[4];
    for (int d = 0; d < 4; ++d) {
      hid_t dset = H5Dopen2(file, kDatasets[d], H5P_DEFAULT);
      CHECK(dset >= 0, "H5Dopen %s", kDatasets[d]);
      hid_t space = H5Dget_space(dset);
      hsize_t total = 0, lo, n;
      H5Sget_simple_extent_dims(space, &total, NULL);
      block_of(total, rank, size, &lo, &n);
      double* buf = malloc((n ? n : 1) * sizeof(double));
      for (hsize_t i = 0; i < n; ++i) buf[i] = -7.0;
      H5Sselect_hyperslab(space, H5S_SELECT_SET, &lo, NULL, &n, NULL);
      hid_t mem = H5Screate_simple(1, &n, NULL);
      const herr_t rc = H5Dread(dset, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, buf);
      ok[d] = rc >= 0;
      bad[d] = rc < 0;
      if (rc >= 0)
        for (hsize_t i = 0; i < n; ++i)
          CHECK(buf[i] == shallow_value(step, lo + i), "%s version %d element %llu is %g, want %g", kDatasets[d], step,
                (unsigned long long)(lo + i), buf[i], shallow_value(step, lo + i));
      else
        CHECK(d != 3 || deep_may_go, "reading /deep of version %d failed", step);
      free(buf);
      H5Sclose(mem);
      H5Sclose(space);
      H5Dclose(dset);
    }
    MPI_Allreduce(MPI_IN_PLACE, ok, 4, MPI_INT, MPI_SUM, program_comm());
    MPI_Allreduce(MPI_IN_PLACE, bad, 4, MPI_INT, MPI_SUM, program_comm());
    if (rank == 0) {
      printf("step %d:", step);
      for (int d = 0; d < 4; ++d)
        printf(" %s=%s", kDatasets[d], ok[d] == size ? "ok" : bad[d] == size ? "retired" : "mixed");
      printf("\n");
      fflush(stdout);
    }
    CHECK(H5Fclose(file) >= 0, "H5Fclose");
  }
  MPI_Finalize();
  return 0;
}
