#pragma once

#include "h5vol/session.hpp"

#include <H5VLconnector.h>

#include <memory>
#include <string>

namespace cove::h5vol {

// What HDF5 holds for each identifier the connector hands out.
struct Object {
  enum class Kind { file, group, dataset, attribute, datatype };
  Kind kind = Kind::group;
  std::shared_ptr<FileState> file;
  std::shared_ptr<Node> node;       // the object itself, or an attribute's owner
  std::shared_ptr<Attribute> attr;  // attributes
  void* under = nullptr;            // modes file and both: the native connector's object
  bool handle = false;              // files: a handle of H5Fcreate / H5Fopen / H5Freopen (FileState::handles)
  bool alias = false;               // files: an identifier HDF5 made for the file (H5Iget_file_id); owns nothing
  // The file handle this object was opened through (a handle: its own
  // number), for H5Fget_obj_count's H5F_OBJ_LOCAL; 0 through none (an external link).
  std::uint64_t via = 0;
  Hid access;                       // datasets in memory: the access list they were created or opened with
};

Object* new_object(Object::Kind kind, std::shared_ptr<FileState> file, std::shared_ptr<Node> node);
// A new handle of `file` (H5Fcreate, H5Fopen, H5Freopen), with a number of its own (Object::via).
Object* new_handle(std::shared_ptr<FileState> file);

// Resolves a path ("a/b", "/a/b", ".") from `from`; nullptr when a component is missing.
std::shared_ptr<Node> lookup(const FileState& file, const std::shared_ptr<Node>& from, const std::string& path);
// The first external link a path (from `from`) meets, and the rest of the
// path after it; `link` null when the path leads to an object or to nothing.
struct ExternalHop {
  std::shared_ptr<Node> link;
  std::string rest;
};
ExternalHop external_on_path(const FileState& file, const std::shared_ptr<Node>& from, const std::string& path);
// The object a location names; throws Failure naming it when it does not exist.
std::shared_ptr<Node> resolve(const Object& obj, const H5VL_loc_params_t* loc);
// A property list a call was given is H5P_DEFAULT or one of class `cls` (or derived from it); else an
// error naming it, as the native connector fails on it (HDF5's API layer lets an invalid one through).
void check_plist(hid_t id, hid_t cls, const char* what);
// The hard links to `target` in the groups reachable from the file's root (each group counted once).
unsigned hard_links(const FileState& f, const Node& target);
// The datasets and attributes reachable from the file's root whose type is
// the committed datatype `type` (each holds a reference to it, as natively).
unsigned type_users(const FileState& f, const Node& type);
// The n-th link of `group` by name or creation order, increasing or decreasing.
std::pair<std::string, std::shared_ptr<Node>> link_by_index(const Node& group, H5_index_t index, H5_iter_order_t order,
                                                            hsize_t n);
// Makes the parent group of `path` (relative to `base`) ready for a new
// link; returns it and the link's name. With `intermediate` (the link
// creation list's H5Pset_create_intermediate_group) missing groups on the
// way are created, as natively; else a missing one is an error naming it.
std::pair<std::shared_ptr<Node>, std::string> parent_for_link(FileState& file, const std::shared_ptr<Node>& base,
                                                              const std::string& name, bool intermediate);
std::pair<std::shared_ptr<Node>, std::string> parent_for_create(const Object& obj, const H5VL_loc_params_t* loc,
                                                                const std::string& name, hid_t lcpl);
// Links `node` as `leaf` of `parent`. An anonymous node takes the path (and
// its descendants theirs under it); a node linked already keeps its first path.
void add_link(FileState& file, const std::shared_ptr<Node>& parent, const std::string& leaf, const std::shared_ptr<Node>& node);
// True when `inner` is `outer` or lies under it.
bool contains(const Node& outer, const Node& inner);
void token_of(const Node& node, H5O_token_t* token);
std::uint64_t id_of(const H5O_token_t& token);

}  // namespace cove::h5vol
