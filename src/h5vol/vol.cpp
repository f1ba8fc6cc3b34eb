// Helpers the VOL callbacks share (vol.hpp).
#include "h5vol/vol.hpp"

#include <algorithm>
#include <cstring>
#include <ctime>

namespace cove::h5vol {

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
  o->via = parent.via;
  return o;
}

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

hid_t register_id(const Object& from, const std::shared_ptr<Node>& node) {
  auto* o = new_object(object_kind(*node), from.file, node);
  o->via = from.via;
  registering_own() = true;
  const hid_t id = H5VLwrap_register(o, id_type(*node));
  registering_own() = false;
  if (id < 0) {
    delete o;
    fail("H5VLwrap_register failed");
  }
  return id;
}

bool& registering_own() {
  thread_local bool own = false;
  return own;
}

void link_info(const Node& n, H5L_info2_t* info) {
  std::memset(info, 0, sizeof *info);
  info->cset = H5T_CSET_ASCII;
  if (n.kind == Node::Kind::soft) {
    info->type = H5L_TYPE_SOFT;
    info->u.val_size = n.target.size() + 1;
    return;
  }
  if (n.kind == Node::Kind::external) {
    info->type = H5L_TYPE_EXTERNAL;
    info->u.val_size = n.target.size();
    return;
  }
  info->type = H5L_TYPE_HARD;
  token_of(n, &info->u.token);
}

std::int64_t creation_time(hid_t ocpl) {
  hbool_t track = true;
  if (ocpl >= 0 && ocpl != H5P_DEFAULT) check(H5Pget_obj_track_times(ocpl, &track), "H5Pget_obj_track_times");
  return track ? static_cast<std::int64_t>(std::time(nullptr)) : 0;
}

std::string committed_path(const Object& o, hid_t type) {
  if (H5Tcommitted(type) <= 0) return {};
  char name[8] = {};
  if (H5VLget_connector_name(type, name, sizeof name) < 0 || std::strcmp(name, "cove") != 0) return {};
  const auto* t = static_cast<const Object*>(H5VLobject(type));
  if (!t || t->file != o.file || !t->node || t->node->kind != Node::Kind::datatype) return {};
  return t->node->path;
}

hid_t type_id_of(const Object& o, hid_t type, const std::string& named) {
  if (!named.empty())
    if (auto t = lookup(*o.file, o.file->root, named); t && t->kind == Node::Kind::datatype)
      return register_id(o, t);  // HDF5 makes it a committed datatype (H5T_construct_datatype)
  return check(H5Tcopy(type), "H5Tcopy");
}

namespace {
Object* open_external(const Object& o, const std::shared_ptr<Node>& base, const std::string& path, int depth) {
  auto hop = external_on_path(*o.file, base, path);
  if (!hop.link) return nullptr;
  if (depth >= 16) fail("more than 16 external links on the way to \"" + path + "\"");
  std::string value = hop.link->target;
  unsigned flags = 0;
  const char* file_name = nullptr;
  const char* obj_path = nullptr;
  if (H5Lunpack_elink_val(value.data(), value.size(), &flags, &file_name, &obj_path) < 0)
    fail("the external link " + hop.link->path + " has a malformed value");
  const std::string link = "the external link " + hop.link->path + " (file \"" + file_name + "\", object \"" + obj_path + "\")";
  auto& session = Session::get();
  if (session.config().settings_for(file_name).mode != Mode::memory)
    unsupported("following " + link + " to a file outside memory mode");
  // The file this process has open (shared, as natively), else opened with
  // the linking file's intent (as HDF5's default link access list says):
  // read-only its version, read-write a new version derived from it (over
  // the linking file's access list), published when its last object closes
  // (object_close). The objects opened through the link keep it, no handle does.
  auto f = session.open_file(file_name);
  if (!f) {
    f = o.file->writer ? session.open_rw(file_name, o.file->fapl.get()) : session.open(file_name, H5P_FILE_ACCESS_DEFAULT);
    --f->handles;
  }
  if (!f->memory) unsupported("following " + link + " to a file outside memory mode");
  const std::string target = hop.rest.empty() ? std::string(obj_path) : join_path(obj_path, hop.rest);
  Object at;
  at.file = f;
  at.node = f->root;
  if (auto* further = open_external(at, f->root, target, depth + 1)) return further;
  auto n = lookup(*f, f->root, target);
  if (!n) fail("no object \"" + target + "\" in file \"" + f->name + "\" (through " + link + ")");
  return new_object(object_kind(*n), f, n);
}
}  // namespace

Object* open_external(const Object& o, const std::shared_ptr<Node>& base, const std::string& path) {
  return open_external(o, base, path, 0);
}

}  // namespace cove::h5vol
