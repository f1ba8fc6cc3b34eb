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
};

Object* new_object(Object::Kind kind, std::shared_ptr<FileState> file, std::shared_ptr<Node> node);

// Resolves a path ("a/b", "/a/b", ".") from `from`; nullptr when a component is missing.
std::shared_ptr<Node> lookup(const FileState& file, const std::shared_ptr<Node>& from, const std::string& path);
// The object a location names; throws Failure naming it when it does not exist.
std::shared_ptr<Node> resolve(const Object& obj, const H5VL_loc_params_t* loc);
// The n-th link of `group` in the given order (by name).
std::pair<std::string, std::shared_ptr<Node>> link_by_index(const Node& group, H5_iter_order_t order, hsize_t n);
// Makes the parent group of `path` ready for a new link; returns it and the link's name.
std::pair<std::shared_ptr<Node>, std::string> parent_for_create(const Object& obj, const H5VL_loc_params_t* loc,
                                                                const std::string& name);
void token_of(const Node& node, H5O_token_t* token);
std::uint64_t id_of(const H5O_token_t& token);

}  // namespace cove::h5vol
