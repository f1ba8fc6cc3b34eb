/* Same-name creates on split communicators (issue 32: this hung in
 * H5Fcreate's version broadcast). Three ranks, plain parallel HDF5, the
 * connector chosen by the environment:
 *   ranks {0,1} create FILE and write d = {1, 2}; then ranks {1,2} create
 *   FILE again and write d = {11, 12}. Rank 1 created the name before, rank 2
 *   never: they must still agree on the new version. Each rank then reads
 *   back the version it wrote last ({1,2} on rank 0, {11,12} on 1 and 2).
 *   split_writer FILE */
#include <hdf5.h>
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>

#define CHECK(c, ...)                                            \
  do {                                                           \
    if (!(c)) {                                                  \
      fprintf(stderr, "%s:%d: check failed: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                              \
      fprintf(stderr, "\n");                                     \
      MPI_Abort(MPI_COMM_WORLD, 1);                              \
    }                                                            \
  } while (0)

static void write_on(MPI_Comm comm, const char* path, int base) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL);
  hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  CHECK(file >= 0, "H5Fcreate %s", path);
  H5Pclose(fapl);
  hsize_t n = (hsize_t)size, start = (hsize_t)rank, one = 1;
  hid_t space = H5Screate_simple(1, &n, NULL);
  hid_t d = H5Dcreate2(file, "d", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  CHECK(d >= 0, "H5Dcreate d");
  H5Sselect_hyperslab(space, H5S_SELECT_SET, &start, NULL, &one, NULL);
  hid_t mem = H5Screate_simple(1, &one, NULL);
  int v = base + rank;
  CHECK(H5Dwrite(d, H5T_NATIVE_INT, mem, space, H5P_DEFAULT, &v) >= 0, "H5Dwrite");
  H5Sclose(mem);
  H5Sclose(space);
  H5Dclose(d);
  CHECK(H5Fclose(file) >= 0, "H5Fclose");
}

static void read_own(const char* path, int expect0, int expect1) {
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  CHECK(file >= 0, "H5Fopen %s", path);
  hid_t d = H5Dopen2(file, "d", H5P_DEFAULT);
  int v[2] = {0, 0};
  CHECK(d >= 0 && H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0, "H5Dread");
  CHECK(v[0] == expect0 && v[1] == expect1, "read {%d, %d}, want {%d, %d}", v[0], v[1], expect0, expect1);
  H5Dclose(d);
  H5Fclose(file);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(argc == 2 && size == 3, "usage: mpiexec -n 3 split_writer FILE");
  MPI_Comm a, b;
  MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &a);
  MPI_Comm_split(MPI_COMM_WORLD, rank >= 1 ? 0 : MPI_UNDEFINED, rank, &b);
  if (a != MPI_COMM_NULL) write_on(a, argv[1], 1);
  if (b != MPI_COMM_NULL) write_on(b, argv[1], 11);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) read_own(argv[1], 1, 2);
  else read_own(argv[1], 11, 12);
  if (a != MPI_COMM_NULL) MPI_Comm_free(&a);
  if (b != MPI_COMM_NULL) MPI_Comm_free(&b);
  printf("split: rank %d ok\n", rank);
  MPI_Finalize();
  return 0;
}
