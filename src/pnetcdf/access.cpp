// The data calls of coupled files: every put and get form, checked as
// PnetCDF checks them, converted between memory and external types, and
// moved as Cove puts and gets of exactly the requested boxes.
#include "convert.hpp"
#include "files.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>

namespace cove::pnetcdf {
namespace {

// One start/count/stride region of a call.
struct Region {
  std::vector<MPI_Offset> start, count, stride;
  std::size_t elements = 1;
};

DType dtype_of(nc_type t) {
  switch (t) {
    case NC_BYTE: return DTypeKind::Int8;
    case NC_CHAR: case NC_UBYTE: return DTypeKind::UInt8;
    case NC_SHORT: return DTypeKind::Int16;
    case NC_USHORT: return DTypeKind::UInt16;
    case NC_INT: return DTypeKind::Int32;
    case NC_UINT: return DTypeKind::UInt32;
    case NC_FLOAT: return DTypeKind::Float32;
    case NC_DOUBLE: return DTypeKind::Float64;
    case NC_INT64: return DTypeKind::Int64;
    default: return DTypeKind::UInt64;
  }
}

// Copies count[] elements between two strided arrays (strides in bytes).
void copy_nd(char* dst, const std::vector<std::ptrdiff_t>& dst_strides, const char* src,
             const std::vector<std::ptrdiff_t>& src_strides, const std::vector<MPI_Offset>& count, std::size_t dim,
             std::size_t elem) {
  const std::size_t last = count.size() - 1;
  if (dim == last) {
    if (dst_strides[dim] == static_cast<std::ptrdiff_t>(elem) && src_strides[dim] == static_cast<std::ptrdiff_t>(elem)) {
      std::memcpy(dst, src, static_cast<std::size_t>(count[dim]) * elem);
      return;
    }
    for (MPI_Offset i = 0; i < count[dim]; ++i) std::memcpy(dst + i * dst_strides[dim], src + i * src_strides[dim], elem);
    return;
  }
  for (MPI_Offset i = 0; i < count[dim]; ++i) {
    copy_nd(dst + i * dst_strides[dim], dst_strides, src + i * src_strides[dim], src_strides, count, dim + 1, elem);
  }
}

std::vector<std::ptrdiff_t> c_strides(const std::vector<MPI_Offset>& count, std::size_t elem) {
  std::vector<std::ptrdiff_t> s(count.size());
  std::ptrdiff_t step = static_cast<std::ptrdiff_t>(elem);
  for (std::size_t d = count.size(); d-- > 0;) {
    s[d] = step;
    step *= std::max<MPI_Offset>(count[d], 1);
  }
  return s;
}

class Call {
 public:
  Call(const Access& a, File& f, const Var& v, int varid, nc_type mem)
      : a_(a), f_(f), v_(v), varid_(varid), mem_(mem), ndim_(v.dims.size()) {}

  // The regions of the call, checked against the variable's dimensions in
  // PnetCDF 1.12.3's order (check_start_count_stride in its dispatcher):
  // start's coordinates, then count's edges, then strides; then the checks
  // PnetCDF's arithmetic would overflow on.
  int regions(std::vector<Region>& out) const {
    auto make = [&](const MPI_Offset* start, const MPI_Offset* count, const MPI_Offset* stride) {
      Region r;
      for (std::size_t d = 0; d < ndim_; ++d) {
        r.start.push_back(start ? start[d] : 0);
        r.count.push_back(count ? count[d] : start ? 1 : extent(d));
        r.stride.push_back(stride ? stride[d] : 1);
      }
      return r;
    };
    switch (a_.kind) {
      case '_': out.push_back(make(nullptr, nullptr, nullptr)); break;
      case '1': case 'a': case 's': case 'm': {
        const MPI_Offset* count = a_.kind == '1' ? nullptr : a_.count;
        const MPI_Offset* stride = a_.kind == 's' || a_.kind == 'm' ? a_.stride : nullptr;
        // A varm call without imap is a vars call, without stride too a vara call.
        const bool edges_needed = a_.kind != '1';
        if (ndim_ > 0) {
          if (const int rc = check(a_.start, count, stride, edges_needed); rc != NC_NOERR) return rc;
        }
        out.push_back(make(ndim_ > 0 ? a_.start : nullptr, ndim_ > 0 ? count : nullptr, ndim_ > 0 ? stride : nullptr));
        if (a_.kind == '1' && ndim_ > 0) std::fill(out.back().count.begin(), out.back().count.end(), 1);
        break;
      }
      case 'n':
        if (a_.num == 0) return NC_NOERR;
        if (ndim_ == 0) {
          if (a_.num != 1) return NC_EINVAL;
          out.push_back(make(nullptr, nullptr, nullptr));
          break;
        }
        if (a_.num < 0) return NC_EINVAL;
        if (a_.starts == nullptr) return NC_ENULLSTART;
        for (int i = 0; i < a_.num; ++i) {
          if (a_.starts[i] == nullptr) return NC_ENULLSTART;
          // A NULL count is var1's.
          const MPI_Offset* count = a_.counts ? a_.counts[i] : nullptr;
          if (const int rc = check(a_.starts[i], count, nullptr, count != nullptr); rc != NC_NOERR) return rc;
          out.push_back(make(a_.starts[i], count, nullptr));
          if (count == nullptr) std::fill(out.back().count.begin(), out.back().count.end(), 1);
        }
        break;
      default: return NC_EINVAL;
    }
    for (auto& r : out) {
      for (std::size_t d = 0; d < ndim_; ++d) {
        if (r.start[d] < 0) return NC_EINVALCOORDS;
        if (r.count[d] < 0) return NC_ENEGATIVECNT;
        if (r.stride[d] <= 0) return NC_ESTRIDE;
        // A put may add records, up to what the format can count.
        const MPI_Offset len = d == 0 && record_ && a_.put ? max_records() : extent(d);
        if (r.start[d] > len || (r.start[d] == len && r.count[d] > 0)) return NC_EINVALCOORDS;
        // Divided rather than multiplied: a huge stride must not wrap around.
        if (r.count[d] > 0 && (r.count[d] - 1) > (len - 1 - r.start[d]) / r.stride[d]) return NC_EEDGE;
      }
      for (auto c : r.count) {
        if (__builtin_mul_overflow(r.elements, static_cast<std::size_t>(c), &r.elements)) return NC_EINTOVERFLOW;
      }
      if (r.elements > std::numeric_limits<std::size_t>::max() / sizeof(double)) return NC_EINTOVERFLOW;
    }
    return NC_NOERR;
  }

  // Moves one region; `buf` is where its memory elements start.
  int move(const Region& r, char* buf) {
    if (r.elements == 0) return NC_NOERR;
    const std::size_t xsize = type_size(v_.type), msize = type_size(mem_);
    const bool mapped = a_.kind == 'm' && a_.imap != nullptr && ndim_ > 0;
    std::vector<MPI_Offset> count = r.count;
    if (count.empty()) count.push_back(1);
    std::vector<std::ptrdiff_t> user_strides = c_strides(count, msize);
    if (mapped) {
      for (std::size_t d = 0; d < ndim_; ++d) user_strides[d] = static_cast<std::ptrdiff_t>(a_.imap[d] * static_cast<MPI_Offset>(msize));
    }
    const bool raw_byte = !(f_.schema.cmode & NC_64BIT_DATA);
    if (a_.put) {
      // Memory elements in C order, then the external type.
      std::vector<char> packed, external;
      const char* mem = buf;
      if (mapped) {
        packed.resize(r.elements * msize);
        copy_nd(packed.data(), c_strides(count, msize), buf, user_strides, count, 0, msize);
        mem = packed.data();
      }
      int status = NC_NOERR;
      const char* ext = mem;
      if (mem_ != v_.type) {
        external.resize(r.elements * xsize);
        status = convert(mem, mem_, external.data(), v_.type, r.elements, raw_byte);
        if (status != NC_NOERR && status != NC_ERANGE) return status;
        if (status == NC_ERANGE) user_fill_out_of_range(mem, external.data(), r.elements, raw_byte);
        ext = external.data();
      }
      const int rc = boxes(r, const_cast<char*>(ext), true);
      if (rc == NC_NOERR) f_.put_size += static_cast<MPI_Offset>(r.elements * xsize);
      if (record_ && !r.count.empty() && r.count[0] > 0) {
        f_.schema.numrecs = std::max(f_.schema.numrecs, r.start[0] + (r.count[0] - 1) * r.stride[0] + 1);
      }
      return rc != NC_NOERR ? rc : status;
    }
    const bool direct = mem_ == v_.type && !mapped;
    std::vector<char> external, converted;
    char* ext = buf;
    if (!direct) {
      external.resize(r.elements * xsize);
      ext = external.data();
    }
    if (const int rc = boxes(r, ext, false); rc != NC_NOERR) return rc;
    f_.get_size += static_cast<MPI_Offset>(r.elements * xsize);
    if (direct) return NC_NOERR;
    char* mem = buf;
    if (mapped) {
      converted.resize(r.elements * msize);
      mem = converted.data();
    }
    const int status = convert(ext, v_.type, mem, mem_, r.elements, raw_byte);
    if (status != NC_NOERR && status != NC_ERANGE) return status;
    if (mapped) copy_nd(buf, user_strides, mem, c_strides(count, msize), count, 0, msize);
    return status;
  }

  void set_record() { record_ = ndim_ > 0 && v_.dims[0] == f_.schema.unlimdim; }

  // A nonblocking put: its boxes go to `pending`, stored at its wait.
  void defer_to(std::vector<File::PendingPut>* pending) { defer_ = pending; }

  // A put stores the variable's own fill value (_FillValue) where a value
  // is out of the external type's range, as PnetCDF's does (convert() put
  // the type's default fill there).
  void user_fill_out_of_range(const char* mem, char* external, std::size_t n, bool raw_byte) const {
    const Att* fill = nullptr;
    for (const auto& a : v_.atts) {
      if (a.name == "_FillValue" && a.type == v_.type && a.len == 1) fill = &a;
    }
    if (fill == nullptr) return;
    const std::size_t xsize = type_size(v_.type), msize = type_size(mem_);
    std::vector<char> one(xsize);
    for (std::size_t i = 0; i < n; ++i) {
      if (convert(mem + i * msize, mem_, one.data(), v_.type, 1, raw_byte) == NC_ERANGE) {
        std::memcpy(external + i * xsize, fill->data.data(), xsize);
      }
    }
  }

 private:
  // PnetCDF's check_EINVALCOORDS: with PNETCDF_RELAX_COORD_BOUND (the
  // default) a start may equal the dimension's length when nothing is
  // accessed there.
  int coordinate(MPI_Offset start, MPI_Offset count, MPI_Offset shape) const {
    if (f_.strict_coords) return start < 0 || start >= shape ? NC_EINVALCOORDS : NC_NOERR;
    if (start < 0 || start > shape || (start == shape && count > 0)) return NC_EINVALCOORDS;
    return NC_NOERR;
  }

  // PnetCDF's check_EEDGE (divided where it multiplies: no wrap-around).
  static int edge(MPI_Offset start, MPI_Offset count, const MPI_Offset* stride, MPI_Offset shape) {
    if (count > shape || start + count > shape) return NC_EEDGE;
    if (stride != nullptr && count > 0 && *stride > 0 && (count - 1) > (shape - 1 - start) / *stride) return NC_EEDGE;
    return NC_NOERR;
  }

  // PnetCDF's check_start_count_stride, for a non-scalar variable. A NULL
  // count is var1's; vara/vars/varm need one (NC_EEDGE).
  int check(const MPI_Offset* start, const MPI_Offset* count, const MPI_Offset* stride, bool needs_count) const {
    if (start == nullptr || start[0] < 0) return NC_EINVALCOORDS;
    std::size_t first = 0;
    if (record_) {
      if (!(f_.schema.cmode & NC_64BIT_DATA) && start[0] > MPI_Offset{NC_MAX_UINT}) return NC_EINVALCOORDS;
      if (!a_.put) {
        const MPI_Offset len = count == nullptr ? 1 : count[0];
        if (f_.schema.numrecs == 0 && len > 0) return NC_EINVALCOORDS;
        if (const int rc = coordinate(start[0], len, f_.schema.numrecs); rc != NC_NOERR) return rc;
      }
      first = 1;
    }
    for (std::size_t d = first; d < ndim_; ++d) {
      if (const int rc = coordinate(start[d], count == nullptr ? 1 : count[d], extent(d)); rc != NC_NOERR) return rc;
    }
    if (count == nullptr) return needs_count ? NC_EEDGE : NC_NOERR;
    first = 0;
    if (record_) {
      if (count[0] < 0) return NC_ENEGATIVECNT;
      if (!a_.put) {
        if (const int rc = edge(start[0], count[0], stride, f_.schema.numrecs); rc != NC_NOERR) return rc;
      }
      first = 1;
    }
    for (std::size_t d = first; d < ndim_; ++d) {
      if (count[d] < 0) return NC_ENEGATIVECNT;
      if (const int rc = edge(start[d], count[d], stride ? stride + d : nullptr, extent(d)); rc != NC_NOERR) return rc;
    }
    if (stride != nullptr) {
      for (std::size_t d = 0; d < ndim_; ++d) {
        if (stride[d] <= 0) return NC_ESTRIDE;
      }
    }
    return NC_NOERR;
  }

  // CDF-1 and CDF-2 count records in 32 bits.
  MPI_Offset max_records() const {
    return f_.schema.cmode & NC_64BIT_DATA ? std::numeric_limits<MPI_Offset>::max() : MPI_Offset{0xffffffff};
  }

  MPI_Offset extent(std::size_t d) const {
    if (d == 0 && record_) return f_.schema.numrecs;
    return f_.schema.dims[static_cast<std::size_t>(v_.dims[d])].len;
  }

  // The region as dense boxes: one box unless a dimension is strided, then
  // one box per combination of strided indices. `ext` holds the region's
  // external elements in C order.
  int boxes(const Region& r, char* ext, bool put) {
    const std::size_t xsize = type_size(v_.type);
    std::vector<MPI_Offset> start = r.start, count = r.count, stride = r.stride;
    if (ndim_ == 0) start = {0}, count = {1}, stride = {1};
    std::vector<std::size_t> split;
    for (std::size_t d = 0; d < count.size(); ++d) {
      if (stride[d] > 1 && count[d] > 1) split.push_back(d);
    }
    const std::string var = cove_name(f_, varid_);
    try {
      define(var, static_cast<int>(count.size()));
      if (split.empty()) {
        transfer(var, start, count, ext, r.elements * xsize, put);
        return NC_NOERR;
      }
      const auto full = c_strides(count, xsize);
      std::vector<MPI_Offset> sub_count = count;
      for (auto d : split) sub_count[d] = 1;
      std::size_t sub_elements = 1;
      for (auto c : sub_count) sub_elements *= static_cast<std::size_t>(c);
      const auto sub_strides = c_strides(sub_count, xsize);
      std::vector<char> piece(sub_elements * xsize);
      std::vector<MPI_Offset> at(split.size(), 0);
      while (true) {
        std::vector<MPI_Offset> box_start = start;
        std::ptrdiff_t offset = 0;
        for (std::size_t i = 0; i < split.size(); ++i) {
          box_start[split[i]] = start[split[i]] + at[i] * stride[split[i]];
          offset += at[i] * full[split[i]];
        }
        if (put) {
          copy_nd(piece.data(), sub_strides, ext + offset, full, sub_count, 0, xsize);
          transfer(var, box_start, sub_count, piece.data(), piece.size(), true);
        } else {
          transfer(var, box_start, sub_count, piece.data(), piece.size(), false);
          copy_nd(ext + offset, full, piece.data(), sub_strides, sub_count, 0, xsize);
        }
        std::size_t i = split.size();
        while (i > 0 && ++at[i - 1] == count[split[i - 1]]) at[--i] = 0;
        if (i == 0) break;
      }
      return NC_NOERR;
    } catch (...) {
      return from_exception(a_.name, f_);
    }
  }

  void define(const std::string&, int) { define_var(f_, varid_); }

  void transfer(const std::string& var, const std::vector<MPI_Offset>& start, const std::vector<MPI_Offset>& count,
                char* data, std::size_t bytes, bool put) {
    const Box box = Box::from_start_count(std::span(reinterpret_cast<const Index*>(start.data()), start.size()),
                                          std::span(reinterpret_cast<const Index*>(count.data()), count.size()));
    if (!put) {
      client().get(var, f_.version, box, data, bytes, 0);
    } else if (defer_ != nullptr) {
      defer_->push_back({var, box, std::vector<char>(data, data + bytes)});
    } else {
      store_box(f_, var, box, data, bytes);
    }
  }

  const Access& a_;
  File& f_;
  const Var& v_;
  int varid_;
  nc_type mem_;
  std::size_t ndim_;
  bool record_ = false;
  std::vector<File::PendingPut>* defer_ = nullptr;
};

// The one predefined type a derived datatype is built of; NC_NAT if it
// mixes types or uses one netCDF has no type for.
nc_type base_type(MPI_Datatype t) {
  int ni = 0, na = 0, nd = 0, combiner = 0;
  MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
  if (combiner == MPI_COMBINER_NAMED) return memory_type(t);
  std::vector<int> ints(static_cast<std::size_t>(ni));
  std::vector<MPI_Aint> addrs(static_cast<std::size_t>(na));
  std::vector<MPI_Datatype> types(static_cast<std::size_t>(nd));
  MPI_Type_get_contents(t, ni, na, nd, ints.data(), addrs.data(), types.data());
  nc_type base = NC_NAT;
  bool mixed = types.empty();
  for (MPI_Datatype sub : types) {
    const nc_type b = base_type(sub);
    int sub_combiner = 0;
    MPI_Type_get_envelope(sub, &ni, &na, &nd, &sub_combiner);
    if (sub_combiner != MPI_COMBINER_NAMED) MPI_Type_free(&sub);
    if (b == NC_NAT || (base != NC_NAT && b != base)) mixed = true;
    base = b;
  }
  return mixed ? NC_NAT : base;
}

int checked_access(const Access& a);

int post_derived_get(const Access& a, Access inner, std::size_t bytes);

// A flexible-API call with a derived buftype: packed into (put) or unpacked
// from (get) a contiguous buffer of its base type, as the call with that
// type would move it.
int derived(const Access& a, const std::string& path) {
  const nc_type base = base_type(a.buftype);
  int type_bytes = 0;
  MPI_Type_size(a.buftype, &type_bytes);
  if (a.bufcount > std::numeric_limits<int>::max() / std::max(type_bytes, 1)) return NC_EINTOVERFLOW;
  if (base == NC_NAT || a.bufcount < 0) {
    return report(NC_EUNSPTETYPE, fmt::format("{} on the coupled file {}: the buftype is not built of one "
                                              "predefined type netCDF knows", a.name, path));
  }
  const auto bytes = static_cast<std::size_t>(a.bufcount) * static_cast<std::size_t>(type_bytes);
  std::vector<char> packed(bytes);
  Access inner = a;
  inner.mem = base;
  inner.buftype = MPI_DATATYPE_NULL;
  inner.buf_elements = static_cast<MPI_Offset>(bytes / type_size(base));
  inner.buf = packed.data();
  inner.now = true;  // unpacked below, before `packed` goes
  int position = 0;
  if (a.put) {
    MPI_Pack(a.buf, static_cast<int>(a.bufcount), a.buftype, packed.data(), static_cast<int>(bytes), &position,
             MPI_COMM_SELF);
    return checked_access(inner);
  }
  File* f = find_file(a.ncid);
  if (a.nonblocking != 0 && a.req != nullptr && !f->real_too) return post_derived_get(a, inner, bytes);
  const int status = checked_access(inner);
  if (status != NC_NOERR && status != NC_ERANGE) return status;
  MPI_Unpack(packed.data(), static_cast<int>(bytes), &position, a.buf, static_cast<int>(a.bufcount), a.buftype,
             MPI_COMM_SELF);
  return status;
}

// A nonblocking get into a derived buftype: checked now; at its wait read
// into a packing buffer of its own and unpacked with a duplicate of the
// buftype (the program may free its own after posting, as PnetCDF allows).
int post_derived_get(const Access& a, Access inner, std::size_t bytes) {
  auto packed = std::make_shared<std::vector<char>>(bytes);
  inner.buf = packed->data();
  inner.now = false;
  const int status = checked_access(inner);
  File* f = find_file(a.ncid);
  if (status != NC_NOERR || *a.req == NC_REQ_NULL || f->requests.count(*a.req) == 0) return status;
  auto type = std::shared_ptr<MPI_Datatype>(new MPI_Datatype(MPI_DATATYPE_NULL), [](MPI_Datatype* t) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && *t != MPI_DATATYPE_NULL) MPI_Type_free(t);
    delete t;
  });
  MPI_Type_dup(a.buftype, type.get());
  File::Request& r = f->requests.at(*a.req);
  r.get = [read = std::move(r.get), packed, type, buf = a.buf, count = static_cast<int>(a.bufcount)] {
    const int got = read();
    if (got != NC_NOERR && got != NC_ERANGE) return got;
    int position = 0;
    MPI_Unpack(packed->data(), static_cast<int>(packed->size()), &position, buf, count, *type, MPI_COMM_SELF);
    return got;
  };
  return NC_NOERR;
}

}  // namespace

namespace {

// PnetCDF's sanity_check: write permission, then (blocking calls) define
// mode and the collective/independent mode, then the variable id and, for
// a typed call, NC_ECHAR.
int sanity(const Access& a, const File& f) {
  if (a.put && !f.writer) return NC_EPERM;
  if (a.nonblocking == 0) {
    if (f.define_mode) return NC_EINDEFINE;
    if (a.all && f.independent) return NC_EINDEP;
    if (!a.all && !f.independent) return NC_ENOTINDEP;
  }
  if (a.varid == NC_GLOBAL) return NC_EGLOBAL;
  if (a.varid < 0 || static_cast<std::size_t>(a.varid) >= f.schema.vars.size()) return NC_ENOTVAR;
  if (a.mem != NC_NAT && (a.mem == NC_CHAR) != (f.schema.vars[static_cast<std::size_t>(a.varid)].type == NC_CHAR)) {
    return NC_ECHAR;
  }
  return NC_NOERR;
}

// A blocking collective call in PnetCDF's safe mode (PNETCDF_SAFE_MODE=1)
// fails on every rank when it fails on one: the lowest code wins.
int agreed(const Access& a, const File& f, int err) {
  if (!f.safe_mode || !a.all || a.nonblocking != 0) return err;
  int lowest = err;
  MPI_Allreduce(&err, &lowest, 1, MPI_INT, MPI_MIN, f.comm);
  return lowest;
}

// Reads `regions` of a get into `buf` (the memory type `mem`): the call's
// data movement, after its checks.
int read_regions(const Access& a, File& f, nc_type mem, const std::vector<Region>& regions, char* buf) {
  const Var& v = f.schema.vars[static_cast<std::size_t>(a.varid)];
  Call call(a, f, v, a.varid, mem);
  call.set_record();
  int status = NC_NOERR;
  for (const auto& r : regions) {
    const int rc = call.move(r, buf);
    if (rc != NC_NOERR && rc != NC_ERANGE) return rc;
    if (rc == NC_ERANGE) status = NC_ERANGE;
    if (a.kind != 'm') buf += r.elements * type_size(mem);  // a varm call's memory is described by imap alone
  }
  return status;
}

// A nonblocking get, checked: its request reads it at the wait. What it
// keeps of the call: the regions, the buffer, and a varm call's imap (the
// caller's arrays need not outlive the call).
int post_get(const Access& a, File& f, nc_type mem, std::vector<Region> regions) {
  for (const auto& r : regions) {
    if (r.elements > 0 && a.buf == nullptr) return NC_EINVAL;
  }
  Access kept = a;
  kept.start = kept.count = kept.stride = nullptr;
  kept.starts = kept.counts = nullptr;
  kept.req = nullptr;
  std::vector<MPI_Offset> imap;
  if (a.kind == 'm' && a.imap != nullptr) {
    imap.assign(a.imap, a.imap + f.schema.vars[static_cast<std::size_t>(a.varid)].dims.size());
  }
  *a.req = 2 * f.next_request++ + 1;
  File::Request& r = f.requests[*a.req];
  r.put = false;
  r.get = [kept, imap = std::move(imap), mem, regions = std::move(regions)]() mutable {
    File* file = find_file(kept.ncid);
    if (file == nullptr) return NC_EBADID;
    kept.imap = imap.empty() ? nullptr : imap.data();
    return read_regions(kept, *file, mem, regions, static_cast<char*>(kept.buf));
  };
  return NC_NOERR;
}

int checked_access(const Access& a) {
  File* f = find_file(a.ncid);
  if (a.nonblocking != 0 && a.req != nullptr) *a.req = NC_REQ_NULL;
  if (const int rc = sanity(a, *f); rc != NC_NOERR) return agreed(a, *f, rc);
  // A bput needs an attached buffer (PnetCDF checks it next).
  if (a.nonblocking == 'b' && a.req != nullptr && f->buffer_size < 0) return NC_ENULLABUF;
  const Var& v = f->schema.vars[static_cast<std::size_t>(a.varid)];
  nc_type mem = a.mem;
  if (mem == NC_NAT) {
    mem = a.buftype == MPI_DATATYPE_NULL ? v.type : memory_type(a.buftype);
  }
  Call call(a, *f, v, a.varid, mem == NC_NAT ? v.type : mem);
  call.set_record();
  std::vector<Region> regions;
  if (const int rc = call.regions(regions); rc != NC_NOERR) return agreed(a, *f, rc);
  // A flexible call of no elements does nothing (its request is NC_REQ_NULL).
  if (a.mem == NC_NAT && a.buftype != MPI_DATATYPE_NULL && a.bufcount == 0) return agreed(a, *f, NC_NOERR);
  // Readers may already be copying the published version: a later put would change it under them.
  if (a.put && f->published) {
    return agreed(a, *f, report(NC_EPERM, fmt::format("{}: {} was already published by dtf_transfer; close it and "
                                                      "create the next version to write more",
                                                      a.name, f->path)));
  }
  if (v.dims.size() > static_cast<std::size_t>(kMaxDims)) {
    return agreed(a, *f, report(NC_EMAXDIMS, fmt::format("{}: {} in {} has {} dimensions; Cove couples at most {}",
                                                         a.name, v.name, f->path, v.dims.size(), kMaxDims)));
  }
  // A derived buftype: the call again with its base type (which agrees in safe mode).
  if (mem == NC_NAT) return derived(a, f->path);
  int err = NC_NOERR;
  if ((mem == NC_CHAR) != (v.type == NC_CHAR)) err = NC_ECHAR;
  // The flexible API says how many elements the buffer holds.
  MPI_Offset limit = a.buf_elements;
  if (limit < 0 && a.mem == NC_NAT && a.buftype != MPI_DATATYPE_NULL) limit = a.bufcount;
  if (err == NC_NOERR && limit >= 0 && a.kind != 'm') {
    std::size_t total = 0;
    for (const auto& r : regions) total += r.elements;
    if (total > static_cast<std::size_t>(limit)) err = NC_EIOMISMATCH;
  }
  if (const int rc = agreed(a, *f, err); rc != NC_NOERR) return rc;
  // A bput takes its external bytes from the attached buffer until it is waited for.
  MPI_Offset bput_bytes = 0;
  if (a.nonblocking == 'b' && a.req != nullptr) {
    for (const auto& r : regions) bput_bytes += static_cast<MPI_Offset>(r.elements * type_size(v.type));
    if (f->buffer_size - f->buffer_used < bput_bytes) return NC_EINSUFFBUF;
  }
  const bool deferred = a.nonblocking != 0 && a.req != nullptr && !f->real_too;
  if (deferred && !a.put && !a.now) return post_get(a, *f, mem, std::move(regions));
  int status = NC_NOERR;
  std::vector<File::PendingPut> pending;
  if (deferred) call.defer_to(&pending);
  char* buf = static_cast<char*>(a.buf);
  for (const auto& r : regions) {
    if (r.elements > 0 && buf == nullptr) return NC_EINVAL;
    const int rc = call.move(r, buf);
    if (rc != NC_NOERR && rc != NC_ERANGE) return rc;
    if (rc == NC_ERANGE) status = NC_ERANGE;
    // A varm call's memory is described by imap alone.
    if (a.kind != 'm') buf += r.elements * type_size(mem);
  }
  // A nonblocking put's bytes are taken here (stored at its wait; without a
  // request id, now); a get without a request id is read here.
  // As PnetCDF 1.12 does, a put reports NC_ERANGE when it is posted (its
  // request then succeeds), a get when it is waited for (its status, and
  // wait's result); in `both` mode (no id here) the real library's wait
  // reports the get's.
  if (a.nonblocking != 0) {
    if (a.req != nullptr) {
      *a.req = 2 * f->next_request++ + (a.put ? 0 : 1);
      f->requests[*a.req] = {a.put ? NC_NOERR : status, a.put, std::move(pending), {}};
      if (a.nonblocking == 'b') {
        f->buffer.push_back({*a.req, bput_bytes, true});
        f->buffer_used += bput_bytes;
      }
    }
    return a.put ? status : NC_NOERR;
  }
  return status;
}

}  // namespace

nc_type buftype_base(MPI_Datatype t) { return base_type(t); }

void store_box(File& f, const std::string& var, const Box& box, const char* data, std::size_t bytes) {
  if (f.transfer == Transfer::shallow) {
    SharedBuffer b = client().allocate(bytes);
    std::memcpy(b.data(), data, bytes);
    client().put_local(var, f.version, box, b.data(), bytes);
    f.shallow.push_back({var, box, std::move(b)});
  } else {
    client().put(var, f.version, box, data, bytes);
  }
}

void define_var(File& f, int varid) {
  if (f.defined.size() < f.schema.vars.size()) f.defined.resize(f.schema.vars.size());
  if (f.defined[static_cast<std::size_t>(varid)]) return;
  const Var& v = f.schema.vars[static_cast<std::size_t>(varid)];
  if (f.writer) {
    // The fill value fixed at enddef (its tag), which a later _FillValue
    // rewrite in data mode does not change, as on disk. A variable PnetCDF
    // leaves unfilled (NC_NOFILL, records no fill_var_rec wrote) reads as
    // a new file's bytes do where nothing was put: zeros.
    VariableOptions options;
    const DType dtype = dtype_of(v.type);
    if (!v.fill_tag.empty()) {
      for (std::size_t at = 4; at + 1 < v.fill_tag.size(); at += 2) {
        options.fill.push_back(static_cast<std::byte>(std::stoi(v.fill_tag.substr(at, 2), nullptr, 16)));
      }
    } else {
      options.fill.assign(dtype.size(), std::byte{0});
    }
    options.with_first_put = true;  // no request of its own: the first put carries it
    client().define(cove_name(f, varid), dtype, std::max<int>(1, static_cast<int>(v.dims.size())), {}, options);
  }
  f.defined[static_cast<std::size_t>(varid)] = true;
}

int fill_at_enddef(File& f, int ncid) {
  const std::size_t first = f.fixed_vars;
  f.fixed_vars = f.schema.vars.size();
  if (!f.writer || f.real_too) return NC_NOERR;
  int rank = 0, ranks = 1;
  MPI_Comm_rank(f.comm, &rank);
  MPI_Comm_size(f.comm, &ranks);
  int status = NC_NOERR;
  bool filled = false;
  for (std::size_t i = first; i < f.schema.vars.size(); ++i) {
    Var& v = f.schema.vars[i];
    const auto fill = fill_bytes(v, f.schema.unlimdim);
    // A variable already in Cove (a nonblocking put in define mode) keeps its name.
    const bool in_cove = i < f.defined.size() && f.defined[i];
    if (fill.empty() || in_cove) continue;
    std::string tag = "fill";
    for (auto b : fill) tag += fmt::format("{:02x}", static_cast<unsigned>(b));
    v.fill_tag = tag;
    filled = true;
    // Rows of the first dimension, split over the ranks, at most 64 MiB a put.
    const std::size_t ndim = v.dims.size();
    std::vector<MPI_Offset> shape(ndim);
    std::size_t row = fill.size();
    for (std::size_t d = 0; d < ndim; ++d) {
      shape[d] = f.schema.dims[static_cast<std::size_t>(v.dims[d])].len;
      if (d > 0) row *= static_cast<std::size_t>(shape[d]);
    }
    const MPI_Offset rows = ndim == 0 ? 1 : shape[0];
    const MPI_Offset begin = rows * rank / ranks, end = rows * (rank + 1) / ranks;
    const MPI_Offset chunk = std::max<MPI_Offset>(1, static_cast<MPI_Offset>((std::size_t{64} << 20) / std::max<std::size_t>(row, 1)));
    for (MPI_Offset r = begin; r < end && status == NC_NOERR; r += chunk) {
      const MPI_Offset n = std::min(chunk, end - r);
      std::vector<std::byte> buf(static_cast<std::size_t>(n) * row);
      for (std::size_t at = 0; at < buf.size(); at += fill.size()) std::memcpy(buf.data() + at, fill.data(), fill.size());
      std::vector<MPI_Offset> start(ndim, 0), count = shape;
      if (ndim > 0) start[0] = r, count[0] = n;
      Access a;
      a.name = "ncmpi_enddef (fill)";
      a.put = true;
      a.kind = 'a';
      a.nonblocking = 'i';  // no mode check: PnetCDF's own fill
      a.mem = v.type;
      a.ncid = ncid;
      a.varid = static_cast<int>(i);
      a.start = start.data();
      a.count = count.data();
      a.buf = buf.data();
      status = access(a);
    }
  }
  // Every rank's fill is stored before any rank's put that follows.
  if (filled) writers_meet(f);
  return status;
}

// Nothing may unwind into the C caller.
int access(const Access& a) {
  try {
    // Nor does it start before every rank finished what came before: a
    // rank's put cannot land under another rank's earlier get.
    const bool collective_put = a.put && a.all && a.nonblocking == 0 && a.meet;
    if (collective_put) writers_meet(*find_file(a.ncid));
    const int rc = checked_access(a);
    // A collective put has, as PnetCDF's collective write, stored every
    // rank's data when it returns: a get that follows on any rank sees it.
    // Only the mode errors (the same on every rank) skip the collective,
    // as in PnetCDF.
    if (collective_put && rc != NC_EPERM && rc != NC_EINDEFINE && rc != NC_EINDEP &&
        rc != NC_ENOTINDEP) {
      writers_meet(*find_file(a.ncid));
    }
    return rc;
  } catch (const std::bad_alloc&) {
    return report(NC_ENOMEM, fmt::format("{}: out of memory for the request", a.name));
  } catch (const std::exception& e) {
    return report(NC_EFILE, fmt::format("{}: {}", a.name, e.what()));
  }
}

int multi_access(const Access& a, int num, const int* varids, MPI_Offset* const* starts, MPI_Offset* const* counts,
                 MPI_Offset* const* strides, MPI_Offset* const* imaps, void* const* bufs, const MPI_Offset* bufcounts,
                 const MPI_Datatype* datatypes) {
  File* f = find_file(a.ncid);
  // The mode errors are the same on every rank: then nobody meets.
  const bool collective_put = a.put && a.all && f->writer && !f->define_mode && !f->independent;
  if (collective_put) writers_meet(*f);
  int first = num < 0 ? NC_EINVAL : NC_NOERR;
  for (int i = 0; i < num; ++i) {
    Access one = a;
    one.meet = false;
    one.varid = varids != nullptr ? varids[i] : -1;
    one.start = starts != nullptr ? starts[i] : nullptr;
    one.count = counts != nullptr ? counts[i] : nullptr;
    one.stride = strides != nullptr ? strides[i] : nullptr;
    one.imap = imaps != nullptr ? imaps[i] : nullptr;
    one.buf = bufs != nullptr ? bufs[i] : nullptr;
    if (datatypes != nullptr) {
      one.bufcount = bufcounts != nullptr ? bufcounts[i] : -1;
      one.buftype = datatypes[i];
    }
    const int rc = access(one);
    if (first == NC_NOERR) first = rc;
  }
  if (collective_put) writers_meet(*f);
  return first;
}

}  // namespace cove::pnetcdf
