// The entry points that build a coupled file's schema in define mode
// (dimensions, variables, attributes) and answer from it (inq_*, get_att).
#include "convert.hpp"
#include "files.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

namespace cove::pnetcdf {
namespace {

// The index of the dimension, variable or attribute called `name`; -1 if none (or no name).
template <class Named>
int index_of(const std::vector<Named>& items, const char* name) {
  if (name == nullptr) return -1;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (items[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

const Var* var_of(const File& f, int varid) {
  if (varid < 0 || static_cast<std::size_t>(varid) >= f.schema.vars.size()) return nullptr;
  return &f.schema.vars[static_cast<std::size_t>(varid)];
}

// The attribute list of a variable or of the file (NC_GLOBAL); nullptr for a bad varid.
std::vector<Att>* atts_of(File& f, int varid) {
  if (varid == NC_GLOBAL) return &f.schema.atts;
  if (varid < 0 || static_cast<std::size_t>(varid) >= f.schema.vars.size()) return nullptr;
  return &f.schema.vars[static_cast<std::size_t>(varid)].atts;
}

const Att* find_att(File& f, int varid, const char* name, int* status) {
  auto* atts = atts_of(f, varid);
  if (atts == nullptr) {
    *status = NC_ENOTVAR;
    return nullptr;
  }
  const int id = index_of(*atts, name);
  if (id >= 0) return &(*atts)[static_cast<std::size_t>(id)];
  *status = NC_ENOTATT;
  return nullptr;
}

// The longest dimension each format can record (PnetCDF's limits: 2^31-4,
// 2^32-4 elements; none but MPI_Offset's in CDF-5).
MPI_Offset max_dim_len(int cmode) {
  if (cmode & NC_64BIT_DATA) return std::numeric_limits<MPI_Offset>::max();
  if (cmode & NC_64BIT_OFFSET) return (MPI_Offset{1} << 32) - 4;
  return (MPI_Offset{1} << 31) - 4;
}

void copy_name(char* out, const std::string& name) {
  if (out != nullptr) std::memcpy(out, name.c_str(), name.size() + 1);
}

template <class T>
std::vector<std::byte> bytes_of(T value) {
  std::vector<std::byte> out(sizeof(T));
  std::memcpy(out.data(), &value, sizeof(T));
  return out;
}

// The type's default fill value (netCDF's NC_FILL_*), one element's bytes.
std::vector<std::byte> default_fill(nc_type t) {
  switch (t) {
    case NC_BYTE: return bytes_of<signed char>(NC_FILL_BYTE);
    case NC_CHAR: return bytes_of<char>(NC_FILL_CHAR);
    case NC_SHORT: return bytes_of<short>(NC_FILL_SHORT);
    case NC_INT: return bytes_of<int>(NC_FILL_INT);
    case NC_FLOAT: return bytes_of<float>(NC_FILL_FLOAT);
    case NC_DOUBLE: return bytes_of<double>(NC_FILL_DOUBLE);
    case NC_UBYTE: return bytes_of<unsigned char>(NC_FILL_UBYTE);
    case NC_USHORT: return bytes_of<unsigned short>(NC_FILL_USHORT);
    case NC_UINT: return bytes_of<unsigned int>(NC_FILL_UINT);
    case NC_INT64: return bytes_of<long long>(NC_FILL_INT64);
    default: return bytes_of<unsigned long long>(NC_FILL_UINT64);
  }
}

// The variable's _FillValue, else the type's default.
std::vector<std::byte> fill_value_of(const Var& v) {
  for (const auto& a : v.atts) {
    if (a.name == "_FillValue" && a.type == v.type && a.len == 1) {
      std::vector<std::byte> out(a.data.size());
      std::memcpy(out.data(), a.data.data(), a.data.size());
      return out;
    }
  }
  return default_fill(v.type);
}

}  // namespace

// PnetCDF fills fixed-size variables in fill mode (at enddef); record
// variables only where fill_var_rec is called, so theirs stay unfilled.
std::vector<std::byte> fill_bytes(const Var& v, int unlimdim) {
  if (v.no_fill || (!v.dims.empty() && v.dims[0] == unlimdim)) return {};
  return fill_value_of(v);
}

// The order of PnetCDF's checks: sanity_check_put, check_EBADTYPE_ECHAR
// and check_EINVAL in its dispatcher, then ncmpio_put_att (_FillValue,
// define mode: in data mode only an existing attribute may be rewritten,
// no larger than it was).
int put_att(int ncid, int varid, const char* name, nc_type xtype, MPI_Offset len, const void* buf, nc_type mem) {
  File* f = find_file(ncid);
  if (!f->writer) return NC_EPERM;
  auto* atts = atts_of(*f, varid);
  if (atts == nullptr) return NC_ENOTVAR;
  if (name == nullptr || *name == '\0') return NC_EBADNAME;
  if (std::strlen(name) > NC_MAX_NAME) return NC_EMAXNAME;
  if (const int rc = check_external(xtype, f->schema.cmode); rc != NC_NOERR) return rc;
  if ((xtype == NC_CHAR) != (mem == NC_CHAR)) return NC_ECHAR;
  if (len > 0 && buf == nullptr) return NC_EINVAL;
  if (len < 0 || (len > NC_MAX_INT && !(f->schema.cmode & NC_64BIT_DATA))) return NC_EINVAL;
  if (varid != NC_GLOBAL && std::strcmp(name, "_FillValue") == 0) {
    if (xtype != f->schema.vars[static_cast<std::size_t>(varid)].type) return NC_EBADTYPE;
    if (len != 1) return NC_EINVAL;
    // In redef, for a variable from before: its fill value was written (PnetCDF's ncp->old).
    if (f->define_mode && static_cast<std::size_t>(varid) < f->fixed_vars) return NC_ELATEFILL;
  }
  const std::size_t bytes = static_cast<std::size_t>(len) * type_size(xtype);
  const int existing = index_of(*atts, name);
  if (!f->define_mode) {
    if (existing < 0 || bytes > (*atts)[static_cast<std::size_t>(existing)].data.size()) return NC_ENOTINDEFINE;
  }
  if (existing < 0 && atts->size() >= static_cast<std::size_t>(NC_MAX_ATTRS)) return NC_EMAXATTS;
  Att a{name, xtype, len, std::vector<char>(bytes)};
  int status = NC_NOERR;
  if (len > 0) status = convert(buf, mem, a.data.data(), xtype, static_cast<std::size_t>(len), !(f->schema.cmode & NC_64BIT_DATA));
  if (status != NC_NOERR && status != NC_ERANGE) return status;
  if (existing >= 0) {
    (*atts)[static_cast<std::size_t>(existing)] = std::move(a);
  } else {
    atts->push_back(std::move(a));
  }
  return status;
}

// PnetCDF's order: sanity_check_get (variable, name), then ncmpio_get_att
// (the attribute, an empty one, NC_ECHAR, a NULL buffer).
int get_att(int ncid, int varid, const char* name, void* buf, nc_type mem) {
  File* f = find_file(ncid);
  if (atts_of(*f, varid) == nullptr) return NC_ENOTVAR;
  if (name == nullptr || *name == '\0') return NC_EBADNAME;
  if (std::strlen(name) > NC_MAX_NAME) return NC_EMAXNAME;
  int status = NC_NOERR;
  const Att* a = find_att(*f, varid, name, &status);
  if (a == nullptr) return status;
  if (a->len == 0) return NC_NOERR;
  if (mem == NC_NAT) mem = a->type;
  if ((a->type == NC_CHAR) != (mem == NC_CHAR)) return NC_ECHAR;
  if (buf == nullptr) return NC_EINVAL;
  return convert(a->data.data(), a->type, buf, mem, static_cast<std::size_t>(a->len), !(f->schema.cmode & NC_64BIT_DATA));
}

}  // namespace cove::pnetcdf

using namespace cove::pnetcdf;

extern "C" {

// PnetCDF's order: define mode, the name, the size for the format (CDF-5
// has no upper limit), one unlimited dimension, the name in use.
COVE_PNETCDF_API int ncmpi_def_dim(int ncid, const char* name, MPI_Offset len, int* idp) {
  COUPLED(ncmpi_def_dim, ncid, name, len, idp)
  if (!f->define_mode) return NC_ENOTINDEFINE;
  if (name == nullptr || *name == '\0') return NC_EBADNAME;
  if (std::strlen(name) > NC_MAX_NAME) return NC_EMAXNAME;
  if (len < 0 || len > max_dim_len(f->schema.cmode)) return NC_EDIMSIZE;
  if (len == NC_UNLIMITED && f->schema.unlimdim >= 0) return NC_EUNLIMIT;
  if (index_of(f->schema.dims, name) >= 0) return NC_ENAMEINUSE;
  if (len == NC_UNLIMITED) f->schema.unlimdim = static_cast<int>(f->schema.dims.size());
  f->schema.dims.push_back({name, len});
  if (idp != nullptr) *idp = static_cast<int>(f->schema.dims.size()) - 1;
  return NC_NOERR;
}

// PnetCDF's order: define mode, the name, the type, the number of
// dimensions, the name in use, the dimension ids; then its driver's
// NC_EUNLIMPOS.
COVE_PNETCDF_API int ncmpi_def_var(int ncid, const char* name, nc_type xtype, int ndims, const int* dimidsp,
                                   int* varidp) {
  COUPLED(ncmpi_def_var, ncid, name, xtype, ndims, dimidsp, varidp)
  if (!f->define_mode) return NC_ENOTINDEFINE;
  if (name == nullptr || *name == '\0') return NC_EBADNAME;
  if (std::strlen(name) > NC_MAX_NAME) return NC_EMAXNAME;
  if (const int rc = check_external(xtype, f->schema.cmode); rc != NC_NOERR) return rc;
  if (ndims > NC_MAX_VAR_DIMS) return NC_EMAXDIMS;
  if (ndims < 0) return NC_EINVAL;
  if (index_of(f->schema.vars, name) >= 0) return NC_ENAMEINUSE;
  if (ndims > 0 && dimidsp == nullptr) return NC_EINVAL;
  for (int i = 0; i < ndims; ++i) {
    if (dimidsp[i] < 0 || static_cast<std::size_t>(dimidsp[i]) >= f->schema.dims.size()) return NC_EBADDIM;
  }
  Var v{name, xtype, {}, {}, f->schema.fill_mode == NC_NOFILL, {}, {}};
  for (int i = 0; i < ndims; ++i) {
    if (i > 0 && dimidsp[i] == f->schema.unlimdim) return NC_EUNLIMPOS;
    v.dims.push_back(dimidsp[i]);
  }
  // PnetCDF's ncmpio_NC_check_vlen: no variable of more than 2^63-4 bytes.
  MPI_Offset bytes = static_cast<MPI_Offset>(type_size(xtype));
  for (std::size_t d = 0; d < v.dims.size(); ++d) {
    if (d == 0 && v.dims[0] == f->schema.unlimdim) continue;
    const MPI_Offset len = f->schema.dims[static_cast<std::size_t>(v.dims[d])].len;
    if (len > (std::numeric_limits<MPI_Offset>::max() - 3) / bytes) return NC_EVARSIZE;
    bytes *= len;
  }
  f->schema.vars.push_back(std::move(v));
  if (varidp != nullptr) *varidp = static_cast<int>(f->schema.vars.size()) - 1;
  return NC_NOERR;
}

COVE_PNETCDF_API int ncmpi_put_att(int ncid, int varid, const char* name, nc_type xtype, MPI_Offset nelems,
                                   const void* buf) {
  COUPLED(ncmpi_put_att, ncid, varid, name, xtype, nelems, buf)
  (void)f;
  return put_att(ncid, varid, name, xtype, nelems, buf, xtype);
}

COVE_PNETCDF_API int ncmpi_put_att_text(int ncid, int varid, const char* name, MPI_Offset len, const char* op) {
  COUPLED(ncmpi_put_att_text, ncid, varid, name, len, op)
  (void)f;
  return put_att(ncid, varid, name, NC_CHAR, len, op, NC_CHAR);
}

COVE_PNETCDF_API int ncmpi_get_att(int ncid, int varid, const char* name, void* buf) {
  COUPLED(ncmpi_get_att, ncid, varid, name, buf)
  (void)f;
  return get_att(ncid, varid, name, buf, NC_NAT);
}

COVE_PNETCDF_API int ncmpi_get_att_text(int ncid, int varid, const char* name, char* buf) {
  COUPLED(ncmpi_get_att_text, ncid, varid, name, buf)
  (void)f;
  return get_att(ncid, varid, name, buf, NC_CHAR);
}

// PnetCDF's order: write permission, define mode, the variable, the name,
// then the attribute.
COVE_PNETCDF_API int ncmpi_del_att(int ncid, int varid, const char* name) {
  COUPLED(ncmpi_del_att, ncid, varid, name)
  if (!f->writer) return NC_EPERM;
  if (!f->define_mode) return NC_ENOTINDEFINE;
  auto* atts = atts_of(*f, varid);
  if (atts == nullptr) return NC_ENOTVAR;
  if (name == nullptr || *name == '\0') return NC_EBADNAME;
  if (std::strlen(name) > NC_MAX_NAME) return NC_EMAXNAME;
  const int id = index_of(*atts, name);
  if (id < 0) return NC_ENOTATT;
  atts->erase(atts->begin() + id);
  return NC_NOERR;
}

// PnetCDF's order: write permission, the variable, both names, then the
// attribute, the new name in use, and in data mode a name that grows.
COVE_PNETCDF_API int ncmpi_rename_att(int ncid, int varid, const char* name, const char* newname) {
  COUPLED(ncmpi_rename_att, ncid, varid, name, newname)
  if (!f->writer) return NC_EPERM;
  auto* atts = atts_of(*f, varid);
  if (atts == nullptr) return NC_ENOTVAR;
  if (name == nullptr || *name == '\0') return NC_EBADNAME;
  if (std::strlen(name) > NC_MAX_NAME) return NC_EMAXNAME;
  if (newname == nullptr || *newname == '\0') return NC_EBADNAME;
  if (std::strlen(newname) > NC_MAX_NAME) return NC_EMAXNAME;
  const int id = index_of(*atts, name);
  if (id < 0) return NC_ENOTATT;
  if (index_of(*atts, newname) >= 0) return NC_ENAMEINUSE;
  Att& a = (*atts)[static_cast<std::size_t>(id)];
  if (!f->define_mode && a.name.size() < std::strlen(newname)) return NC_ENOTINDEFINE;
  a.name = newname;
  return NC_NOERR;
}

}  // extern "C"

namespace {

// An attribute of an uncoupled file, read through the real library.
int real_att(int ncid, int varid, const char* name, Att& out) {
  static const auto inq = real_fn<decltype(&::ncmpi_inq_att)>("ncmpi_inq_att");
  static const auto get = real_fn<decltype(&::ncmpi_get_att)>("ncmpi_get_att");
  if (const int rc = inq(ncid, varid, name, &out.type, &out.len); rc != NC_NOERR) return rc;
  out.name = name;
  out.data.resize(static_cast<std::size_t>(out.len) * type_size(out.type));
  return out.len > 0 ? get(ncid, varid, name, out.data.data()) : NC_NOERR;
}

}  // namespace

extern "C" {

// ncmpi_copy_att between any two files, coupled or not: PnetCDF's checks
// (the output file writable, both variables, the name), then the
// attribute read from the input and put into the output (put_att's rules:
// in data mode only over an attribute at least as large). A copy onto
// itself does nothing, as in PnetCDF.
COVE_PNETCDF_API int ncmpi_copy_att(int ncid_in, int varid_in, const char* name, int ncid_out, int varid_out) {
  static const auto real = real_fn<decltype(&::ncmpi_copy_att)>("ncmpi_copy_att");
  static const auto real_put = real_fn<decltype(&::ncmpi_put_att)>("ncmpi_put_att");
  File* in = find_file(ncid_in);
  File* out = find_file(ncid_out);
  if (in == nullptr && out == nullptr) return real(ncid_in, varid_in, name, ncid_out, varid_out);
  if ((in != nullptr && in->real_too) || (out != nullptr && out->real_too)) {
    return report(NC_ENOTSUPPORT, "ncmpi_copy_att is not supported with a file coupled in `both` mode");
  }
  if (out != nullptr) {
    if (!out->writer) return NC_EPERM;
    if (atts_of(*out, varid_out) == nullptr) return NC_ENOTVAR;
  }
  if (in != nullptr && atts_of(*in, varid_in) == nullptr) return NC_ENOTVAR;
  if (name == nullptr || *name == '\0') return NC_EBADNAME;
  if (std::strlen(name) > NC_MAX_NAME) return NC_EMAXNAME;
  Att a;
  if (in != nullptr) {
    int status = NC_NOERR;
    const Att* found = find_att(*in, varid_in, name, &status);
    if (found == nullptr) return status;
    a = *found;
  } else if (const int rc = real_att(ncid_in, varid_in, name, a); rc != NC_NOERR) {
    return rc;
  }
  if (in == out && varid_in == varid_out) return NC_NOERR;
  if (out == nullptr) return real_put(ncid_out, varid_out, name, a.type, a.len, a.data.data());
  return put_att(ncid_out, varid_out, name, a.type, a.len, a.data.data(), a.type);
}

// Fill mode, as PnetCDF's ncmpi_set_fill: the file's mode for variables
// defined next, and every variable's so far.
COVE_PNETCDF_API int ncmpi_set_fill(int ncid, int fillmode, int* old_modep) {
  COUPLED(ncmpi_set_fill, ncid, fillmode, old_modep)
  if (!f->writer) return NC_EPERM;
  if (!f->define_mode) return NC_ENOTINDEFINE;
  if (fillmode != NC_FILL && fillmode != NC_NOFILL) return NC_EINVAL;
  if (old_modep != nullptr && !f->real_too) *old_modep = f->schema.fill_mode;
  f->schema.fill_mode = fillmode;
  for (auto& v : f->schema.vars) v.no_fill = fillmode == NC_NOFILL;
  return NC_NOERR;
}

COVE_PNETCDF_API int ncmpi_def_var_fill(int ncid, int varid, int no_fill, const void* fill_value) {
  COUPLED(ncmpi_def_var_fill, ncid, varid, no_fill, fill_value)
  if (!f->define_mode) return NC_ENOTINDEFINE;
  if (varid == NC_GLOBAL) return NC_EGLOBAL;
  Var* v = varid >= 0 && static_cast<std::size_t>(varid) < f->schema.vars.size() ? &f->schema.vars[static_cast<std::size_t>(varid)] : nullptr;
  if (v == nullptr) return NC_ENOTVAR;
  v->no_fill = no_fill != 0;
  if (fill_value != nullptr && !v->no_fill) return put_att(ncid, varid, "_FillValue", v->type, 1, fill_value, v->type);
  return NC_NOERR;
}

COVE_PNETCDF_API int ncmpi_inq_var_fill(int ncid, int varid, int* no_fill, void* fill_value) {
  COUPLED(ncmpi_inq_var_fill, ncid, varid, no_fill, fill_value)
  if (varid == NC_GLOBAL) return NC_EGLOBAL;
  const Var* v = var_of(*f, varid);
  if (v == nullptr) return NC_ENOTVAR;
  if (f->real_too) return NC_NOERR;
  if (no_fill != nullptr) *no_fill = v->no_fill ? 1 : 0;
  if (fill_value != nullptr) {
    const auto bytes = fill_value_of(*v);
    std::memcpy(fill_value, bytes.data(), bytes.size());
  }
  return NC_NOERR;
}

// Writes the fill value into one record of a record variable, as
// PnetCDF's does: rank 0 puts it, and every rank waits for that put, so
// that a put that follows fill_var_rec on any rank wins over the fill.
COVE_PNETCDF_API int ncmpi_fill_var_rec(int ncid, int varid, MPI_Offset recno) {
  COUPLED(ncmpi_fill_var_rec, ncid, varid, recno)
  if (f->real_too) return NC_NOERR;
  if (!f->writer) return NC_EPERM;
  // PnetCDF 1.12.3's dispatcher notes define and independent mode but,
  // outside safe mode, calls its driver regardless and returns the
  // driver's code: the record is filled then too.
  if (f->safe_mode && f->define_mode) return NC_EINDEFINE;
  if (varid == NC_GLOBAL) return NC_EGLOBAL;
  const Var* v = var_of(*f, varid);
  if (v == nullptr) return NC_ENOTVAR;
  if (v->dims.empty() || v->dims[0] != f->schema.unlimdim) return NC_ENOTRECVAR;
  if (f->safe_mode && f->independent) return NC_EINDEP;
  bool has_fill_att = false;
  for (const auto& a : v->atts) has_fill_att = has_fill_att || a.name == "_FillValue";
  if (v->no_fill && !has_fill_att) return NC_ENOTFILL;
  if (recno < 0) return NC_EINVALCOORDS;
  const auto fill = fill_value_of(*v);
  std::vector<MPI_Offset> start(v->dims.size(), 0), count(v->dims.size(), 1);
  start[0] = recno;
  std::size_t elements = 1;
  for (std::size_t d = 1; d < v->dims.size(); ++d) {
    count[d] = f->schema.dims[static_cast<std::size_t>(v->dims[d])].len;
    elements *= static_cast<std::size_t>(count[d]);
  }
  int status = NC_NOERR;
  int rank = 0;
  MPI_Comm_rank(f->comm, &rank);
  if (rank == 0) {
    std::vector<std::byte> buf(elements * fill.size());
    for (std::size_t i = 0; i < elements; ++i) std::memcpy(buf.data() + i * fill.size(), fill.data(), fill.size());
    Access a;
    a.name = "ncmpi_fill_var_rec";
    a.put = true;
    a.kind = 'a';
    a.nonblocking = 'i';  // no mode check: PnetCDF's own fill is not a put_vara call
    a.mem = v->type;
    a.ncid = ncid;
    a.varid = varid;
    a.start = start.data();
    a.count = count.data();
    a.buf = buf.data();
    status = access(a);
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, f->comm);
  f->schema.numrecs = std::max(f->schema.numrecs, recno + 1);
  return status;
}

// Renames, in PnetCDF's order; in data mode a name may not grow
// (NC_ENOTINDEFINE). A renamed variable keeps its Cove variable (its key).
COVE_PNETCDF_API int ncmpi_rename_var(int ncid, int varid, const char* newname) {
  COUPLED(ncmpi_rename_var, ncid, varid, newname)
  if (!f->writer) return NC_EPERM;
  if (varid == NC_GLOBAL) return NC_EGLOBAL;
  if (varid < 0 || static_cast<std::size_t>(varid) >= f->schema.vars.size()) return NC_ENOTVAR;
  if (newname == nullptr || *newname == '\0') return NC_EBADNAME;
  if (std::strlen(newname) > NC_MAX_NAME) return NC_EMAXNAME;
  if (index_of(f->schema.vars, newname) >= 0) return NC_ENAMEINUSE;
  Var& v = f->schema.vars[static_cast<std::size_t>(varid)];
  if (!f->define_mode && v.name.size() < std::strlen(newname)) return NC_ENOTINDEFINE;
  if (v.key.empty()) v.key = v.name;
  v.name = newname;
  return NC_NOERR;
}

COVE_PNETCDF_API int ncmpi_rename_dim(int ncid, int dimid, const char* newname) {
  COUPLED(ncmpi_rename_dim, ncid, dimid, newname)
  if (!f->writer) return NC_EPERM;
  if (newname == nullptr || *newname == '\0') return NC_EBADNAME;
  if (std::strlen(newname) > NC_MAX_NAME) return NC_EMAXNAME;
  if (dimid < 0 || static_cast<std::size_t>(dimid) >= f->schema.dims.size()) return NC_EBADDIM;
  if (index_of(f->schema.dims, newname) >= 0) return NC_ENAMEINUSE;
  Dim& d = f->schema.dims[static_cast<std::size_t>(dimid)];
  if (!f->define_mode && d.name.size() < std::strlen(newname)) return NC_ENOTINDEFINE;
  d.name = newname;
  return NC_NOERR;
}

COVE_PNETCDF_API int ncmpi_inq(int ncid, int* ndimsp, int* nvarsp, int* nattsp, int* xtendimp) {
  COUPLED(ncmpi_inq, ncid, ndimsp, nvarsp, nattsp, xtendimp)
  if (ndimsp) *ndimsp = static_cast<int>(f->schema.dims.size());
  if (nvarsp) *nvarsp = static_cast<int>(f->schema.vars.size());
  if (nattsp) *nattsp = static_cast<int>(f->schema.atts.size());
  if (xtendimp) *xtendimp = f->schema.unlimdim;
  return NC_NOERR;
}

COVE_PNETCDF_API int ncmpi_inq_ndims(int ncid, int* ndimsp) {
  REAL_IF_UNCOUPLED(ncmpi_inq_ndims, ncid, ndimsp)
  return ncmpi_inq(ncid, ndimsp, nullptr, nullptr, nullptr);
}
COVE_PNETCDF_API int ncmpi_inq_nvars(int ncid, int* nvarsp) {
  REAL_IF_UNCOUPLED(ncmpi_inq_nvars, ncid, nvarsp)
  return ncmpi_inq(ncid, nullptr, nvarsp, nullptr, nullptr);
}
COVE_PNETCDF_API int ncmpi_inq_natts(int ncid, int* nattsp) {
  REAL_IF_UNCOUPLED(ncmpi_inq_natts, ncid, nattsp)
  return ncmpi_inq(ncid, nullptr, nullptr, nattsp, nullptr);
}
COVE_PNETCDF_API int ncmpi_inq_unlimdim(int ncid, int* unlimdimp) {
  REAL_IF_UNCOUPLED(ncmpi_inq_unlimdim, ncid, unlimdimp)
  return ncmpi_inq(ncid, nullptr, nullptr, nullptr, unlimdimp);
}

COVE_PNETCDF_API int ncmpi_inq_format(int ncid, int* formatp) {
  COUPLED(ncmpi_inq_format, ncid, formatp)
  if (formatp) {
    const int cmode = f->schema.cmode;
    *formatp = cmode & NC_64BIT_DATA ? NC_FORMAT_CDF5 : cmode & NC_64BIT_OFFSET ? NC_FORMAT_CDF2 : NC_FORMAT_CLASSIC;
  }
  return NC_NOERR;
}

COVE_PNETCDF_API int ncmpi_inq_path(int ncid, int* pathlen, char* path) {
  COUPLED(ncmpi_inq_path, ncid, pathlen, path)
  if (pathlen) *pathlen = static_cast<int>(f->path.size());
  copy_name(path, f->path);
  return NC_NOERR;
}

COVE_PNETCDF_API int ncmpi_inq_dimid(int ncid, const char* name, int* idp) {
  COUPLED(ncmpi_inq_dimid, ncid, name, idp)
  const int id = index_of(f->schema.dims, name);
  if (id < 0) return NC_EBADDIM;
  if (idp) *idp = id;
  return NC_NOERR;
}

COVE_PNETCDF_API int ncmpi_inq_dim(int ncid, int dimid, char* name, MPI_Offset* lenp) {
  COUPLED(ncmpi_inq_dim, ncid, dimid, name, lenp)
  if (dimid < 0 || static_cast<std::size_t>(dimid) >= f->schema.dims.size()) return NC_EBADDIM;
  const Dim& d = f->schema.dims[static_cast<std::size_t>(dimid)];
  copy_name(name, d.name);
  if (lenp) *lenp = dimid == f->schema.unlimdim ? f->schema.numrecs : d.len;
  return NC_NOERR;
}

COVE_PNETCDF_API int ncmpi_inq_dimname(int ncid, int dimid, char* name) {
  REAL_IF_UNCOUPLED(ncmpi_inq_dimname, ncid, dimid, name)
  return ncmpi_inq_dim(ncid, dimid, name, nullptr);
}
COVE_PNETCDF_API int ncmpi_inq_dimlen(int ncid, int dimid, MPI_Offset* lenp) {
  REAL_IF_UNCOUPLED(ncmpi_inq_dimlen, ncid, dimid, lenp)
  return ncmpi_inq_dim(ncid, dimid, nullptr, lenp);
}

COVE_PNETCDF_API int ncmpi_inq_varid(int ncid, const char* name, int* varidp) {
  COUPLED(ncmpi_inq_varid, ncid, name, varidp)
  const int id = index_of(f->schema.vars, name);
  if (id < 0) return NC_ENOTVAR;
  if (varidp) *varidp = id;
  return NC_NOERR;
}

COVE_PNETCDF_API int ncmpi_inq_var(int ncid, int varid, char* name, nc_type* xtypep, int* ndimsp, int* dimidsp,
                                   int* nattsp) {
  COUPLED(ncmpi_inq_var, ncid, varid, name, xtypep, ndimsp, dimidsp, nattsp)
  const Var* v = var_of(*f, varid);
  if (v == nullptr) return NC_ENOTVAR;
  copy_name(name, v->name);
  if (xtypep) *xtypep = v->type;
  if (ndimsp) *ndimsp = static_cast<int>(v->dims.size());
  if (dimidsp) std::copy(v->dims.begin(), v->dims.end(), dimidsp);
  if (nattsp) *nattsp = static_cast<int>(v->atts.size());
  return NC_NOERR;
}

COVE_PNETCDF_API int ncmpi_inq_varname(int ncid, int varid, char* name) {
  REAL_IF_UNCOUPLED(ncmpi_inq_varname, ncid, varid, name)
  return ncmpi_inq_var(ncid, varid, name, nullptr, nullptr, nullptr, nullptr);
}
COVE_PNETCDF_API int ncmpi_inq_vartype(int ncid, int varid, nc_type* xtypep) {
  REAL_IF_UNCOUPLED(ncmpi_inq_vartype, ncid, varid, xtypep)
  return ncmpi_inq_var(ncid, varid, nullptr, xtypep, nullptr, nullptr, nullptr);
}
COVE_PNETCDF_API int ncmpi_inq_varndims(int ncid, int varid, int* ndimsp) {
  REAL_IF_UNCOUPLED(ncmpi_inq_varndims, ncid, varid, ndimsp)
  return ncmpi_inq_var(ncid, varid, nullptr, nullptr, ndimsp, nullptr, nullptr);
}
COVE_PNETCDF_API int ncmpi_inq_vardimid(int ncid, int varid, int* dimidsp) {
  REAL_IF_UNCOUPLED(ncmpi_inq_vardimid, ncid, varid, dimidsp)
  return ncmpi_inq_var(ncid, varid, nullptr, nullptr, nullptr, dimidsp, nullptr);
}
COVE_PNETCDF_API int ncmpi_inq_varnatts(int ncid, int varid, int* nattsp) {
  REAL_IF_UNCOUPLED(ncmpi_inq_varnatts, ncid, varid, nattsp)
  return ncmpi_inq_var(ncid, varid, nullptr, nullptr, nullptr, nullptr, nattsp);
}

// The layout queries answer with what the file would hold after the last
// enddef (layout.hpp), 0 before the first one, as PnetCDF's.
COVE_PNETCDF_API int ncmpi_inq_recsize(int ncid, MPI_Offset* recsize) {
  COUPLED(ncmpi_inq_recsize, ncid, recsize)
  if (f->real_too || recsize == nullptr) return NC_NOERR;
  *recsize = f->schema.layout.recsize;
  return NC_NOERR;
}

COVE_PNETCDF_API int ncmpi_inq_header_size(int ncid, MPI_Offset* header_size) {
  COUPLED(ncmpi_inq_header_size, ncid, header_size)
  if (f->real_too || header_size == nullptr) return NC_NOERR;
  *header_size = f->schema.layout.xsz;
  return NC_NOERR;
}

COVE_PNETCDF_API int ncmpi_inq_header_extent(int ncid, MPI_Offset* header_extent) {
  COUPLED(ncmpi_inq_header_extent, ncid, header_extent)
  if (f->real_too || header_extent == nullptr) return NC_NOERR;
  *header_extent = f->schema.layout.begin_var;
  return NC_NOERR;
}

// A variable defined since the last enddef has offset 0, as in PnetCDF.
COVE_PNETCDF_API int ncmpi_inq_varoffset(int ncid, int varid, MPI_Offset* offset) {
  COUPLED(ncmpi_inq_varoffset, ncid, varid, offset)
  if (f->real_too) return NC_NOERR;
  if (varid == NC_GLOBAL) return NC_EGLOBAL;
  if (var_of(*f, varid) == nullptr) return NC_ENOTVAR;
  if (offset == nullptr) return NC_NOERR;
  const auto& begin = f->schema.layout.begin;
  *offset = static_cast<std::size_t>(varid) < begin.size() ? begin[static_cast<std::size_t>(varid)] : 0;
  return NC_NOERR;
}

// The bytes this rank's puts and gets moved (the data's external bytes,
// and rank 0's header at each enddef): PnetCDF also counts the header read
// at open and the numrecs it writes, which Cove does not.
COVE_PNETCDF_API int ncmpi_inq_put_size(int ncid, MPI_Offset* put_size) {
  COUPLED(ncmpi_inq_put_size, ncid, put_size)
  if (f->real_too || put_size == nullptr) return NC_NOERR;
  *put_size = f->put_size;
  return NC_NOERR;
}

COVE_PNETCDF_API int ncmpi_inq_get_size(int ncid, MPI_Offset* get_size) {
  COUPLED(ncmpi_inq_get_size, ncid, get_size)
  if (f->real_too || get_size == nullptr) return NC_NOERR;
  *get_size = f->get_size;
  return NC_NOERR;
}

// A file in memory has no file system striping: 0 and 0, as PnetCDF
// answers where MPI-IO reports none.
COVE_PNETCDF_API int ncmpi_inq_striping(int ncid, int* striping_size, int* striping_count) {
  COUPLED(ncmpi_inq_striping, ncid, striping_size, striping_count)
  if (f->real_too) return NC_NOERR;
  if (striping_size != nullptr) *striping_size = 0;
  if (striping_count != nullptr) *striping_count = 0;
  return NC_NOERR;
}

COVE_PNETCDF_API int ncmpi_inq_num_rec_vars(int ncid, int* nump) {
  COUPLED(ncmpi_inq_num_rec_vars, ncid, nump)
  int n = 0;
  for (const auto& v : f->schema.vars) n += !v.dims.empty() && v.dims[0] == f->schema.unlimdim;
  if (nump) *nump = n;
  return NC_NOERR;
}

COVE_PNETCDF_API int ncmpi_inq_num_fix_vars(int ncid, int* nump) {
  COUPLED(ncmpi_inq_num_fix_vars, ncid, nump)
  int n = 0;
  for (const auto& v : f->schema.vars) n += v.dims.empty() || v.dims[0] != f->schema.unlimdim;
  if (nump) *nump = n;
  return NC_NOERR;
}

COVE_PNETCDF_API int ncmpi_inq_att(int ncid, int varid, const char* name, nc_type* xtypep, MPI_Offset* lenp) {
  COUPLED(ncmpi_inq_att, ncid, varid, name, xtypep, lenp)
  int status = NC_NOERR;
  const Att* a = find_att(*f, varid, name, &status);
  if (a == nullptr) return status;
  if (xtypep) *xtypep = a->type;
  if (lenp) *lenp = a->len;
  return NC_NOERR;
}

COVE_PNETCDF_API int ncmpi_inq_atttype(int ncid, int varid, const char* name, nc_type* xtypep) {
  REAL_IF_UNCOUPLED(ncmpi_inq_atttype, ncid, varid, name, xtypep)
  return ncmpi_inq_att(ncid, varid, name, xtypep, nullptr);
}
COVE_PNETCDF_API int ncmpi_inq_attlen(int ncid, int varid, const char* name, MPI_Offset* lenp) {
  REAL_IF_UNCOUPLED(ncmpi_inq_attlen, ncid, varid, name, lenp)
  return ncmpi_inq_att(ncid, varid, name, nullptr, lenp);
}

COVE_PNETCDF_API int ncmpi_inq_attid(int ncid, int varid, const char* name, int* idp) {
  COUPLED(ncmpi_inq_attid, ncid, varid, name, idp)
  auto* atts = atts_of(*f, varid);
  if (atts == nullptr) return NC_ENOTVAR;
  const int id = index_of(*atts, name);
  if (id < 0) return NC_ENOTATT;
  if (idp) *idp = id;
  return NC_NOERR;
}

COVE_PNETCDF_API int ncmpi_inq_attname(int ncid, int varid, int attnum, char* name) {
  COUPLED(ncmpi_inq_attname, ncid, varid, attnum, name)
  auto* atts = atts_of(*f, varid);
  if (atts == nullptr) return NC_ENOTVAR;
  if (attnum < 0 || static_cast<std::size_t>(attnum) >= atts->size()) return NC_ENOTATT;
  copy_name(name, (*atts)[static_cast<std::size_t>(attnum)].name);
  return NC_NOERR;
}

}  // extern "C"
