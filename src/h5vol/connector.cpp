// The VOL class table: HDF5's callbacks mapped onto the in-memory tree
// (objects.hpp, tree.hpp) and Cove transfers (transfer.hpp), and, for files
// in mode file or both, passed on to the native connector underneath
// (Object::under): mode file only there, mode both there as well as to
// memory (a producer's queries are then answered from memory).
#include "h5vol/errors.hpp"
#include "h5vol/objects.hpp"
#include "h5vol/transfer.hpp"

#include <cove/error.hpp>
#include <cove/h5vol.h>

#include <H5PLextern.h>
#include <H5VLnative.h>
#include <H5VLconnector_passthru.h>

#include <cstring>
#include <ctime>

namespace cove::h5vol {
namespace {

constexpr H5VL_class_value_t kConnectorValue = 9301;
constexpr const char* kConnectorName = "cove";

struct Info {
  std::string config;
};

Object& as(void* p) { return *static_cast<Object*>(p); }

bool in_memory(const Object& o) { return o.node != nullptr; }
hid_t nvol(const Object& o) { return o.file->under_vol; }

// The native connector's result, or a Failure (its own error entry is on the stack).
void* native(void* p, const char* what) {
  if (!p) fail(std::string("the native connector failed in ") + what);
  return p;
}
herr_t native(herr_t r, const char* what) {
  if (r < 0) fail(std::string("the native connector failed in ") + what);
  return r;
}

Object* child(const Object& parent, Object::Kind kind, std::shared_ptr<Node> node, void* under) {
  auto* o = new_object(kind, parent.file, std::move(node));
  o->under = under;
  return o;
}

// A file access list that selects the native connector, for the file underneath.
Hid native_fapl(hid_t fapl) {
  Hid copy(check(H5Pcopy(fapl), "H5Pcopy"));
  check(H5Pset_vol(copy.get(), H5VL_NATIVE, nullptr), "H5Pset_vol native");
  return copy;
}

Object::Kind kind_of(H5I_type_t type) {
  switch (type) {
    case H5I_FILE: return Object::Kind::file;
    case H5I_GROUP: return Object::Kind::group;
    case H5I_DATASET: return Object::Kind::dataset;
    case H5I_ATTR: return Object::Kind::attribute;
    default: return Object::Kind::datatype;
  }
}

void copy_name(const std::string& name, char* buf, std::size_t size, std::size_t* len) {
  if (len) *len = name.size();
  if (buf && size > 0) {
    const auto n = std::min(size - 1, name.size());
    std::memcpy(buf, name.data(), n);
    buf[n] = '\0';
  }
}

[[noreturn]] void unsupported(const std::string& what) {
  fail(what + " is not supported by the Cove connector");
}

// Registers a temporary identifier for `node` so that an iteration
// callback can be given one; closing it deletes the Object.
hid_t register_id(const Object& from, const std::shared_ptr<Node>& node) {
  auto* o = new_object(node->kind == Node::Kind::group ? Object::Kind::group : Object::Kind::dataset, from.file, node);
  const hid_t id = H5VLwrap_register(o, node->kind == Node::Kind::group ? H5I_GROUP : H5I_DATASET);
  if (id < 0) {
    delete o;
    fail("H5VLwrap_register failed");
  }
  return id;
}

H5O_type_t object_type(const Node& n) { return n.kind == Node::Kind::group ? H5O_TYPE_GROUP : H5O_TYPE_DATASET; }

void link_info(const Node& n, H5L_info2_t* info) {
  std::memset(info, 0, sizeof *info);
  info->type = H5L_TYPE_HARD;
  info->cset = H5T_CSET_ASCII;
  token_of(n, &info->u.token);
}

// ---- info ----
void* info_copy(const void* info) {
  return guarded<void*>("info copy", nullptr, [&] { return new Info(*static_cast<const Info*>(info)); });
}
herr_t info_cmp(int* cmp, const void* a, const void* b) {
  *cmp = static_cast<const Info*>(a)->config.compare(static_cast<const Info*>(b)->config);
  return 0;
}
herr_t info_free(void* info) {
  delete static_cast<Info*>(info);
  return 0;
}
herr_t info_to_str(const void* info, char** str) {
  const auto s = "config=" + static_cast<const Info*>(info)->config;
  *str = static_cast<char*>(H5allocate_memory(s.size() + 1, false));
  if (!*str) return -1;
  std::memcpy(*str, s.c_str(), s.size() + 1);
  return 0;
}
herr_t info_from_str(const char* str, void** info) {
  return guarded<herr_t>("connector string", -1, [&] {
    auto i = std::make_unique<Info>();
    std::string s = str ? str : "";
    while (!s.empty() && s.back() == ' ') s.pop_back();
    if (s.rfind("config=", 0) == 0) {
      i->config = s.substr(7);
    } else if (!s.empty()) {
      fail("\"" + s + "\" is not config=PATH");
    }
    *info = i.release();
    return herr_t{0};
  });
}

void configure_from(hid_t fapl) {
  void* info = nullptr;
  std::string path;
  if (H5Pget_vol_info(fapl, &info) >= 0 && info) {
    path = static_cast<Info*>(info)->config;
    delete static_cast<Info*>(info);
  }
  Session::get().configure(path);
}

// ---- files ----
void* file_create(const char* name, unsigned flags, hid_t fcpl, hid_t fapl, hid_t dxpl, void** req) {
  return guarded<void*>("H5Fcreate", nullptr, [&]() -> void* {
    configure_from(fapl);
    auto& session = Session::get();
    const auto mode = session.config().settings_for(name).mode;
    void* under = nullptr;
    if (mode != Mode::memory) {
      Hid nfapl = native_fapl(fapl);
      under = native(H5VLfile_create(name, flags, fcpl, nfapl.get(), dxpl, req), "H5Fcreate");
    }
    auto f = mode == Mode::file ? session.native(name, fapl, true) : session.create(name, fapl);
    if (under) f->under_vol = H5VL_NATIVE;
    auto* o = new_object(Object::Kind::file, f, f->memory ? f->root : nullptr);
    o->under = under;
    f->file_object = o;
    return o;
  });
}
void* file_open(const char* name, unsigned flags, hid_t fapl, hid_t dxpl, void** req) {
  return guarded<void*>("H5Fopen", nullptr, [&]() -> void* {
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
      if (flags & H5F_ACC_RDWR) unsupported("opening a file read-write (\"" + std::string(name) + "\"); readers open read-only");
      f = session.open(name, fapl);
    }
    auto* o = new_object(Object::Kind::file, f, f->memory ? f->root : nullptr);
    o->under = under;
    f->file_object = o;
    return o;
  });
}
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
        a->args.get_fcpl.fcpl_id = check(H5Pcreate(H5P_FILE_CREATE), "H5Pcreate");
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
        *a->args.get_obj_count.count = 0;
        break;
      case H5VL_FILE_GET_OBJ_IDS:
        *a->args.get_obj_ids.count = 0;
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
      if (a->op_type == H5VL_FILE_REOPEN) unsupported("H5Freopen");
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
          Session::get().client().get_meta_latest("h5:" + std::string(a->args.is_accessible.filename), 0);
        } catch (const Error&) {
          found = false;
        }
        *a->args.is_accessible.accessible = found;
        return herr_t{0};
      }
      case H5VL_FILE_IS_EQUAL:
        *a->args.is_equal.same_file = as(obj).file == as(a->args.is_equal.obj2).file;
        return herr_t{0};
      case H5VL_FILE_REOPEN:
        unsupported("H5Freopen");
      case H5VL_FILE_DELETE: {
        configure_from(a->args.del.fapl_id);
        if (Session::get().config().settings_for(a->args.del.filename).mode != Mode::file)
          unsupported("H5Fdelete of a file in memory");
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
    unsupported("the native file operation " + std::to_string(a->op_type) + " (H5F*)");
  });
}
herr_t file_close(void* obj, hid_t dxpl, void** req) {
  auto* o = static_cast<Object*>(obj);
  const herr_t r = guarded<herr_t>("H5Fclose", -1, [&] {
    // The file on disk is complete before the version is published.
    if (o->under) native(H5VLfile_close(o->under, nvol(*o), dxpl, req), "H5Fclose");
    if (o->file->file_object == o) {
      o->file->file_object = nullptr;
      Session::get().close(*o->file);
    }
    return herr_t{0};
  });
  delete o;
  return r;
}

// ---- groups ----
void* group_create(void* obj, const H5VL_loc_params_t* loc, const char* name, hid_t lcpl, hid_t gcpl, hid_t gapl,
                   hid_t dxpl, void** req) {
  return guarded<void*>("H5Gcreate", nullptr, [&]() -> void* {
    auto& o = as(obj);
    void* under = nullptr;
    if (o.under) under = native(H5VLgroup_create(o.under, loc, nvol(o), name, lcpl, gcpl, gapl, dxpl, req), "H5Gcreate");
    if (!in_memory(o)) return child(o, Object::Kind::group, nullptr, under);
    if (!o.file->writer) fail("file \"" + o.file->name + "\" was opened for reading");
    auto [parent, leaf] = parent_for_create(o, loc, name);
    auto g = std::make_shared<Node>();
    g->path = join_path(parent->path, leaf);
    g->id = o.file->next_id++;
    parent->links[leaf] = g;
    o.file->index(g);
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
      a->args.get_gcpl.gcpl_id = check(H5Pcreate(H5P_GROUP_CREATE), "H5Pcreate");
      return herr_t{0};
    }
    auto g = resolve(o, &a->args.get_info.loc_params);
    if (g->kind != Node::Kind::group) fail(g->path + " is not a group");
    auto* info = a->args.get_info.ginfo;
    info->storage_type = H5G_STORAGE_TYPE_COMPACT;
    info->nlinks = g->links.size();
    info->max_corder = 0;
    info->mounted = false;
    return herr_t{0};
  });
}
herr_t group_specific(void* obj, H5VL_group_specific_args_t* a, hid_t dxpl, void** req) {
  return guarded<herr_t>("H5G specific", -1, [&] {
    auto& o = as(obj);
    if (!in_memory(o)) return H5VLgroup_specific(o.under, nvol(o), a, dxpl, req);
    if (a->op_type == H5VL_GROUP_FLUSH || a->op_type == H5VL_GROUP_REFRESH) return herr_t{0};
    unsupported("H5Fmount / H5Funmount");
  });
}
herr_t group_optional(void* obj, H5VL_optional_args_t* a, hid_t dxpl, void** req) {
  return guarded<herr_t>("H5G optional", -1, [&]() -> herr_t {
    auto& o = as(obj);
    if (!in_memory(o)) return H5VLgroup_optional(o.under, nvol(o), a, dxpl, req);
    unsupported("the native group operation " + std::to_string(a->op_type) + " (H5G*)");
  });
}
herr_t object_close(void* obj, hid_t dxpl, void** req) {
  auto* o = static_cast<Object*>(obj);
  herr_t r = 0;
  if (o->under) {
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

// ---- datasets ----
void* dataset_create(void* obj, const H5VL_loc_params_t* loc, const char* name, hid_t lcpl, hid_t type, hid_t space,
                     hid_t dcpl, hid_t dapl, hid_t dxpl, void** req) {
  return guarded<void*>("H5Dcreate", nullptr, [&]() -> void* {
    auto& o = as(obj);
    // Mode both: a dataset rule may keep this one out of the file or out of memory.
    std::string path;
    Mode dmode = Mode::both;
    if (in_memory(o) && o.under) {
      auto [p, l] = parent_for_create(o, loc, name);
      path = join_path(p->path, l);
      dmode = o.file->settings.dataset_mode(path);
    }
    void* under = nullptr;
    if (o.under && dmode != Mode::memory)
      under = native(H5VLdataset_create(o.under, loc, nvol(o), name, lcpl, type, space, dcpl, dapl, dxpl, req), "H5Dcreate");
    if (!in_memory(o)) return child(o, Object::Kind::dataset, nullptr, under);
    if (!o.file->writer) fail("file \"" + o.file->name + "\" was opened for reading");
    auto [parent, leaf] = parent_for_create(o, loc, name);
    auto d = std::make_shared<Node>();
    d->kind = Node::Kind::dataset;
    d->path = join_path(parent->path, leaf);
    d->id = o.file->next_id++;
    d->type = Hid(check(H5Tcopy(type), "H5Tcopy"));
    const auto cls = H5Sget_simple_extent_type(space);
    if (cls == H5S_NULL) unsupported("a dataset with a null dataspace (" + d->path + ")");
    const int rank = check(H5Sget_simple_extent_ndims(space), "H5Sget_simple_extent_ndims");
    d->dims.resize(static_cast<std::size_t>(rank));
    d->maxdims.resize(static_cast<std::size_t>(rank));
    if (rank > 0) check(H5Sget_simple_extent_dims(space, d->dims.data(), d->maxdims.data()), "H5Sget_simple_extent_dims");
    if (rank > kMaxDims) unsupported("a dataset of rank " + std::to_string(rank) + " (at most 10)");
    d->dcpl = Hid(check(H5Pcopy(dcpl == H5P_DEFAULT ? H5P_DATASET_CREATE_DEFAULT : dcpl), "H5Pcopy"));
    d->file_only = dmode == Mode::file;
    d->held = !d->file_only && o.file->settings.dataset_transfer(d->path) != Transfer::deep;
    if (!d->file_only) define_dataset(*o.file, *d);
    Session::get().resolve(*o.file);  // collective, like H5Dcreate; after the define, which overlapped the lookup
    parent->links[leaf] = d;
    o.file->index(d);
    return child(o, Object::Kind::dataset, d, under);
  });
}
void* dataset_open(void* obj, const H5VL_loc_params_t* loc, const char* name, hid_t dapl, hid_t dxpl, void** req) {
  return guarded<void*>("H5Dopen", nullptr, [&]() -> void* {
    auto& o = as(obj);
    void* under = nullptr;
    std::shared_ptr<Node> mem;
    if (in_memory(o)) mem = lookup(*o.file, resolve(o, loc), name);
    const bool memory_only = mem && o.file->settings.dataset_mode(mem->path) == Mode::memory;
    if (o.under && !memory_only)
      under = native(H5VLdataset_open(o.under, loc, nvol(o), name, dapl, dxpl, req), "H5Dopen");
    if (!in_memory(o)) return child(o, Object::Kind::dataset, nullptr, under);
    auto d = lookup(*o.file, resolve(o, loc), name);
    if (!d) fail("no dataset \"" + std::string(name) + "\" in file \"" + o.file->name + "\"");
    if (d->kind != Node::Kind::dataset) fail(d->path + " is not a dataset");
    return child(o, Object::Kind::dataset, d, under);
  });
}
herr_t dataset_read(size_t count, void* dset[], hid_t mem_type[], hid_t mem_space[], hid_t file_space[], hid_t dxpl,
                    void* buf[], void** req) {
  return guarded<herr_t>("H5Dread", -1, [&] {
    for (size_t i = 0; i < count; ++i) {
      auto& o = as(dset[i]);
      if (in_memory(o)) {
        read_dataset(*o.file, *o.node, mem_type[i], mem_space[i], file_space[i], buf[i]);
      } else {
        void* under = o.under;
        native(H5VLdataset_read(1, &under, nvol(o), &mem_type[i], &mem_space[i], &file_space[i], dxpl, &buf[i], req),
               "H5Dread");
      }
    }
    return herr_t{0};
  });
}
herr_t dataset_write(size_t count, void* dset[], hid_t mem_type[], hid_t mem_space[], hid_t file_space[], hid_t dxpl,
                     const void* buf[], void** req) {
  return guarded<herr_t>("H5Dwrite", -1, [&] {
    for (size_t i = 0; i < count; ++i) {
      auto& o = as(dset[i]);
      if (in_memory(o)) write_dataset(*o.file, *o.node, mem_type[i], mem_space[i], file_space[i], buf[i]);
      if (o.under) {
        void* under = o.under;
        native(H5VLdataset_write(1, &under, nvol(o), &mem_type[i], &mem_space[i], &file_space[i], dxpl, &buf[i], req),
               "H5Dwrite");
      }
    }
    return herr_t{0};
  });
}
herr_t dataset_get(void* obj, H5VL_dataset_get_args_t* a, hid_t dxpl, void** req) {
  return guarded<herr_t>("H5Dget", -1, [&] {
    if (!in_memory(as(obj))) return H5VLdataset_get(as(obj).under, nvol(as(obj)), a, dxpl, req);
    auto& d = *as(obj).node;
    switch (a->op_type) {
      case H5VL_DATASET_GET_DAPL:
        a->args.get_dapl.dapl_id = check(H5Pcreate(H5P_DATASET_ACCESS), "H5Pcreate");
        break;
      case H5VL_DATASET_GET_DCPL:
        a->args.get_dcpl.dcpl_id = check(H5Pcopy(d.dcpl.get()), "H5Pcopy");
        break;
      case H5VL_DATASET_GET_SPACE:
        a->args.get_space.space_id = d.make_space();
        break;
      case H5VL_DATASET_GET_SPACE_STATUS:
        *a->args.get_space_status.status = H5D_SPACE_STATUS_ALLOCATED;
        break;
      case H5VL_DATASET_GET_STORAGE_SIZE: {
        hsize_t n = 1;
        for (auto x : d.dims) n *= x;
        *a->args.get_storage_size.storage_size = n * H5Tget_size(d.type.get());
        break;
      }
      case H5VL_DATASET_GET_TYPE:
        a->args.get_type.type_id = check(H5Tcopy(d.type.get()), "H5Tcopy");
        break;
      default:
        unsupported("this H5Dget query");
    }
    return herr_t{0};
  });
}
herr_t dataset_specific(void* obj, H5VL_dataset_specific_args_t* a, hid_t dxpl, void** req) {
  return guarded<herr_t>("H5D specific", -1, [&] {
    auto& o = as(obj);
    if (o.under) native(H5VLdataset_specific(o.under, nvol(o), a, dxpl, req), "H5Dset_extent / flush / refresh");
    if (!in_memory(o)) return herr_t{0};
    auto& d = *o.node;
    if (a->op_type == H5VL_DATASET_FLUSH || a->op_type == H5VL_DATASET_REFRESH) return herr_t{0};
    if (!o.file->writer) fail("H5Dset_extent on dataset " + d.path + " of a file opened for reading");
    for (std::size_t i = 0; i < d.dims.size(); ++i) {
      const auto n = a->args.set_extent.size[i];
      if (d.maxdims[i] != H5S_UNLIMITED && n > d.maxdims[i])
        fail("H5Dset_extent: " + std::to_string(n) + " exceeds dataset " + d.path + "'s maximum " +
             std::to_string(d.maxdims[i]) + " in dimension " + std::to_string(i));
    }
    for (std::size_t i = 0; i < d.dims.size(); ++i) d.dims[i] = a->args.set_extent.size[i];
    return herr_t{0};
  });
}
herr_t dataset_optional(void* obj, H5VL_optional_args_t* a, hid_t dxpl, void** req) {
  return guarded<herr_t>("H5D optional", -1, [&]() -> herr_t {
    auto& o = as(obj);
    if (!in_memory(o)) return H5VLdataset_optional(o.under, nvol(o), a, dxpl, req);
    unsupported("the native dataset operation " + std::to_string(a->op_type) + " (chunk / offset queries)");
  });
}

// ---- attributes ----
void* attr_create(void* obj, const H5VL_loc_params_t* loc, const char* name, hid_t type, hid_t space, hid_t acpl,
                  hid_t aapl, hid_t dxpl, void** req) {
  return guarded<void*>("H5Acreate", nullptr, [&]() -> void* {
    auto& o = as(obj);
    void* under = nullptr;
    if (o.under)
      under = native(H5VLattr_create(o.under, loc, nvol(o), name, type, space, acpl, aapl, dxpl, req), "H5Acreate");
    if (!in_memory(o)) return child(o, Object::Kind::attribute, nullptr, under);
    if (!o.file->writer) fail("file \"" + o.file->name + "\" was opened for reading");
    auto owner = resolve(o, loc);
    if (owner->find_attribute(name)) fail("attribute \"" + std::string(name) + "\" of " + owner->path + " already exists");
    if (H5Tdetect_class(type, H5T_VLEN) > 0 || H5Tis_variable_str(type) > 0)
      unsupported("a variable-length attribute (\"" + std::string(name) + "\")");
    auto a = std::make_shared<Attribute>();
    a->name = name;
    a->type = Hid(check(H5Tcopy(type), "H5Tcopy"));
    a->space = Hid(check(H5Scopy(space), "H5Scopy"));
    const auto n = static_cast<std::size_t>(check(H5Sget_simple_extent_npoints(space), "H5Sget_simple_extent_npoints"));
    a->data.assign(n * H5Tget_size(type), std::byte{0});
    a->corder = owner->next_corder++;
    owner->attributes.push_back(a);
    auto* r = child(o, Object::Kind::attribute, owner, under);
    r->attr = a;
    return r;
  });
}
void* attr_open(void* obj, const H5VL_loc_params_t* loc, const char* name, hid_t aapl, hid_t dxpl, void** req) {
  return guarded<void*>("H5Aopen", nullptr, [&]() -> void* {
    auto& o = as(obj);
    void* under = nullptr;
    if (o.under) under = native(H5VLattr_open(o.under, loc, nvol(o), name, aapl, dxpl, req), "H5Aopen");
    if (!in_memory(o)) return child(o, Object::Kind::attribute, nullptr, under);
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
std::shared_ptr<Attribute> attribute_at(const Object& o, const H5VL_loc_params_t& loc, const char* by_name) {
  if (loc.type == H5VL_OBJECT_BY_SELF && o.kind == Object::Kind::attribute && !by_name) return o.attr;
  auto owner = resolve(o, &loc);
  if (loc.type == H5VL_OBJECT_BY_IDX) fail("attributes by index are not supported");
  for (auto& a : owner->attributes)
    if (by_name && a->name == by_name) return a;
  fail("no attribute \"" + std::string(by_name ? by_name : "") + "\" on " + owner->path);
}
herr_t attr_get(void* obj, H5VL_attr_get_args_t* a, hid_t dxpl, void** req) {
  return guarded<herr_t>("H5Aget", -1, [&] {
    auto& o = as(obj);
    if (!in_memory(o)) return H5VLattr_get(o.under, nvol(o), a, dxpl, req);
    switch (a->op_type) {
      case H5VL_ATTR_GET_ACPL:
        a->args.get_acpl.acpl_id = check(H5Pcreate(H5P_ATTRIBUTE_CREATE), "H5Pcreate");
        break;
      case H5VL_ATTR_GET_SPACE:
        a->args.get_space.space_id = check(H5Scopy(o.attr->space.get()), "H5Scopy");
        break;
      case H5VL_ATTR_GET_TYPE:
        a->args.get_type.type_id = check(H5Tcopy(o.attr->type.get()), "H5Tcopy");
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
          H5VL_loc_params_t l = g.loc_params;
          l.type = H5VL_OBJECT_BY_NAME;
          l.loc_data.loc_by_name.name = g.loc_params.loc_data.loc_by_idx.name;
          l.loc_data.loc_by_name.lapl_id = H5P_DEFAULT;
          auto owner = resolve(o, &l);
          const auto n = g.loc_params.loc_data.loc_by_idx.n;
          if (n >= owner->attributes.size()) fail("attribute index " + std::to_string(n) + " is out of range");
          at = owner->attributes[g.loc_params.loc_data.loc_by_idx.order == H5_ITER_DEC ? owner->attributes.size() - 1 - n : n];
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
        g.ainfo->cset = H5T_CSET_ASCII;
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
    if (o.under && a->op_type == H5VL_ATTR_DELETE) native(H5VLattr_specific(o.under, loc, nvol(o), a, dxpl, req), "H5Adelete");
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
          info.cset = H5T_CSET_ASCII;
          info.data_size = list[i]->data.size();
          ret = it.op(id, list[i]->name.c_str(), &info, it.op_data);
        }
        H5Idec_ref(id);
        if (it.idx) *it.idx = i;
        return ret;
      }
      default:
        unsupported("H5Arename / H5Adelete_by_idx");
    }
  });
}
herr_t attr_optional(void* obj, H5VL_optional_args_t* a, hid_t dxpl, void** req) {
  return guarded<herr_t>("H5A optional", -1, [&]() -> herr_t {
    auto& o = as(obj);
    if (!in_memory(o)) return H5VLattr_optional(o.under, nvol(o), a, dxpl, req);
    unsupported("the native attribute operation " + std::to_string(a->op_type));
  });
}

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

// ---- objects ----
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
      // The open file's own Object, so that HDF5 finds its identifier.
      if (o.file->file_object) {
        *a->args.get_file.file = o.file->file_object;
        return herr_t{0};
      }
      void* under = nullptr;
      if (o.under) {
        native(H5VLobject_get(o.under, loc, nvol(o), a, dxpl, req), "H5Iget_file_id");
        under = *a->args.get_file.file;
      }
      auto* f = new_object(Object::Kind::file, o.file, in_memory(o) ? o.file->root : nullptr);
      f->under = under;
      o.file->file_object = f;
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

// ---- wrapping (identifiers that HDF5 registers during a callback) ----
struct WrapCtx {
  std::shared_ptr<FileState> file;
  bool memory;
};
void* get_object(const void* obj) {
  auto* o = static_cast<const Object*>(obj);
  return o->under ? H5VLget_object(o->under, nvol(*o)) : const_cast<void*>(obj);
}
herr_t get_wrap_ctx(const void* obj, void** ctx) {
  auto* o = static_cast<const Object*>(obj);
  *ctx = new WrapCtx{o->file, o->node != nullptr};
  return 0;
}
// The connector's own (memory) objects are registered as they are; the
// native connector's get an Object around them.
void* wrap_object(void* obj, H5I_type_t type, void* ctx) {
  auto* c = static_cast<WrapCtx*>(ctx);
  if (c->memory) return obj;
  auto* o = new_object(kind_of(type), c->file, nullptr);
  o->under = obj;
  return o;
}
void* unwrap_object(void* obj) {
  auto* o = static_cast<Object*>(obj);
  if (!o->under) return obj;
  void* under = o->under;
  delete o;
  return under;
}
herr_t free_wrap_ctx(void* ctx) {
  delete static_cast<WrapCtx*>(ctx);
  return 0;
}

// ---- blobs (variable-length data of native files) ----
herr_t blob_put(void* obj, const void* buf, size_t size, void* id, void* ctx) {
  auto& o = as(obj);
  if (!o.under) return -1;
  return H5VLblob_put(o.under, nvol(o), buf, size, id, ctx);
}
herr_t blob_get(void* obj, const void* id, void* buf, size_t size, void* ctx) {
  auto& o = as(obj);
  if (!o.under) return -1;
  return H5VLblob_get(o.under, nvol(o), id, buf, size, ctx);
}
herr_t blob_specific(void* obj, void* id, H5VL_blob_specific_args_t* a) {
  auto& o = as(obj);
  if (!o.under) return -1;
  return H5VLblob_specific(o.under, nvol(o), id, a);
}

// ---- introspection and tokens ----
H5VL_class_t& connector_class();
herr_t get_conn_cls(void* obj, H5VL_get_conn_lvl_t lvl, const H5VL_class_t** cls) {
  if (lvl == H5VL_GET_CONN_LVL_TERM && obj && as(obj).under && !in_memory(as(obj)))
    return H5VLintrospect_get_conn_cls(as(obj).under, nvol(as(obj)), lvl, cls);
  *cls = &connector_class();
  return 0;
}
herr_t get_cap_flags(const void*, uint64_t* flags) {
  *flags = connector_class().cap_flags;
  return 0;
}
herr_t opt_query(void* obj, H5VL_subclass_t cls, int op, uint64_t* flags) {
  if (obj && as(obj).under && !in_memory(as(obj))) return H5VLintrospect_opt_query(as(obj).under, nvol(as(obj)), cls, op, flags);
  *flags = 0;  // in memory, no native optional operation is supported
  return 0;
}
herr_t token_cmp(void*, const H5O_token_t* a, const H5O_token_t* b, int* cmp) {
  const auto x = id_of(*a), y = id_of(*b);
  *cmp = x < y ? -1 : (x > y ? 1 : 0);
  return 0;
}
herr_t token_to_str(void*, H5I_type_t, const H5O_token_t* token, char** str) {
  const auto s = std::to_string(id_of(*token));
  *str = static_cast<char*>(H5allocate_memory(s.size() + 1, false));
  if (!*str) return -1;
  std::memcpy(*str, s.c_str(), s.size() + 1);
  return 0;
}
herr_t token_from_str(void*, H5I_type_t, const char* str, H5O_token_t* token) {
  std::memset(token, 0, sizeof *token);
  const std::uint64_t id = std::strtoull(str, nullptr, 10);
  std::memcpy(token->__data, &id, sizeof id);
  return 0;
}

herr_t initialize(hid_t) {
  register_error_class();
  return 0;
}
herr_t terminate() {
  Session::get().shutdown();
  unregister_error_class();
  return 0;
}

H5VL_class_t make_class() {
  H5VL_class_t c;
  std::memset(&c, 0, sizeof c);
  c.version = H5VL_VERSION;
  c.value = kConnectorValue;
  c.name = kConnectorName;
  c.conn_version = 1;
  c.cap_flags = H5VL_CAP_FLAG_ATTR_BASIC | H5VL_CAP_FLAG_DATASET_BASIC | H5VL_CAP_FLAG_FILE_BASIC |
                H5VL_CAP_FLAG_GROUP_BASIC | H5VL_CAP_FLAG_LINK_BASIC | H5VL_CAP_FLAG_OBJECT_BASIC |
                H5VL_CAP_FLAG_ITERATE | H5VL_CAP_FLAG_BY_IDX;
  c.initialize = initialize;
  c.terminate = terminate;
  c.info_cls = {sizeof(Info), info_copy, info_cmp, info_free, info_to_str, info_from_str};
  c.attr_cls = {attr_create, attr_open, attr_read, attr_write, attr_get, attr_specific, attr_optional, object_close};
  c.dataset_cls = {dataset_create, dataset_open,     dataset_read,     dataset_write,
                   dataset_get,    dataset_specific, dataset_optional, object_close};
  c.datatype_cls = {datatype_commit, datatype_open, datatype_get, datatype_specific, datatype_optional, object_close};
  c.wrap_cls = {get_object, get_wrap_ctx, wrap_object, unwrap_object, free_wrap_ctx};
  c.blob_cls = {blob_put, blob_get, blob_specific, nullptr};
  c.file_cls = {file_create, file_open, file_get, file_specific, file_optional, file_close};
  c.group_cls = {group_create, group_open, group_get, group_specific, group_optional, object_close};
  c.link_cls = {link_create, link_copy, link_move, link_get, link_specific, link_optional};
  c.object_cls = {object_open, object_copy, object_get, object_specific, object_optional};
  c.introspect_cls = {get_conn_cls, get_cap_flags, opt_query};
  c.token_cls = {token_cmp, token_to_str, token_from_str};
  return c;
}

H5VL_class_t& connector_class() {
  static H5VL_class_t c = make_class();
  return c;
}

}  // namespace
}  // namespace cove::h5vol

extern "C" {

H5PL_type_t H5PLget_plugin_type(void) { return H5PL_TYPE_VOL; }
const void* H5PLget_plugin_info(void) { return &cove::h5vol::connector_class(); }

COVE_H5VOL_API herr_t H5Pset_fapl_cove(hid_t fapl, const char* config_path) {
  using namespace cove::h5vol;
  return guarded<herr_t>("H5Pset_fapl_cove", -1, [&] {
    Hid id(check(H5VLregister_connector(&connector_class(), H5P_DEFAULT), "H5VLregister_connector"));
    Info info{config_path ? config_path : ""};
    check(H5Pset_vol(fapl, id.get(), &info), "H5Pset_vol");
    return herr_t{0};
  });
}

}
