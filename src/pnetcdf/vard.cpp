// ncmpi_{put,get}_vard[_all] on coupled files: the filetype (an MPI
// datatype of byte offsets from the variable's start in the file, as MPI-IO
// filetypes, so in increasing order) names the variable's elements; record
// variables step by the file's record size. Each run of elements along the
// last dimension becomes one put or get of a box.
#include "convert.hpp"
#include "files.hpp"

#include <fmt/format.h>

#include <cstring>

namespace cove::pnetcdf {
namespace {

// One box of the variable: a run along its last dimension.
struct Run {
  std::vector<MPI_Offset> start, count;
  std::size_t first = 0;  // its first element's index among the filetype's elements
};

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
  const bool record = !v.dims.empty() && v.dims[0] == f->schema.unlimdim;
  const std::size_t ndim = v.dims.size();
  int size = 0;
  MPI_Type_size(filetype, &size);
  MPI_Aint lb = 0, extent = 0;
  MPI_Type_get_true_extent(filetype, &lb, &extent);
  if (lb < 0) {
    return report(NC_ENOTSUPPORT, fmt::format("{} on the coupled file {}: a filetype that reaches before the "
                                              "variable (into others) is not supported", name, f->path));
  }
  if (size < 0 || static_cast<std::size_t>(size) % xsize != 0) {
    return report(NC_EIOMISMATCH, fmt::format("{} on the coupled file {}: the filetype's {} bytes are not whole "
                                              "elements of {} bytes", name, f->path, size, xsize));
  }
  // Which bytes the filetype covers: unpacking `size` marked bytes through it.
  std::vector<unsigned char> mask(static_cast<std::size_t>(lb + extent), 0), marks(static_cast<std::size_t>(size), 1);
  int position = 0;
  if (size > 0) MPI_Unpack(marks.data(), size, &position, mask.data(), 1, filetype, MPI_COMM_SELF);
  const MPI_Offset recsize = record ? f->schema.layout.recsize : 0;
  if (record && recsize <= 0 && size > 0) {
    return report(NC_EINVALCOORDS, fmt::format("{} on the coupled file {}: the filetype reaches into a record "
                                               "variable whose records are empty", name, f->path));
  }
  std::vector<MPI_Offset> shape(ndim);
  for (std::size_t d = 0; d < ndim; ++d) shape[d] = f->schema.dims[static_cast<std::size_t>(v.dims[d])].len;
  std::vector<Run> runs;
  std::size_t elements = 0;
  for (std::size_t at = 0; at < mask.size(); at += xsize) {
    if (!mask[at]) continue;
    // This element's coordinates.
    std::vector<MPI_Offset> coord(std::max<std::size_t>(ndim, 1), 0);
    MPI_Offset index = static_cast<MPI_Offset>(at / xsize);
    std::size_t low = 0;
    if (record) {
      coord[0] = static_cast<MPI_Offset>(at) / recsize;
      index = (static_cast<MPI_Offset>(at) % recsize) / static_cast<MPI_Offset>(xsize);
      low = 1;
    }
    for (std::size_t d = ndim; d-- > low;) {
      coord[d] = index % shape[d];
      index /= shape[d];
    }
    if (ndim > 0 && index != 0 && !record) {
      return report(NC_EINVALCOORDS, fmt::format("{} on the coupled file {}: the filetype reaches byte {}, beyond "
                                                 "the variable", name, f->path, at));
    }
    Run* last = runs.empty() ? nullptr : &runs.back();
    bool extends = last != nullptr && ndim > 0;
    for (std::size_t d = 0; extends && d + 1 < ndim; ++d) extends = last->start[d] == coord[d];
    if (extends) extends = last->start[ndim - 1] + last->count[ndim - 1] == coord[ndim - 1];
    if (extends) {
      ++last->count[ndim - 1];
    } else {
      runs.push_back({coord, std::vector<MPI_Offset>(coord.size(), 1), elements});
    }
    ++elements;
  }
  // The memory side: the buffer in its memory type, packed.
  nc_type mem = v.type;
  std::size_t mem_elements = elements;
  char* memory = static_cast<char*>(buf);
  std::vector<char> packed;  // a derived buftype's elements, packed
  int packed_bytes = 0;
  if (buftype != MPI_DATATYPE_NULL) {
    int combiner = 0, ni = 0, na = 0, nd = 0;
    MPI_Type_get_envelope(buftype, &ni, &na, &nd, &combiner);
    mem = combiner == MPI_COMBINER_NAMED ? memory_type(buftype) : buftype_base(buftype);
    if (mem == NC_NAT || bufcount < 0) {
      return report(NC_EUNSPTETYPE, fmt::format("{} on the coupled file {}: the buftype is not built of one "
                                                "predefined type netCDF knows", name, f->path));
    }
    int type_bytes = 0;
    MPI_Type_size(buftype, &type_bytes);
    packed_bytes = static_cast<int>(bufcount) * type_bytes;
    mem_elements = static_cast<std::size_t>(packed_bytes) / type_size(mem);
    if (combiner != MPI_COMBINER_NAMED) {
      packed.resize(static_cast<std::size_t>(packed_bytes));
      int at = 0;
      if (put) MPI_Pack(buf, static_cast<int>(bufcount), buftype, packed.data(), packed_bytes, &at, MPI_COMM_SELF);
      memory = packed.data();
    }
  }
  if (mem_elements != elements) return NC_EIOMISMATCH;
  if ((mem == NC_CHAR) != (v.type == NC_CHAR)) return NC_ECHAR;
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
    Access a;
    a.name = name;
    a.put = put;
    a.kind = 'a';
    a.nonblocking = 'i';  // the mode checks are above
    a.mem = v.type;
    a.ncid = ncid;
    a.varid = varid;
    a.start = ndim > 0 ? run.start.data() : nullptr;
    a.count = ndim > 0 ? run.count.data() : nullptr;
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
