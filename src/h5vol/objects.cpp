#include "h5vol/objects.hpp"

#include "h5vol/errors.hpp"

#include <cstring>
#include <iterator>

namespace cove::h5vol {

Object* new_object(Object::Kind kind, std::shared_ptr<FileState> file, std::shared_ptr<Node> node) {
  auto* o = new Object;
  o->kind = kind;
  o->file = std::move(file);
  o->node = std::move(node);
  return o;
}

std::shared_ptr<Node> lookup(const FileState& file, const std::shared_ptr<Node>& from, const std::string& path) {
  auto node = (!path.empty() && path[0] == '/') ? file.root : from;
  std::size_t pos = 0;
  while (node && pos <= path.size()) {
    const auto end = path.find('/', pos);
    const auto part = path.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    pos = end == std::string::npos ? path.size() + 1 : end + 1;
    if (part.empty() || part == ".") continue;
    if (node->kind != Node::Kind::group) return nullptr;
    auto it = node->links.find(part);
    node = it == node->links.end() ? nullptr : it->second;
  }
  return node;
}

std::pair<std::string, std::shared_ptr<Node>> link_by_index(const Node& group, H5_iter_order_t order, hsize_t n) {
  if (group.kind != Node::Kind::group) fail(group.path + " is not a group");
  if (n >= group.links.size())
    fail("index " + std::to_string(n) + " is past the " + std::to_string(group.links.size()) + " links of " + group.path);
  auto it = group.links.begin();
  if (order == H5_ITER_DEC) {
    it = group.links.end();
    std::advance(it, -static_cast<std::ptrdiff_t>(n) - 1);
  } else {
    std::advance(it, static_cast<std::ptrdiff_t>(n));
  }
  return *it;
}

std::shared_ptr<Node> resolve(const Object& obj, const H5VL_loc_params_t* loc) {
  switch (loc->type) {
    case H5VL_OBJECT_BY_SELF:
      return obj.node;
    case H5VL_OBJECT_BY_NAME: {
      const std::string name = loc->loc_data.loc_by_name.name ? loc->loc_data.loc_by_name.name : "";
      auto n = lookup(*obj.file, obj.node, name);
      if (!n) fail("no object \"" + name + "\" under " + obj.node->path + " in file \"" + obj.file->name + "\"");
      return n;
    }
    case H5VL_OBJECT_BY_IDX: {
      const auto& by = loc->loc_data.loc_by_idx;
      const std::string name = by.name ? by.name : ".";
      auto group = lookup(*obj.file, obj.node, name);
      if (!group) fail("no group \"" + name + "\" in file \"" + obj.file->name + "\"");
      if (by.idx_type != H5_INDEX_NAME) fail("only the name index is supported (no creation order index)");
      return link_by_index(*group, by.order, by.n).second;
    }
    case H5VL_OBJECT_BY_TOKEN: {
      auto n = obj.file->find_id(id_of(*loc->loc_data.loc_by_token.token));
      if (!n) fail("no object with this token in file \"" + obj.file->name + "\"");
      return n;
    }
  }
  fail("unknown location type");
}

std::pair<std::shared_ptr<Node>, std::string> parent_for_create(const Object& obj, const H5VL_loc_params_t* loc,
                                                                const std::string& name) {
  auto base = resolve(obj, loc);
  std::string path = name;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  const auto slash = path.rfind('/');
  const std::string parent_path = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const std::string leaf = slash == std::string::npos ? path : path.substr(slash + 1);
  auto parent = lookup(*obj.file, base, parent_path);
  if (!parent) fail("the parent group of \"" + name + "\" does not exist (intermediate groups are not created)");
  if (parent->kind != Node::Kind::group) fail(parent->path + " is not a group");
  if (leaf.empty() || leaf == ".") fail("\"" + name + "\" is not a valid link name");
  // Not `"literal" + std::string&&`: GCC 12 warns on its inlined insert (-Wrestrict, a false positive).
  if (parent->links.count(leaf)) fail(std::string("\"").append(join_path(parent->path, leaf)).append("\" already exists"));
  return {parent, leaf};
}

void token_of(const Node& node, H5O_token_t* token) {
  std::memset(token, 0, sizeof *token);
  std::memcpy(token->__data, &node.id, sizeof node.id);
}

std::uint64_t id_of(const H5O_token_t& token) {
  std::uint64_t id;
  std::memcpy(&id, token.__data, sizeof id);
  return id;
}

}  // namespace cove::h5vol
