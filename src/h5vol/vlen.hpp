#pragma once
// Datasets of variable-length types (strings, sequences of a fixed-size
// base type) in memory: their elements live in the file's tree (the
// metadata a version publishes), not in Cove variables, whose elements have
// one size. Written by one process (a file of several ranks refuses them).
#include "h5vol/session.hpp"

#include <optional>

namespace cove::h5vol {

// The allocator of the variable-length parts an H5Dread hands the caller:
// its transfer list's (H5Pset_vlen_mem_manager; HDF5's own
// H5Dvlen_get_buf_size counts sizes with one), else HDF5's
// (H5allocate_memory). Parts the connector frees itself never come from it.
struct VlenAllocator {
  hid_t dxpl = H5P_DEFAULT;
  H5MM_allocate_t alloc = nullptr;
  void* info = nullptr;
  static VlenAllocator of(hid_t dxpl);
  void* allocate(std::size_t bytes, bool clear) const;
};

// A type holding variable-length data anywhere: a variable-length string or
// sequence, or a compound or array with one among its members.
bool is_vlen(hid_t type);
// Variable-length data below the top level (a compound or array with a
// variable-length member, a sequence of such or of strings): each element
// is kept whole, with its variable-length parts, as bytes of its own
// (encode_nested / decode_nested); the two plain kinds keep their own form.
bool is_nested_vlen(hid_t type);
// n elements of `mem_type` at `buf` as the bytes of n elements of
// `file_type` (converted by HDF5 first), one vector per element.
std::vector<std::vector<std::byte>> encode_nested(hid_t mem_type, hid_t file_type, const void* buf, std::size_t n);
// Back: n elements of `mem_type` into `buf` (an empty vector reads as an
// unwritten element: zeros, empty sequences, null strings); the
// variable-length parts are made by `to` (the caller frees them, H5Treclaim).
void decode_nested(const std::vector<const std::vector<std::byte>*>& elements, hid_t file_type, hid_t mem_type, void* buf,
                   const VlenAllocator& to = VlenAllocator{});
// A variable-length type's fill value in `dcpl`, in the form its elements
// are stored in; nothing when the list has none of the user's. H5Pencode
// keeps such a value's pointers, not what they point to (another process
// decodes dangling ones, and two lists free one string): the tree stores
// the value this way beside a creation list without it (tree.cpp), and
// set_vlen_fill puts it back (H5Pset_fill_value).
// H5Dset_extent of a variable-length dataset: its elements (by linear
// index) move to their places in the new extent `dataset.dims`; those
// outside it go (growing back reads the fill value).
void reshape_vlen(Node& dataset, const std::vector<hsize_t>& old_dims);
std::optional<std::vector<std::byte>> vlen_fill(hid_t dcpl, hid_t type);
void set_vlen_fill(hid_t dcpl, hid_t type, const std::vector<std::byte>& stored);
// Whether the connector keeps datasets of this type (throws Failure naming
// `what` for variable-length data holding references, which it does not).
void check_vlen_type(hid_t type, const std::string& what);
// H5Dwrite / H5Dread of such a dataset, by the file and memory selections;
// the memory type must be variable-length too (HDF5 converts between fixed-
// and variable-length in neither direction). Unwritten elements read empty.
void write_vlen(FileState& file, Node& dataset, hid_t mem_type, hid_t mem_space, hid_t file_space, const void* buf);
void read_vlen(const FileState& file, const Node& dataset, hid_t mem_type, hid_t mem_space, hid_t file_space, void* buf,
               const VlenAllocator& to);

// Variable-length sequence attributes: n elements of `mem_type` (hvl_t) as
// stored bytes (per element its length, 8 bytes, then its elements in the
// file's base type), and back into HDF5-allocated hvl_t (the caller frees them).
std::vector<std::byte> encode_sequences(hid_t mem_type, hid_t file_type, const void* buf, std::size_t n);
void decode_sequences(const std::vector<std::byte>& data, hid_t file_type, hid_t mem_type, void* buf, std::size_t n);

}  // namespace cove::h5vol
