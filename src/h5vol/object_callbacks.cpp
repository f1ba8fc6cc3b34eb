// The VOL callbacks of objects in general (open, get, specific, close) and of
// committed datatypes (unsupported in memory).
#include "h5vol/vol.hpp"

#include <cove/error.hpp>

#include <cstring>

namespace cove::h5vol {

// ---- objects ----
herr_t object_close(void* obj, hid_t dxpl, void** req) {
  auto* o = static_cast<Object*>(obj);
  herr_t r = 0;
  if (o->under && !o->alias) {
    switch (o->kind) {
      case Object::Kind::group: r = H5VLgroup_close(o->under, nvol(*o), dxpl, req); break;
      case Object::Kind::dataset: r = H5VLdataset_close(o->under, nvol(*o), dxpl, req); break;
      case Object::Kind::attribute: r = H5VLattr_close(o->under, nvol(*o), dxpl, req); break;
      case Object::Kind::datatype: r = H5VLdatatype_close(o->under, nvol(*o), dxpl, req); break;
      case Object::Kind::file: r = H5VLfile_close(o->under, nvol(*o), dxpl, req); break;
    }
  }
  delete o;
  return r;
}
void* object_open(void* obj, const H5VL_loc_params_t* loc, H5I_type_t* type, hid_t dxpl, void** req) {
  return guarded<void*>("H5Oopen", nullptr, [&]() -> void* {
    auto& o = as(obj);
    if (!in_memory(o)) {
      void* under = native(H5VLobject_open(o.under, loc, nvol(o), type, dxpl, req), "H5Oopen");
      return child(o, kind_of(*type), nullptr, under);
    }
    auto n = resolve(o, loc);
    *type = n->kind == Node::Kind::group ? H5I_GROUP : H5I_DATASET;
    return new_object(n->kind == Node::Kind::group ? Object::Kind::group : Object::Kind::dataset, o.file, n);
  });
}
herr_t object_copy(void*, const H5VL_loc_params_t*, const char*, void*, const H5VL_loc_params_t*, const char*, hid_t,
                   hid_t, hid_t, void**) {
  return guarded<herr_t>("H5Ocopy", -1, []() -> herr_t { unsupported("H5Ocopy"); });
}
herr_t object_get(void* obj, const H5VL_loc_params_t* loc, H5VL_object_get_args_t* a, hid_t dxpl, void** req) {
  return guarded<herr_t>("H5Oget", -1, [&] {
    auto& o = as(obj);
    if (a->op_type == H5VL_OBJECT_GET_FILE) {
      // A new alias of the file for HDF5 to register (H5Iget_file_id, and
      // inside H5Rcreate and H5DS*): never the handle's own Object (two
      // identifiers of one Object were both closed at exit, freeing it twice),
      // and closing it closes nothing underneath (the native file is the handle's).
      void* under = nullptr;
      if (o.under) {
        native(H5VLobject_get(o.under, loc, nvol(o), a, dxpl, req), "H5Iget_file_id");
        under = *a->args.get_file.file;
      }
      auto* f = new_object(Object::Kind::file, o.file, in_memory(o) ? o.file->root : nullptr);
      f->under = under;
      f->alias = true;
      *a->args.get_file.file = f;
      return herr_t{0};
    }
    if (!in_memory(o)) return H5VLobject_get(o.under, loc, nvol(o), a, dxpl, req);
    switch (a->op_type) {
      case H5VL_OBJECT_GET_FILE:
        break;
      case H5VL_OBJECT_GET_NAME: {
        auto n = resolve(o, loc);
        copy_name(n->path, a->args.get_name.buf, a->args.get_name.buf_size, a->args.get_name.name_len);
        break;
      }
      case H5VL_OBJECT_GET_TYPE:
        *a->args.get_type.obj_type = object_type(*resolve(o, loc));
        break;
      case H5VL_OBJECT_GET_INFO: {
        auto n = resolve(o, loc);
        auto* info = a->args.get_info.oinfo;
        std::memset(info, 0, sizeof *info);
        info->fileno = o.file->fileno;
        token_of(*n, &info->token);
        info->type = object_type(*n);
        info->rc = 1;
        info->num_attrs = n->attributes.size();
        break;
      }
    }
    return herr_t{0};
  });
}
herr_t object_specific(void* obj, const H5VL_loc_params_t* loc, H5VL_object_specific_args_t* a, hid_t dxpl,
                       void** req) {
  return guarded<herr_t>("H5O specific", -1, [&] {
    auto& o = as(obj);
    if (!in_memory(o)) return H5VLobject_specific(o.under, loc, nvol(o), a, dxpl, req);
    switch (a->op_type) {
      case H5VL_OBJECT_EXISTS: {
        if (loc->type == H5VL_OBJECT_BY_NAME)
          *a->args.exists.exists = lookup(*o.file, o.node, loc->loc_data.loc_by_name.name) != nullptr;
        else
          *a->args.exists.exists = true;
        return herr_t{0};
      }
      case H5VL_OBJECT_LOOKUP:
        token_of(*resolve(o, loc), a->args.lookup.token_ptr);
        return herr_t{0};
      case H5VL_OBJECT_FLUSH:
      case H5VL_OBJECT_REFRESH:
      case H5VL_OBJECT_CHANGE_REF_COUNT:
        return herr_t{0};
      case H5VL_OBJECT_VISIT:
        unsupported("H5Ovisit");
    }
    unsupported("this object operation");
  });
}
herr_t object_optional(void* obj, const H5VL_loc_params_t* loc, H5VL_optional_args_t* a, hid_t dxpl, void** req) {
  return guarded<herr_t>("H5O optional", -1, [&]() -> herr_t {
    auto& o = as(obj);
    if (!in_memory(o)) return H5VLobject_optional(o.under, loc, nvol(o), a, dxpl, req);
    unsupported("the native object operation " + std::to_string(a->op_type) + " (comments, native info)");
  });
}

// ---- committed datatypes ----
void* datatype_commit(void* obj, const H5VL_loc_params_t* loc, const char* name, hid_t type, hid_t lcpl, hid_t tcpl,
                      hid_t tapl, hid_t dxpl, void** req) {
  return guarded<void*>("H5Tcommit", nullptr, [&]() -> void* {
    auto& o = as(obj);
    if (in_memory(o)) unsupported("committed (named) datatypes in memory");
    void* under = native(H5VLdatatype_commit(o.under, loc, nvol(o), name, type, lcpl, tcpl, tapl, dxpl, req), "H5Tcommit");
    return child(o, Object::Kind::datatype, nullptr, under);
  });
}
void* datatype_open(void* obj, const H5VL_loc_params_t* loc, const char* name, hid_t tapl, hid_t dxpl, void** req) {
  return guarded<void*>("H5Topen", nullptr, [&]() -> void* {
    auto& o = as(obj);
    if (in_memory(o)) unsupported("committed (named) datatypes in memory");
    void* under = native(H5VLdatatype_open(o.under, loc, nvol(o), name, tapl, dxpl, req), "H5Topen");
    return child(o, Object::Kind::datatype, nullptr, under);
  });
}
herr_t datatype_get(void* obj, H5VL_datatype_get_args_t* a, hid_t dxpl, void** req) {
  return H5VLdatatype_get(as(obj).under, nvol(as(obj)), a, dxpl, req);
}
herr_t datatype_specific(void* obj, H5VL_datatype_specific_args_t* a, hid_t dxpl, void** req) {
  return H5VLdatatype_specific(as(obj).under, nvol(as(obj)), a, dxpl, req);
}
herr_t datatype_optional(void* obj, H5VL_optional_args_t* a, hid_t dxpl, void** req) {
  return H5VLdatatype_optional(as(obj).under, nvol(as(obj)), a, dxpl, req);
}

}  // namespace cove::h5vol
