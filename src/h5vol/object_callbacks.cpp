// The VOL callbacks of objects in general (open, get, specific, close) and of
// committed datatypes (nodes of the tree in memory).
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
    *type = id_type(*n);
    return new_object(object_kind(*n), o.file, n);
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
  return guarded<void*>(name ? "H5Tcommit" : "H5Tcommit_anon", nullptr, [&]() -> void* {
    auto& o = as(obj);
    void* under = nullptr;
    if (o.under) under = native(H5VLdatatype_commit(o.under, loc, nvol(o), name, type, lcpl, tcpl, tapl, dxpl, req), "H5Tcommit");
    if (!in_memory(o)) return child(o, Object::Kind::datatype, nullptr, under);
    if (!o.file->writer) fail("file \"" + o.file->name + "\" was opened for reading");
    // In memory: a node of the tree holding the type (published with the version).
    auto t = std::make_shared<Node>();
    t->kind = Node::Kind::datatype;
    t->id = o.file->next_id++;
    t->type = Hid(check(H5Tcopy(type), "H5Tcopy"));
    if (name) {
      auto [parent, leaf] = parent_for_create(o, loc, name, lcpl);
      add_link(*o.file, parent, leaf, t);
    } else {
      o.file->index(t);
    }
    return child(o, Object::Kind::datatype, t, under);
  });
}
void* datatype_open(void* obj, const H5VL_loc_params_t* loc, const char* name, hid_t tapl, hid_t dxpl, void** req) {
  return guarded<void*>("H5Topen", nullptr, [&]() -> void* {
    auto& o = as(obj);
    void* under = nullptr;
    if (o.under) under = native(H5VLdatatype_open(o.under, loc, nvol(o), name, tapl, dxpl, req), "H5Topen");
    if (!in_memory(o)) return child(o, Object::Kind::datatype, nullptr, under);
    auto t = lookup(*o.file, resolve(o, loc), name);
    if (!t || t->kind != Node::Kind::datatype)
      fail("no committed datatype \"" + std::string(name) + "\" in file \"" + o.file->name + "\"");
    return child(o, Object::Kind::datatype, t, under);
  });
}
herr_t datatype_get(void* obj, H5VL_datatype_get_args_t* a, hid_t dxpl, void** req) {
  return guarded<herr_t>("H5Tget", -1, [&] {
    auto& o = as(obj);
    if (!in_memory(o)) return H5VLdatatype_get(o.under, nvol(o), a, dxpl, req);
    switch (a->op_type) {
      case H5VL_DATATYPE_GET_BINARY_SIZE:  // H5Topen rebuilds the type from its encoding
        check(H5Tencode(o.node->type.get(), nullptr, a->args.get_binary_size.size), "H5Tencode");
        break;
      case H5VL_DATATYPE_GET_BINARY: {
        std::size_t n = a->args.get_binary.buf_size;
        check(H5Tencode(o.node->type.get(), a->args.get_binary.buf, &n), "H5Tencode");
        break;
      }
      case H5VL_DATATYPE_GET_TCPL:
        a->args.get_tcpl.tcpl_id = check(H5Pcreate(H5P_DATATYPE_CREATE), "H5Pcreate");
        break;
    }
    return herr_t{0};
  });
}
herr_t datatype_specific(void* obj, H5VL_datatype_specific_args_t* a, hid_t dxpl, void** req) {
  return guarded<herr_t>("H5T specific", -1, [&] {
    auto& o = as(obj);
    if (!in_memory(o)) return H5VLdatatype_specific(o.under, nvol(o), a, dxpl, req);
    return herr_t{0};  // flush, refresh: nothing to do in memory
  });
}
herr_t datatype_optional(void* obj, H5VL_optional_args_t* a, hid_t dxpl, void** req) {
  return guarded<herr_t>("H5T optional", -1, [&]() -> herr_t {
    auto& o = as(obj);
    if (!in_memory(o)) return H5VLdatatype_optional(o.under, nvol(o), a, dxpl, req);
    unsupported("the native datatype operation " + std::to_string(a->op_type));
  });
}

}  // namespace cove::h5vol
