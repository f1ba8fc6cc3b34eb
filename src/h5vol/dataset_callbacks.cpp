// The VOL callbacks of datasets: create, open, read and write (transfer.hpp), queries.
#include "h5vol/vol.hpp"
#include "h5vol/lossy.hpp"
#include "h5vol/transform.hpp"
#include "h5vol/vlen.hpp"

#include <cove/error.hpp>

#include <cstring>
#include <tuple>

namespace cove::h5vol {

// ---- datasets ----
namespace {
// Lossy filters change the values natively: in memory the values are
// those (lossy.hpp), written by one process; lossless ones are kept in the
// creation list (the values are the same, stored raw).
void refuse_lossy_filters(const FileState& file, hid_t dcpl, const std::string& what) {
  const auto filter = lossy_filter(dcpl);
  if (filter.empty()) return;
  int size = 1;
  if (file.comm != MPI_COMM_NULL) MPI_Comm_size(file.comm, &size);
  if (size > 1) unsupported(filter + " (lossy) on " + what + " in memory, in a file of " + std::to_string(size) + " ranks");
}
bool allocated(const Node& d) {
  H5D_alloc_time_t when = H5D_ALLOC_TIME_LATE;
  if (H5Pget_alloc_time(d.dcpl.get(), &when) >= 0 && when == H5D_ALLOC_TIME_EARLY) return true;
  return d.written;
}
// Keeps a copy of the dataset access list for H5Dget_access_plist.
Object* with_access(Object* o, hid_t dapl) {
  std::unique_ptr<Object> guard(o);
  o->access = Hid(check(H5Pcopy(dapl == H5P_DEFAULT ? H5P_DATASET_ACCESS_DEFAULT : dapl), "H5Pcopy"));
  return guard.release();
}
}  // namespace
void* dataset_create(void* obj, const H5VL_loc_params_t* loc, const char* name, hid_t lcpl, hid_t type, hid_t space,
                     hid_t dcpl, hid_t dapl, hid_t dxpl, void** req) {
  return guarded<void*>(name ? "H5Dcreate" : "H5Dcreate_anon", nullptr, [&]() -> void* {
    auto& o = as(obj);
    // Mode both: a dataset rule may keep this one out of the file or out of memory.
    std::string path;
    Mode dmode = Mode::both;
    if (in_memory(o) && o.under && name) {
      auto [p, l] = parent_for_create(o, loc, name, lcpl);
      path = join_path(p->path, l);
      dmode = o.file->settings.dataset_mode(path);
    }
    void* under = nullptr;
    if (o.under && dmode != Mode::memory)
      under = native(H5VLdataset_create(o.under, loc, nvol(o), name, lcpl, type, space, dcpl, dapl, dxpl, req), "H5Dcreate");
    if (!in_memory(o)) return child(o, Object::Kind::dataset, nullptr, under);
    check_plist(lcpl, H5P_LINK_CREATE, "link creation property list");
    check_plist(dcpl, H5P_DATASET_CREATE, "dataset creation property list");
    check_plist(dapl, H5P_DATASET_ACCESS, "dataset access property list");
    if (!o.file->writer) fail("file \"" + o.file->name + "\" was opened for reading");
    std::shared_ptr<Node> parent;
    std::string leaf;
    if (name) std::tie(parent, leaf) = parent_for_create(o, loc, name, lcpl);
    auto d = std::make_shared<Node>();
    d->kind = Node::Kind::dataset;
    d->id = o.file->next_id++;
    d->mtime = creation_time(dcpl);
    if (parent) d->path = join_path(parent->path, leaf);
    d->type = TypeRef(type);
    d->named_type = committed_path(o, type);
    const auto cls = H5Sget_simple_extent_type(space);
    const std::string what = name ? d->path : "an anonymous dataset";
    d->null_space = cls == H5S_NULL;
    const int rank = check(H5Sget_simple_extent_ndims(space), "H5Sget_simple_extent_ndims");
    d->dims.resize(static_cast<std::size_t>(rank));
    d->maxdims.resize(static_cast<std::size_t>(rank));
    if (rank > 0) check(H5Sget_simple_extent_dims(space, d->dims.data(), d->maxdims.data()), "H5Sget_simple_extent_dims");
    if (rank > kMaxDims) unsupported(what + " of rank " + std::to_string(rank) + " (at most 10)");
    d->dcpl = Hid(check(H5Pcopy(dcpl == H5P_DEFAULT ? H5P_DATASET_CREATE_DEFAULT : dcpl), "H5Pcopy"));
    refuse_lossy_filters(*o.file, d->dcpl.get(), what);
    d->file_only = dmode == Mode::file;
    d->held = !d->file_only && o.file->settings.dataset_transfer(name ? d->path : "") != Transfer::deep;
    if (name) {
      d->var = d->path;
    } else {
      // An anonymous dataset's variable is its own per version: the version first (collective).
      Session::get().resolve(*o.file);
      d->var = "#anon/v" + std::to_string(o.file->version) + "/" + std::to_string(d->id);
    }
    if (is_vlen(d->type.get())) {
      check_vlen_type(d->type.get(), what);  // kept in the tree, no Cove variable
    } else if (!d->file_only) {
      define_dataset(*o.file, *d);
    }
    Session::get().resolve(*o.file);  // collective, like H5Dcreate
    if (parent)
      add_link(*o.file, parent, leaf, d);
    else
      o.file->index(d);
    return with_access(child(o, Object::Kind::dataset, d, under), dapl);
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
    auto base = resolve(o, loc);
    auto d = lookup(*o.file, base, name);
    if (!d)
      if (auto* x = open_external(o, base, name)) {
        if (x->node->kind == Node::Kind::dataset) return with_access(x, dapl);
        object_close(x, H5P_DEFAULT, nullptr);  // closes the file too when x was all that held it
        fail(std::string(name) + " is not a dataset");
      }
    if (!d) fail("no dataset \"" + std::string(name) + "\" in file \"" + o.file->name + "\"");
    if (d->kind != Node::Kind::dataset) fail(d->path + " is not a dataset");
    return with_access(child(o, Object::Kind::dataset, d, under), dapl);
  });
}
herr_t dataset_read(size_t count, void* dset[], hid_t mem_type[], hid_t mem_space[], hid_t file_space[], hid_t dxpl,
                    void* buf[], void** req) {
  return guarded<herr_t>("H5Dread", -1, [&] {
    for (size_t i = 0; i < count; ++i) {
      auto& o = as(dset[i]);
      const auto transform = in_memory(o) ? data_transform(dxpl) : std::string();
      if (!transform.empty() && is_vlen(o.node->type.get()))
        unsupported("a data transform (H5Pset_data_transform) on variable-length dataset " + o.node->path);
      if (!transform.empty()) {
        read_transformed(*o.file, *o.node, mem_type[i], mem_space[i], file_space[i], transform, buf[i]);
      } else if (in_memory(o) && is_vlen(o.node->type.get())) {
        read_vlen(*o.file, *o.node, mem_type[i], mem_space[i], file_space[i], buf[i], VlenAllocator::of(dxpl));
      } else if (in_memory(o)) {
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
      const auto transform = in_memory(o) ? data_transform(dxpl) : std::string();
      if (!transform.empty() && is_vlen(o.node->type.get()))
        unsupported("a data transform (H5Pset_data_transform) on variable-length dataset " + o.node->path);
      if (!transform.empty())
        write_transformed(*o.file, *o.node, mem_type[i], mem_space[i], file_space[i], transform, buf[i]);
      else if (in_memory(o) && is_vlen(o.node->type.get()))
        write_vlen(*o.file, *o.node, mem_type[i], mem_space[i], file_space[i], buf[i]);
      else if (in_memory(o))
        write_dataset(*o.file, *o.node, mem_type[i], mem_space[i], file_space[i], buf[i]);
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
      case H5VL_DATASET_GET_DAPL: {
        // As natively: the list it was opened with; a chunk cache only for a chunked dataset.
        const auto& o = as(obj);
        Hid dapl(check(o.access.get() >= 0 ? H5Pcopy(o.access.get()) : H5Pcreate(H5P_DATASET_ACCESS), "H5Pcopy"));
        if (H5Pget_layout(d.dcpl.get()) != H5D_CHUNKED)
          check(H5Pset_chunk_cache(dapl.get(), H5D_CHUNK_CACHE_NSLOTS_DEFAULT, H5D_CHUNK_CACHE_NBYTES_DEFAULT,
                                   H5D_CHUNK_CACHE_W0_DEFAULT), "H5Pset_chunk_cache");
        a->args.get_dapl.dapl_id = dapl.release();
        break;
      }
      case H5VL_DATASET_GET_DCPL:
        a->args.get_dcpl.dcpl_id = check(H5Pcopy(d.dcpl.get()), "H5Pcopy");
        break;
      case H5VL_DATASET_GET_SPACE:
        a->args.get_space.space_id = d.make_space();
        break;
      case H5VL_DATASET_GET_SPACE_STATUS:
        // "Allocated" in memory: some H5Dwrite put data into this version
        // (or the creation list allocates early), as natively for the default late allocation.
        *a->args.get_space_status.status = allocated(d) ? H5D_SPACE_STATUS_ALLOCATED : H5D_SPACE_STATUS_NOT_ALLOCATED;
        break;
      case H5VL_DATASET_GET_STORAGE_SIZE: {
        hsize_t n = 1;
        for (auto x : d.dims) n *= x;
        *a->args.get_storage_size.storage_size = allocated(d) ? n * H5Tget_size(d.type.get()) : 0;
        break;
      }
      case H5VL_DATASET_GET_TYPE:
        a->args.get_type.type_id = type_id_of(as(obj), d.type.get(), d.named_type);
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
    // As natively: only chunked datasets (and contiguous ones with external storage) change their extent.
    if (d.dcpl.get() >= 0) {
      const H5D_layout_t layout = H5Pget_layout(d.dcpl.get());
      if (layout == H5D_COMPACT) fail("H5Dset_extent: dataset " + d.path + " has compact storage");
      if (layout == H5D_CONTIGUOUS && H5Pget_external_count(d.dcpl.get()) <= 0)
        fail("H5Dset_extent: dataset " + d.path + " has contiguous storage");
    }
    for (std::size_t i = 0; i < d.dims.size(); ++i) {
      const auto n = a->args.set_extent.size[i];
      if (d.maxdims[i] != H5S_UNLIMITED && n > d.maxdims[i])
        fail("H5Dset_extent: " + std::to_string(n) + " exceeds dataset " + d.path + "'s maximum " +
             std::to_string(d.maxdims[i]) + " in dimension " + std::to_string(i));
    }
    const std::vector<hsize_t> old_dims = d.dims;
    if (!is_vlen(d.type.get())) drop_beyond_extent(*o.file, d, a->args.set_extent.size);
    for (std::size_t i = 0; i < d.dims.size(); ++i) d.dims[i] = a->args.set_extent.size[i];
    if (is_vlen(d.type.get())) reshape_vlen(d, old_dims);
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

}  // namespace cove::h5vol
