#pragma once

#include "h5vol/session.hpp"

namespace cove::h5vol {

// The Cove element type a dataset of HDF5 type `type` is stored as.
DType dtype_of(hid_t type);
// Defines the dataset's Cove variable (idempotent).
// Its fill value (the creation list's, or zeros) is the variable's: the
// cells of a sealed version that no H5Dwrite covered read as it.
void define_dataset(FileState& file, const Node& dataset);
// A consumer's H5Fopen: the client takes the definitions of the file's
// written datasets from its metadata, as their producer made them, so that
// the first H5Dread of each asks no server for it (the servers' answers are
// checked against them: Client::remember_definition).
void remember_datasets(const FileState& file);
// One element of the dataset's fill value in its type (zeros when undefined).
std::vector<std::byte> fill_value(const Node& dataset);

// H5Dwrite: the selected elements, converted to the dataset's type, become
// puts of version file.version, one per block of the file selection.
void write_dataset(FileState& file, Node& dataset, hid_t mem_type, hid_t mem_space, hid_t file_space,
                   const void* buf);
// H5Dread: gets of exactly the blocks of the file selection, converted to
// `mem_type` by HDF5 and scattered into `buf` by the memory selection.
void read_dataset(FileState& file, const Node& dataset, hid_t mem_type, hid_t mem_space, hid_t file_space,
                  void* buf);

// H5Dset_extent shrinking the dataset to `size`: the cells outside it are
// written with the fill value (rank 0 of the file's communicator, then a
// barrier: the call is collective), as HDF5 fills the pruned part of a
// chunk, so that growing back reads the fill value, never the old values.
// Call before the new extent is set.
void drop_beyond_extent(FileState& file, Node& dataset, const hsize_t* size);

// A variable-length string type (h5py's str attributes).
bool is_variable_string(hid_t type);
// Such an attribute's values as stored (and serialized): per string its
// length (8 bytes) and bytes. Decoding throws Failure on truncated bytes.
std::vector<std::byte> encode_strings(const char* const* strings, std::size_t n);
std::vector<std::string> decode_strings(const std::vector<std::byte>& data, std::size_t n);

// Attribute values: converted with H5Tconvert into / out of the stored type;
// variable-length strings from and into variable-length string memory types.
void write_attribute(Attribute& attr, hid_t mem_type, const void* buf);
void read_attribute(const Attribute& attr, hid_t mem_type, void* buf);

}  // namespace cove::h5vol
