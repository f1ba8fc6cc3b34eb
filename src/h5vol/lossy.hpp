#pragma once
// Lossy filters (scale-offset, n-bit) on datasets in memory: the values they
// give natively, from HDF5's own filter code through its public API.
// Natively a chunk goes through the filter when it leaves the chunk cache,
// at the latest when the file closes: until then the writer reads back what
// it wrote. Here the same: H5Dwrite stores the values as written, and the
// writer's close sends every chunk this version wrote through a dataset of
// the same type, shape and creation list in a native file held in memory
// (the core driver, nothing on disk), once, with its other cells' present
// values, and stores what HDF5 reads back: the values every reader of the
// version gets. (A native writer whose chunks leave a too small chunk cache
// earlier reads filtered values sooner.) Written by one process (a file of
// several ranks refuses such datasets).
#include "h5vol/session.hpp"

#include <string>

namespace cove::h5vol {

// A new native HDF5 file held in memory (core driver, nothing on disk), for
// running HDF5's own code on a dataset's values (here and transform.hpp).
Hid native_file_in_memory();
// The name of the first lossy filter in `dcpl` ("" when none).
std::string lossy_filter(hid_t dcpl);
// At the writer's close, before the version is published.
void filter_lossy(FileState& file);

}  // namespace cove::h5vol
