#pragma once
// The datatypes the connector keeps (a dataset's, an attribute's, a
// committed datatype's) as their encoded bytes, not as HDF5 identifiers.
//
// Why: HDF5 counts every datatype identifier that an application could
// hold in H5Fget_obj_count(H5F_OBJ_ALL, ...) and lists it in
// H5Fget_obj_ids; a type the connector kept as an H5Tcopy showed up there
// as one of the program's (HDF5's own API tests count them). So a TypeRef
// holds H5Tencode's bytes, and get() decodes them into an identifier that
// lives until the connector's outermost call from HDF5 returns (CallScope,
// errors.hpp), then is closed.
//
// Not thread-safe: used under HDF5's own lock, like the rest of the connector.
#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cove::h5vol {

class TypeRef {
 public:
  TypeRef() = default;
  // A copy of `type` (a transient one when `type` is committed). Throws Failure.
  explicit TypeRef(hid_t type);
  // The bytes H5Tencode made (from the file's stored metadata).
  static TypeRef from_encoded(std::vector<std::byte> encoded);

  // The type, as an identifier valid until the outermost connector call
  // returns (never close it); H5I_INVALID_HID when empty.
  hid_t get() const;
  bool empty() const { return encoded_.empty(); }
  const std::vector<std::byte>& encoded() const { return encoded_; }

 private:
  std::vector<std::byte> encoded_;
  mutable hid_t id_ = H5I_INVALID_HID;
  mutable std::uint64_t generation_ = 0;  // the call scope id_ was decoded in
};

// Closes every identifier TypeRef::get() made (the outermost CallScope
// does; the connector's terminate too).
void release_decoded_types();

}  // namespace cove::h5vol
