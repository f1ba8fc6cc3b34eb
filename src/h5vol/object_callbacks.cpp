// The VOL callbacks of objects in general (open, get, specific, close) and of
// committed datatypes (nodes of the tree in memory).
#include "h5vol/vol.hpp"

#include <cove/error.hpp>

#include "h5vol/lossy.hpp"
#include "h5vol/vlen.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <vector>

namespace cove::h5vol {

// ---- objects ----
namespace {
// The number of hard links to `target` in its file (each group counted once), as H5Oget_info's rc
// counts them natively, plus the process's H5Oincr/decr_refcount; the root has none but counts 1.
// A committed datatype also counts each dataset and attribute of its type.
unsigned reference_count(const FileState& f, const Node& target) {
  std::int64_t links = hard_links(f, target) + (&target == f.root.get() ? 1 : 0);
  if (links == 0) links = 1;  // an anonymous object (not linked yet) is held by its identifier
  if (target.kind == Node::Kind::datatype) links += type_users(f, target);
  return static_cast<unsigned>(std::max<std::int64_t>(0, links + target.ref_adjust));
}
void object_info(const Object& o, const Node& n, H5O_info2_t* info) {
  std::memset(info, 0, sizeof *info);
  info->fileno = o.file->fileno;
  token_of(n, &info->token);
  info->type = object_type(n);
  info->rc = reference_count(*o.file, n);
  info->num_attrs = n.attributes.size();
  info->atime = info->mtime = info->ctime = info->btime = static_cast<time_t>(n.mtime);
}
// H5Ovisit from `group` (paths under `prefix`): every object reachable by hard links, each once, a
// group's links in the index's order, depth first (as the native connector visits them).
herr_t visit_objects(const Object& o, const Node& group, const std::string& prefix, const H5VL_object_visit_args_t& v,
                     hid_t id, std::set<const Node*>& seen) {
  std::vector<std::pair<std::string, std::shared_ptr<Node>>> list;
  if (v.idx_type == H5_INDEX_CRT_ORDER) {
    for (const auto& leaf : group.link_order) list.emplace_back(leaf, group.links.at(leaf));
  } else {
    list.assign(group.links.begin(), group.links.end());
  }
  if (v.order == H5_ITER_DEC) std::reverse(list.begin(), list.end());
  for (const auto& [leaf, n] : list) {
    if (n->kind == Node::Kind::soft || n->kind == Node::Kind::external) continue;
    if (!seen.insert(n.get()).second) continue;
    const std::string name = prefix + leaf;
    H5O_info2_t info;
    object_info(o, *n, &info);
    herr_t ret = v.op(id, name.c_str(), &info, v.op_data);
    if (ret == 0 && n->kind == Node::Kind::group) ret = visit_objects(o, *n, name + "/", v, id, seen);
    if (ret != 0) return ret;
  }
  return 0;
}
}  // namespace
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
  // A file opened only through an external link (no handle of its own)
  // closes with its last object, as natively: read-write, its version is
  // published then (a file with a handle published at its H5Fclose).
  std::shared_ptr<FileState> file = std::move(o->file);
  delete o;
  if (file && file.use_count() == 1 && file->handles <= 0 && file->writer && file->memory && !file->published) {
    const herr_t closed = guarded<herr_t>("H5Fclose", -1, [&] {
      filter_lossy(*file);
      Session::get().close(*file);
      return herr_t{0};
    });
    if (closed < 0) r = closed;
  }
  return r;
}
void* object_open(void* obj, const H5VL_loc_params_t* loc, H5I_type_t* type, hid_t dxpl, void** req) {
  return guarded<void*>("H5Oopen", nullptr, [&]() -> void* {
    auto& o = as(obj);
    if (!in_memory(o)) {
      void* under = native(H5VLobject_open(o.under, loc, nvol(o), type, dxpl, req), "H5Oopen");
      return child(o, kind_of(*type), nullptr, under);
    }
    if (loc->type == H5VL_OBJECT_BY_NAME && loc->loc_data.loc_by_name.name)
      if (auto* x = open_external(o, o.node, loc->loc_data.loc_by_name.name)) {
        *type = id_type(*x->node);
        return x;
      }
    auto n = resolve(o, loc);
    *type = id_type(*n);
    return child(o, object_kind(*n), n, nullptr);
  });
}
namespace {
// A deep copy of `n` for `to` (H5Ocopy): groups with their links (a hard
// link to an object copied already stays one object), attributes, committed
// types, and datasets as new Cove variables with the source's data.
// `flags`: H5Pset_copy_object's (shallow hierarchy, without attributes,
// expand soft links); `depth`: 0 for the object copied itself.
std::shared_ptr<Node> clone(FileState& from, std::shared_ptr<Node> n, FileState& to,
                            std::map<const Node*, std::shared_ptr<Node>>& done, unsigned flags, int depth) {
  if (n->kind == Node::Kind::soft && (flags & H5O_COPY_EXPAND_SOFT_LINK_FLAG)) {
    // The object it names is copied in its place (a dangling one stays a soft link).
    auto parent_path = n->path.substr(0, n->path.rfind('/'));
    auto target = lookup(from, lookup(from, from.root, parent_path.empty() ? "/" : parent_path), n->target);
    if (target) n = target;
  }
  if (auto it = done.find(n.get()); it != done.end()) return it->second;
  auto c = std::make_shared<Node>();
  done[n.get()] = c;
  c->kind = n->kind;
  c->id = to.next_id++;
  c->target = n->target;
  c->type = n->type;
  if (n->dcpl.get() >= 0) c->dcpl = Hid(check(H5Pcopy(n->dcpl.get()), "H5Pcopy"));
  for (const auto& a : (flags & H5O_COPY_WITHOUT_ATTR_FLAG) ? std::vector<std::shared_ptr<Attribute>>{} : n->attributes) {
    auto b = std::make_shared<Attribute>();
    b->name = a->name;
    b->type = a->type;
    b->space = Hid(check(H5Scopy(a->space.get()), "H5Scopy"));
    b->data = a->data;
    b->named_type = a->named_type;
    b->name_cset = a->name_cset;
    b->corder = c->next_corder++;
    c->attributes.push_back(std::move(b));
  }
  if (n->kind == Node::Kind::dataset) {
    c->dims = n->dims;
    c->maxdims = n->maxdims;
    c->null_space = n->null_space;
    c->vlen = n->vlen;
    c->named_type = n->named_type;
    c->mtime = n->mtime;  // copied with the object header, as natively
    c->written = n->written && !n->vlen.empty();
    c->var = "#copy/v" + std::to_string(to.version) + "/" + std::to_string(c->id);
    if (!is_vlen(c->type.get()) && !n->file_only) {
      define_dataset(to, *c);
      if (n->written && !c->null_space) {  // the source's data, read and written whole
        hsize_t count = 1;
        for (auto x : n->dims) count *= x;
        std::vector<std::byte> buf(static_cast<std::size_t>(count) * H5Tget_size(n->type.get()));
        read_dataset(from, *n, n->type.get(), H5S_ALL, H5S_ALL, buf.data());
        write_dataset(to, *c, n->type.get(), H5S_ALL, H5S_ALL, buf.data());
      }
    }
  }
  // A shallow copy takes the group's members, not theirs.
  if ((flags & H5O_COPY_SHALLOW_HIERARCHY_FLAG) && depth >= 1) return c;
  for (const auto& leaf : n->link_order) {
    auto child = clone(from, n->links.at(leaf), to, done, flags, depth + 1);
    c->links[leaf] = child;
    c->link_order.push_back(leaf);
    c->link_corder[leaf] = c->next_link_corder++;
  }
  return c;
}
}  // namespace
herr_t object_copy(void* src_obj, const H5VL_loc_params_t* src_loc, const char* src_name, void* dst_obj,
                   const H5VL_loc_params_t* dst_loc, const char* dst_name, hid_t ocpypl, hid_t lcpl, hid_t dxpl,
                   void** req) {
  return guarded<herr_t>("H5Ocopy", -1, [&]() -> herr_t {
    auto& s = as(src_obj);
    auto& d = as(dst_obj);
    if (!in_memory(s) && !in_memory(d))
      return H5VLobject_copy(s.under, src_loc, src_name, d.under, dst_loc, dst_name, nvol(s), ocpypl, lcpl, dxpl, req);
    if (!in_memory(s) || !in_memory(d)) unsupported("H5Ocopy between a file in memory and one on disk");
    if (d.under) unsupported("H5Ocopy in mode both");
    if (!d.file->writer) fail("file \"" + d.file->name + "\" was opened for reading");
    auto base = resolve(s, src_loc);
    auto n = lookup(*s.file, base, src_name);
    FileState* from = s.file.get();
    // The source named through an external link: the object in its file,
    // closed after the copy (and its file with it, as natively).
    struct Close {
      void operator()(Object* x) const { object_close(x, H5P_DEFAULT, nullptr); }
    };
    std::unique_ptr<Object, Close> through;
    if (!n) {
      through.reset(open_external(s, base, src_name));
      if (through) {
        n = through->node;
        from = through->file.get();
      }
    }
    if (!n) fail("no object \"" + std::string(src_name) + "\" to copy in file \"" + s.file->name + "\"");
    unsigned intermediate = 0;
    if (lcpl >= 0 && lcpl != H5P_DEFAULT) check(H5Pget_create_intermediate_group(lcpl, &intermediate), "H5Pget_create_intermediate_group");
    auto [parent, leaf] = parent_for_link(*d.file, resolve(d, dst_loc), dst_name, intermediate != 0);
    Session::get().resolve(*d.file);
    unsigned flags = 0;
    if (ocpypl >= 0 && ocpypl != H5P_DEFAULT) check(H5Pget_copy_object(ocpypl, &flags), "H5Pget_copy_object");
    std::map<const Node*, std::shared_ptr<Node>> done;
    auto c = clone(*from, n, *d.file, done, flags, 0);
    add_link(*d.file, parent, leaf, c);
    return herr_t{0};
  });
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
      f->via = o.via;
      *a->args.get_file.file = f;
      return herr_t{0};
    }
    if (!in_memory(o)) return H5VLobject_get(o.under, loc, nvol(o), a, dxpl, req);
    switch (a->op_type) {
      case H5VL_OBJECT_GET_FILE:
        break;
      case H5VL_OBJECT_GET_NAME: {
        auto n = resolve(o, loc);
        // As natively, an object whose link was deleted has no name (until the file is opened again).
        const bool linked = !n->path.empty() && lookup(*o.file, o.file->root, n->path) == n;
        copy_name(linked ? n->path : std::string(), a->args.get_name.buf, a->args.get_name.buf_size,
                  a->args.get_name.name_len);
        break;
      }
      case H5VL_OBJECT_GET_TYPE:
        *a->args.get_type.obj_type = object_type(*resolve(o, loc));
        break;
      case H5VL_OBJECT_GET_INFO: {
        object_info(o, *resolve(o, loc), a->args.get_info.oinfo);
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
        return herr_t{0};
      case H5VL_OBJECT_CHANGE_REF_COUNT: {
        if (!o.file->writer) fail("H5Oincr_refcount / H5Odecr_refcount in file \"" + o.file->name + "\" opened for reading");
        auto n = resolve(o, loc);
        if (reference_count(*o.file, *n) + a->args.change_rc.delta < 1)
          unsupported("H5Odecr_refcount to 0 (deleting " + n->path + ") in memory");
        n->ref_adjust += a->args.change_rc.delta;
        return herr_t{0};
      }
      case H5VL_OBJECT_VISIT: {
        // The starting object first, as ".", then what its links reach when it is a group.
        const auto& v = a->args.visit;
        auto start = resolve(o, loc);
        const hid_t id = register_id(o, start);
        std::set<const Node*> seen{start.get()};
        H5O_info2_t info;
        object_info(o, *start, &info);
        herr_t ret = v.op(id, ".", &info, v.op_data);
        if (ret == 0 && start->kind == Node::Kind::group) ret = visit_objects(o, *start, "", v, id, seen);
        H5Idec_ref(id);
        return ret;
      }
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
    check_plist(lcpl, H5P_LINK_CREATE, "link creation property list");
    check_plist(tcpl, H5P_DATATYPE_CREATE, "datatype creation property list");
    check_plist(tapl, H5P_DATATYPE_ACCESS, "datatype access property list");
    if (!o.file->writer) fail("file \"" + o.file->name + "\" was opened for reading");
    // In memory: a node of the tree holding the type (published with the version).
    auto t = std::make_shared<Node>();
    t->kind = Node::Kind::datatype;
    t->id = o.file->next_id++;
    t->type = TypeRef(type);
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
    auto base = resolve(o, loc);
    auto t = lookup(*o.file, base, name);
    if (!t)
      if (auto* x = open_external(o, base, name)) {
        if (x->node->kind == Node::Kind::datatype) return x;
        object_close(x, H5P_DEFAULT, nullptr);  // closes the file too when x was all that held it
      }
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
