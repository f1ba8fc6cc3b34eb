#pragma once
// The connector's VOL callbacks, one file per object class
// (file_callbacks.cpp, group_, dataset_, attribute_, link_, object_),
// gathered into HDF5's class table in connector.cpp, and the helpers they
// share (vol.cpp). Each maps HDF5's call onto the in-memory tree
// (objects.hpp, tree.hpp) and Cove transfers (transfer.hpp), and, for files
// in mode file or both, passes it to the native connector underneath
// (Object::under): mode file only there, mode both there as well as to
// memory (a producer's queries are then answered from memory).
#include "h5vol/errors.hpp"
#include "h5vol/objects.hpp"
#include "h5vol/transfer.hpp"

#include <H5VLconnector_passthru.h>
#include <H5VLnative.h>

#include <cstddef>
#include <memory>
#include <string>

namespace cove::h5vol {

// What a file access list carries for this connector ("cove config=PATH").
struct Info {
  std::string config;
};

inline Object& as(void* p) { return *static_cast<Object*>(p); }
inline bool in_memory(const Object& o) { return o.node != nullptr; }
inline hid_t nvol(const Object& o) { return o.file->under_vol; }
inline H5O_type_t object_type(const Node& n) {
  return n.kind == Node::Kind::group ? H5O_TYPE_GROUP : n.kind == Node::Kind::datatype ? H5O_TYPE_NAMED_DATATYPE : H5O_TYPE_DATASET;
}
inline H5I_type_t id_type(const Node& n) {
  return n.kind == Node::Kind::group ? H5I_GROUP : n.kind == Node::Kind::datatype ? H5I_DATATYPE : H5I_DATASET;
}
inline Object::Kind object_kind(const Node& n) {
  return n.kind == Node::Kind::group ? Object::Kind::group
         : n.kind == Node::Kind::datatype ? Object::Kind::datatype : Object::Kind::dataset;
}

// The native connector's result, or a Failure (its own error entry is on the stack).
void* native(void* p, const char* what);
herr_t native(herr_t r, const char* what);
Object* child(const Object& parent, Object::Kind kind, std::shared_ptr<Node> node, void* under);
// A file access list that selects the native connector, for the file underneath.
Hid native_fapl(hid_t fapl);
Object::Kind kind_of(H5I_type_t type);
// HDF5's name-query convention: the length always, the name (cut to size) when buf is given.
void copy_name(const std::string& name, char* buf, std::size_t size, std::size_t* len);
[[noreturn]] void unsupported(const std::string& what);
// Registers a temporary identifier for `node` so that an iteration
// callback can be given one; closing it deletes the Object.
hid_t register_id(const Object& from, const std::shared_ptr<Node>& node);
void link_info(const Node& n, H5L_info2_t* info);
// A dataset or attribute created with a committed datatype of the same file
// keeps its path: H5Dget_type and H5Aget_type then give that datatype,
// committed, as natively (a transient copy of `type` when it is gone).
std::string committed_path(const Object& o, hid_t type);
// Now (seconds since the epoch) when the object creation list tracks times (the default), else 0.
std::int64_t creation_time(hid_t ocpl);
hid_t type_id_of(const Object& o, hid_t type, const std::string& named);
// H5Oopen, H5Gopen, H5Dopen and H5Topen of `path` (from `base` in o's file)
// when the path meets an external link: the object in the file the link
// names (memory mode, opened read-only, as H5Fopen would: the file this
// process has open, else its version), after the rest of the path; nullptr
// when the path meets no external link. Throws Failure naming the link
// when its file or object cannot be opened.
Object* open_external(const Object& o, const std::shared_ptr<Node>& base, const std::string& path);
// True on this thread while register_id registers one of the connector's own
// Objects: wrap_object then leaves it as it is (everything else HDF5 asks to
// wrap in a file of mode both is the native connector's, and is wrapped).
bool& registering_own();
// The Session's configuration from the file access list's Info (connector.cpp).
void configure_from(hid_t fapl);

// files (file_callbacks.cpp)
void* file_create(const char* name, unsigned flags, hid_t fcpl, hid_t fapl, hid_t dxpl, void** req);
void* file_open(const char* name, unsigned flags, hid_t fapl, hid_t dxpl, void** req);
herr_t file_get(void* obj, H5VL_file_get_args_t* a, hid_t dxpl, void** req);
herr_t file_specific(void* obj, H5VL_file_specific_args_t* a, hid_t dxpl, void** req);
herr_t file_optional(void* obj, H5VL_optional_args_t* a, hid_t dxpl, void** req);
herr_t file_close(void* obj, hid_t dxpl, void** req);

// groups (group_callbacks.cpp)
void* group_create(void* obj, const H5VL_loc_params_t* loc, const char* name, hid_t lcpl, hid_t gcpl, hid_t gapl,
                 hid_t dxpl, void** req);
void* group_open(void* obj, const H5VL_loc_params_t* loc, const char* name, hid_t gapl, hid_t dxpl, void** req);
herr_t group_get(void* obj, H5VL_group_get_args_t* a, hid_t dxpl, void** req);
herr_t group_specific(void* obj, H5VL_group_specific_args_t* a, hid_t dxpl, void** req);
herr_t group_optional(void* obj, H5VL_optional_args_t* a, hid_t dxpl, void** req);

// datasets (dataset_callbacks.cpp)
void* dataset_create(void* obj, const H5VL_loc_params_t* loc, const char* name, hid_t lcpl, hid_t type, hid_t space,
                   hid_t dcpl, hid_t dapl, hid_t dxpl, void** req);
void* dataset_open(void* obj, const H5VL_loc_params_t* loc, const char* name, hid_t dapl, hid_t dxpl, void** req);
herr_t dataset_read(size_t count, void* dset[], hid_t mem_type[], hid_t mem_space[], hid_t file_space[], hid_t dxpl,
                  void* buf[], void** req);
herr_t dataset_write(size_t count, void* dset[], hid_t mem_type[], hid_t mem_space[], hid_t file_space[], hid_t dxpl,
                   const void* buf[], void** req);
herr_t dataset_get(void* obj, H5VL_dataset_get_args_t* a, hid_t dxpl, void** req);
herr_t dataset_specific(void* obj, H5VL_dataset_specific_args_t* a, hid_t dxpl, void** req);
herr_t dataset_optional(void* obj, H5VL_optional_args_t* a, hid_t dxpl, void** req);

// attributes (attribute_callbacks.cpp)
void* attr_create(void* obj, const H5VL_loc_params_t* loc, const char* name, hid_t type, hid_t space, hid_t acpl,
                hid_t aapl, hid_t dxpl, void** req);
void* attr_open(void* obj, const H5VL_loc_params_t* loc, const char* name, hid_t aapl, hid_t dxpl, void** req);
herr_t attr_read(void* obj, hid_t mem_type, void* buf, hid_t dxpl, void** req);
herr_t attr_write(void* obj, hid_t mem_type, const void* buf, hid_t dxpl, void** req);
herr_t attr_get(void* obj, H5VL_attr_get_args_t* a, hid_t dxpl, void** req);
herr_t attr_specific(void* obj, const H5VL_loc_params_t* loc, H5VL_attr_specific_args_t* a, hid_t dxpl, void** req);
herr_t attr_optional(void* obj, H5VL_optional_args_t* a, hid_t dxpl, void** req);

// links (link_callbacks.cpp)
herr_t link_create(H5VL_link_create_args_t* a, void* obj, const H5VL_loc_params_t* loc, hid_t lcpl, hid_t lapl,
                 hid_t dxpl, void** req);
herr_t link_copy(void* src, const H5VL_loc_params_t* loc1, void* dst, const H5VL_loc_params_t* loc2, hid_t lcpl,
                 hid_t lapl, hid_t dxpl, void** req);
herr_t link_move(void* src, const H5VL_loc_params_t* loc1, void* dst, const H5VL_loc_params_t* loc2, hid_t lcpl,
                 hid_t lapl, hid_t dxpl, void** req);
herr_t link_get(void* obj, const H5VL_loc_params_t* loc, H5VL_link_get_args_t* a, hid_t dxpl, void** req);
herr_t link_specific(void* obj, const H5VL_loc_params_t* loc, H5VL_link_specific_args_t* a, hid_t dxpl, void** req);
herr_t link_optional(void* obj, const H5VL_loc_params_t* loc, H5VL_optional_args_t* a, hid_t dxpl, void** req);

// objects (object_close closes every kind) and committed datatypes (object_callbacks.cpp)
herr_t object_close(void* obj, hid_t dxpl, void** req);
void* object_open(void* obj, const H5VL_loc_params_t* loc, H5I_type_t* type, hid_t dxpl, void** req);
herr_t object_copy(void* src_obj, const H5VL_loc_params_t* src_loc, const char* src_name, void* dst_obj,
                   const H5VL_loc_params_t* dst_loc, const char* dst_name, hid_t ocpypl, hid_t lcpl, hid_t dxpl,
                   void** req);
herr_t object_get(void* obj, const H5VL_loc_params_t* loc, H5VL_object_get_args_t* a, hid_t dxpl, void** req);
herr_t object_specific(void* obj, const H5VL_loc_params_t* loc, H5VL_object_specific_args_t* a, hid_t dxpl,
                     void** req);
herr_t object_optional(void* obj, const H5VL_loc_params_t* loc, H5VL_optional_args_t* a, hid_t dxpl, void** req);
void* datatype_commit(void* obj, const H5VL_loc_params_t* loc, const char* name, hid_t type, hid_t lcpl, hid_t tcpl,
                    hid_t tapl, hid_t dxpl, void** req);
void* datatype_open(void* obj, const H5VL_loc_params_t* loc, const char* name, hid_t tapl, hid_t dxpl, void** req);
herr_t datatype_get(void* obj, H5VL_datatype_get_args_t* a, hid_t dxpl, void** req);
herr_t datatype_specific(void* obj, H5VL_datatype_specific_args_t* a, hid_t dxpl, void** req);
herr_t datatype_optional(void* obj, H5VL_optional_args_t* a, hid_t dxpl, void** req);

}  // namespace cove::h5vol
