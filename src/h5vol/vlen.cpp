#include "h5vol/vlen.hpp"

#include "h5vol/errors.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

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

}  // namespace

bool is_vlen(hid_t type) { return is_vstring(type) || H5Tget_class(type) == H5T_VLEN; }

void check_vlen_type(hid_t type, const std::string& what) {
  if (is_vstring(type)) return;
  Hid base(check(H5Tget_super(type), "H5Tget_super"));
  if (H5Tdetect_class(base.get(), H5T_VLEN) > 0 || H5Tis_variable_str(base.get()) > 0 ||
      H5Tdetect_class(base.get(), H5T_REFERENCE) > 0)
    fail(what + ": variable-length sequences of variable-length or reference types are not supported by the Cove connector");
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

void write_vlen(FileState& file, Node& dataset, hid_t mem_type, hid_t mem_space, hid_t file_space, const void* buf) {
  if (!file.writer) fail("file \"" + file.name + "\" was opened read-only");
  int size = 1;
  if (file.comm != MPI_COMM_NULL) MPI_Comm_size(file.comm, &size);
  if (size > 1)
    fail("dataset " + dataset.path + ": variable-length datasets in memory are written by one process (this file has " +
         std::to_string(size) + " ranks)");
  check_memory(dataset, mem_type);
  auto p = pick(dataset, mem_space, file_space);
  const auto n = p.index.size();
  if (n == 0) return;
  const std::size_t msize = H5Tget_size(mem_type);
  std::vector<std::byte> g(n * msize);
  check(H5Dgather(p.mspace, buf, mem_type, n * msize, g.data(), nullptr, nullptr), "H5Dgather");
  const auto total = static_cast<std::size_t>(check(H5Sget_simple_extent_npoints(p.fspace.get()), "H5Sget_simple_extent_npoints"));
  if (dataset.vlen.size() < total) dataset.vlen.resize(total);
  if (is_vstring(mem_type)) {
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

void read_vlen(const FileState&, const Node& dataset, hid_t mem_type, hid_t mem_space, hid_t file_space, void* buf) {
  check_memory(dataset, mem_type);
  auto p = pick(dataset, mem_space, file_space);
  const auto n = p.index.size();
  if (n == 0) return;
  const std::size_t msize = H5Tget_size(mem_type);
  std::vector<std::byte> g(n * msize);
  static const std::vector<std::byte> none;
  auto element = [&](std::size_t i) -> const std::vector<std::byte>& {
    return p.index[i] < dataset.vlen.size() ? dataset.vlen[p.index[i]] : none;
  };
  // Each element in memory HDF5's allocator makes: the caller frees it (H5Treclaim).
  if (is_vstring(mem_type)) {
    for (std::size_t i = 0; i < n; ++i) {
      const auto& e = element(i);
      auto* s = static_cast<char*>(H5allocate_memory(e.size() + 1, false));
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
        h.p = H5allocate_memory(len * mb, false);
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
