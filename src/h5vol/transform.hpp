#pragma once
// Data transforms (H5Pset_data_transform) on datasets in memory: the values
// HDF5 itself gives. H5Dwrite writes the caller's buffer, with the
// transform, into a dataset of the same type and shape in a native file
// held in memory (lossy.hpp: native_file_in_memory) and stores what it
// reads back without; H5Dread puts the stored values there and reads them
// with the transform into the caller's buffer.
#include "h5vol/session.hpp"

#include <string>

namespace cove::h5vol {

// The transfer list's data transform expression ("" when none, the usual case).
std::string data_transform(hid_t dxpl);
void write_transformed(FileState& file, Node& dataset, hid_t mem_type, hid_t mem_space, hid_t file_space,
                       const std::string& expression, const void* buf);
void read_transformed(FileState& file, const Node& dataset, hid_t mem_type, hid_t mem_space, hid_t file_space,
                      const std::string& expression, void* buf);

}  // namespace cove::h5vol
