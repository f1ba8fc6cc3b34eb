/* Shared by the transfer test's writer and reader: plain HDF5 + MPI. */
#ifndef H5VOL_TEST_SHALLOW_H
#define H5VOL_TEST_SHALLOW_H

#include "common.h"

enum { kShallowN = 50000 };  /* elements per writer rank */

/* Exactly representable as a float too (below 2^24), so /converted compares exactly. */
static inline double shallow_value(int step, hsize_t i) { return (double)step * 1.0e6 + (double)(i % 500000); }

#endif
