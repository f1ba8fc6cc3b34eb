// The VOL callbacks of links: create, get, iterate, exists, delete.
#include "h5vol/vol.hpp"

#include <cove/error.hpp>

#include <cstring>

namespace cove::h5vol {

// ---- links ----
herr_t link_create(H5VL_link_create_args_t* a, void* obj, const H5VL_loc_params_t* loc, hid_t lcpl, hid_t lapl,
                   hid_t dxpl, void** req) {
  return guarded<herr_t>("H5Lcreate", -1, [&]() -> herr_t {
    auto& o = as(obj);
    if (!in_memory(o)) {
      H5VL_link_create_args_t b = *a;
      if (b.op_type == H5VL_LINK_CREATE_HARD && b.args.hard.curr_obj)
        b.args.hard.curr_obj = as(b.args.hard.curr_obj).under;
      return H5VLlink_create(&b, o.under, loc, nvol(o), lcpl, lapl, dxpl, req);
    }
    unsupported(a->op_type == H5VL_LINK_CREATE_HARD   ? "H5Lcreate_hard"
                : a->op_type == H5VL_LINK_CREATE_SOFT ? "H5Lcreate_soft"
                                                      : "H5Lcreate_external / user-defined links");
  });
}
herr_t link_copy(void*, const H5VL_loc_params_t*, void*, const H5VL_loc_params_t*, hid_t, hid_t, hid_t, void**) {
  return guarded<herr_t>("H5Lcopy", -1, []() -> herr_t { unsupported("H5Lcopy"); });
}
herr_t link_move(void*, const H5VL_loc_params_t*, void*, const H5VL_loc_params_t*, hid_t, hid_t, hid_t, void**) {
  return guarded<herr_t>("H5Lmove", -1, []() -> herr_t { unsupported("H5Lmove"); });
}
herr_t link_get(void* obj, const H5VL_loc_params_t* loc, H5VL_link_get_args_t* a, hid_t dxpl, void** req) {
  return guarded<herr_t>("H5Lget", -1, [&] {
    auto& o = as(obj);
    if (!in_memory(o)) return H5VLlink_get(o.under, loc, nvol(o), a, dxpl, req);
    if (a->op_type == H5VL_LINK_GET_INFO) {
      link_info(*resolve(o, loc), a->args.get_info.linfo);
    } else if (a->op_type == H5VL_LINK_GET_NAME) {
      if (loc->type != H5VL_OBJECT_BY_IDX) unsupported("H5Lget_name other than by index");
      const auto& by = loc->loc_data.loc_by_idx;
      auto group = lookup(*o.file, o.node, by.name ? by.name : ".");
      if (!group) fail("no group \"" + std::string(by.name ? by.name : ".") + "\"");
      const auto name = link_by_index(*group, by.order, by.n).first;
      copy_name(name, a->args.get_name.name, a->args.get_name.name_size, a->args.get_name.name_len);
    } else {
      unsupported("H5Lget_val (there are no soft links)");
    }
    return herr_t{0};
  });
}
namespace {
herr_t iterate_links(const Object& o, const std::shared_ptr<Node>& group, const std::string& prefix,
                     H5VL_link_iterate_args_t& it, hid_t id) {
  std::vector<std::pair<std::string, std::shared_ptr<Node>>> list(group->links.begin(), group->links.end());
  if (it.order == H5_ITER_DEC) std::reverse(list.begin(), list.end());
  hsize_t i = (prefix.empty() && it.idx_p) ? *it.idx_p : 0;
  for (; i < list.size(); ++i) {
    H5L_info2_t info;
    link_info(*list[i].second, &info);
    const std::string name = prefix + list[i].first;
    herr_t ret = it.op(id, name.c_str(), &info, it.op_data);
    if (ret == 0 && it.recursive && list[i].second->kind == Node::Kind::group)
      ret = iterate_links(o, list[i].second, name + "/", it, id);
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
        *a->args.exists.exists = lookup(*o.file, o.node, loc->loc_data.loc_by_name.name) != nullptr;
        return herr_t{0};
      }
      case H5VL_LINK_ITER: {
        auto& it = a->args.iterate;
        auto group = resolve(o, loc);
        if (group->kind != Node::Kind::group) fail(group->path + " is not a group");
        if (it.idx_type != H5_INDEX_NAME) unsupported("link iteration by creation order");
        const hid_t id = register_id(o, group);
        const herr_t ret = iterate_links(o, group, "", it, id);
        H5Idec_ref(id);
        return ret;
      }
      case H5VL_LINK_DELETE:
        unsupported("H5Ldelete");
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
