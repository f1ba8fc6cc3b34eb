/* Shared by the test writer and reader: plain HDF5 + MPI, no Cove headers. */
#ifndef H5VOL_TEST_COMMON_H
#define H5VOL_TEST_COMMON_H

#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond, ...)                                                    \
  do {                                                                      \
    if (!(cond)) {                                                          \
      fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                         \
      fprintf(stderr, "\n");                                                \
      H5Eprint2(H5E_DEFAULT, stderr);                                       \
      MPI_Abort(MPI_COMM_WORLD, 1);                                         \
    }                                                                       \
  } while (0)

/* The datasets under /fields: rank 1, 2 and 3, sizes not divisible by the rank counts. */
static const hsize_t kDims[3][3] = {{997, 1, 1}, {37, 29, 1}, {11, 13, 17}};
static const char* kNames[3] __attribute__((unused)) = {"d1", "d2", "d3"};
enum { kExt = 40, kTable = 5, kStrings = 4, kStrLen = 8 };

typedef struct {
  int id;
  double x;
  char name[8];
} Row;

/* The value of element `linear` (C order) of dataset d at step s. */
static inline double value_at(int step, int d, hsize_t linear) {
  return step * 1.0e6 + (double)(d + 1) * 1.0e5 + (double)linear;
}

static inline void block_of(hsize_t n, int rank, int size, hsize_t* lo, hsize_t* count) {
  *lo = n * (hsize_t)rank / (hsize_t)size;
  *count = n * (hsize_t)(rank + 1) / (hsize_t)size - *lo;
}

/* This program's own ranks: in an MPMD job (writer : reader), MPI_COMM_WORLD
 * holds both programs, and each splits off its own by MPI_APPNUM. */
static MPI_Comm program_comm_ = MPI_COMM_NULL;
static inline MPI_Comm program_comm(void) {
  if (program_comm_ == MPI_COMM_NULL) {
    int* appnum = NULL;
    int found = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &found);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_split(MPI_COMM_WORLD, found && appnum ? *appnum : 0, rank, &program_comm_);
  }
  return program_comm_;
}

static inline hid_t mpio_fapl(void) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(fapl, program_comm(), MPI_INFO_NULL);
  return fapl;
}

static inline hid_t row_type(void) {
  hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(Row));
  hid_t s = H5Tcopy(H5T_C_S1);
  H5Tset_size(s, 8);
  H5Tinsert(t, "id", HOFFSET(Row, id), H5T_NATIVE_INT);
  H5Tinsert(t, "x", HOFFSET(Row, x), H5T_NATIVE_DOUBLE);
  H5Tinsert(t, "name", HOFFSET(Row, name), s);
  H5Tclose(s);
  return t;
}

#endif
