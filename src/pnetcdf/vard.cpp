// ncmpi_{put,get}_vard[_all] on coupled files: the filetype (an MPI
// datatype of byte offsets from the variable's start in the file, as MPI-IO
// filetypes, so in increasing order) names elements of the file as PnetCDF
// lays it out (layout.hpp): the variable's, and those of other variables
// of its type it reaches; record variables step by the record size. Each
// run of elements along the last dimension becomes one put or get of a box.
#include "convert.hpp"
#include "files.hpp"

#include <fmt/format.h>

#include <cstring>

namespace cove::pnetcdf {
namespace {

// PnetCDF's ncmpii_dtype_decode: the one predefined type a datatype is
// built of (as a memory type) and its number of elements; NC_EMULTITYPES
// when it mixes types, NC_EUNSPTETYPE for a type netCDF has none for.
int decode(MPI_Datatype t, nc_type* base, MPI_Offset* elements) {
  int ni = 0, na = 0, nd = 0, combiner = 0;
  MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
  if (combiner == MPI_COMBINER_NAMED) {
    *base = memory_type(t);
    *elements = 1;
    return *base == NC_NAT ? NC_EUNSPTETYPE : NC_NOERR;
  }
  std::vector<int> ints(static_cast<std::size_t>(ni));
  std::vector<MPI_Aint> addrs(static_cast<std::size_t>(na));
  std::vector<MPI_Datatype> types(static_cast<std::size_t>(nd));
  MPI_Type_get_contents(t, ni, na, nd, ints.data(), addrs.data(), types.data());
  int status = NC_NOERR;
  nc_type found = NC_NAT;
  for (MPI_Datatype sub : types) {
    nc_type b = NC_NAT;
    MPI_Offset n = 0;
    const int rc = decode(sub, &b, &n);
    int sub_combiner = 0;
    MPI_Type_get_envelope(sub, &ni, &na, &nd, &sub_combiner);
    if (sub_combiner != MPI_COMBINER_NAMED) MPI_Type_free(&sub);
    if (status != NC_NOERR) continue;
    if (rc != NC_NOERR) {
      status = rc;
    } else if (found != NC_NAT && b != found) {
      status = NC_EMULTITYPES;
    }
    found = b;
  }
  if (status != NC_NOERR) return status;
  if (found == NC_NAT) return NC_EUNSPTETYPE;
  *base = found;
  int bytes = 0;
  MPI_Type_size(t, &bytes);
  *elements = static_cast<MPI_Offset>(bytes) / static_cast<MPI_Offset>(type_size(found));
  return NC_NOERR;
}

// A filetype's element type matches the variable's external type.
bool same_type(nc_type etype, nc_type xtype) {
  return etype == xtype || (etype == kMemLong && xtype == NC_INT64) || (etype == NC_UBYTE && xtype == NC_BYTE);
}

// Where a byte of the file lies: which variable, which element.
struct Cell {
  int varid = -1;
  std::vector<MPI_Offset> coord;
};

// The variable element at byte `at` of the file laid out as `f`'s
// layout says; varid -1 for bytes no variable element starts at (the
// header, padding, free space, past the end). `hint`: the variable to try
// first (the previous element's).
Cell cell_at(const File& f, MPI_Offset at, int hint) {
  const Schema& s = f.schema;
  const Layout& l = s.layout;
  Cell c;
  const bool has_records = l.recsize > 0;
  MPI_Offset rec = 0, pos = at;
  if (has_records && at >= l.begin_rec) {
    rec = (at - l.begin_rec) / l.recsize;
    pos = l.begin_rec + (at - l.begin_rec) % l.recsize;
  }
  const std::size_t n = std::min(s.vars.size(), l.begin.size());
  for (std::size_t k = 0; k <= n; ++k) {
    // k == 0: the hint; then every variable in order.
    if (k == 0 && (hint < 0 || static_cast<std::size_t>(hint) >= n)) continue;
    const std::size_t i = k == 0 ? static_cast<std::size_t>(hint) : k - 1;
    const Var& v = s.vars[i];
    const bool record = !v.dims.empty() && v.dims[0] == s.unlimdim;
    if (record != (has_records && at >= l.begin_rec)) continue;
    const MPI_Offset xsize = static_cast<MPI_Offset>(type_size(v.type));
    MPI_Offset elements = 1;
    for (std::size_t d = record ? 1 : 0; d < v.dims.size(); ++d) {
      elements *= s.dims[static_cast<std::size_t>(v.dims[d])].len;
    }
    const MPI_Offset off = pos - l.begin[i];
    if (off < 0 || off >= elements * xsize || off % xsize != 0) continue;
    MPI_Offset index = off / xsize;
    c.varid = static_cast<int>(i);
    c.coord.assign(std::max<std::size_t>(v.dims.size(), 1), 0);
    for (std::size_t d = v.dims.size(); d-- > (record ? 1u : 0u);) {
      const MPI_Offset len = s.dims[static_cast<std::size_t>(v.dims[d])].len;
      c.coord[d] = index % len;
      index /= len;
    }
    if (record) c.coord[0] = rec;
    return c;
  }
  return c;
}

// One box of one variable: a run along its last dimension.
struct Run {
  int varid = -1;
  std::vector<MPI_Offset> start, count;
  std::size_t first = 0;  // its first element's index among the filetype's elements
};

// PnetCDF's order of checks (ncmpio_vard): the modes and the variable,
// then the filetype (a zero-length one is a no-op; one type, the
// variable's), then the buftype (one type, as many elements). The
// filetype's byte offsets count from the variable's offset in the file
// (inq_varoffset) and may reach other variables of the same type, as in
// PnetCDF's examples that write two variables with one call; bytes no
// element of such a variable starts at are refused (NC_ENOTSUPPORT, named).
int vard(int ncid, int varid, MPI_Datatype filetype, void* buf, MPI_Offset bufcount, MPI_Datatype buftype, bool put,
         bool all, const char* name) {
  File* f = find_file(ncid);
  if (put && !f->writer) return NC_EPERM;
  if (f->define_mode) return NC_EINDEFINE;
  if (all && f->independent) return NC_EINDEP;
  if (!all && !f->independent) return NC_ENOTINDEP;
  if (varid == NC_GLOBAL) return NC_EGLOBAL;
  if (varid < 0 || static_cast<std::size_t>(varid) >= f->schema.vars.size()) return NC_ENOTVAR;
  const Var& v = f->schema.vars[static_cast<std::size_t>(varid)];
  if (filetype == MPI_DATATYPE_NULL) return NC_NOERR;  // PnetCDF: a zero-length request
  const std::size_t xsize = type_size(v.type);
  int size = 0;
  MPI_Type_size(filetype, &size);
  if (size < 0) return NC_EINTOVERFLOW;
  if (size == 0) return NC_NOERR;
  nc_type etype = NC_NAT;
  MPI_Offset file_elements = 0;
  if (const int rc = decode(filetype, &etype, &file_elements); rc != NC_NOERR) return rc;
  if (!same_type(etype, v.type)) return NC_ETYPE_MISMATCH;
  // The memory side: the buftype's one type, as many elements as the filetype.
  if (bufcount == 0 && buftype != MPI_DATATYPE_NULL) return NC_NOERR;
  nc_type mem = v.type;
  std::size_t elements = static_cast<std::size_t>(file_elements);
  char* memory = static_cast<char*>(buf);
  std::vector<char> packed;  // a derived buftype's elements, packed
  int packed_bytes = 0;
  if (buftype != MPI_DATATYPE_NULL) {
    MPI_Offset per = 0;
    if (const int rc = decode(buftype, &mem, &per); rc != NC_NOERR) return rc;
    if ((mem == NC_CHAR) != (v.type == NC_CHAR)) return NC_ECHAR;
    if (bufcount < 0 || per * bufcount != file_elements) return NC_EIOMISMATCH;
    int type_bytes = 0;
    MPI_Type_size(buftype, &type_bytes);
    packed_bytes = static_cast<int>(bufcount) * type_bytes;
    int combiner = 0, ni = 0, na = 0, nd = 0;
    MPI_Type_get_envelope(buftype, &ni, &na, &nd, &combiner);
    if (combiner != MPI_COMBINER_NAMED) {
      packed.resize(static_cast<std::size_t>(packed_bytes));
      int at = 0;
      if (put) MPI_Pack(buf, static_cast<int>(bufcount), buftype, packed.data(), packed_bytes, &at, MPI_COMM_SELF);
      memory = packed.data();
    }
  }
  // Which bytes the filetype covers: `size` marked bytes unpacked through it.
  MPI_Aint lb = 0, extent = 0;
  MPI_Type_get_true_extent(filetype, &lb, &extent);
  std::vector<unsigned char> mask(static_cast<std::size_t>(extent), 0), marks(static_cast<std::size_t>(size), 1);
  int position = 0;
  MPI_Unpack(marks.data(), size, &position, mask.data() - lb, 1, filetype, MPI_COMM_SELF);
  const MPI_Offset origin = static_cast<std::size_t>(varid) < f->schema.layout.begin.size()
                                ? f->schema.layout.begin[static_cast<std::size_t>(varid)]
                                : 0;
  std::vector<Run> runs;
  std::size_t n = 0;
  for (std::size_t k = 0; k < mask.size(); ++k) {
    if (!mask[k]) continue;
    const MPI_Offset at = origin + lb + static_cast<MPI_Offset>(k);
    Cell c = cell_at(*f, at, runs.empty() ? varid : runs.back().varid);
    if (c.varid < 0 || f->schema.vars[static_cast<std::size_t>(c.varid)].type != v.type) {
      return report(NC_ENOTSUPPORT, fmt::format("{} on the coupled file {}: the filetype reaches byte {} of the file, "
                                                "which is no element of a variable of this one's type",
                                                name, f->path, at));
    }
    k += xsize - 1;
    const std::size_t nd = c.coord.size();
    Run* last = runs.empty() ? nullptr : &runs.back();
    bool extends = last != nullptr && last->varid == c.varid;
    for (std::size_t d = 0; extends && d + 1 < nd; ++d) extends = last->start[d] == c.coord[d];
    if (extends) extends = last->start[nd - 1] + last->count[nd - 1] == c.coord[nd - 1];
    if (extends) {
      ++last->count[nd - 1];
    } else {
      runs.push_back({c.varid, c.coord, std::vector<MPI_Offset>(nd, 1), n});
    }
    ++n;
  }
  if (n != elements) return NC_EIOMISMATCH;
  const bool raw_byte = !(f->schema.cmode & NC_64BIT_DATA);
  std::vector<char> external(elements * xsize);
  int status = NC_NOERR;
  if (put) {
    status = convert(memory, mem, external.data(), v.type, elements, raw_byte);
    if (status != NC_NOERR && status != NC_ERANGE) return status;
  }
  // A collective put meets the other ranks before and after, as access() does.
  if (put && all) writers_meet(*f);
  int rc = NC_NOERR;
  for (const auto& run : runs) {
    const Var& target = f->schema.vars[static_cast<std::size_t>(run.varid)];
    Access a;
    a.name = name;
    a.put = put;
    a.kind = 'a';
    a.nonblocking = 'i';  // the mode checks are above
    a.mem = v.type;
    a.ncid = ncid;
    a.varid = run.varid;
    a.start = target.dims.empty() ? nullptr : run.start.data();
    a.count = target.dims.empty() ? nullptr : run.count.data();
    a.buf = external.data() + run.first * xsize;
    rc = access(a);
    if (rc != NC_NOERR && rc != NC_ERANGE) break;
  }
  if (put && all) writers_meet(*f);
  if (rc != NC_NOERR && rc != NC_ERANGE) return rc;
  if (!put) {
    status = convert(external.data(), v.type, memory, mem, elements, raw_byte);
    if (!packed.empty()) {
      int at = 0;
      MPI_Unpack(packed.data(), packed_bytes, &at, buf, static_cast<int>(bufcount), buftype, MPI_COMM_SELF);
    }
  }
  return status;
}

}  // namespace
}  // namespace cove::pnetcdf

using namespace cove::pnetcdf;

extern "C" {

COVE_PNETCDF_API int ncmpi_put_vard(int ncid, int varid, MPI_Datatype filetype, const void* ip, MPI_Offset bufcount,
                                    MPI_Datatype buftype) {
  COUPLED(ncmpi_put_vard, ncid, varid, filetype, ip, bufcount, buftype)
  (void)f;
  return vard(ncid, varid, filetype, const_cast<void*>(ip), bufcount, buftype, true, false, "ncmpi_put_vard");
}

COVE_PNETCDF_API int ncmpi_put_vard_all(int ncid, int varid, MPI_Datatype filetype, const void* ip,
                                        MPI_Offset bufcount, MPI_Datatype buftype) {
  COUPLED(ncmpi_put_vard_all, ncid, varid, filetype, ip, bufcount, buftype)
  (void)f;
  return vard(ncid, varid, filetype, const_cast<void*>(ip), bufcount, buftype, true, true, "ncmpi_put_vard_all");
}

COVE_PNETCDF_API int ncmpi_get_vard(int ncid, int varid, MPI_Datatype filetype, void* ip, MPI_Offset bufcount,
                                    MPI_Datatype buftype) {
  COUPLED(ncmpi_get_vard, ncid, varid, filetype, ip, bufcount, buftype)
  if (f->real_too) return NC_NOERR;
  return vard(ncid, varid, filetype, ip, bufcount, buftype, false, false, "ncmpi_get_vard");
}

COVE_PNETCDF_API int ncmpi_get_vard_all(int ncid, int varid, MPI_Datatype filetype, void* ip, MPI_Offset bufcount,
                                        MPI_Datatype buftype) {
  COUPLED(ncmpi_get_vard_all, ncid, varid, filetype, ip, bufcount, buftype)
  if (f->real_too) return NC_NOERR;
  return vard(ncid, varid, filetype, ip, bufcount, buftype, false, true, "ncmpi_get_vard_all");
}

}  // extern "C"
