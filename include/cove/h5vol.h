/* The Cove HDF5 VOL connector (docs/hdf5.md): HDF5 files that a producer
 * writes become versions in Cove's staging space, and readers open them
 * from there, in memory.
 *
 * Programs need not call anything here: HDF5 loads the connector itself
 * with HDF5_PLUGIN_PATH=<dir of libcove_h5vol.so> and
 * HDF5_VOL_CONNECTOR="cove" (or "cove config=PATH"). This header is for
 * programs that choose it on one file access property list instead.
 */
#ifndef COVE_H5VOL_H
#define COVE_H5VOL_H

#include <hdf5.h>

#if defined(__GNUC__)
#define COVE_H5VOL_API __attribute__((visibility("default")))
#else
#define COVE_H5VOL_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Sets the Cove connector on file access property list `fapl`.
 * `config_path`: a TOML configuration (docs/hdf5.md), or NULL / "" for the
 * one named by COVE_HDF5_CONFIG, else the defaults. The path is copied.
 * Keep an MPI-IO driver set on `fapl` (H5Pset_fapl_mpio) for a parallel
 * program: the connector takes its communicator from there.
 * Blocking: no (the server is contacted at H5Fcreate / H5Fopen).
 * Thread-safety: as HDF5's own property list calls.
 * Errors: returns a negative value with an entry on HDF5's error stack. */
COVE_H5VOL_API herr_t H5Pset_fapl_cove(hid_t fapl, const char* config_path);

#ifdef __cplusplus
}
#endif

#endif
