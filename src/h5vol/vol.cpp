// Helpers the VOL callbacks share (vol.hpp).
#include "h5vol/vol.hpp"

#include <algorithm>
#include <cstring>

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
  info->type = H5L_TYPE_HARD;
  token_of(n, &info->u.token);
}

}  // namespace cove::h5vol
