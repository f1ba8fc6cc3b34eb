// The VOL callbacks of attributes.
#include "h5vol/vol.hpp"

#include "h5vol/vlen.hpp"

#include <cove/error.hpp>

#include <algorithm>
#include <cstring>

namespace cove::h5vol {

// ---- attributes ----
void* attr_create(void* obj, const H5VL_loc_params_t* loc, const char* name, hid_t type, hid_t space, hid_t acpl,
                  hid_t aapl, hid_t dxpl, void** req) {
  return guarded<void*>("H5Acreate", nullptr, [&]() -> void* {
    auto& o = as(obj);
    void* under = nullptr;
    if (o.under)
      under = native(H5VLattr_create(o.under, loc, nvol(o), name, type, space, acpl, aapl, dxpl, req), "H5Acreate");
    if (!in_memory(o)) return child(o, Object::Kind::attribute, nullptr, under);
    check_plist(acpl, H5P_ATTRIBUTE_CREATE, "attribute creation property list");
    check_plist(aapl, H5P_ATTRIBUTE_ACCESS, "attribute access property list");
    if (!o.file->writer) fail("file \"" + o.file->name + "\" was opened for reading");
    auto owner = resolve(o, loc);
    if (owner->find_attribute(name)) fail("attribute \"" + std::string(name) + "\" of " + owner->path + " already exists");
    const bool strings = is_variable_string(type);
    const bool nested = is_nested_vlen(type);  // unwritten: no bytes (zeros, empty sequences, null strings)
    if (!strings && is_vlen(type)) check_vlen_type(type, "attribute \"" + std::string(name) + "\"");
    auto a = std::make_shared<Attribute>();
    a->name = name;
    a->type = TypeRef(type);
    a->space = Hid(check(H5Scopy(space), "H5Scopy"));
    const auto n = static_cast<std::size_t>(check(H5Sget_simple_extent_npoints(space), "H5Sget_simple_extent_npoints"));
    if (strings)
      a->data = encode_strings(nullptr, n);  // unwritten: empty strings
    else if (!nested)
      a->data.assign(n * H5Tget_size(type), std::byte{0});
    a->corder = owner->next_corder++;
    a->named_type = committed_path(o, type);
    if (acpl != H5P_DEFAULT) check(H5Pget_char_encoding(acpl, &a->name_cset), "H5Pget_char_encoding");
    owner->attributes.push_back(a);
    auto* r = child(o, Object::Kind::attribute, owner, under);
    r->attr = a;
    return r;
  });
}
namespace {
// The n-th attribute of `owner` in creation or name order, increasing or decreasing.
std::shared_ptr<Attribute> nth_attribute(const Node& owner, H5_index_t idx_type, H5_iter_order_t order, hsize_t n) {
  std::vector<std::shared_ptr<Attribute>> list(owner.attributes.begin(), owner.attributes.end());
  if (idx_type == H5_INDEX_NAME)
    std::sort(list.begin(), list.end(), [](const auto& x, const auto& y) { return x->name < y->name; });
  else if (idx_type != H5_INDEX_CRT_ORDER)
    fail("attribute index type " + std::to_string(static_cast<int>(idx_type)) + " is neither name nor creation order");
  if (order == H5_ITER_DEC) std::reverse(list.begin(), list.end());
  if (n >= list.size())
    fail("attribute index " + std::to_string(n) + " is past the " + std::to_string(list.size()) + " attributes of " + owner.path);
  return list[n];
}
// H5Aopen_by_idx, H5Aget_info_by_idx, H5Aget_name_by_idx: the n-th attribute of the object named by
// the location, in creation or name order, increasing or decreasing (an index past the end fails).
std::pair<std::shared_ptr<Node>, std::shared_ptr<Attribute>> attribute_by_index(const Object& o, const H5VL_loc_params_t& loc) {
  const auto& by = loc.loc_data.loc_by_idx;
  H5VL_loc_params_t l = loc;
  l.type = H5VL_OBJECT_BY_NAME;
  l.loc_data.loc_by_name.name = by.name ? by.name : ".";
  l.loc_data.loc_by_name.lapl_id = by.lapl_id;
  auto owner = resolve(o, &l);
  return {owner, nth_attribute(*owner, by.idx_type, by.order, by.n)};
}
}  // namespace
void* attr_open(void* obj, const H5VL_loc_params_t* loc, const char* name, hid_t aapl, hid_t dxpl, void** req) {
  return guarded<void*>("H5Aopen", nullptr, [&]() -> void* {
    auto& o = as(obj);
    void* under = nullptr;
    if (o.under) under = native(H5VLattr_open(o.under, loc, nvol(o), name, aapl, dxpl, req), "H5Aopen");
    if (!in_memory(o)) return child(o, Object::Kind::attribute, nullptr, under);
    if (loc->type == H5VL_OBJECT_BY_IDX) {
      auto [owner, at] = attribute_by_index(o, *loc);
      auto* r = child(o, Object::Kind::attribute, owner, under);
      r->attr = at;
      return r;
    }
    auto owner = resolve(o, loc);
    for (auto& a : owner->attributes)
      if (a->name == name) {
        auto* r = child(o, Object::Kind::attribute, owner, under);
        r->attr = a;
        return r;
      }
    fail("no attribute \"" + std::string(name) + "\" on " + owner->path);
  });
}
herr_t attr_read(void* obj, hid_t mem_type, void* buf, hid_t dxpl, void** req) {
  return guarded<herr_t>("H5Aread", -1, [&] {
    if (!in_memory(as(obj))) return H5VLattr_read(as(obj).under, nvol(as(obj)), mem_type, buf, dxpl, req);
    read_attribute(*as(obj).attr, mem_type, buf);
    return herr_t{0};
  });
}
herr_t attr_write(void* obj, hid_t mem_type, const void* buf, hid_t dxpl, void** req) {
  return guarded<herr_t>("H5Awrite", -1, [&] {
    auto& o = as(obj);
    if (o.under) native(H5VLattr_write(o.under, nvol(o), mem_type, buf, dxpl, req), "H5Awrite");
    if (!in_memory(o)) return herr_t{0};
    if (!o.file->writer) fail("file \"" + o.file->name + "\" was opened for reading");
    write_attribute(*o.attr, mem_type, buf);
    return herr_t{0};
  });
}
namespace {
std::shared_ptr<Attribute> attribute_at(const Object& o, const H5VL_loc_params_t& loc, const char* by_name) {
  if (loc.type == H5VL_OBJECT_BY_SELF && o.kind == Object::Kind::attribute && !by_name) return o.attr;
  if (loc.type == H5VL_OBJECT_BY_IDX) return attribute_by_index(o, loc).second;
  auto owner = resolve(o, &loc);
  for (auto& a : owner->attributes)
    if (by_name && a->name == by_name) return a;
  fail("no attribute \"" + std::string(by_name ? by_name : "") + "\" on " + owner->path);
}
}  // namespace
herr_t attr_get(void* obj, H5VL_attr_get_args_t* a, hid_t dxpl, void** req) {
  return guarded<herr_t>("H5Aget", -1, [&] {
    auto& o = as(obj);
    if (!in_memory(o)) return H5VLattr_get(o.under, nvol(o), a, dxpl, req);
    switch (a->op_type) {
      case H5VL_ATTR_GET_ACPL:
        a->args.get_acpl.acpl_id = check(H5Pcreate(H5P_ATTRIBUTE_CREATE), "H5Pcreate");
        check(H5Pset_char_encoding(a->args.get_acpl.acpl_id, o.attr->name_cset), "H5Pset_char_encoding");
        break;
      case H5VL_ATTR_GET_SPACE:
        a->args.get_space.space_id = check(H5Scopy(o.attr->space.get()), "H5Scopy");
        break;
      case H5VL_ATTR_GET_TYPE:
        a->args.get_type.type_id = type_id_of(o, o.attr->type.get(), o.attr->named_type);
        break;
      case H5VL_ATTR_GET_STORAGE_SIZE:
        *a->args.get_storage_size.data_size = o.attr->data.size();
        break;
      case H5VL_ATTR_GET_NAME: {
        auto& g = a->args.get_name;
        std::shared_ptr<Attribute> at;
        if (g.loc_params.type == H5VL_OBJECT_BY_SELF) {
          at = o.attr;
        } else if (g.loc_params.type == H5VL_OBJECT_BY_IDX) {
          at = attribute_by_index(o, g.loc_params).second;
        } else {
          unsupported("this form of H5Aget_name");
        }
        copy_name(at->name, g.buf, g.buf_size, g.attr_name_len);
        break;
      }
      case H5VL_ATTR_GET_INFO: {
        auto& g = a->args.get_info;
        auto at = attribute_at(o, g.loc_params, g.attr_name);
        g.ainfo->corder_valid = true;
        g.ainfo->corder = static_cast<H5O_msg_crt_idx_t>(at->corder);
        g.ainfo->cset = at->name_cset;
        g.ainfo->data_size = at->data.size();
        break;
      }
    }
    return herr_t{0};
  });
}
herr_t attr_specific(void* obj, const H5VL_loc_params_t* loc, H5VL_attr_specific_args_t* a, hid_t dxpl, void** req) {
  return guarded<herr_t>("H5A specific", -1, [&] {
    auto& o = as(obj);
    if (!in_memory(o)) return H5VLattr_specific(o.under, loc, nvol(o), a, dxpl, req);
    if (o.under && (a->op_type == H5VL_ATTR_DELETE || a->op_type == H5VL_ATTR_DELETE_BY_IDX || a->op_type == H5VL_ATTR_RENAME))
      native(H5VLattr_specific(o.under, loc, nvol(o), a, dxpl, req), "H5Adelete / H5Arename");
    auto owner = resolve(o, loc);
    switch (a->op_type) {
      case H5VL_ATTR_EXISTS:
        *a->args.exists.exists = owner->find_attribute(a->args.exists.name) != nullptr;
        return herr_t{0};
      case H5VL_ATTR_DELETE: {
        if (!o.file->writer) fail("file \"" + o.file->name + "\" was opened for reading");
        auto& v = owner->attributes;
        for (auto it = v.begin(); it != v.end(); ++it)
          if ((*it)->name == a->args.del.name) {
            v.erase(it);
            return herr_t{0};
          }
        fail("no attribute \"" + std::string(a->args.del.name) + "\" on " + owner->path);
      }
      case H5VL_ATTR_ITER: {
        auto& it = a->args.iterate;
        // Sorted by name for the name index, as stored (creation order) otherwise.
        auto list = owner->attributes;
        if (it.idx_type == H5_INDEX_NAME)
          std::sort(list.begin(), list.end(), [](auto& x, auto& y) { return x->name < y->name; });
        if (it.order == H5_ITER_DEC) std::reverse(list.begin(), list.end());
        hsize_t i = it.idx ? *it.idx : 0;
        const hid_t id = register_id(o, owner);
        herr_t ret = 0;
        for (; i < list.size() && ret == 0; ++i) {
          H5A_info_t info{};
          info.corder_valid = true;
          info.corder = static_cast<H5O_msg_crt_idx_t>(list[i]->corder);
          info.cset = list[i]->name_cset;
          info.data_size = list[i]->data.size();
          ret = it.op(id, list[i]->name.c_str(), &info, it.op_data);
        }
        H5Idec_ref(id);
        if (it.idx) *it.idx = i;
        return ret;
      }
      case H5VL_ATTR_DELETE_BY_IDX: {
        if (!o.file->writer) fail("file \"" + o.file->name + "\" was opened for reading");
        const auto& d = a->args.delete_by_idx;
        const auto at = nth_attribute(*owner, d.idx_type, d.order, d.n);
        auto& v = owner->attributes;
        v.erase(std::find(v.begin(), v.end(), at));
        return herr_t{0};
      }
      case H5VL_ATTR_RENAME: {
        if (!o.file->writer) fail("file \"" + o.file->name + "\" was opened for reading");
        const std::string from = a->args.rename.old_name, to = a->args.rename.new_name;
        if (owner->find_attribute(to)) fail("H5Arename: attribute \"" + to + "\" of " + owner->path + " already exists");
        for (auto& at : owner->attributes)
          if (at->name == from) {
            at->name = to;
            return herr_t{0};
          }
        fail("H5Arename: no attribute \"" + from + "\" on " + owner->path);
      }
    }
    unsupported("this attribute operation");
  });
}
herr_t attr_optional(void* obj, H5VL_optional_args_t* a, hid_t dxpl, void** req) {
  return guarded<herr_t>("H5A optional", -1, [&]() -> herr_t {
    auto& o = as(obj);
    if (!in_memory(o)) return H5VLattr_optional(o.under, nvol(o), a, dxpl, req);
    unsupported("the native attribute operation " + std::to_string(a->op_type));
  });
}

}  // namespace cove::h5vol
