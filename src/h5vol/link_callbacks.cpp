// The VOL callbacks of links: create, get, iterate, exists, delete.
#include "h5vol/vol.hpp"

#include <cove/error.hpp>

#include <cstring>
#include <set>
#include <tuple>

namespace cove::h5vol {

// ---- links ----
namespace {
// The group holding link `name` (relative to o) and the link's last component; parent null when missing.
std::pair<std::shared_ptr<Node>, std::string> split_link(const Object& o, std::string name) {
  while (name.size() > 1 && name.back() == '/') name.pop_back();
  const auto slash = name.rfind('/');
  const std::string parent_path = slash == std::string::npos ? "." : (slash == 0 ? "/" : name.substr(0, slash));
  auto parent = lookup(*o.file, o.node, parent_path);
  if (parent && parent->kind != Node::Kind::group) parent = nullptr;
  return {parent, slash == std::string::npos ? name : name.substr(slash + 1)};
}
// The link a location names itself (a soft link is not followed), with its group.
struct Link {
  std::shared_ptr<Node> parent;
  std::string leaf;
  std::shared_ptr<Node> node;
};
Link the_link(const Object& o, const H5VL_loc_params_t* loc) {
  Link l;
  if (loc->type == H5VL_OBJECT_BY_NAME) {
    check_plist(loc->loc_data.loc_by_name.lapl_id, H5P_LINK_ACCESS, "link access property list");
    std::tie(l.parent, l.leaf) = split_link(o, loc->loc_data.loc_by_name.name);
    if (l.parent && l.parent->links.count(l.leaf)) l.node = l.parent->links.at(l.leaf);
  } else if (loc->type == H5VL_OBJECT_BY_IDX) {
    const auto& by = loc->loc_data.loc_by_idx;
    check_plist(by.lapl_id, H5P_LINK_ACCESS, "link access property list");
    l.parent = lookup(*o.file, o.node, by.name ? by.name : ".");
    if (l.parent) std::tie(l.leaf, l.node) = link_by_index(*l.parent, by.idx_type, by.order, by.n);
  } else {
    l.node = resolve(o, loc);
  }
  if (!l.node) fail("no link \"" + l.leaf + "\" in file \"" + o.file->name + "\"");
  return l;
}
// A link's creation order in H5L_info2_t: valid only when its group tracks creation order
// (H5Pset_link_creation_order), as natively; memory keeps the order of every group regardless.
void set_corder(const Node& group, const std::string& leaf, H5L_info2_t* info) {
  unsigned flags = 0;
  const bool tracked = group.dcpl.get() >= 0 && H5Pget_link_creation_order(group.dcpl.get(), &flags) >= 0 &&
                       (flags & H5P_CRT_ORDER_TRACKED) != 0;
  info->corder_valid = tracked;
  info->corder = tracked && group.link_corder.count(leaf) ? group.link_corder.at(leaf) : 0;
}
}  // namespace

herr_t link_create(H5VL_link_create_args_t* a, void* obj, const H5VL_loc_params_t* loc, hid_t lcpl, hid_t lapl,
                   hid_t dxpl, void** req) {
  return guarded<herr_t>("H5Lcreate", -1, [&]() -> herr_t {
    // H5Lcreate_hard(cur, name, H5L_SAME_LOC, new_name): HDF5 passes no object, the link goes beside
    // curr_obj (the native connector takes the one location for both).
    void* self = obj;
    if (!self && a->op_type == H5VL_LINK_CREATE_HARD) self = a->args.hard.curr_obj;
    if (!self) fail("H5Lcreate: no location for the new link");
    auto& o = as(self);
    if (o.under) {  // mode file, and the file half of mode both
      H5VL_link_create_args_t b = *a;
      if (b.op_type == H5VL_LINK_CREATE_HARD && b.args.hard.curr_obj)
        b.args.hard.curr_obj = as(b.args.hard.curr_obj).under;
      void* under = obj ? o.under : nullptr;
      if (!in_memory(o)) return H5VLlink_create(&b, under, loc, nvol(o), lcpl, lapl, dxpl, req);
      if (a->op_type != H5VL_LINK_CREATE_HARD || !a->args.hard.curr_obj || as(a->args.hard.curr_obj).under)
        native(H5VLlink_create(&b, under, loc, nvol(o), lcpl, lapl, dxpl, req), "H5Lcreate");
    }
    check_plist(lcpl, H5P_LINK_CREATE, "link creation property list");
    check_plist(lapl, H5P_LINK_ACCESS, "link access property list");
    if (a->op_type == H5VL_LINK_CREATE_SOFT) {
      if (!o.file->writer) fail("file \"" + o.file->name + "\" was opened for reading");
      if (loc->type != H5VL_OBJECT_BY_NAME) fail("a new link needs a name");
      unsigned intermediate = 0;
      if (lcpl >= 0 && lcpl != H5P_DEFAULT) check(H5Pget_create_intermediate_group(lcpl, &intermediate), "H5Pget_create_intermediate_group");
      auto [parent, leaf] = parent_for_link(*o.file, o.node, loc->loc_data.loc_by_name.name, intermediate != 0);
      auto soft = std::make_shared<Node>();
      soft->kind = Node::Kind::soft;
      soft->target = a->args.soft.target ? a->args.soft.target : "";
      soft->id = o.file->next_id++;
      add_link(*o.file, parent, leaf, soft);
      return herr_t{0};
    }
    if (a->op_type == H5VL_LINK_CREATE_UD) {
      // H5Lcreate_external: the link keeps its value as HDF5 packed it (followed by open_external).
      if (a->args.ud.type != H5L_TYPE_EXTERNAL)
        unsupported("H5Lcreate_ud (a user-defined link of class " + std::to_string(static_cast<int>(a->args.ud.type)) + ") in memory");
      if (!o.file->writer) fail("file \"" + o.file->name + "\" was opened for reading");
      if (loc->type != H5VL_OBJECT_BY_NAME) fail("a new link needs a name");
      std::string value(static_cast<const char*>(a->args.ud.buf), a->args.ud.buf_size);
      unsigned flags = 0;
      const char* file = nullptr;
      const char* path = nullptr;
      if (value.empty() || H5Lunpack_elink_val(value.data(), value.size(), &flags, &file, &path) < 0)
        fail("H5Lcreate_external: a malformed external link value for \"" + std::string(loc->loc_data.loc_by_name.name) + "\"");
      unsigned intermediate = 0;
      if (lcpl >= 0 && lcpl != H5P_DEFAULT) check(H5Pget_create_intermediate_group(lcpl, &intermediate), "H5Pget_create_intermediate_group");
      auto [parent, leaf] = parent_for_link(*o.file, o.node, loc->loc_data.loc_by_name.name, intermediate != 0);
      auto ext = std::make_shared<Node>();
      ext->kind = Node::Kind::external;
      ext->target = std::move(value);
      ext->id = o.file->next_id++;
      add_link(*o.file, parent, leaf, ext);
      return herr_t{0};
    }
    if (a->op_type != H5VL_LINK_CREATE_HARD) unsupported("this kind of link creation in memory");
    // H5Olink (an anonymous object gets its name) and H5Lcreate_hard.
    if (!o.file->writer) fail("file \"" + o.file->name + "\" was opened for reading");
    if (loc->type != H5VL_OBJECT_BY_NAME) fail("a new link needs a name");
    const Object& from = a->args.hard.curr_obj ? as(a->args.hard.curr_obj) : o;
    if (!in_memory(from) || from.file != o.file)
      unsupported("a hard link to an object of another file (\"" + std::string(loc->loc_data.loc_by_name.name) + "\")");
    auto target = resolve(from, &a->args.hard.curr_loc_params);
    unsigned intermediate = 0;
    if (lcpl >= 0 && lcpl != H5P_DEFAULT) check(H5Pget_create_intermediate_group(lcpl, &intermediate), "H5Pget_create_intermediate_group");
    auto [parent, leaf] = parent_for_link(*o.file, o.node, loc->loc_data.loc_by_name.name, intermediate != 0);
    add_link(*o.file, parent, leaf, target);
    return herr_t{0};
  });
}
namespace {
// H5Lmove and H5Lcopy: the link `loc1` (under src) becomes, or is also, `loc2` (under dst).
herr_t relink(bool move, void* src, const H5VL_loc_params_t* loc1, void* dst, const H5VL_loc_params_t* loc2, hid_t lcpl,
              hid_t lapl, hid_t dxpl, void** req) {
  auto& s = as(src);
  auto& d = as(dst ? dst : src);
  if (s.under) {  // mode file, and the file half of mode both
    void* under_dst = dst ? d.under : nullptr;
    const herr_t r = move ? H5VLlink_move(s.under, loc1, under_dst, loc2, nvol(s), lcpl, lapl, dxpl, req)
                          : H5VLlink_copy(s.under, loc1, under_dst, loc2, nvol(s), lcpl, lapl, dxpl, req);
    if (!in_memory(s)) return r;
    native(r, move ? "H5Lmove" : "H5Lcopy");
  }
  check_plist(lcpl, H5P_LINK_CREATE, "link creation property list");
  check_plist(lapl, H5P_LINK_ACCESS, "link access property list");
  if (!s.file->writer) fail("file \"" + s.file->name + "\" was opened for reading");
  if (!in_memory(d) || d.file != s.file) unsupported(std::string(move ? "H5Lmove" : "H5Lcopy") + " between files");
  if (loc1->type != H5VL_OBJECT_BY_NAME || loc2->type != H5VL_OBJECT_BY_NAME) fail("the links must be given by name");
  auto [from, leaf] = split_link(s, loc1->loc_data.loc_by_name.name);
  if (!from || !from->links.count(leaf)) fail("no link \"" + std::string(loc1->loc_data.loc_by_name.name) + "\" to " + (move ? "move" : "copy"));
  auto node = from->links.at(leaf);
  unsigned intermediate = 0;
  if (lcpl >= 0 && lcpl != H5P_DEFAULT) check(H5Pget_create_intermediate_group(lcpl, &intermediate), "H5Pget_create_intermediate_group");
  auto [to, leaf2] = parent_for_link(*s.file, d.node, loc2->loc_data.loc_by_name.name, intermediate != 0);
  // As natively, a hard link to a group may be copied or moved into that group (a cycle); only
  // moving a group's one link into itself, which would cut it off from the file, is refused.
  if (move && node->kind == Node::Kind::group && contains(*node, *to) && hard_links(*s.file, *node) < 2)
    fail("moving " + node->path + " into itself (it would have no link from the root)");
  if (!move && (node->kind == Node::Kind::soft || node->kind == Node::Kind::external)) {
    // a copy of a soft or external link is a link of its own
    auto soft = std::make_shared<Node>();
    soft->kind = node->kind;
    soft->target = node->target;
    soft->id = s.file->next_id++;
    node = soft;
  }
  if (move) {
    from->remove_link(leaf);
    if (node->path == join_path(from->path, leaf)) node->path.clear();  // it takes the new name as its path
  }
  add_link(*s.file, to, leaf2, node);
  return herr_t{0};
}
}  // namespace
herr_t link_copy(void* src, const H5VL_loc_params_t* loc1, void* dst, const H5VL_loc_params_t* loc2, hid_t lcpl,
                 hid_t lapl, hid_t dxpl, void** req) {
  return guarded<herr_t>("H5Lcopy", -1, [&] { return relink(false, src, loc1, dst, loc2, lcpl, lapl, dxpl, req); });
}
herr_t link_move(void* src, const H5VL_loc_params_t* loc1, void* dst, const H5VL_loc_params_t* loc2, hid_t lcpl,
                 hid_t lapl, hid_t dxpl, void** req) {
  return guarded<herr_t>("H5Lmove", -1, [&] { return relink(true, src, loc1, dst, loc2, lcpl, lapl, dxpl, req); });
}
herr_t link_get(void* obj, const H5VL_loc_params_t* loc, H5VL_link_get_args_t* a, hid_t dxpl, void** req) {
  return guarded<herr_t>("H5Lget", -1, [&] {
    auto& o = as(obj);
    if (!in_memory(o)) return H5VLlink_get(o.under, loc, nvol(o), a, dxpl, req);
    if (a->op_type == H5VL_LINK_GET_INFO) {
      auto link = the_link(o, loc);
      link_info(*link.node, a->args.get_info.linfo);
      if (link.parent) set_corder(*link.parent, link.leaf, a->args.get_info.linfo);  // from its group
    } else if (a->op_type == H5VL_LINK_GET_NAME) {
      if (loc->type != H5VL_OBJECT_BY_IDX) unsupported("H5Lget_name other than by index");
      const auto& by = loc->loc_data.loc_by_idx;
      check_plist(by.lapl_id, H5P_LINK_ACCESS, "link access property list");
      auto group = lookup(*o.file, o.node, by.name ? by.name : ".");
      if (!group) fail("no group \"" + std::string(by.name ? by.name : ".") + "\"");
      const auto name = link_by_index(*group, by.idx_type, by.order, by.n).first;
      copy_name(name, a->args.get_name.name, a->args.get_name.name_size, a->args.get_name.name_len);
    } else if (a->op_type == H5VL_LINK_GET_VAL) {
      auto link = the_link(o, loc);
      const auto& t = link.node->target;
      auto* out = static_cast<char*>(a->args.get_val.buf);
      if (link.node->kind == Node::Kind::external) {  // the packed value, cut to the buffer as natively
        if (out) std::memcpy(out, t.data(), std::min(a->args.get_val.buf_size, t.size()));
        return herr_t{0};
      }
      if (link.node->kind != Node::Kind::soft) fail("H5Lget_val: " + link.leaf + " is not a soft or external link");
      if (out && a->args.get_val.buf_size > 0) {
        const auto n = std::min(a->args.get_val.buf_size - 1, t.size());
        std::memcpy(out, t.data(), n);
        out[n] = '\0';
      }
    } else {
      unsupported("this H5Lget query");
    }
    return herr_t{0};
  });
}
namespace {
// H5Lvisit enters each group once (hard links may make cycles).
herr_t iterate_links(const Object& o, const std::shared_ptr<Node>& group, const std::string& prefix,
                     H5VL_link_iterate_args_t& it, hid_t id, std::set<const Node*>& entered) {
  entered.insert(group.get());
  std::vector<std::pair<std::string, std::shared_ptr<Node>>> list;
  if (it.idx_type == H5_INDEX_CRT_ORDER) {
    for (const auto& leaf : group->link_order) list.emplace_back(leaf, group->links.at(leaf));
  } else {
    list.assign(group->links.begin(), group->links.end());
  }
  if (it.order == H5_ITER_DEC) std::reverse(list.begin(), list.end());
  hsize_t i = (prefix.empty() && it.idx_p) ? *it.idx_p : 0;
  for (; i < list.size(); ++i) {
    H5L_info2_t info;
    link_info(*list[i].second, &info);
    set_corder(*group, list[i].first, &info);
    const std::string name = prefix + list[i].first;
    herr_t ret = it.op(id, name.c_str(), &info, it.op_data);
    if (ret == 0 && it.recursive && list[i].second->kind == Node::Kind::group)  // soft links are not followed
      if (!entered.count(list[i].second.get())) ret = iterate_links(o, list[i].second, name + "/", it, id, entered);
    if (ret != 0) {
      if (prefix.empty() && it.idx_p) *it.idx_p = i + 1;
      return ret;
    }
  }
  if (prefix.empty() && it.idx_p) *it.idx_p = i;
  return 0;
}
}  // namespace
herr_t link_specific(void* obj, const H5VL_loc_params_t* loc, H5VL_link_specific_args_t* a, hid_t dxpl, void** req) {
  return guarded<herr_t>("H5L specific", -1, [&] {
    auto& o = as(obj);
    if (!in_memory(o)) return H5VLlink_specific(o.under, loc, nvol(o), a, dxpl, req);
    switch (a->op_type) {
      case H5VL_LINK_EXISTS: {
        if (loc->type != H5VL_OBJECT_BY_NAME) unsupported("H5Lexists other than by name");
        // The link itself (a dangling soft link exists), its path followed.
        auto [parent, leaf] = split_link(o, loc->loc_data.loc_by_name.name);
        *a->args.exists.exists = leaf.empty() || leaf == "." || leaf == "/" || (parent && parent->links.count(leaf) != 0);
        return herr_t{0};
      }
      case H5VL_LINK_ITER: {
        auto& it = a->args.iterate;
        auto group = resolve(o, loc);
        if (group->kind != Node::Kind::group) fail(group->path + " is not a group");
        const hid_t id = register_id(o, group);
        std::set<const Node*> entered;
        const herr_t ret = iterate_links(o, group, "", it, id, entered);
        H5Idec_ref(id);
        return ret;
      }
      case H5VL_LINK_DELETE: {
        if (o.under) native(H5VLlink_specific(o.under, loc, nvol(o), a, dxpl, req), "H5Ldelete");
        if (!o.file->writer) fail("H5Ldelete in file \"" + o.file->name + "\" opened for reading");
        check_plist(loc->type == H5VL_OBJECT_BY_NAME ? loc->loc_data.loc_by_name.lapl_id : loc->loc_data.loc_by_idx.lapl_id,
                    H5P_LINK_ACCESS, "link access property list");
        std::shared_ptr<Node> parent;
        std::string leaf;
        if (loc->type == H5VL_OBJECT_BY_NAME) {
          std::tie(parent, leaf) = split_link(o, loc->loc_data.loc_by_name.name);
        } else if (loc->type == H5VL_OBJECT_BY_IDX) {
          const auto& by = loc->loc_data.loc_by_idx;
          parent = lookup(*o.file, o.node, by.name ? by.name : ".");
          if (parent) leaf = link_by_index(*parent, by.idx_type, by.order, by.n).first;
        } else {
          fail("H5Ldelete needs a link name or index");
        }
        if (!parent || !parent->links.count(leaf)) fail("no link \"" + leaf + "\" to delete in file \"" + o.file->name + "\"");
        parent->remove_link(leaf);
        return herr_t{0};
      }
    }
    unsupported("this link operation");
  });
}
herr_t link_optional(void* obj, const H5VL_loc_params_t* loc, H5VL_optional_args_t* a, hid_t dxpl, void** req) {
  return guarded<herr_t>("H5L optional", -1, [&]() -> herr_t {
    auto& o = as(obj);
    if (!in_memory(o)) return H5VLlink_optional(o.under, loc, nvol(o), a, dxpl, req);
    unsupported("the native link operation " + std::to_string(a->op_type));
  });
}

}  // namespace cove::h5vol
