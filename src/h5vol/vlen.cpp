#include "h5vol/vlen.hpp"

#include "h5vol/errors.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <set>

namespace cove::h5vol {
namespace {

bool is_vstring(hid_t type) { return H5Tget_class(type) == H5T_STRING && H5Tis_variable_str(type) > 0; }

struct Picked {
  std::vector<std::uint64_t> index;  // per selected element, in selection order: its linear index
  Hid fspace;
  hid_t mspace;
};

// The linear indices of the file selection's elements (in the order HDF5
// pairs them with the memory selection's).
Picked pick(const Node& dataset, hid_t mem_space, hid_t file_space) {
  Picked p;
  p.fspace = Hid(file_space == H5S_ALL ? dataset.make_space() : check(H5Scopy(file_space), "H5Scopy"));
  p.mspace = mem_space == H5S_ALL ? p.fspace.get() : mem_space;
  const auto n = static_cast<std::size_t>(check(H5Sget_select_npoints(p.fspace.get()), "H5Sget_select_npoints"));
  const auto m = static_cast<std::size_t>(check(H5Sget_select_npoints(p.mspace), "H5Sget_select_npoints"));
  if (n != m) fail("the memory selection has " + std::to_string(m) + " elements, the file selection " + std::to_string(n));
  const auto total = static_cast<std::size_t>(check(H5Sget_simple_extent_npoints(p.fspace.get()), "H5Sget_simple_extent_npoints"));
  if (n == 0) return p;
  std::vector<std::uint64_t> all(total);
  std::iota(all.begin(), all.end(), std::uint64_t{0});
  p.index.resize(n);
  check(H5Dgather(p.fspace.get(), all.data(), H5T_NATIVE_UINT64, n * sizeof(std::uint64_t), p.index.data(), nullptr, nullptr),
        "H5Dgather");
  return p;
}

void convert_n(hid_t src, hid_t dst, std::size_t n, std::vector<std::byte>& buf) {
  if (n == 0 || H5Tequal(src, dst) > 0) return;
  std::vector<std::byte> bkg(n * std::max(H5Tget_size(src), H5Tget_size(dst)));
  if (H5Tconvert(src, dst, n, buf.data(), bkg.data(), H5P_DEFAULT) < 0)
    fail("HDF5 cannot convert between the dataset's base type and the memory's");
}

void check_memory(const Node& dataset, hid_t mem_type) {
  if (is_vstring(dataset.type.get()) != is_vstring(mem_type) ||
      (!is_vstring(mem_type) && H5Tget_class(mem_type) != H5T_VLEN))
    fail("dataset " + dataset.path + " holds variable-length " + (is_vstring(dataset.type.get()) ? "strings" : "sequences") +
         ": the memory type must be variable-length " + (is_vstring(dataset.type.get()) ? "strings" : "sequences") +
         " too (HDF5 converts between fixed- and variable-length in neither direction)");
}

bool has_vlen(hid_t t) {
  switch (H5Tget_class(t)) {
    case H5T_STRING:
      return H5Tis_variable_str(t) > 0;
    case H5T_VLEN:
      return true;
    case H5T_COMPOUND: {
      const int n = check(H5Tget_nmembers(t), "H5Tget_nmembers");
      for (int i = 0; i < n; ++i) {
        Hid m(check(H5Tget_member_type(t, static_cast<unsigned>(i)), "H5Tget_member_type"));
        if (has_vlen(m.get())) return true;
      }
      return false;
    }
    case H5T_ARRAY: {
      Hid b(check(H5Tget_super(t), "H5Tget_super"));
      return has_vlen(b.get());
    }
    default:
      return false;
  }
}

std::size_t array_elements(hid_t t) {
  const int rank = check(H5Tget_array_ndims(t), "H5Tget_array_ndims");
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  check(H5Tget_array_dims2(t, dims.data()), "H5Tget_array_dims2");
  std::size_t n = 1;
  for (auto d : dims) n *= static_cast<std::size_t>(d);
  return n;
}

// Calls on(pointer) for each variable-length part of the element of type t
// at p, the parts inside a part before the part itself (so that on may free them).
template <class F>
void each_pointer(hid_t t, const std::byte* p, F& on) {
  switch (H5Tget_class(t)) {
    case H5T_STRING:
      if (H5Tis_variable_str(t) > 0) {
        void* s = nullptr;
        std::memcpy(&s, p, sizeof s);
        if (s) on(s);
      }
      return;
    case H5T_VLEN: {
      hvl_t h;
      std::memcpy(&h, p, sizeof h);
      Hid b(check(H5Tget_super(t), "H5Tget_super"));
      if (h.p && has_vlen(b.get())) {
        const std::size_t bs = H5Tget_size(b.get());
        for (std::size_t i = 0; i < h.len; ++i) each_pointer(b.get(), static_cast<const std::byte*>(h.p) + i * bs, on);
      }
      if (h.p) on(h.p);
      return;
    }
    case H5T_COMPOUND: {
      const int n = check(H5Tget_nmembers(t), "H5Tget_nmembers");
      for (int i = 0; i < n; ++i) {
        Hid m(check(H5Tget_member_type(t, static_cast<unsigned>(i)), "H5Tget_member_type"));
        if (has_vlen(m.get())) each_pointer(m.get(), p + H5Tget_member_offset(t, static_cast<unsigned>(i)), on);
      }
      return;
    }
    case H5T_ARRAY: {
      Hid b(check(H5Tget_super(t), "H5Tget_super"));
      if (!has_vlen(b.get())) return;
      const std::size_t bs = H5Tget_size(b.get()), n = array_elements(t);
      for (std::size_t i = 0; i < n; ++i) each_pointer(b.get(), p + i * bs, on);
      return;
    }
    default:
      return;
  }
}

constexpr std::uint64_t kNullString = ~std::uint64_t{0};

void put_u64(std::vector<std::byte>& out, std::uint64_t v) {
  const auto at = out.size();
  out.resize(at + sizeof v);
  std::memcpy(out.data() + at, &v, sizeof v);
}
void put_raw(std::vector<std::byte>& out, const void* p, std::size_t n) {
  if (n == 0) return;
  const auto at = out.size();
  out.resize(at + n);
  std::memcpy(out.data() + at, p, n);
}

// An element of type t (in memory, its variable-length parts behind
// pointers) as bytes: fixed parts as they are, a string as its length (or
// kNullString) and bytes, a sequence as its length and elements.
void put(hid_t t, const std::byte* p, std::vector<std::byte>& out) {
  switch (H5Tget_class(t)) {
    case H5T_STRING:
      if (H5Tis_variable_str(t) > 0) {
        const char* s = nullptr;
        std::memcpy(&s, p, sizeof s);
        if (!s) {
          put_u64(out, kNullString);
          return;
        }
        const auto len = std::strlen(s);
        put_u64(out, len);
        put_raw(out, s, len);
        return;
      }
      break;
    case H5T_VLEN: {
      hvl_t h;
      std::memcpy(&h, p, sizeof h);
      Hid b(check(H5Tget_super(t), "H5Tget_super"));
      const std::size_t bs = H5Tget_size(b.get());
      put_u64(out, h.len);
      for (std::size_t i = 0; i < h.len; ++i) put(b.get(), static_cast<const std::byte*>(h.p) + i * bs, out);
      return;
    }
    case H5T_COMPOUND: {
      const int n = check(H5Tget_nmembers(t), "H5Tget_nmembers");
      for (int i = 0; i < n; ++i) {
        Hid m(check(H5Tget_member_type(t, static_cast<unsigned>(i)), "H5Tget_member_type"));
        put(m.get(), p + H5Tget_member_offset(t, static_cast<unsigned>(i)), out);
      }
      return;
    }
    case H5T_ARRAY: {
      Hid b(check(H5Tget_super(t), "H5Tget_super"));
      if (!has_vlen(b.get())) break;
      const std::size_t bs = H5Tget_size(b.get()), n = array_elements(t);
      for (std::size_t i = 0; i < n; ++i) put(b.get(), p + i * bs, out);
      return;
    }
    default:
      break;
  }
  put_raw(out, p, H5Tget_size(t));
}

struct In {
  const std::byte* at;
  const std::byte* end;
  void take(void* to, std::size_t n) {
    if (static_cast<std::size_t>(end - at) < n) fail("a variable-length element's stored bytes are truncated");
    if (n) std::memcpy(to, at, n);
    at += n;
  }
  std::uint64_t u64() {
    std::uint64_t v;
    take(&v, sizeof v);
    return v;
  }
};

// The element put() wrote, into p (zeroed, of type t); its variable-length
// parts allocated by `to`.
void get(hid_t t, In& in, std::byte* p, const VlenAllocator& to = VlenAllocator{}) {
  switch (H5Tget_class(t)) {
    case H5T_STRING:
      if (H5Tis_variable_str(t) > 0) {
        const auto len = in.u64();
        char* s = nullptr;
        if (len != kNullString) {
          if (len > static_cast<std::uint64_t>(in.end - in.at)) fail("a variable-length element's stored bytes are truncated");
          s = static_cast<char*>(to.allocate(static_cast<std::size_t>(len) + 1, false));
          if (!s) fail("no memory for a variable-length string");
          in.take(s, static_cast<std::size_t>(len));
          s[len] = '\0';
        }
        std::memcpy(p, &s, sizeof s);
        return;
      }
      break;
    case H5T_VLEN: {
      Hid b(check(H5Tget_super(t), "H5Tget_super"));
      const std::size_t bs = H5Tget_size(b.get());
      const auto len = in.u64();
      if (len > static_cast<std::uint64_t>(in.end - in.at)) fail("a variable-length element's stored bytes are truncated");
      hvl_t h{static_cast<std::size_t>(len), nullptr};
      if (len) {
        h.p = to.allocate(h.len * bs, true);
        if (!h.p) fail("no memory for a variable-length sequence");
        std::memcpy(p, &h, sizeof h);  // before its elements: freed with the element if one fails
        for (std::size_t i = 0; i < h.len; ++i) get(b.get(), in, static_cast<std::byte*>(h.p) + i * bs, to);
      }
      std::memcpy(p, &h, sizeof h);
      return;
    }
    case H5T_COMPOUND: {
      const int n = check(H5Tget_nmembers(t), "H5Tget_nmembers");
      for (int i = 0; i < n; ++i) {
        Hid m(check(H5Tget_member_type(t, static_cast<unsigned>(i)), "H5Tget_member_type"));
        get(m.get(), in, p + H5Tget_member_offset(t, static_cast<unsigned>(i)), to);
      }
      return;
    }
    case H5T_ARRAY: {
      Hid b(check(H5Tget_super(t), "H5Tget_super"));
      if (!has_vlen(b.get())) break;
      const std::size_t bs = H5Tget_size(b.get()), n = array_elements(t);
      for (std::size_t i = 0; i < n; ++i) get(b.get(), in, p + i * bs, to);
      return;
    }
    default:
      break;
  }
  in.take(p, H5Tget_size(t));
}

// Frees the variable-length parts of n elements of type t at buf that are not in `keep`.
void free_parts(hid_t t, const std::byte* buf, std::size_t n, const std::set<void*>& keep) {
  const std::size_t size = H5Tget_size(t);
  auto drop = [&](void* q) {
    if (!keep.count(q)) H5free_memory(q);
  };
  for (std::size_t i = 0; i < n; ++i) each_pointer(t, buf + i * size, drop);
}
std::set<void*> parts(hid_t t, const std::byte* buf, std::size_t n) {
  std::set<void*> all;
  const std::size_t size = H5Tget_size(t);
  auto add = [&](void* q) { all.insert(q); };
  for (std::size_t i = 0; i < n; ++i) each_pointer(t, buf + i * size, add);
  return all;
}

// The stored form of the dataset's fill value (what unwritten elements read
// as); empty (empty strings and sequences, zeros) without a fill value of
// the user's or with fill time never.
std::vector<std::byte> fill_element(const Node& dataset) {
  H5D_fill_time_t when = H5D_FILL_TIME_IFSET;
  if (H5Pget_fill_time(dataset.dcpl.get(), &when) >= 0 && when == H5D_FILL_TIME_NEVER) return {};
  return vlen_fill(dataset.dcpl.get(), dataset.type.get()).value_or(std::vector<std::byte>{});
}

}  // namespace

bool is_vlen(hid_t type) { return has_vlen(type); }

std::optional<std::vector<std::byte>> vlen_fill(hid_t dcpl, hid_t t) {
  H5D_fill_value_t status = H5D_FILL_VALUE_UNDEFINED;
  if (H5Pfill_value_defined(dcpl, &status) < 0 || status != H5D_FILL_VALUE_USER_DEFINED) return std::nullopt;
  // HDF5 copies the parts out (a variable-length type is always converted): they are ours to free.
  std::vector<std::byte> value(H5Tget_size(t), std::byte{0});
  check(H5Pget_fill_value(dcpl, t, value.data()), "H5Pget_fill_value");
  std::vector<std::byte> out;
  if (is_vstring(t)) {
    const char* s = nullptr;
    std::memcpy(&s, value.data(), sizeof s);
    if (s) put_raw(out, s, std::strlen(s));
  } else if (H5Tget_class(t) == H5T_VLEN && !is_nested_vlen(t)) {
    hvl_t h;
    std::memcpy(&h, value.data(), sizeof h);
    Hid base(check(H5Tget_super(t), "H5Tget_super"));
    put_raw(out, h.p, h.len * H5Tget_size(base.get()));
  } else {
    put(t, value.data(), out);
  }
  free_parts(t, value.data(), 1, {});
  return out;
}

void set_vlen_fill(hid_t dcpl, hid_t t, const std::vector<std::byte>& stored) {
  std::vector<std::byte> value(H5Tget_size(t), std::byte{0});
  if (is_vstring(t)) {
    auto* s = static_cast<char*>(H5allocate_memory(stored.size() + 1, false));
    if (!s) fail("no memory for a fill value");
    if (!stored.empty()) std::memcpy(s, stored.data(), stored.size());
    s[stored.size()] = '\0';
    std::memcpy(value.data(), &s, sizeof s);
  } else if (H5Tget_class(t) == H5T_VLEN && !is_nested_vlen(t)) {
    Hid base(check(H5Tget_super(t), "H5Tget_super"));
    const std::size_t bs = H5Tget_size(base.get());
    hvl_t h{bs ? stored.size() / bs : 0, nullptr};
    if (h.len) {
      h.p = H5allocate_memory(h.len * bs, false);
      if (!h.p) fail("no memory for a fill value");
      std::memcpy(h.p, stored.data(), h.len * bs);
    }
    std::memcpy(value.data(), &h, sizeof h);
  } else {
    In in{stored.data(), stored.data() + stored.size()};
    get(t, in, value.data());
  }
  // HDF5 converts the value into the list (copying its parts): ours are freed.
  const herr_t r = H5Pset_fill_value(dcpl, t, value.data());
  free_parts(t, value.data(), 1, {});
  check(r, "H5Pset_fill_value");
}

bool is_nested_vlen(hid_t type) {
  if (is_vstring(type)) return false;
  if (H5Tget_class(type) == H5T_VLEN) {
    Hid base(check(H5Tget_super(type), "H5Tget_super"));
    return has_vlen(base.get());
  }
  return has_vlen(type);
}

void check_vlen_type(hid_t type, const std::string& what) {
  if (H5Tdetect_class(type, H5T_REFERENCE) > 0)
    fail(what + ": variable-length data holding references is not supported by the Cove connector");
}

VlenAllocator VlenAllocator::of(hid_t dxpl) {
  VlenAllocator a;
  if (dxpl == H5P_DEFAULT) return a;
  a.dxpl = dxpl;
  H5MM_free_t free_func = nullptr;
  void* free_info = nullptr;
  check(H5Pget_vlen_mem_manager(dxpl, &a.alloc, &a.info, &free_func, &free_info), "H5Pget_vlen_mem_manager");
  return a;
}

void* VlenAllocator::allocate(std::size_t bytes, bool clear) const {
  if (!alloc) return H5allocate_memory(bytes, clear);
  void* p = alloc(bytes, info);
  if (p && clear) std::memset(p, 0, bytes);
  return p;
}

std::vector<std::vector<std::byte>> encode_nested(hid_t mem_type, hid_t file_type, const void* buf, std::size_t n) {
  const std::size_t msize = H5Tget_size(mem_type), fsize = H5Tget_size(file_type);
  const auto* src = static_cast<const std::byte*>(buf);
  std::vector<std::byte> g(n * std::max(msize, fsize));
  if (n) std::memcpy(g.data(), src, n * msize);
  const bool same = H5Tequal(mem_type, file_type) > 0;
  // The caller's own parts: a member HDF5 converts as it is (a no-op) keeps
  // its pointer; every other part the conversion made is freed below.
  const auto callers = same ? std::set<void*>{} : parts(mem_type, src, n);
  if (!same && n) {
    std::vector<std::byte> bkg(g.size(), std::byte{0});
    if (H5Tconvert(mem_type, file_type, n, g.data(), bkg.data(), H5P_DEFAULT) < 0)
      fail("HDF5 cannot convert between the memory type and the stored variable-length type");
  }
  std::vector<std::vector<std::byte>> out(n);
  for (std::size_t i = 0; i < n; ++i) put(file_type, g.data() + i * fsize, out[i]);
  if (!same) free_parts(file_type, g.data(), n, callers);
  return out;
}

void decode_nested(const std::vector<const std::vector<std::byte>*>& elements, hid_t file_type, hid_t mem_type, void* buf,
                   const VlenAllocator& to) {
  const std::size_t n = elements.size(), msize = H5Tget_size(mem_type), fsize = H5Tget_size(file_type);
  // Of the same type, the parts go to the caller as they are: made by its
  // allocator; else they are HDF5's until the conversion makes the caller's.
  const bool same = H5Tequal(mem_type, file_type) > 0;
  const VlenAllocator parts_by = same ? to : VlenAllocator{};
  std::vector<std::byte> f(n * fsize, std::byte{0});
  for (std::size_t i = 0; i < n; ++i) {
    const auto& e = *elements[i];
    if (e.empty()) continue;  // unwritten: zeros
    In in{e.data(), e.data() + e.size()};
    try {
      get(file_type, in, f.data() + i * fsize, parts_by);
    } catch (...) {
      free_parts(file_type, f.data(), n, {});
      throw;
    }
    if (in.at != in.end) {
      free_parts(file_type, f.data(), n, {});
      fail("a variable-length element's stored bytes are longer than its type");
    }
  }
  if (same) {  // the parts go to the caller as they are
    if (n) std::memcpy(buf, f.data(), n * msize);
    return;
  }
  std::vector<std::byte> c(n * std::max(msize, fsize), std::byte{0});
  if (n) std::memcpy(c.data(), f.data(), n * fsize);
  std::vector<std::byte> bkg(c.size(), std::byte{0});
  if (n && H5Tconvert(file_type, mem_type, n, c.data(), bkg.data(), to.dxpl) < 0) {
    free_parts(file_type, f.data(), n, {});
    fail("HDF5 cannot convert between the stored variable-length type and the memory type");
  }
  // Parts a no-op member conversion passed on as they are now the caller's.
  free_parts(file_type, f.data(), n, parts(mem_type, c.data(), n));
  if (n) std::memcpy(buf, c.data(), n * msize);
}

std::vector<std::byte> encode_sequences(hid_t mem_type, hid_t file_type, const void* buf, std::size_t n) {
  if (H5Tget_class(mem_type) != H5T_VLEN) fail("a variable-length sequence attribute needs a variable-length memory type");
  Hid mbase(check(H5Tget_super(mem_type), "H5Tget_super")), fbase(check(H5Tget_super(file_type), "H5Tget_super"));
  const std::size_t mb = H5Tget_size(mbase.get()), fb = H5Tget_size(fbase.get());
  std::vector<std::byte> out;
  const auto* h = static_cast<const hvl_t*>(buf);
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<std::byte> e(h[i].len * std::max(mb, fb));
    if (h[i].len) std::memcpy(e.data(), h[i].p, h[i].len * mb);
    convert_n(mbase.get(), fbase.get(), h[i].len, e);
    const std::uint64_t len = h[i].len;
    const auto at = out.size();
    out.resize(at + sizeof len + len * fb);
    std::memcpy(out.data() + at, &len, sizeof len);
    if (len) std::memcpy(out.data() + at + sizeof len, e.data(), len * fb);
  }
  return out;
}

void decode_sequences(const std::vector<std::byte>& data, hid_t file_type, hid_t mem_type, void* buf, std::size_t n) {
  if (H5Tget_class(mem_type) != H5T_VLEN) fail("a variable-length sequence attribute is read into a variable-length memory type");
  Hid mbase(check(H5Tget_super(mem_type), "H5Tget_super")), fbase(check(H5Tget_super(file_type), "H5Tget_super"));
  const std::size_t mb = H5Tget_size(mbase.get()), fb = H5Tget_size(fbase.get());
  auto* h = static_cast<hvl_t*>(buf);
  std::size_t at = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t len = 0;
    if (data.size() - at < sizeof len) fail("a variable-length attribute's stored bytes are truncated");
    std::memcpy(&len, data.data() + at, sizeof len);
    at += sizeof len;
    if ((data.size() - at) / (fb ? fb : 1) < len) fail("a variable-length attribute's stored bytes are truncated");
    std::vector<std::byte> e(static_cast<std::size_t>(len) * std::max(mb, fb));
    if (len) std::memcpy(e.data(), data.data() + at, static_cast<std::size_t>(len) * fb);
    at += static_cast<std::size_t>(len) * fb;
    convert_n(fbase.get(), mbase.get(), static_cast<std::size_t>(len), e);
    h[i].len = static_cast<std::size_t>(len);
    h[i].p = nullptr;
    if (len) {
      h[i].p = H5allocate_memory(static_cast<std::size_t>(len) * mb, false);
      if (!h[i].p) fail("no memory for a variable-length attribute element");
      std::memcpy(h[i].p, e.data(), static_cast<std::size_t>(len) * mb);
    }
  }
}

void reshape_vlen(Node& dataset, const std::vector<hsize_t>& old_dims) {
  if (dataset.vlen.empty() || old_dims == dataset.dims) return;
  const std::size_t r = old_dims.size();
  std::vector<std::vector<std::byte>> moved;  // beyond its end: unwritten, as everywhere (read_vlen)
  const auto fill = fill_element(dataset);
  std::vector<hsize_t> at(r, 0);  // the coordinates of old linear index i
  for (std::size_t i = 0; i < dataset.vlen.size(); ++i) {
    bool inside = true;
    std::size_t to = 0;
    for (std::size_t d = 0; d < r; ++d) {
      inside = inside && at[d] < dataset.dims[d];
      to = to * static_cast<std::size_t>(dataset.dims[d]) + static_cast<std::size_t>(at[d]);
    }
    if (inside) {
      if (to >= moved.size()) moved.resize(to + 1, fill);
      moved[to] = std::move(dataset.vlen[i]);
    }
    for (std::size_t d = r; d-- > 0;) {  // the next coordinates, row-major
      if (++at[d] < old_dims[d]) break;
      at[d] = 0;
    }
  }
  dataset.vlen = std::move(moved);
}

void write_vlen(FileState& file, Node& dataset, hid_t mem_type, hid_t mem_space, hid_t file_space, const void* buf) {
  if (!file.writer) fail("file \"" + file.name + "\" was opened read-only");
  int size = 1;
  if (file.comm != MPI_COMM_NULL) MPI_Comm_size(file.comm, &size);
  if (size > 1)
    fail("dataset " + dataset.path + ": variable-length datasets in memory are written by one process (this file has " +
         std::to_string(size) + " ranks)");
  const bool nested = is_nested_vlen(dataset.type.get());
  if (!nested) check_memory(dataset, mem_type);
  auto p = pick(dataset, mem_space, file_space);
  const auto n = p.index.size();
  if (n == 0) return;
  const std::size_t msize = H5Tget_size(mem_type);
  std::vector<std::byte> g(n * msize);
  check(H5Dgather(p.mspace, buf, mem_type, n * msize, g.data(), nullptr, nullptr), "H5Dgather");
  const auto total = static_cast<std::size_t>(check(H5Sget_simple_extent_npoints(p.fspace.get()), "H5Sget_simple_extent_npoints"));
  if (dataset.vlen.size() < total) dataset.vlen.resize(total, fill_element(dataset));
  if (nested) {
    auto elements = encode_nested(mem_type, dataset.type.get(), g.data(), n);
    for (std::size_t i = 0; i < n; ++i) dataset.vlen[p.index[i]] = std::move(elements[i]);
  } else if (is_vstring(mem_type)) {
    for (std::size_t i = 0; i < n; ++i) {
      const char* s = nullptr;
      std::memcpy(&s, g.data() + i * msize, sizeof s);
      const auto len = s ? std::strlen(s) : 0;
      dataset.vlen[p.index[i]].assign(reinterpret_cast<const std::byte*>(s), reinterpret_cast<const std::byte*>(s) + len);
    }
  } else {
    Hid mbase(check(H5Tget_super(mem_type), "H5Tget_super")), fbase(check(H5Tget_super(dataset.type.get()), "H5Tget_super"));
    const std::size_t mb = H5Tget_size(mbase.get()), fb = H5Tget_size(fbase.get());
    for (std::size_t i = 0; i < n; ++i) {
      hvl_t h;
      std::memcpy(&h, g.data() + i * msize, sizeof h);
      std::vector<std::byte> e(h.len * std::max(mb, fb));
      if (h.len) std::memcpy(e.data(), h.p, h.len * mb);
      convert_n(mbase.get(), fbase.get(), h.len, e);
      e.resize(h.len * fb);
      dataset.vlen[p.index[i]] = std::move(e);
    }
  }
  dataset.written = true;
}

void read_vlen(const FileState&, const Node& dataset, hid_t mem_type, hid_t mem_space, hid_t file_space, void* buf,
               const VlenAllocator& to) {
  const bool nested = is_nested_vlen(dataset.type.get());
  if (!nested) check_memory(dataset, mem_type);
  auto p = pick(dataset, mem_space, file_space);
  const auto n = p.index.size();
  if (n == 0) return;
  const std::size_t msize = H5Tget_size(mem_type);
  std::vector<std::byte> g(n * msize);
  const auto none = fill_element(dataset);  // unwritten elements
  auto element = [&](std::size_t i) -> const std::vector<std::byte>& {
    return p.index[i] < dataset.vlen.size() ? dataset.vlen[p.index[i]] : none;
  };
  // Each element in memory `to` makes: the caller frees it (H5Treclaim).
  if (nested) {
    std::vector<const std::vector<std::byte>*> elements(n);
    for (std::size_t i = 0; i < n; ++i) elements[i] = &element(i);
    decode_nested(elements, dataset.type.get(), mem_type, g.data(), to);
  } else if (is_vstring(mem_type)) {
    for (std::size_t i = 0; i < n; ++i) {
      const auto& e = element(i);
      auto* s = static_cast<char*>(to.allocate(e.size() + 1, false));
      if (!s) fail("no memory for a string of dataset " + dataset.path);
      if (!e.empty()) std::memcpy(s, e.data(), e.size());
      s[e.size()] = '\0';
      std::memcpy(g.data() + i * msize, &s, sizeof s);
    }
  } else {
    Hid mbase(check(H5Tget_super(mem_type), "H5Tget_super")), fbase(check(H5Tget_super(dataset.type.get()), "H5Tget_super"));
    const std::size_t mb = H5Tget_size(mbase.get()), fb = H5Tget_size(fbase.get());
    for (std::size_t i = 0; i < n; ++i) {
      const auto& e = element(i);
      const std::size_t len = fb ? e.size() / fb : 0;
      std::vector<std::byte> c(len * std::max(mb, fb));
      if (len) std::memcpy(c.data(), e.data(), len * fb);
      convert_n(fbase.get(), mbase.get(), len, c);
      hvl_t h{len, nullptr};
      if (len) {
        h.p = to.allocate(len * mb, false);
        if (!h.p) fail("no memory for an element of dataset " + dataset.path);
        std::memcpy(h.p, c.data(), len * mb);
      }
      std::memcpy(g.data() + i * msize, &h, sizeof h);
    }
  }
  std::pair<const std::byte*, std::size_t> source(g.data(), n * msize);
  check(H5Dscatter([](const void** src, size_t* bytes, void* op) -> herr_t {
          auto* s = static_cast<std::pair<const std::byte*, std::size_t>*>(op);
          if (!s->first) return -1;
          *src = s->first;
          *bytes = s->second;
          s->first = nullptr;
          return 0;
        }, &source, mem_type, p.mspace, buf),
        "H5Dscatter");
}

}  // namespace cove::h5vol
