#pragma once
// Datasets of variable-length types (strings, sequences of a fixed-size
// base type) in memory: their elements live in the file's tree (the
// metadata a version publishes), not in Cove variables, whose elements have
// one size. Written by one process (a file of several ranks refuses them).
#include "h5vol/session.hpp"

namespace cove::h5vol {

// A variable-length string or sequence type (at the top level).
bool is_vlen(hid_t type);
// Whether the connector keeps datasets of this type (throws Failure naming
// `what` for nested variable-length or reference members it does not).
void check_vlen_type(hid_t type, const std::string& what);
// H5Dwrite / H5Dread of such a dataset, by the file and memory selections;
// the memory type must be variable-length too (HDF5 converts between fixed-
// and variable-length in neither direction). Unwritten elements read empty.
void write_vlen(FileState& file, Node& dataset, hid_t mem_type, hid_t mem_space, hid_t file_space, const void* buf);
void read_vlen(const FileState& file, const Node& dataset, hid_t mem_type, hid_t mem_space, hid_t file_space, void* buf);

}  // namespace cove::h5vol
