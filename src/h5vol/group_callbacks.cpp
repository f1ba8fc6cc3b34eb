// The VOL callbacks of groups.
#include "h5vol/vol.hpp"

#include <H5VLnative.h>

#include <cove/error.hpp>

#include <cstring>

namespace cove::h5vol {

// ---- groups ----
void* group_create(void* obj, const H5VL_loc_params_t* loc, const char* name, hid_t lcpl, hid_t gcpl, hid_t gapl,
                   hid_t dxpl, void** req) {
  return guarded<void*>(name ? "H5Gcreate" : "H5Gcreate_anon", nullptr, [&]() -> void* {
    auto& o = as(obj);
    void* under = nullptr;
    if (o.under) under = native(H5VLgroup_create(o.under, loc, nvol(o), name, lcpl, gcpl, gapl, dxpl, req), "H5Gcreate");
    if (!in_memory(o)) return child(o, Object::Kind::group, nullptr, under);
    check_plist(lcpl, H5P_LINK_CREATE, "link creation property list");
    check_plist(gcpl, H5P_GROUP_CREATE, "group creation property list");
    check_plist(gapl, H5P_GROUP_ACCESS, "group access property list");
    if (!o.file->writer) fail("file \"" + o.file->name + "\" was opened for reading");
    auto g = std::make_shared<Node>();
    g->id = o.file->next_id++;
    g->dcpl = Hid(check(H5Pcopy(gcpl == H5P_DEFAULT ? H5P_GROUP_CREATE_DEFAULT : gcpl), "H5Pcopy"));
    if (name) {
      auto [parent, leaf] = parent_for_create(o, loc, name, lcpl);
      add_link(*o.file, parent, leaf, g);
    } else {
      o.file->index(g);  // anonymous until H5Olink
    }
    return child(o, Object::Kind::group, g, under);
  });
}
void* group_open(void* obj, const H5VL_loc_params_t* loc, const char* name, hid_t gapl, hid_t dxpl, void** req) {
  return guarded<void*>("H5Gopen", nullptr, [&]() -> void* {
    auto& o = as(obj);
    void* under = nullptr;
    if (o.under) under = native(H5VLgroup_open(o.under, loc, nvol(o), name, gapl, dxpl, req), "H5Gopen");
    if (!in_memory(o)) return child(o, Object::Kind::group, nullptr, under);
    auto base = resolve(o, loc);
    auto g = lookup(*o.file, base, name);
    if (!g)
      if (auto* x = open_external(o, base, name)) {
        if (x->node->kind == Node::Kind::group) return x;
        object_close(x, H5P_DEFAULT, nullptr);  // closes the file too when x was all that held it
        fail(std::string(name) + " is not a group");
      }
    if (!g) fail("no group \"" + std::string(name) + "\" in file \"" + o.file->name + "\"");
    if (g->kind != Node::Kind::group) fail(g->path + " is not a group");
    return child(o, Object::Kind::group, g, under);
  });
}
herr_t group_get(void* obj, H5VL_group_get_args_t* a, hid_t dxpl, void** req) {
  return guarded<herr_t>("H5Gget", -1, [&] {
    auto& o = as(obj);
    if (!in_memory(o)) return H5VLgroup_get(o.under, nvol(o), a, dxpl, req);
    if (a->op_type == H5VL_GROUP_GET_GCPL) {
      // The creation list it was made with (link creation order and the like).
      a->args.get_gcpl.gcpl_id = o.node->dcpl.get() >= 0 ? check(H5Pcopy(o.node->dcpl.get()), "H5Pcopy")
                                                         : check(H5Pcreate(H5P_GROUP_CREATE), "H5Pcreate");
      return herr_t{0};
    }
    auto g = resolve(o, &a->args.get_info.loc_params);
    if (g->kind != Node::Kind::group) fail(g->path + " is not a group");
    auto* info = a->args.get_info.ginfo;
    info->storage_type = H5G_STORAGE_TYPE_COMPACT;
    info->nlinks = g->links.size();
    info->max_corder = g->next_link_corder;
    info->mounted = false;
    return herr_t{0};
  });
}
herr_t group_specific(void* obj, H5VL_group_specific_args_t* a, hid_t dxpl, void** req) {
  return guarded<herr_t>("H5G specific", -1, [&] {
    auto& o = as(obj);
    if (!in_memory(o)) {
      if (a->op_type != H5VL_GROUP_MOUNT) return H5VLgroup_specific(o.under, nvol(o), a, dxpl, req);
      // H5Fmount: the child is a file of this connector too; the native connector takes its own object.
      H5VL_group_specific_args_t b = *a;
      const auto& child = as(a->args.mount.child_file);
      if (!child.under || in_memory(child))
        unsupported("H5Fmount of a file in memory onto a file on disk");
      b.args.mount.child_file = child.under;
      return H5VLgroup_specific(o.under, nvol(o), &b, dxpl, req);
    }
    if (a->op_type == H5VL_GROUP_FLUSH || a->op_type == H5VL_GROUP_REFRESH) return herr_t{0};
    unsupported("H5Fmount / H5Funmount");
  });
}
herr_t group_optional(void* obj, H5VL_optional_args_t* a, hid_t dxpl, void** req) {
  return guarded<herr_t>("H5G optional", -1, [&]() -> herr_t {
    auto& o = as(obj);
    if (!in_memory(o)) return H5VLgroup_optional(o.under, nvol(o), a, dxpl, req);
    if (a->op_type == H5VL_NATIVE_GROUP_GET_OBJINFO) {
      // H5Gget_objinfo (h5py compares objects by its file and object numbers).
      auto& g = static_cast<H5VL_native_group_optional_args_t*>(a->args)->get_objinfo;
      std::shared_ptr<Node> n;
      if (!g.follow_link && g.loc_params.type == H5VL_OBJECT_BY_NAME) {  // the link itself
        const std::string name = g.loc_params.loc_data.loc_by_name.name;
        const auto slash = name.rfind('/');
        auto parent = lookup(*o.file, o.node, slash == std::string::npos ? "." : (slash == 0 ? "/" : name.substr(0, slash)));
        const auto leaf = slash == std::string::npos ? name : name.substr(slash + 1);
        if (parent && parent->links.count(leaf)) n = parent->links.at(leaf);
      }
      if (!n) n = resolve(o, &g.loc_params);
      if (g.statbuf) {
        auto& st = *g.statbuf;
        std::memset(&st, 0, sizeof st);
        st.fileno[0] = o.file->fileno;
        st.objno[0] = static_cast<unsigned long>(n->id);
        st.nlink = 1;
        st.mtime = static_cast<time_t>(n->mtime);
        st.type = n->kind == Node::Kind::group      ? H5G_GROUP
                  : n->kind == Node::Kind::dataset  ? H5G_DATASET
                  : n->kind == Node::Kind::datatype ? H5G_TYPE
                  : n->kind == Node::Kind::external ? H5G_UDLINK
                                                    : H5G_LINK;
        if (n->kind == Node::Kind::soft) st.linklen = n->target.size() + 1;
        if (n->kind == Node::Kind::external) st.linklen = n->target.size();
      }
      return herr_t{0};
    }
    unsupported("the native group operation " + std::to_string(a->op_type) + " (H5G*)");
  });
}

}  // namespace cove::h5vol
