// The VOL class table (the callbacks of each object class are in
// *_callbacks.cpp, vol.hpp), the connector's info, wrapping, blob,
// introspection and token callbacks, and the plugin's entry points.
#include "h5vol/vol.hpp"

#include <cove/error.hpp>
#include <cove/h5vol.h>

#include <H5PLextern.h>
#include <H5VLnative.h>

#include <cstring>

namespace cove::h5vol {
void configure_from(hid_t fapl) {
  void* info = nullptr;
  std::string path;
  if (H5Pget_vol_info(fapl, &info) >= 0 && info) {
    path = static_cast<Info*>(info)->config;
    delete static_cast<Info*>(info);
  }
  Session::get().configure(path);
}

namespace {

constexpr H5VL_class_value_t kConnectorValue = 9301;
constexpr const char* kConnectorName = "cove";

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


// ---- wrapping (identifiers that HDF5 registers during a callback) ----
// Weak: the object the context was taken from holds the file (and an
// object's last close must see who else holds it, object_close).
struct WrapCtx {
  std::weak_ptr<FileState> file;
  bool memory;
  std::uint64_t via;  // the handle the object was opened through (Object::via)
};
void* get_object(const void* obj) {
  auto* o = static_cast<const Object*>(obj);
  return o->under ? H5VLget_object(o->under, nvol(*o)) : const_cast<void*>(obj);
}
herr_t get_wrap_ctx(const void* obj, void** ctx) {
  auto* o = static_cast<const Object*>(obj);
  *ctx = new WrapCtx{o->file, o->node != nullptr, o->via};
  return 0;
}
// The connector's own (memory) objects are registered as they are; the
// native connector's get an Object around them.
void* wrap_object(void* obj, H5I_type_t type, void* ctx) {
  auto* c = static_cast<WrapCtx*>(ctx);
  auto file = c->file.lock();
  if (!file) return nullptr;  // its file closed during the call: HDF5 fails the registration
  if (c->memory && (registering_own() || file->under_vol == H5I_INVALID_HID)) return obj;
  auto* o = new_object(kind_of(type), std::move(file), nullptr);
  o->under = obj;
  o->via = c->via;
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
// What the connector does, honestly, per mode: files all in mode file pass
// every call to the native connector, so they have its capabilities; in
// memory (and mode both, whose readers read memory) what the tree and the
// store implement (the class's own cap_flags).
herr_t get_cap_flags(const void* info, uint64_t* flags) {
  *flags = connector_class().cap_flags;
  try {
    auto& session = Session::get();
    session.configure(info ? static_cast<const Info*>(info)->config : std::string());
    const auto& config = session.config();
    bool all_file = config.defaults.mode == Mode::file;
    for (const auto& rule : config.files) all_file = all_file && rule.settings.mode == Mode::file;
    if (all_file) return H5VLintrospect_get_cap_flags(nullptr, H5VL_NATIVE, flags);
  } catch (const std::exception&) {
    // A bad configuration fails H5Fcreate / H5Fopen with its message; the flags stay the memory ones.
  }
  return 0;
}
herr_t opt_query(void* obj, H5VL_subclass_t cls, int op, uint64_t* flags) {
  if (obj && as(obj).under && !in_memory(as(obj))) return H5VLintrospect_opt_query(as(obj).under, nvol(as(obj)), cls, op, flags);
  // Mode both: the native file's post-open step (file_optional passes it down).
  if (obj && as(obj).under && cls == H5VL_SUBCLS_FILE && op == H5VL_NATIVE_FILE_POST_OPEN)
    return H5VLintrospect_opt_query(as(obj).under, nvol(as(obj)), cls, op, flags);
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
  keep_hdf5_messages_alive();
  return 0;
}
herr_t terminate() {
  {
    CallScope scope;  // the types shutdown decodes are closed before HDF5 closes its own
    Session::get().shutdown();
  }
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
  // What memory implements (get_cap_flags reports the native connector's for mode file); not
  // user-defined links, mounting, references or asynchronous calls (HDF5's API tests skip those).
  c.cap_flags = H5VL_CAP_FLAG_ATTR_BASIC | H5VL_CAP_FLAG_DATASET_BASIC | H5VL_CAP_FLAG_FILE_BASIC |
                H5VL_CAP_FLAG_GROUP_BASIC | H5VL_CAP_FLAG_LINK_BASIC | H5VL_CAP_FLAG_OBJECT_BASIC |
                H5VL_CAP_FLAG_ITERATE | H5VL_CAP_FLAG_BY_IDX | H5VL_CAP_FLAG_CREATION_ORDER | H5VL_CAP_FLAG_HARD_LINKS |
                H5VL_CAP_FLAG_GET_PLIST | H5VL_CAP_FLAG_FLUSH_REFRESH | H5VL_CAP_FLAG_FILL_VALUES |
                H5VL_CAP_FLAG_STORAGE_SIZE | H5VL_CAP_FLAG_ATTR_MORE | H5VL_CAP_FLAG_DATASET_MORE | H5VL_CAP_FLAG_FILE_MORE |
                H5VL_CAP_FLAG_GROUP_MORE | H5VL_CAP_FLAG_LINK_MORE | H5VL_CAP_FLAG_OBJECT_MORE | H5VL_CAP_FLAG_STORED_DATATYPES |
                H5VL_CAP_FLAG_SOFT_LINKS | H5VL_CAP_FLAG_EXTERNAL_LINKS | H5VL_CAP_FLAG_TRACK_TIMES | H5VL_CAP_FLAG_FILTERS;
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
