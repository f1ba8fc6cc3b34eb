// The VOL callbacks of files: create, open, get, specific, optional, close.
#include "h5vol/vol.hpp"
#include "h5vol/lossy.hpp"

#include <cove/error.hpp>

#include <algorithm>
#include <cstring>

namespace cove::h5vol {

// ---- files ----
void* file_create(const char* name, unsigned flags, hid_t fcpl, hid_t fapl, hid_t dxpl, void** req) {
  return guarded<void*>("H5Fcreate", nullptr, [&]() -> void* {
    keep_hdf5_messages_alive();
    configure_from(fapl);
    auto& session = Session::get();
    const auto mode = session.config().settings_for(name).mode;
    if (mode == Mode::memory) {
      // As natively: a file open in this process cannot be created again,
      // and H5F_ACC_EXCL refuses a name that exists.
      if (session.open_file(name)) fail("file \"" + std::string(name) + "\" is already open in this process");
      if ((flags & H5F_ACC_EXCL) && session.exists(name))
        fail("file \"" + std::string(name) + "\" exists (H5F_ACC_EXCL; errno = 17, error message = 'File exists')");
    }
    void* under = nullptr;
    if (mode != Mode::memory) {
      Hid nfapl = native_fapl(fapl);
      under = native(H5VLfile_create(name, flags, fcpl, nfapl.get(), dxpl, req), "H5Fcreate");
    }
    auto f = mode == Mode::file ? session.native(name, fapl, true) : session.create(name, fapl);
    if (under) f->under_vol = H5VL_NATIVE;
    if (f->memory)  // the root group's creation list is the file's (link creation order and the like)
      f->root->dcpl = Hid(check(H5Pcopy(fcpl == H5P_DEFAULT ? H5P_FILE_CREATE_DEFAULT : fcpl), "H5Pcopy"));
    auto* o = new_handle(f);
    o->under = under;
    return o;
  });
}
void* file_open(const char* name, unsigned flags, hid_t fapl, hid_t dxpl, void** req) {
  return guarded<void*>("H5Fopen", nullptr, [&]() -> void* {
    keep_hdf5_messages_alive();
    configure_from(fapl);
    auto& session = Session::get();
    std::shared_ptr<FileState> f;
    void* under = nullptr;
    if (session.config().settings_for(name).mode == Mode::file) {
      Hid nfapl = native_fapl(fapl);
      under = native(H5VLfile_open(name, flags, nfapl.get(), dxpl, req), "H5Fopen");
      f = session.native(name, fapl, (flags & H5F_ACC_RDWR) != 0);
      f->under_vol = H5VL_NATIVE;
    } else {
      f = (flags & H5F_ACC_RDWR) ? session.open_rw(name, fapl) : session.open(name, fapl);
    }
    auto* o = new_handle(f);
    o->under = under;
    return o;
  });
}
namespace {
// H5Fget_obj_count and H5Fget_obj_ids: the identifiers the application holds
// (files, datasets, groups, committed datatypes, attributes, in that order,
// as natively) of this connector's objects in o's file; up to `max` of them
// into `list` when given. With H5F_OBJ_LOCAL only those opened through o's
// handle, else those of every handle of the file (one process shares one
// state per file).
std::size_t open_objects(const Object& o, unsigned types, hid_t* list, std::size_t max) {
  struct Walk {
    const FileState* file;
    std::uint64_t via;  // H5F_OBJ_LOCAL: only those opened through this handle
    hid_t* list;
    std::size_t max;
    std::size_t count = 0;
  } walk{o.file.get(), (types & H5F_OBJ_LOCAL) ? o.via : 0, list, max};
  const std::pair<unsigned, H5I_type_t> kinds[] = {{H5F_OBJ_FILE, H5I_FILE}, {H5F_OBJ_DATASET, H5I_DATASET},
                                                   {H5F_OBJ_GROUP, H5I_GROUP}, {H5F_OBJ_DATATYPE, H5I_DATATYPE},
                                                   {H5F_OBJ_ATTR, H5I_ATTR}};
  for (const auto& kind : kinds) {
    if (!(types & kind.first)) continue;
    const H5I_type_t type = kind.second;
    check(H5Iiterate(type, [](hid_t id, void* data) -> herr_t {
            auto& w = *static_cast<Walk*>(data);
            if (H5Iget_type(id) == H5I_DATATYPE && H5Tcommitted(id) <= 0) return 0;  // a transient type: no VOL object
            char name[8] = {};
            if (H5VLget_connector_name(id, name, sizeof name) < 0 || std::strcmp(name, "cove") != 0) return 0;
            const auto* x = static_cast<const Object*>(H5VLobject(id));
            if (!x || x->file.get() != w.file || (w.via && x->via != w.via)) return 0;
            if (w.list && w.count < w.max) w.list[w.count] = id;
            ++w.count;
            return 0;
          }, &walk), "H5Iiterate");
  }
  return list ? std::min(walk.count, max) : walk.count;
}
}  // namespace
herr_t file_get(void* obj, H5VL_file_get_args_t* a, hid_t dxpl, void** req) {
  return guarded<herr_t>("H5Fget", -1, [&] {
    auto& o = as(obj);
    if (!in_memory(o)) return H5VLfile_get(o.under, nvol(o), a, dxpl, req);
    auto& f = *o.file;
    switch (a->op_type) {
      case H5VL_FILE_GET_CONT_INFO:
        a->args.get_cont_info.info->feature_flags = 0;
        a->args.get_cont_info.info->token_size = sizeof(std::uint64_t);
        a->args.get_cont_info.info->blob_id_size = 0;
        break;
      case H5VL_FILE_GET_FAPL:
        a->args.get_fapl.fapl_id = check(H5Pcopy(f.fapl.get()), "H5Pcopy");
        break;
      case H5VL_FILE_GET_FCPL:
        a->args.get_fcpl.fcpl_id = f.root && f.root->dcpl.get() >= 0 && H5Pisa_class(f.root->dcpl.get(), H5P_FILE_CREATE) > 0
                                       ? check(H5Pcopy(f.root->dcpl.get()), "H5Pcopy")
                                       : check(H5Pcreate(H5P_FILE_CREATE), "H5Pcreate");
        break;
      case H5VL_FILE_GET_FILENO:
        *a->args.get_fileno.fileno = f.fileno;
        break;
      case H5VL_FILE_GET_INTENT:
        *a->args.get_intent.flags = f.writer ? H5F_ACC_RDWR : H5F_ACC_RDONLY;
        break;
      case H5VL_FILE_GET_NAME:
        copy_name(f.name, a->args.get_name.buf, a->args.get_name.buf_size, a->args.get_name.file_name_len);
        break;
      case H5VL_FILE_GET_OBJ_COUNT:
        *a->args.get_obj_count.count = open_objects(o, a->args.get_obj_count.types, nullptr, 0);
        break;
      case H5VL_FILE_GET_OBJ_IDS:
        *a->args.get_obj_ids.count =
            open_objects(o, a->args.get_obj_ids.types, a->args.get_obj_ids.oid_list, a->args.get_obj_ids.max_objs);
        break;
      default:
        unsupported("this H5Fget query");
    }
    return herr_t{0};
  });
}
herr_t file_specific(void* obj, H5VL_file_specific_args_t* a, hid_t dxpl, void** req) {
  return guarded<herr_t>("H5F specific", -1, [&] {
    if (obj && !in_memory(as(obj))) {
      auto& o = as(obj);
      if (a->op_type == H5VL_FILE_IS_EQUAL) {
        H5VL_file_specific_args_t b = *a;
        b.args.is_equal.obj2 = as(a->args.is_equal.obj2).under;
        return H5VLfile_specific(o.under, nvol(o), &b, dxpl, req);
      }
      if (a->op_type == H5VL_FILE_REOPEN) {
        // A new handle of the same file: the native connector's, wrapped.
        if (native(H5VLfile_specific(o.under, nvol(o), a, dxpl, req), "H5Freopen") < 0) return herr_t{-1};
        auto* r = new_object(Object::Kind::file, o.file, nullptr);
        r->under = *a->args.reopen.file;
        *a->args.reopen.file = r;
        return herr_t{0};
      }
      return H5VLfile_specific(o.under, nvol(o), a, dxpl, req);
    }
    switch (a->op_type) {
      case H5VL_FILE_FLUSH:
        return herr_t{0};
      case H5VL_FILE_IS_ACCESSIBLE: {
        configure_from(a->args.is_accessible.fapl_id);
        auto& session = Session::get();
        if (session.config().settings_for(a->args.is_accessible.filename).mode == Mode::file) {
          Hid nfapl = native_fapl(a->args.is_accessible.fapl_id);
          H5VL_file_specific_args_t b = *a;
          b.args.is_accessible.fapl_id = nfapl.get();
          return H5VLfile_specific(nullptr, H5VL_NATIVE, &b, dxpl, req);
        }
        bool found = true;
        try {
          found = Session::get().exists(a->args.is_accessible.filename);
        } catch (const Error&) {
          found = false;
        }
        *a->args.is_accessible.accessible = found;
        return herr_t{0};
      }
      case H5VL_FILE_IS_EQUAL:
        *a->args.is_equal.same_file = as(obj).file == as(a->args.is_equal.obj2).file;
        return herr_t{0};
      case H5VL_FILE_REOPEN: {
        // Another handle of the same open file (as natively, it shares the file).
        auto& o = as(obj);
        if (o.under) unsupported("H5Freopen of a file in mode both");
        auto* r = new_handle(o.file);
        ++o.file->handles;
        *a->args.reopen.file = r;
        return herr_t{0};
      }
      case H5VL_FILE_DELETE: {
        configure_from(a->args.del.fapl_id);
        const Mode mode = Session::get().config().settings_for(a->args.del.filename).mode;
        if (mode == Mode::memory) {
          Session::get().remove(a->args.del.filename, a->args.del.fapl_id);
          return herr_t{0};
        }
        if (mode != Mode::file) unsupported("H5Fdelete of a file in mode both");
        Hid nfapl = native_fapl(a->args.del.fapl_id);
        H5VL_file_specific_args_t b = *a;
        b.args.del.fapl_id = nfapl.get();
        return H5VLfile_specific(nullptr, H5VL_NATIVE, &b, dxpl, req);
      }
    }
    unsupported("this file operation");
  });
}
herr_t file_optional(void* obj, H5VL_optional_args_t* a, hid_t dxpl, void** req) {
  return guarded<herr_t>("H5F optional", -1, [&]() -> herr_t {
    auto& o = as(obj);
    if (!in_memory(o)) return H5VLfile_optional(o.under, nvol(o), a, dxpl, req);
    // Mode both: the native file needs its post-open step, or HDF5 finds no
    // VOL object for it later (a variable-length attribute's H5Acreate crashed there).
    if (o.under && a->op_type == H5VL_NATIVE_FILE_POST_OPEN) return H5VLfile_optional(o.under, nvol(o), a, dxpl, req);
    unsupported("the native file operation " + std::to_string(a->op_type) + " (H5F*)");
  });
}
herr_t file_close(void* obj, hid_t dxpl, void** req) {
  auto* o = static_cast<Object*>(obj);
  const herr_t r = guarded<herr_t>("H5Fclose", -1, [&] {
    if (o->alias) return herr_t{0};  // H5Iget_file_id's identifier: the file stays open
    // The file on disk is complete before the version is published.
    if (o->under) {
      native(H5VLfile_close(o->under, nvol(*o), dxpl, req), "H5Fclose");
      o->under = nullptr;  // closed once, whatever follows
    }
    // The last handle of the file publishes its version (a producer's).
    if (o->handle) {
      o->handle = false;  // counted once: a failed close is not tried again (its error was reported)
      if (--o->file->handles <= 0) {
        filter_lossy(*o->file);  // lossy filters give their values before the version is published
        Session::get().close(*o->file);
      }
    }
    return herr_t{0};
  });
  // A failed close leaves the identifier registered (HDF5 keeps it, and
  // closes it again at exit): its object stays until a close succeeds.
  if (r >= 0) delete o;
  return r;
}

}  // namespace cove::h5vol
