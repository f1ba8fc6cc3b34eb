/* The values the PnetCDF test writer puts and the reader checks: every
 * element's value names its variable, step and global position; DTF's
 * calls for the builds that use them. */
#ifndef COVE_TEST_PNETCDF_VALUES_H
#define COVE_TEST_PNETCDF_VALUES_H

#include <mpi.h>

enum { NT3 = 3, NT4 = 2, NZ = 6, NY = 8, NX = 10 };

static inline double value_of(int var, int step, long long index) {
  return step * 100000.0 + var * 10000.0 + (double)index;
}

/* Block `rank` of `parts` of n elements. */
static inline void block(MPI_Offset n, int parts, int rank, MPI_Offset* start, MPI_Offset* count) {
  MPI_Offset base = n / parts, extra = n % parts;
  *start = rank * base + (rank < extra ? rank : extra);
  *count = base + (rank < extra ? 1 : 0);
}

#ifdef COVE_TEST_DTF
/* DTF's API (Martsinkevich et al.), as a program written for DTF calls it. */
int dtf_init(const char* config_file, const char* component_name);
int dtf_transfer(const char* filename);
int dtf_finalize(void);
#endif

#endif
