#include "h5vol/transfer.hpp"

#include "h5vol/errors.hpp"
#include "h5vol/timing.hpp"
#include "h5vol/vlen.hpp"

#include <cove/error.hpp>

#include <H5Tdevelop.h>

#include <algorithm>
#include <cstring>

namespace cove::h5vol {
namespace {

std::string box_text(const Box& b) { return b.to_string(); }

bool needs_background(hid_t type) { return H5Tdetect_class(type, H5T_COMPOUND) > 0; }

void reject_variable_length(hid_t type, const char* what) {
  if (H5Tdetect_class(type, H5T_VLEN) > 0 || H5Tis_variable_str(type) > 0)
    fail(std::string(what) + ": variable-length types are not supported by the Cove connector");
  if (H5Tdetect_class(type, H5T_REFERENCE) > 0)
    fail(std::string(what) + ": reference types are not supported by the Cove connector");
}

// Converts n elements in `buf` (sized for the larger of the two types) from
// `src` to `dst`; `background`, when given, holds the n elements' present
// values in `dst` (a compound written from a subset of its fields keeps the others).
void convert(hid_t src, hid_t dst, std::size_t n, std::vector<std::byte>& buf, std::vector<std::byte>* background = nullptr) {
  if (n == 0 || H5Tequal(src, dst) > 0) return;
  std::vector<std::byte> bkg;
  if (needs_background(src) || needs_background(dst)) bkg.assign(n * std::max(H5Tget_size(src), H5Tget_size(dst)), std::byte{0});
  if (background && !bkg.empty()) std::memcpy(bkg.data(), background->data(), std::min(bkg.size(), background->size()));
  if (H5Tconvert(src, dst, n, buf.data(), bkg.empty() ? nullptr : bkg.data(), H5P_DEFAULT) < 0)
    fail("HDF5 cannot convert between the dataset's type and the memory type");
}

struct Blocks {
  std::vector<Box> boxes;
  bool points = false;
};

// A regular hyperslab as boxes: per dimension, the blocks merge into one
// range where they touch (stride == block) or there is one of them.
Blocks regular_blocks(hid_t space, int rank) {
  const auto r = static_cast<std::size_t>(rank);
  std::vector<hsize_t> start(r), stride(r), count(r), block(r);
  check(H5Sget_regular_hyperslab(space, start.data(), stride.data(), count.data(), block.data()),
        "H5Sget_regular_hyperslab");
  std::vector<std::vector<std::pair<Index, Index>>> ranges(r);  // per dimension: (start, count)
  for (std::size_t d = 0; d < r; ++d) {
    if (count[d] == 1 || stride[d] == block[d]) {
      ranges[d].push_back({static_cast<Index>(start[d]), static_cast<Index>(count[d] * block[d])});
    } else {
      for (hsize_t i = 0; i < count[d]; ++i)
        ranges[d].push_back({static_cast<Index>(start[d] + i * stride[d]), static_cast<Index>(block[d])});
    }
  }
  Blocks out;
  std::vector<std::size_t> at(r, 0);
  std::vector<Index> s(r), c(r);
  while (true) {
    for (std::size_t d = 0; d < r; ++d) {
      s[d] = ranges[d][at[d]].first;
      c[d] = ranges[d][at[d]].second;
    }
    out.boxes.push_back(Box::from_start_count(s, c));
    std::size_t d = r;
    while (d > 0 && ++at[d - 1] == ranges[d - 1].size()) at[--d] = 0;
    if (d == 0) break;
  }
  return out;
}

// The blocks of `space`'s selection as boxes; a scalar space is the 1-D box [0, 1).
Blocks blocks_of(hid_t space) {
  Blocks out;
  const int rank = check(H5Sget_simple_extent_ndims(space), "H5Sget_simple_extent_ndims");
  if (rank == 0) {
    if (H5Sget_select_npoints(space) > 0) out.boxes.push_back(Box::from_start_count(std::vector<Index>{0}, std::vector<Index>{1}));
    return out;
  }
  std::vector<Index> start(static_cast<std::size_t>(rank)), count(static_cast<std::size_t>(rank));
  switch (H5Sget_select_type(space)) {
    case H5S_SEL_NONE:
      return out;
    case H5S_SEL_ALL: {
      std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
      H5Sget_simple_extent_dims(space, dims.data(), nullptr);
      for (int d = 0; d < rank; ++d) count[d] = static_cast<Index>(dims[d]);
      out.boxes.push_back(Box::from_start_count(start, count));
      return out;
    }
    case H5S_SEL_HYPERSLABS: {
      // A selection that fills its bounding box (start/count with unit
      // blocks lists one block per element) is one box.
      std::vector<hsize_t> lo(static_cast<std::size_t>(rank)), hi(static_cast<std::size_t>(rank));
      check(H5Sget_select_bounds(space, lo.data(), hi.data()), "H5Sget_select_bounds");
      hsize_t volume = 1;
      for (int d = 0; d < rank; ++d) volume *= hi[d] - lo[d] + 1;
      if (volume == static_cast<hsize_t>(H5Sget_select_npoints(space))) {
        for (int d = 0; d < rank; ++d) {
          start[d] = static_cast<Index>(lo[d]);
          count[d] = static_cast<Index>(hi[d] - lo[d] + 1);
        }
        out.boxes.push_back(Box::from_start_count(start, count));
        return out;
      }
      if (H5Sis_regular_hyperslab(space) > 0) return regular_blocks(space, rank);
      const auto nblocks = static_cast<hsize_t>(check(H5Sget_select_hyper_nblocks(space), "H5Sget_select_hyper_nblocks"));
      std::vector<hsize_t> list(nblocks * 2 * static_cast<hsize_t>(rank));
      check(H5Sget_select_hyper_blocklist(space, 0, nblocks, list.data()), "H5Sget_select_hyper_blocklist");
      for (hsize_t b = 0; b < nblocks; ++b) {
        const hsize_t* c = list.data() + b * 2 * static_cast<hsize_t>(rank);
        for (int d = 0; d < rank; ++d) {
          start[d] = static_cast<Index>(c[d]);
          count[d] = static_cast<Index>(c[rank + d] - c[d] + 1);
        }
        out.boxes.push_back(Box::from_start_count(start, count));
      }
      return out;
    }
    case H5S_SEL_POINTS: {
      out.points = true;
      const auto npoints = static_cast<hsize_t>(check(H5Sget_select_elem_npoints(space), "H5Sget_select_elem_npoints"));
      std::vector<hsize_t> list(npoints * static_cast<hsize_t>(rank));
      check(H5Sget_select_elem_pointlist(space, 0, npoints, list.data()), "H5Sget_select_elem_pointlist");
      std::fill(count.begin(), count.end(), Index{1});
      for (hsize_t p = 0; p < npoints; ++p) {
        for (int d = 0; d < rank; ++d) start[d] = static_cast<Index>(list[p * static_cast<hsize_t>(rank) + d]);
        out.boxes.push_back(Box::from_start_count(start, count));
      }
      return out;
    }
    default:
      fail("this kind of selection is not supported by the Cove connector");
  }
}

void check_inside(const Node& dataset, const Blocks& blocks) {
  const auto rank = dataset.dims.size();
  for (const auto& b : blocks.boxes) {
    if (rank == 0) continue;
    if (static_cast<std::size_t>(b.ndim) != rank) fail("the file selection's rank differs from the dataset's");
    for (std::size_t d = 0; d < rank; ++d)
      if (b.hi[d] > static_cast<Index>(dataset.dims[d]))
        fail("the selection " + box_text(b) + " reaches outside dataset " + dataset.path + "'s extent in dimension " +
             std::to_string(d) + " (" + std::to_string(dataset.dims[d]) + ")");
  }
}

// A dataspace of bb's shape selecting `boxes` shifted to bb's origin.
Hid local_selection(const Box& bb, const std::vector<Box>& boxes) {
  std::vector<hsize_t> dims(static_cast<std::size_t>(bb.ndim)), start(dims.size()), count(dims.size());
  for (int d = 0; d < bb.ndim; ++d) dims[d] = static_cast<hsize_t>(bb.count(d));
  Hid space(check(H5Screate_simple(bb.ndim, dims.data(), nullptr), "H5Screate_simple"));
  check(H5Sselect_none(space.get()), "H5Sselect_none");
  for (const auto& b : boxes) {
    for (int d = 0; d < bb.ndim; ++d) {
      start[d] = static_cast<hsize_t>(b.lo[d] - bb.lo[d]);
      count[d] = static_cast<hsize_t>(b.count(d));
    }
    check(H5Sselect_hyperslab(space.get(), H5S_SELECT_OR, start.data(), nullptr, count.data(), nullptr),
          "H5Sselect_hyperslab");
  }
  return space;
}

struct ScatterSource {
  const void* data;
  std::size_t bytes;
  bool given = false;
};

herr_t scatter_source(const void** src, size_t* bytes, void* op_data) {
  auto* s = static_cast<ScatterSource*>(op_data);
  if (s->given) return -1;
  *src = s->data;
  *bytes = s->bytes;
  s->given = true;
  return 0;
}

void scatter(hid_t type, hid_t space, const void* src, std::size_t bytes, void* dst) {
  ScatterSource s{src, bytes};
  check(H5Dscatter(scatter_source, &s, type, space, dst), "H5Dscatter");
}

void gather(hid_t type, hid_t space, const void* src, std::size_t bytes, void* dst) {
  check(H5Dgather(space, src, type, bytes, dst, nullptr, nullptr), "H5Dgather");
}

// True when the memory selection is the whole memory space, of the same
// type as the file: the buffer then holds the selected elements in order,
// and one contiguous file box moves straight from or into it.
bool direct(hid_t mem_type, hid_t mspace, hid_t ftype, const Blocks& blocks) {
  if (blocks.points || blocks.boxes.size() != 1 || H5Tequal(mem_type, ftype) <= 0) return false;
  const auto selected = H5Sget_select_npoints(mspace);
  return selected >= 0 && selected == H5Sget_simple_extent_npoints(mspace);
}

Hid dataset_space(const Node& dataset, hid_t file_space) {
  if (file_space == H5S_ALL) return Hid(dataset.make_space());
  return Hid(check(H5Scopy(file_space), "H5Scopy"));
}

// Hands pieces to Cove: `pieces` are (box, offset into data), `bytes` in all.
// deep: put. local: one copy into this producer's shared memory, put_local
// from it. shallow: put_local of `data` itself (the program's buffer).
void send(FileState& file, const Node& dataset, Transfer transfer, const std::vector<std::pair<Box, std::size_t>>& pieces,
          const void* data, std::size_t bytes) {
  auto& session = Session::get();
  auto& client = session.client();
  const auto var = file.variable(dataset);
  const auto* base = static_cast<const std::byte*>(data);
  auto size = [&](std::size_t i) {
    return (i + 1 < pieces.size() ? pieces[i + 1].second : bytes) - pieces[i].second;
  };
  if (transfer == Transfer::deep) {
    for (std::size_t i = 0; i < pieces.size(); ++i)
      client.put(var, file.version, pieces[i].first, base + pieces[i].second, size(i));
    return;
  }
  Held& held = session.hold(file, dataset);
  if (transfer == Transfer::local) {
    SharedBuffer copy = client.allocate(bytes);
    std::memcpy(copy.data(), data, bytes);
    base = copy.data();
    held.buffers.push_back(std::move(copy));
  }
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    client.put_local(var, file.version, pieces[i].first, base + pieces[i].second, size(i));
    held.boxes.push_back(pieces[i].first);
  }
}

// A held dataset's version that its producer retired (wrote a later one):
// the error that says so, or "" while the version is served.
std::string retired(FileState& file, const Node& dataset) {
  if (!dataset.held) return {};
  try {
    const auto newest = Session::get().client().get_meta_latest(file.retired_key(dataset), 0).version;
    if (newest < file.version) return {};
    return "dataset " + dataset.path + " of file \"" + file.name + "\" version " + std::to_string(file.version) +
           " was retired by its producer (transfer shallow or local: a version goes when the dataset is written in a "
           "later one; version " + std::to_string(newest) + " and older are gone)";
  } catch (const Error& e) {
    if (e.code() == Code::NotFound) return {};
    throw;
  }
}

}  // namespace

DType dtype_of(hid_t type) {
  const auto size = H5Tget_size(type);
  const auto cls = H5Tget_class(type);
  const bool le = H5Tget_order(type) == H5T_ORDER_LE;
  if (cls == H5T_INTEGER && le) {
    const bool is_signed = H5Tget_sign(type) == H5T_SGN_2;
    switch (size) {
      case 1: return is_signed ? DTypeKind::Int8 : DTypeKind::UInt8;
      case 2: return is_signed ? DTypeKind::Int16 : DTypeKind::UInt16;
      case 4: return is_signed ? DTypeKind::Int32 : DTypeKind::UInt32;
      case 8: return is_signed ? DTypeKind::Int64 : DTypeKind::UInt64;
      default: break;
    }
  }
  if (cls == H5T_FLOAT && le && H5Tequal(type, H5T_IEEE_F32LE) > 0) return DTypeKind::Float32;
  if (cls == H5T_FLOAT && le && H5Tequal(type, H5T_IEEE_F64LE) > 0) return DTypeKind::Float64;
  return DType::opaque(size);
}

std::vector<std::byte> fill_value(const Node& dataset) {
  std::vector<std::byte> fill(H5Tget_size(dataset.type.get()), std::byte{0});
  // Fill time never: natively the cells are undefined until written; here zeros (never the fill value).
  H5D_fill_time_t when = H5D_FILL_TIME_IFSET;
  if (H5Pget_fill_time(dataset.dcpl.get(), &when) >= 0 && when == H5D_FILL_TIME_NEVER) return fill;
  H5D_fill_value_t status = H5D_FILL_VALUE_UNDEFINED;
  if (H5Pfill_value_defined(dataset.dcpl.get(), &status) >= 0 && status != H5D_FILL_VALUE_UNDEFINED)
    check(H5Pget_fill_value(dataset.dcpl.get(), dataset.type.get(), fill.data()), "H5Pget_fill_value");
  return fill;
}

void drop_beyond_extent(FileState& file, Node& dataset, const hsize_t* size) {
  const std::size_t r = dataset.dims.size();
  std::vector<Box> dropped;  // old extent minus new: one slab per dimension that shrinks
  for (std::size_t i = 0; i < r; ++i) {
    if (size[i] >= dataset.dims[i]) continue;
    Box b;
    b.ndim = static_cast<int>(r);
    for (std::size_t j = 0; j < r; ++j) {
      b.lo[j] = j == i ? static_cast<Index>(size[i]) : 0;
      b.hi[j] = static_cast<Index>(j < i ? std::min(size[j], dataset.dims[j]) : dataset.dims[j]);
    }
    if (!b.empty()) dropped.push_back(b);
  }
  if (!dropped.empty() && file.rank == 0) {
    const hid_t type = dataset.type.get();
    const std::vector<std::byte> fill = fill_value(dataset);
    Hid space(dataset.make_space());
    for (const Box& b : dropped) {
      // In slices along the first dimension, of about 64 MiB at most.
      const auto row = static_cast<std::uint64_t>(b.volume() / (b.hi[0] - b.lo[0])) * fill.size();
      const Index rows = std::max<Index>(1, static_cast<Index>((std::uint64_t{64} << 20) / std::max<std::uint64_t>(row, 1)));
      for (Index at = b.lo[0]; at < b.hi[0]; at += rows) {
        std::vector<hsize_t> start(r), count(r);
        for (std::size_t j = 0; j < r; ++j) {
          start[j] = static_cast<hsize_t>(j == 0 ? at : b.lo[j]);
          count[j] = static_cast<hsize_t>(j == 0 ? std::min(rows, b.hi[0] - at) : b.hi[j] - b.lo[j]);
        }
        check(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr),
              "H5Sselect_hyperslab");
        Hid mem(check(H5Screate_simple(static_cast<int>(r), count.data(), nullptr), "H5Screate_simple"));
        const auto n = static_cast<std::size_t>(check(H5Sget_select_npoints(space.get()), "H5Sget_select_npoints"));
        std::vector<std::byte> values(n * fill.size());
        for (std::size_t k = 0; k < n; ++k) std::memcpy(values.data() + k * fill.size(), fill.data(), fill.size());
        write_dataset(file, dataset, type, mem.get(), space.get(), values.data());
      }
    }
  }
  if (!dropped.empty() && file.comm != MPI_COMM_NULL) MPI_Barrier(file.comm);
}

namespace {
// A dataset's Cove variable as its producer defines it: its element type,
// rank, no global shape, and its fill value.
VariableDefinition definition_of(const Node& dataset) {
  VariableDefinition d;
  d.dtype = dtype_of(dataset.type.get());
  d.ndim = std::max<int>(1, static_cast<int>(dataset.dims.size()));
  // Elements above 1 MiB go without one (it travels in the define
  // request): their unwritten cells fail to read, naming them.
  if (H5Tget_size(dataset.type.get()) <= (std::size_t{1} << 20)) d.fill = fill_value(dataset);
  return d;
}
}  // namespace

void define_dataset(FileState& file, const Node& dataset) {
  reject_variable_length(dataset.type.get(), dataset.path.c_str());
  const auto var = file.variable(dataset);
  if (file.defined.count(var)) return;
  auto& defined = Session::get().defined();
  if (!defined.count(var)) {
    PhaseTimer timer("define");
    const VariableDefinition d = definition_of(dataset);
    VariableOptions options;
    options.fill = d.fill;
    options.with_first_put = true;  // no request of its own: the first H5Dwrite's put carries it
    Session::get().client().define(var, d.dtype, d.ndim, {}, options);
    defined.insert(var);
  }
  file.defined.insert(var);
}

void remember_datasets(const FileState& file) {
  if (!file.memory) return;
  auto& client = Session::get().client();
  for (const auto& [id, weak] : file.by_id) {
    const auto n = weak.lock();
    // Those some H5Dwrite defined; variable-length ones live in the metadata itself.
    if (!n || n->kind != Node::Kind::dataset || !n->written || n->file_only || n->var.empty() ||
        H5Tdetect_class(n->type.get(), H5T_VLEN) > 0 || H5Tis_variable_str(n->type.get()) > 0 ||
        H5Tdetect_class(n->type.get(), H5T_REFERENCE) > 0)
      continue;
    client.remember_definition(file.variable(*n), definition_of(*n));
  }
}

// The checks H5Dwrite and H5Dread share: the memory type, matching
// selection sizes, and the file selection's blocks inside the extent.
struct Selection {
  Hid fspace;
  hid_t mspace;
  std::size_t n;
  Blocks blocks;
};

Selection select(const Node& dataset, hid_t mem_type, hid_t mem_space, hid_t file_space) {
  reject_variable_length(mem_type, "the memory type");
  Hid fspace = dataset_space(dataset, file_space);
  const hid_t mspace = mem_space == H5S_ALL ? fspace.get() : mem_space;
  const auto n = static_cast<std::size_t>(check(H5Sget_select_npoints(fspace.get()), "H5Sget_select_npoints"));
  const auto m = static_cast<std::size_t>(check(H5Sget_select_npoints(mspace), "H5Sget_select_npoints"));
  if (n != m) fail("the memory selection has " + std::to_string(m) + " elements, the file selection " + std::to_string(n));
  auto blocks = blocks_of(fspace.get());
  check_inside(dataset, blocks);
  return {std::move(fspace), mspace, n, std::move(blocks)};
}

void write_dataset(FileState& file, Node& dataset, hid_t mem_type, hid_t mem_space, hid_t file_space,
                   const void* buf) {
  PhaseTimer timer("H5Dwrite");
  if (!file.writer) fail("file \"" + file.name + "\" was opened read-only");
  auto [fspace, mspace, n, blocks] = select(dataset, mem_type, mem_space, file_space);
  if (n == 0 || dataset.file_only) return;
  // A compound written from a subset of its fields: the other fields keep
  // their present values (read first, as HDF5 does for a file), not zeros.
  std::vector<std::byte> background;
  const hid_t ftype0 = dataset.type.get();
  if (H5Tget_class(mem_type) == H5T_COMPOUND && H5Tget_class(ftype0) == H5T_COMPOUND && H5Tequal(mem_type, ftype0) <= 0 &&
      H5Tget_nmembers(mem_type) < H5Tget_nmembers(ftype0)) {
    background.resize(n * H5Tget_size(ftype0));
    const hsize_t count = n;
    Hid seq(check(H5Screate_simple(1, &count, nullptr), "H5Screate_simple"));
    read_dataset(file, dataset, ftype0, seq.get(), fspace.get(), background.data());
  }
  dataset.written = true;
  // For this writer's own reads before the close (cells outside read as the fill value).
  if (!dataset.written_overflow) {
    if (dataset.written_boxes.size() + blocks.boxes.size() > 4096) {
      dataset.written_overflow = true;
      dataset.written_boxes.clear();
    } else {
      dataset.written_boxes.insert(dataset.written_boxes.end(), blocks.boxes.begin(), blocks.boxes.end());
    }
  }
  if (!file.version_known) fail("file \"" + file.name + "\": H5Dwrite before the version is known (the dataset was not created collectively)");
  define_dataset(file, dataset);
  const hid_t ftype = dataset.type.get();
  const std::size_t msize = H5Tget_size(mem_type), fsize = H5Tget_size(ftype);
  const Transfer transfer = file.settings.dataset_transfer(dataset.path);
  if (direct(mem_type, mspace, ftype, blocks)) {
    send(file, dataset, transfer, {{blocks.boxes[0], 0}}, buf, n * fsize);
    return;
  }
  std::vector<std::byte> g(n * std::max(msize, fsize));
  gather(mem_type, mspace, buf, n * msize, g.data());
  convert(mem_type, ftype, n, g, background.empty() ? nullptr : &background);
  // Shallow needs the elements in the file's type and order: they are made
  // here, so they are held as a local copy (the program's buffer is free at once).
  const Transfer made = transfer == Transfer::shallow ? Transfer::local : transfer;
  std::vector<std::pair<Box, std::size_t>> pieces;
  if (blocks.points) {
    for (std::size_t i = 0; i < n; ++i) pieces.push_back({blocks.boxes[i], i * fsize});
    send(file, dataset, made, pieces, g.data(), n * fsize);
    return;
  }
  if (blocks.boxes.size() == 1) {
    send(file, dataset, made, {{blocks.boxes[0], 0}}, g.data(), n * fsize);
    return;
  }
  // The blocks' elements in the order of each block, one after the other.
  const Box bb = bounding_box(blocks.boxes);
  std::vector<std::byte> scratch(static_cast<std::size_t>(bb.volume()) * fsize);
  Hid all = local_selection(bb, blocks.boxes);
  scatter(ftype, all.get(), g.data(), n * fsize, scratch.data());
  std::size_t at = 0;
  for (const auto& b : blocks.boxes) {
    Hid one = local_selection(bb, {b});
    const auto bytes = static_cast<std::size_t>(b.volume()) * fsize;
    gather(ftype, one.get(), scratch.data(), bytes, g.data() + at);
    pieces.push_back({b, at});
    at += bytes;
  }
  send(file, dataset, made, pieces, g.data(), at);
}

namespace {
// Copies the elements of `sub` (inside `outer`) from `src` (sub's elements
// in C order) to their places in `dst` (outer's elements in C order).
void copy_into(const std::byte* src, const Box& sub, std::byte* dst, const Box& outer, std::size_t esize) {
  const int r = sub.ndim;
  const auto row = static_cast<std::size_t>(sub.count(r - 1)) * esize;
  std::vector<Index> at(sub.lo.begin(), sub.lo.begin() + r);
  while (true) {
    std::size_t off = 0;
    for (int d = 0; d < r; ++d) off = off * static_cast<std::size_t>(outer.count(d)) + static_cast<std::size_t>(at[d] - outer.lo[d]);
    std::memcpy(dst + off * esize, src, row);
    src += row;
    int d = r - 2;
    for (; d >= 0; --d) {
      if (++at[d] < sub.hi[d]) break;
      at[d] = sub.lo[d];
    }
    if (d < 0) return;
  }
}

// Whether this process alone writes the file (its own writes are all it can know of).
bool alone(const FileState& file) {
  int size = 1;
  if (file.comm != MPI_COMM_NULL) MPI_Comm_size(file.comm, &size);
  return size == 1;
}

// One box of the file version into `dst`. A writer reading its own open
// version (one process) never waits: what it wrote, over the version it was
// derived from or the fill value; everyone else reads as the store says
// (a sealed version never waits either).
void get_box(FileState& file, const Node& dataset, const Box& box, std::byte* dst, std::size_t bytes) {
  auto& client = Session::get().client();
  const auto var = file.variable(dataset);
  if (!(file.writer && !file.published && alone(file) && !dataset.written_overflow)) {
    client.get(var, file.version, box, dst, bytes, file.settings.read_timeout_ms);
    return;
  }
  try {
    client.get(var, file.version, box, dst, bytes, 0);
    return;
  } catch (const Error& e) {
    if (e.code() != Code::NotFound) throw;
  }
  bool based = false;
  if (file.derived_from != 0) {
    try {
      client.get(var, file.derived_from, box, dst, bytes, 0);
      based = true;
    } catch (const Error& e) {
      if (e.code() != Code::NotFound) throw;
    }
  }
  const auto fill = fill_value(dataset);
  const auto esize = fill.size();
  if (!based)
    for (std::size_t at = 0; at + esize <= bytes; at += esize) std::memcpy(dst + at, fill.data(), esize);
  std::vector<std::byte> piece;
  for (const auto& w : dataset.written_boxes) {
    if (w.ndim != box.ndim || !w.intersects(box)) continue;
    const Box part = w.intersection(box);
    piece.resize(static_cast<std::size_t>(part.volume()) * esize);
    client.get(var, file.version, part, piece.data(), piece.size(), 0);
    copy_into(piece.data(), part, dst, box, esize);
  }
}
}  // namespace

void read_dataset(FileState& file, const Node& dataset, hid_t mem_type, hid_t mem_space, hid_t file_space,
                  void* buf) {
  PhaseTimer timer("H5Dread");
  auto [fspace, mspace, n, blocks] = select(dataset, mem_type, mem_space, file_space);
  if (dataset.file_only)
    fail("dataset " + dataset.path + " of file \"" + file.name + "\" is written to the file only (a dataset rule), not staged");
  if (n == 0) return;
  const hid_t ftype = dataset.type.get();
  const std::size_t msize = H5Tget_size(mem_type), fsize = H5Tget_size(ftype);
  // Fail before moving any bytes when HDF5 has no conversion path.
  H5T_cdata_t* cdata = nullptr;
  if (H5Tequal(mem_type, ftype) <= 0 && H5Tfind(ftype, mem_type, &cdata) == nullptr)
    fail("HDF5 has no conversion from dataset " + dataset.path + "'s type to the memory type");
  if (auto why = retired(file, dataset); !why.empty()) fail(why);
  auto failed = [&](const Error& e) {
    auto why = retired(file, dataset);
    if (!why.empty()) fail(why);
    fail("reading dataset " + dataset.path + " of file \"" + file.name + "\" version " + std::to_string(file.version) +
         ": " + e.what());
  };
  if (direct(mem_type, mspace, ftype, blocks)) {
    try {
      get_box(file, dataset, blocks.boxes[0], static_cast<std::byte*>(buf), n * fsize);
    } catch (const Error& e) {
      failed(e);
    }
    return;
  }
  std::vector<std::byte> g(n * std::max(msize, fsize));
  try {
    if (blocks.points) {
      for (std::size_t i = 0; i < n; ++i)
        get_box(file, dataset, blocks.boxes[i], g.data() + i * fsize, fsize);
    } else if (blocks.boxes.size() == 1) {
      get_box(file, dataset, blocks.boxes[0], g.data(), n * fsize);
    } else {
      const Box bb = bounding_box(blocks.boxes);
      std::vector<std::byte> scratch(static_cast<std::size_t>(bb.volume()) * fsize);
      std::vector<std::byte> piece;
      for (const auto& b : blocks.boxes) {
        piece.resize(static_cast<std::size_t>(b.volume()) * fsize);
        get_box(file, dataset, b, piece.data(), piece.size());
        Hid one = local_selection(bb, {b});
        scatter(ftype, one.get(), piece.data(), piece.size(), scratch.data());
      }
      Hid all = local_selection(bb, blocks.boxes);
      gather(ftype, all.get(), scratch.data(), n * fsize, g.data());
    }
  } catch (const Error& e) {
    failed(e);
  }
  // A compound read into a subset of its fields: the buffer's other fields
  // keep their values (HDF5 converts over the buffer's present elements).
  std::vector<std::byte> present;
  if (needs_background(mem_type) && H5Tequal(ftype, mem_type) <= 0) {
    present.resize(n * msize);
    gather(mem_type, mspace, buf, n * msize, present.data());
  }
  convert(ftype, mem_type, n, g, present.empty() ? nullptr : &present);
  scatter(mem_type, mspace, g.data(), n * msize, buf);
}

bool is_variable_string(hid_t type) { return H5Tget_class(type) == H5T_STRING && H5Tis_variable_str(type) > 0; }

std::vector<std::byte> encode_strings(const char* const* strings, std::size_t n) {
  std::vector<std::byte> out;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t len = strings && strings[i] ? std::strlen(strings[i]) : 0;
    const auto at = out.size();
    out.resize(at + sizeof len + len);
    std::memcpy(out.data() + at, &len, sizeof len);
    if (len) std::memcpy(out.data() + at + sizeof len, strings[i], len);
  }
  return out;
}

std::vector<std::string> decode_strings(const std::vector<std::byte>& data, std::size_t n) {
  std::vector<std::string> out;
  std::size_t at = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t len = 0;
    if (data.size() - at < sizeof len) fail("a variable-length string attribute's stored bytes are truncated");
    std::memcpy(&len, data.data() + at, sizeof len);
    at += sizeof len;
    if (data.size() - at < len) fail("a variable-length string attribute's stored bytes are truncated");
    out.emplace_back(reinterpret_cast<const char*>(data.data() + at), static_cast<std::size_t>(len));
    at += static_cast<std::size_t>(len);
  }
  return out;
}

void write_attribute(Attribute& attr, hid_t mem_type, const void* buf) {
  if (is_nested_vlen(attr.type.get())) {  // per element: its length, then its bytes (vlen.hpp)
    const auto n = static_cast<std::size_t>(check(H5Sget_simple_extent_npoints(attr.space.get()), "H5Sget_simple_extent_npoints"));
    std::vector<std::byte> data;
    for (const auto& e : encode_nested(mem_type, attr.type.get(), buf, n)) {
      const std::uint64_t len = e.size();
      const auto at = data.size();
      data.resize(at + sizeof len + e.size());
      std::memcpy(data.data() + at, &len, sizeof len);
      if (len) std::memcpy(data.data() + at + sizeof len, e.data(), e.size());
    }
    attr.data = std::move(data);
    return;
  }
  if (H5Tget_class(attr.type.get()) == H5T_VLEN) {
    const auto n = static_cast<std::size_t>(check(H5Sget_simple_extent_npoints(attr.space.get()), "H5Sget_simple_extent_npoints"));
    attr.data = encode_sequences(mem_type, attr.type.get(), buf, n);
    return;
  }
  if (is_variable_string(attr.type.get())) {
    if (!is_variable_string(mem_type))
      fail("attribute " + attr.name + " holds variable-length strings: write it from a variable-length string type "
           "(HDF5 converts no fixed-length strings to them)");
    const auto n = static_cast<std::size_t>(check(H5Sget_simple_extent_npoints(attr.space.get()), "H5Sget_simple_extent_npoints"));
    attr.data = encode_strings(static_cast<const char* const*>(buf), n);
    return;
  }
  reject_variable_length(mem_type, "the attribute's memory type");
  const auto n = static_cast<std::size_t>(check(H5Sget_select_npoints(attr.space.get()), "H5Sget_select_npoints"));
  const std::size_t msize = H5Tget_size(mem_type), fsize = H5Tget_size(attr.type.get());
  std::vector<std::byte> g(n * std::max(msize, fsize));
  if (n) std::memcpy(g.data(), buf, n * msize);
  // Written from a subset of a compound's fields: the others keep their values.
  convert(mem_type, attr.type.get(), n, g, attr.data.size() == n * fsize ? &attr.data : nullptr);
  g.resize(n * fsize);
  attr.data = std::move(g);
}

void read_attribute(const Attribute& attr, hid_t mem_type, void* buf) {
  if (attr.data.empty()) {  // never written: zeros (empty sequences, null strings), as HDF5 reads it
    const auto n = static_cast<std::size_t>(check(H5Sget_simple_extent_npoints(attr.space.get()), "H5Sget_simple_extent_npoints"));
    if (n) std::memset(buf, 0, n * H5Tget_size(mem_type));
    return;
  }
  if (is_nested_vlen(attr.type.get())) {
    const auto n = static_cast<std::size_t>(check(H5Sget_simple_extent_npoints(attr.space.get()), "H5Sget_simple_extent_npoints"));
    std::vector<std::vector<std::byte>> elements(n);
    std::size_t at = 0;
    for (std::size_t i = 0; i < n; ++i) {
      std::uint64_t len = 0;
      if (attr.data.size() - at < sizeof len) fail("attribute " + attr.name + ": its stored bytes are truncated");
      std::memcpy(&len, attr.data.data() + at, sizeof len);
      at += sizeof len;
      if (attr.data.size() - at < len) fail("attribute " + attr.name + ": its stored bytes are truncated");
      elements[i].assign(attr.data.begin() + static_cast<std::ptrdiff_t>(at), attr.data.begin() + static_cast<std::ptrdiff_t>(at + len));
      at += static_cast<std::size_t>(len);
    }
    std::vector<const std::vector<std::byte>*> refs(n);
    for (std::size_t i = 0; i < n; ++i) refs[i] = &elements[i];
    decode_nested(refs, attr.type.get(), mem_type, buf);
    return;
  }
  if (H5Tget_class(attr.type.get()) == H5T_VLEN) {
    const auto n = static_cast<std::size_t>(check(H5Sget_simple_extent_npoints(attr.space.get()), "H5Sget_simple_extent_npoints"));
    decode_sequences(attr.data, attr.type.get(), mem_type, buf, n);
    return;
  }
  if (is_variable_string(attr.type.get())) {
    if (!is_variable_string(mem_type))
      fail("attribute " + attr.name + " holds variable-length strings: read it into a variable-length string type "
           "(HDF5 converts them to no fixed-length strings)");
    const auto n = static_cast<std::size_t>(check(H5Sget_simple_extent_npoints(attr.space.get()), "H5Sget_simple_extent_npoints"));
    const auto strings = decode_strings(attr.data, n);
    auto* out = static_cast<char**>(buf);
    // The caller frees each with H5free_memory (or H5Treclaim), so HDF5's allocator makes them.
    for (std::size_t i = 0; i < n; ++i) {
      out[i] = static_cast<char*>(H5allocate_memory(strings[i].size() + 1, false));
      if (!out[i]) fail("no memory for a string of attribute " + attr.name);
      std::memcpy(out[i], strings[i].data(), strings[i].size());
      out[i][strings[i].size()] = '\0';
    }
    return;
  }
  reject_variable_length(mem_type, "the attribute's memory type");
  const auto n = static_cast<std::size_t>(check(H5Sget_select_npoints(attr.space.get()), "H5Sget_select_npoints"));
  const std::size_t msize = H5Tget_size(mem_type), fsize = H5Tget_size(attr.type.get());
  if (n == 0) return;
  if (attr.data.size() != n * fsize) fail("attribute " + attr.name + ": its stored bytes are truncated");
  std::vector<std::byte> g(n * std::max(msize, fsize));
  std::memcpy(g.data(), attr.data.data(), n * fsize);
  // Read into a subset of a compound's fields: the buffer's other fields keep their values.
  std::vector<std::byte> present;
  if (needs_background(mem_type) && H5Tequal(attr.type.get(), mem_type) <= 0) present.assign(static_cast<std::byte*>(buf), static_cast<std::byte*>(buf) + n * msize);
  convert(attr.type.get(), mem_type, n, g, present.empty() ? nullptr : &present);
  std::memcpy(buf, g.data(), n * msize);
}

}  // namespace cove::h5vol
