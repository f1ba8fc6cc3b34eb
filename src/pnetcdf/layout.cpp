// PnetCDF 1.12.3's file layout, computed as its enddef computes it
// (src/drivers/ncmpio/ncmpio_enddef.c, ncmpio_header_get.c, ncmpio_var.c,
// ncmpio_util.c of the Debian source package): see layout.hpp.
#include "layout.hpp"

#include "convert.hpp"
#include "files.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>

#include <strings.h>

namespace cove::pnetcdf {
namespace {

constexpr MPI_Offset kAlignDefault = 512;  // FILE_ALIGNMENT_DEFAULT
constexpr MPI_Offset kIntMax = 2147483647;             // X_INT_MAX, X_OFF_MAX
constexpr MPI_Offset kUintMax = 4294967295LL;          // X_UINT_MAX
constexpr MPI_Offset kInt64Max = std::numeric_limits<MPI_Offset>::max();

MPI_Offset round_up(MPI_Offset x, MPI_Offset unit) { return (x + unit - 1) / unit * unit; }

int format_of(const Schema& s) {
  if (s.cmode & NC_64BIT_DATA) return 5;
  if (s.cmode & NC_64BIT_OFFSET) return 2;
  return 1;
}

bool is_record(const Schema& s, const Var& v) { return !v.dims.empty() && v.dims[0] == s.unlimdim; }

MPI_Offset dim_len(const Schema& s, int dimid) { return s.dims[static_cast<std::size_t>(dimid)].len; }

// ncmpio_NC_check_vlen: the variable's bytes (one record's) are at most vlen_max.
bool fits(const Schema& s, const Var& v, MPI_Offset vlen_max) {
  MPI_Offset prod = static_cast<MPI_Offset>(type_size(v.type));
  for (std::size_t i = is_record(s, v) ? 1 : 0; i < v.dims.size(); ++i) {
    const MPI_Offset len = dim_len(s, v.dims[i]);
    if (len > vlen_max / prod) return false;
    prod *= len;
  }
  return true;
}

// ncmpio_NC_check_vlens: at most one fixed-size variable too large for the
// format, the last one, and then no record variable; likewise one record
// variable, the last.
int check_vlens(const Schema& s) {
  if (s.vars.empty()) return NC_NOERR;
  const int format = format_of(s);
  const MPI_Offset vlen_max = format >= 5 ? kInt64Max - 3 : format == 2 ? kUintMax - 3 : kIntMax - 3;
  int large_fixed = 0, records = 0;
  bool last = false;
  for (const auto& v : s.vars) {
    if (is_record(s, v)) {
      ++records;
      continue;
    }
    last = false;
    if (!fits(s, v, vlen_max)) {
      if (format >= 5) return NC_EVARSIZE;
      ++large_fixed;
      last = true;
    }
  }
  if (large_fixed > 1 || (large_fixed == 1 && !last)) return NC_EVARSIZE;
  if (records == 0) return NC_NOERR;
  if (large_fixed == 1) return NC_EVARSIZE;
  int large_rec = 0;
  last = false;
  for (const auto& v : s.vars) {
    if (!is_record(s, v)) continue;
    last = false;
    if (!fits(s, v, vlen_max)) {
      if (format >= 5) return NC_EVARSIZE;
      ++large_rec;
      last = true;
    }
  }
  if (large_rec > 1 || (large_rec == 1 && !last)) return NC_EVARSIZE;
  return NC_NOERR;
}

MPI_Offset name_len(const std::string& name, MPI_Offset non_neg) {
  return non_neg + round_up(static_cast<MPI_Offset>(name.size()), 4);
}

MPI_Offset atts_len(const std::vector<Att>& atts, MPI_Offset non_neg) {
  MPI_Offset n = 4 + non_neg;  // NC_ATTRIBUTE, nelems
  for (const auto& a : atts) {
    n += name_len(a.name, non_neg) + 4 + non_neg + round_up(a.len * static_cast<MPI_Offset>(type_size(a.type)), 4);
  }
  return n;
}

// strtoll's value of a hint, or `fallback` when it is not there; errors
// and negative values read as 0, as PnetCDF reads them.
MPI_Offset number_hint(MPI_Info info, const char* key, MPI_Offset fallback, bool* given = nullptr) {
  if (given != nullptr) *given = false;
  if (info == MPI_INFO_NULL) return fallback;
  char value[MPI_MAX_INFO_VAL + 1];
  int flag = 0;
  MPI_Info_get(info, key, MPI_MAX_INFO_VAL - 1, value, &flag);
  if (!flag) return fallback;
  if (given != nullptr) *given = true;
  errno = 0;
  const long long v = std::strtoll(value, nullptr, 10);
  return errno != 0 || v < 0 ? 0 : v;
}

}  // namespace

MPI_Info combine_env_hints(MPI_Info user) {
  MPI_Info out = MPI_INFO_NULL;
  if (user != MPI_INFO_NULL) MPI_Info_dup(user, &out);
  const char* env = std::getenv("PNETCDF_HINTS");
  if (env == nullptr) return out;
  std::string all = env;
  std::size_t at = 0;
  while (at <= all.size()) {
    std::size_t end = all.find(';', at);
    if (end == std::string::npos) end = all.size();
    const std::string hint = all.substr(at, end - at);
    at = end + 1;
    // key=value, blanks around either; anything else is skipped, as PnetCDF skips it.
    const auto eq = hint.find('=');
    if (eq == std::string::npos) continue;
    auto trim = [](std::string t) {
      const auto b = t.find_first_not_of(" \t");
      if (b == std::string::npos) return std::string();
      return t.substr(b, t.find_last_not_of(" \t") - b + 1);
    };
    const std::string key = trim(hint.substr(0, eq)), value = trim(hint.substr(eq + 1));
    if (key.empty() || value.empty() || key.find_first_of(" \t") != std::string::npos ||
        value.find_first_of(" \t=") != std::string::npos) {
      continue;
    }
    if (out == MPI_INFO_NULL) MPI_Info_create(&out);
    MPI_Info_set(out, key.c_str(), value.c_str());
  }
  return out;
}

Hints read_hints(MPI_Info info) {
  Hints h;
  h.h_align = number_hint(info, "nc_header_align_size", 0);
  h.fx_v_align = number_hint(info, "nc_var_align_size", 0);
  h.r_align = number_hint(info, "nc_record_align_size", 0);
  h.chunk = number_hint(info, "nc_header_read_chunk_size", h.chunk);
  h.ibuf_size = number_hint(info, "nc_ibuf_size", h.ibuf_size);
  if (info != MPI_INFO_NULL) {
    char value[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MPI_Info_get(info, "nc_in_place_swap", MPI_MAX_INFO_VAL - 1, value, &flag);
    if (flag && (strcasecmp(value, "enable") == 0 || strcasecmp(value, "disable") == 0 ||
                 strcasecmp(value, "auto") == 0)) {
      h.swap = strcasecmp(value, "enable") == 0 ? "enable" : strcasecmp(value, "disable") == 0 ? "disable" : "auto";
    }
  }
  return h;
}

void set_hint_values(MPI_Info info, const Hints& h) {
  const std::string values[] = {std::to_string(h.h_align), std::to_string(h.fx_v_align), std::to_string(h.r_align),
                                std::to_string(h.chunk), std::to_string(h.ibuf_size)};
  MPI_Info_set(info, "nc_header_align_size", values[0].c_str());
  MPI_Info_set(info, "nc_var_align_size", values[1].c_str());
  MPI_Info_set(info, "nc_record_align_size", values[2].c_str());
  MPI_Info_set(info, "nc_header_read_chunk_size", values[3].c_str());
  MPI_Info_set(info, "nc_in_place_swap", h.swap.c_str());
  MPI_Info_set(info, "nc_ibuf_size", values[4].c_str());
  MPI_Info_set(info, "pnetcdf_subfiling", "disable");
}

MPI_Offset header_size(const Schema& s) {
  const int format = format_of(s);
  const MPI_Offset non_neg = format == 5 ? 8 : 4, offset = format == 1 ? 4 : 8;
  MPI_Offset n = 4 + non_neg;  // magic, numrecs
  n += 4 + non_neg;            // NC_DIMENSION, nelems
  for (const auto& d : s.dims) n += name_len(d.name, non_neg) + non_neg;
  n += atts_len(s.atts, non_neg);
  n += 4 + non_neg;  // NC_VARIABLE, nelems
  for (const auto& v : s.vars) {
    n += name_len(v.name, non_neg) + non_neg + non_neg * static_cast<MPI_Offset>(v.dims.size());
    n += atts_len(v.atts, non_neg) + 4 + non_neg + offset;  // nc_type, vsize, begin
  }
  return n;
}

MPI_Offset var_len(const Schema& s, int varid) {
  const Var& v = s.vars[static_cast<std::size_t>(varid)];
  MPI_Offset product = 1;
  for (std::size_t d = 0; d < v.dims.size(); ++d) {
    if (d == 0 && is_record(s, v)) continue;
    product *= dim_len(s, v.dims[d]);
  }
  return round_up(product * static_cast<MPI_Offset>(type_size(v.type)), 4);
}

int lay_out(const Schema& s, Hints& hints, MPI_Offset h_minfree, MPI_Offset v_align, MPI_Offset v_minfree,
            MPI_Offset r_align, const Layout* old, Layout& layout) {
  Hints h = hints;
  // ncmpio__enddef: the alignments the hints left open (this MPI-IO
  // reports no striping for a file in memory, so striping_unit plays no part).
  MPI_Offset all_fix_var_size = 0;
  for (std::size_t i = 0; i < s.vars.size(); ++i) {
    if (!is_record(s, s.vars[i])) all_fix_var_size += var_len(s, static_cast<int>(i));
  }
  if (h.h_align == 0) {
    if (v_align > 0) {
      h.h_align = v_align;
    } else if (all_fix_var_size > 0 && r_align > 0) {
      h.h_align = r_align;
    } else {
      h.h_align = kAlignDefault;
    }
  }
  if (h.r_align == 0 && r_align > 0) h.r_align = r_align;
  h.h_align = h.h_align == 0 ? 4 : round_up(h.h_align, 4);
  h.fx_v_align = h.fx_v_align == 0 ? 4 : round_up(h.fx_v_align, 4);
  h.r_align = h.r_align == 0 ? 4 : round_up(h.r_align, 4);
  hints = h;  // fixed before the checks, as in PnetCDF: a failed enddef keeps them
  if (const int rc = check_vlens(s); rc != NC_NOERR) return rc;

  // NC_begins, with the previous enddef's layout as PnetCDF's ncp->old. It
  // sets the file's fields as it goes: a CDF-1 offset past 2^31-1 fails
  // with those set so far, as PnetCDF's.
  Layout out = layout;
  out.xsz = header_size(s);
  out.begin_var = s.vars.empty() ? out.xsz : round_up(out.xsz + h_minfree, h.h_align);
  if (old != nullptr && out.begin_var < old->begin_var) out.begin_var = old->begin_var;
  out.begin.resize(s.vars.size(), 0);
  const int format = format_of(s);
  auto from_old = [&](std::size_t i) {
    if (old != nullptr && i < old->begin.size() && out.begin[i] < old->begin[i]) out.begin[i] = old->begin[i];
  };
  auto fail = [&]() {
    layout = out;
    return NC_EVARSIZE;
  };
  MPI_Offset end_var = out.begin_var;
  int first_fixed = -1;
  for (std::size_t i = 0; i < s.vars.size(); ++i) {
    if (is_record(s, s.vars[i])) continue;
    if (first_fixed < 0) first_fixed = static_cast<int>(i);
    if (format == 1 && end_var > kIntMax) return fail();
    out.begin[i] = round_up(end_var, h.fx_v_align);
    from_old(i);
    end_var = out.begin[i] + var_len(s, static_cast<int>(i));
  }
  if (out.begin_rec < end_var || out.begin_rec != round_up(out.begin_rec, h.fx_v_align)) {
    out.begin_rec = round_up(end_var, h.fx_v_align);
  }
  if (out.begin_rec < end_var + v_minfree) out.begin_rec = round_up(end_var + v_minfree, h.fx_v_align);
  if (h.r_align > 1) out.begin_rec = round_up(out.begin_rec, h.r_align);
  if (old != nullptr && out.begin_rec < old->begin_rec) out.begin_rec = old->begin_rec;
  out.begin_var = first_fixed >= 0 ? out.begin[static_cast<std::size_t>(first_fixed)] : out.begin_rec;
  end_var = out.begin_rec;
  out.recsize = 0;
  int last = -1;
  for (std::size_t i = 0; i < s.vars.size(); ++i) {
    if (!is_record(s, s.vars[i])) continue;
    if (format == 1 && end_var > kIntMax) return fail();
    out.begin[i] = end_var;
    from_old(i);
    const MPI_Offset len = var_len(s, static_cast<int>(i));
    end_var += len;
    out.recsize += len;
    last = static_cast<int>(i);
  }
  // One record variable (PnetCDF's test: the record size is the last one's
  // padded size) takes its unpadded size.
  if (last >= 0 && out.recsize == var_len(s, last)) {
    const Var& v = s.vars[static_cast<std::size_t>(last)];
    MPI_Offset product = 1;
    for (std::size_t d = 1; d < v.dims.size(); ++d) product *= dim_len(s, v.dims[d]);
    out.recsize = product * static_cast<MPI_Offset>(type_size(v.type));
  }
  layout = std::move(out);
  // write_NC: a header extent past 2^31-1 cannot be written; the enddef
  // still ends define mode.
  return layout.begin_var > kIntMax ? NC_EINTOVERFLOW : NC_NOERR;
}

}  // namespace cove::pnetcdf
