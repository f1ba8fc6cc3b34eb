#include "h5vol/objects.hpp"

#include "h5vol/errors.hpp"

#include <cstring>
#include <iterator>
#include <set>
#include <vector>

namespace cove::h5vol {

Object* new_object(Object::Kind kind, std::shared_ptr<FileState> file, std::shared_ptr<Node> node) {
  auto* o = new Object;
  o->kind = kind;
  o->file = std::move(file);
  o->node = std::move(node);
  return o;
}

Object* new_handle(std::shared_ptr<FileState> file) {
  static std::uint64_t handles = 0;
  auto root = file->memory ? file->root : nullptr;
  auto* o = new_object(Object::Kind::file, std::move(file), std::move(root));
  o->handle = true;
  o->via = ++handles;
  return o;
}

namespace {
// Follows soft links (relative to the group holding them), at most 16 deep as
// natively. An external link ends the walk (nullptr); `hop`, when given, then
// tells which one and the rest of the path after it.
std::shared_ptr<Node> walk(const FileState& file, const std::shared_ptr<Node>& from, const std::string& path, int depth,
                           ExternalHop* hop) {
  if (depth > 16) return nullptr;
  auto node = (!path.empty() && path[0] == '/') ? file.root : from;
  std::size_t pos = 0;
  while (node && pos <= path.size()) {
    const auto end = path.find('/', pos);
    const auto part = path.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    pos = end == std::string::npos ? path.size() + 1 : end + 1;
    if (part.empty() || part == ".") continue;
    if (node->kind != Node::Kind::group) return nullptr;
    auto it = node->links.find(part);
    if (it == node->links.end()) return nullptr;
    auto next = it->second;
    const std::string rest = pos < path.size() ? path.substr(pos) : "";
    if (next->kind == Node::Kind::external) {
      if (hop) *hop = ExternalHop{next, rest};
      return nullptr;
    }
    if (next->kind == Node::Kind::soft) {
      next = walk(file, node, next->target, depth + 1, hop);
      if (!next && hop && hop->link) {  // the soft link leads through an external one
        if (!rest.empty()) hop->rest = hop->rest.empty() ? rest : hop->rest + "/" + rest;
        return nullptr;
      }
    }
    node = next;
  }
  return node;
}
}  // namespace

std::shared_ptr<Node> lookup(const FileState& file, const std::shared_ptr<Node>& from, const std::string& path) {
  return walk(file, from, path, 0, nullptr);
}

ExternalHop external_on_path(const FileState& file, const std::shared_ptr<Node>& from, const std::string& path) {
  ExternalHop hop;
  if (walk(file, from, path, 0, &hop)) return {};
  return hop;
}

namespace {
// Calls fn on every object reachable from the file's root by hard links, each once.
template <class F>
void each_object(const FileState& f, F&& fn) {
  std::set<const Node*> seen;
  std::vector<const Node*> todo{f.root.get()};
  while (!todo.empty()) {
    const Node* n = todo.back();
    todo.pop_back();
    if (!n || !seen.insert(n).second) continue;
    fn(*n);
    for (const auto& [leaf, child] : n->links)
      if (child->kind != Node::Kind::soft && child->kind != Node::Kind::external) todo.push_back(child.get());
  }
}
}  // namespace

unsigned type_users(const FileState& f, const Node& type) {
  auto is_it = [&](const std::string& named) { return !named.empty() && lookup(f, f.root, named).get() == &type; };
  unsigned users = 0;
  each_object(f, [&](const Node& n) {
    if (n.kind == Node::Kind::dataset && is_it(n.named_type)) ++users;
    for (const auto& a : n.attributes)
      if (is_it(a->named_type)) ++users;
  });
  return users;
}

std::pair<std::string, std::shared_ptr<Node>> link_by_index(const Node& group, H5_index_t index, H5_iter_order_t order,
                                                            hsize_t n) {
  if (group.kind != Node::Kind::group) fail(group.path + " is not a group");
  if (n >= group.links.size())
    fail("index " + std::to_string(n) + " is past the " + std::to_string(group.links.size()) + " links of " + group.path);
  const auto size = group.links.size();
  const auto at = order == H5_ITER_DEC ? size - 1 - n : n;
  if (index == H5_INDEX_CRT_ORDER) {
    const auto& leaf = group.link_order[at];
    return {leaf, group.links.at(leaf)};
  }
  auto it = group.links.begin();
  std::advance(it, static_cast<std::ptrdiff_t>(at));
  return *it;
}

unsigned hard_links(const FileState& f, const Node& target) {
  unsigned links = 0;
  each_object(f, [&](const Node& g) {
    for (const auto& [leaf, n] : g.links)
      if (n.get() == &target) ++links;
  });
  return links;
}
void check_plist(hid_t id, hid_t cls, const char* what) {
  if (id == H5P_DEFAULT) return;
  htri_t is = -1;
  H5E_BEGIN_TRY { is = H5Pisa_class(id, cls); }
  H5E_END_TRY
  if (is <= 0) fail(std::string("invalid ") + what + " (identifier " + std::to_string(id) + ")");
}
std::shared_ptr<Node> resolve(const Object& obj, const H5VL_loc_params_t* loc) {
  switch (loc->type) {
    case H5VL_OBJECT_BY_SELF:
      return obj.node;
    case H5VL_OBJECT_BY_NAME: {
      check_plist(loc->loc_data.loc_by_name.lapl_id, H5P_LINK_ACCESS, "link access property list");
      const std::string name = loc->loc_data.loc_by_name.name ? loc->loc_data.loc_by_name.name : "";
      auto n = lookup(*obj.file, obj.node, name);
      if (!n) fail("no object \"" + name + "\" under " + obj.node->path + " in file \"" + obj.file->name + "\"");
      return n;
    }
    case H5VL_OBJECT_BY_IDX: {
      const auto& by = loc->loc_data.loc_by_idx;
      check_plist(by.lapl_id, H5P_LINK_ACCESS, "link access property list");
      const std::string name = by.name ? by.name : ".";
      auto group = lookup(*obj.file, obj.node, name);
      if (!group) fail("no group \"" + name + "\" in file \"" + obj.file->name + "\"");
      auto n = link_by_index(*group, by.idx_type, by.order, by.n).second;
      if (n->kind == Node::Kind::soft) n = lookup(*obj.file, group, n->target);
      if (!n) fail("the link at index " + std::to_string(by.n) + " of " + group->path + " dangles");
      return n;
    }
    case H5VL_OBJECT_BY_TOKEN: {
      auto n = obj.file->find_id(id_of(*loc->loc_data.loc_by_token.token));
      if (!n) fail("no object with this token in file \"" + obj.file->name + "\"");
      return n;
    }
  }
  fail("unknown location type");
}

std::pair<std::shared_ptr<Node>, std::string> parent_for_link(FileState& file, const std::shared_ptr<Node>& base,
                                                              const std::string& name, bool intermediate) {
  std::string path = name;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  const auto slash = path.rfind('/');
  const std::string parent_path = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const std::string leaf = slash == std::string::npos ? path : path.substr(slash + 1);
  auto parent = lookup(file, base, parent_path);
  if (!parent && intermediate) {
    // Walk down, creating each missing group.
    auto node = (!parent_path.empty() && parent_path[0] == '/') ? file.root : base;
    std::size_t pos = 0;
    while (node && pos <= parent_path.size()) {
      const auto end = parent_path.find('/', pos);
      const auto part = parent_path.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
      pos = end == std::string::npos ? parent_path.size() + 1 : end + 1;
      if (part.empty() || part == ".") continue;
      if (node->kind != Node::Kind::group) fail(node->path + " is not a group (creating \"" + name + "\")");
      auto it = node->links.find(part);
      if (it != node->links.end()) {
        node = it->second;
        continue;
      }
      auto g = std::make_shared<Node>();
      g->id = file.next_id++;
      add_link(file, node, part, g);
      node = g;
    }
    parent = node;
  }
  if (!parent) fail("the parent group of \"" + name + "\" does not exist (and the link creation list does not ask for intermediate groups)");
  if (parent->kind != Node::Kind::group) fail(parent->path + " is not a group");
  if (leaf.empty() || leaf == ".") fail("\"" + name + "\" is not a valid link name");
  // Not `"literal" + std::string&&`: GCC 12 warns on its inlined insert (-Wrestrict, a false positive).
  if (parent->links.count(leaf)) fail(std::string("\"").append(join_path(parent->path, leaf)).append("\" already exists"));
  return {parent, leaf};
}

std::pair<std::shared_ptr<Node>, std::string> parent_for_create(const Object& obj, const H5VL_loc_params_t* loc,
                                                                const std::string& name, hid_t lcpl) {
  unsigned intermediate = 0;
  if (lcpl >= 0 && lcpl != H5P_DEFAULT) check(H5Pget_create_intermediate_group(lcpl, &intermediate), "H5Pget_create_intermediate_group");
  return parent_for_link(*obj.file, resolve(obj, loc), name, intermediate != 0);
}

namespace {
void repath(Node& node, const std::string& path, int depth = 0) {
  node.path = path;
  if (depth > 256) return;
  for (auto& [leaf, child] : node.links)
    if (child->path.empty() || child->path.rfind(path, 0) != 0) repath(*child, join_path(path, leaf), depth + 1);
}
bool contains(const Node& outer, const Node& inner, std::set<const Node*>& seen) {
  if (&outer == &inner) return true;
  if (!seen.insert(&outer).second) return false;
  for (const auto& [leaf, child] : outer.links)
    if (contains(*child, inner, seen)) return true;
  return false;
}
}  // namespace

void add_link(FileState& file, const std::shared_ptr<Node>& parent, const std::string& leaf, const std::shared_ptr<Node>& node) {
  if (parent->path.empty()) fail("linking \"" + leaf + "\" into an anonymous group (link the group first)");
  parent->links[leaf] = node;
  parent->link_order.push_back(leaf);
  parent->link_corder[leaf] = parent->next_link_corder++;
  // Named by the new link when it had no name, or lost it to an H5Ldelete (as natively, H5Iget_name).
  if (node->path.empty() || lookup(file, file.root, node->path) != node) repath(*node, join_path(parent->path, leaf));
  file.index(node);
}

bool contains(const Node& outer, const Node& inner) {
  std::set<const Node*> seen;
  return contains(outer, inner, seen);
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
