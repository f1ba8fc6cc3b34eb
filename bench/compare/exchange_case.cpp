// Cases, value encoding and verification of the comparison benchmark.
#include "exchange_case.hpp"

#include <cmath>
#include <cstring>
#include <stdexcept>

namespace cove::bench {

std::size_t elem_size(Elem e) { return e == Elem::F32 ? 4 : 8; }

const char* elem_name(Elem e) {
  switch (e) {
    case Elem::U64: return "u8";
    case Elem::F32: return "f4";
    case Elem::F64: return "f8";
  }
  return "?";
}

std::size_t ExchangeCase::step_bytes() const {
  std::size_t b = 0;
  for (const auto& v : vars) b += v.bytes();
  return b;
}

std::string ExchangeCase::counts() const {
  std::string s = std::to_string(writers) + "->";
  for (std::size_t i = 0; i < readers.size(); ++i) {
    if (i) s += '+';
    s += std::to_string(readers[i]);
  }
  return s;
}

namespace {

// Cuts `shape` into `parts` slabs along `axis`.
std::vector<Box> slabs(const std::vector<Index>& shape, int axis, int parts) {
  if (parts < 1 || parts > shape[static_cast<std::size_t>(axis)])
    throw std::invalid_argument("cannot cut " + std::to_string(shape[static_cast<std::size_t>(axis)]) + " into " +
                                std::to_string(parts) + " slabs");
  std::vector<Index> f(shape.size(), 1);
  f[static_cast<std::size_t>(axis)] = parts;
  return split_grid(Box::from_shape(shape), f);
}

Variable make_var(std::string name, Elem e, std::vector<Index> shape, int writers, int writer_axis,
                  const std::vector<int>& readers, const std::vector<int>& reader_axes) {
  Variable v{std::move(name), e, shape, slabs(shape, writer_axis, writers), {}};
  for (std::size_t g = 0; g < readers.size(); ++g) v.reader_boxes.push_back(slabs(shape, reader_axes[g], readers[g]));
  return v;
}

}  // namespace

ExchangeCase make_case(const CaseOptions& o) {
  if (o.writers < 1 || o.readers < 1 || o.steps < 1) throw std::invalid_argument("writers, readers, steps must be >= 1");
  ExchangeCase c;
  c.name = o.name;
  c.writers = o.writers;
  c.steps = o.steps;
  const Index w = o.writers;
  if (o.name == "grid-particles") {
    const Index side = o.size > 0 ? static_cast<Index>(o.size) : 100;
    c.readers = {o.readers};
    c.vars.push_back(make_var("grid", Elem::U64, {side * w, side, side}, o.writers, 0, c.readers, {1}));
    // Particles as an (n, 3) float32 array; both sides cut the list into
    // contiguous ranges, at different places when the counts differ.
    c.vars.push_back(make_var("particles", Elem::F32, {side * side * side * w, 3}, o.writers, 0, c.readers, {0}));
  } else if (o.name == "kokkos") {
    // MiB per writer: each writer holds a (4 * MiB) x 128 x 256 float64 slab.
    const double mib = o.size > 0 ? o.size : 32;
    const Index nx = static_cast<Index>(std::llround(mib * 4));
    if (nx < 1) throw std::invalid_argument("kokkos: size too small");
    c.readers = {o.readers, o.readers};
    c.vars.push_back(make_var("domain", Elem::F64, {nx * w, 128, 256}, o.writers, 0, c.readers, {1, 2}));
  } else if (o.name == "large") {
    // MiB in all: an MiB x 512 x 256 float64 array (1 MiB per x plane).
    const Index nx = static_cast<Index>(std::llround(o.size > 0 ? o.size : 512));
    c.readers = {o.readers};
    c.vars.push_back(make_var("field", Elem::F64, {nx, 512, 256}, o.writers, 0, c.readers, {1}));
  } else {
    throw std::invalid_argument("unknown case '" + o.name + "' (grid-particles, kokkos, large)");
  }
  return c;
}

namespace {

float encode_f32(std::uint64_t n) {
  const std::uint32_t bits = (static_cast<std::uint32_t>(127 + ((n >> 23) & 63)) << 23) |
                             static_cast<std::uint32_t>(n & 0x7FFFFF);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Calls fn(global_index_of_first, offset_in_box, length) per row (last
// dimension) of `box`, in C order.
template <class Fn>
void for_each_row(const std::vector<Index>& shape, const Box& box, Fn&& fn) {
  const int nd = box.ndim;
  if (box.empty()) return;
  const std::size_t len = static_cast<std::size_t>(box.count(nd - 1));
  std::vector<Index> idx(box.lo.begin(), box.lo.begin() + nd);
  std::size_t off = 0;
  while (true) {
    std::uint64_t g = 0;
    for (int d = 0; d < nd; ++d) g = g * static_cast<std::uint64_t>(shape[static_cast<std::size_t>(d)]) + static_cast<std::uint64_t>(idx[static_cast<std::size_t>(d)]);
    fn(g, off, len);
    off += len;
    int d = nd - 2;
    for (; d >= 0; --d) {
      if (++idx[static_cast<std::size_t>(d)] < box.hi[d]) break;
      idx[static_cast<std::size_t>(d)] = box.lo[d];
    }
    if (d < 0) return;
  }
}

}  // namespace

void fill(const Variable& v, const Box& box, std::uint64_t step, void* data) {
  const std::uint64_t base = step * v.elements();
  for_each_row(v.shape, box, [&](std::uint64_t g, std::size_t off, std::size_t len) {
    const std::uint64_t n0 = base + g;
    switch (v.elem) {
      case Elem::U64: {
        auto* p = static_cast<std::uint64_t*>(data) + off;
        for (std::size_t i = 0; i < len; ++i) p[i] = n0 + i;
        break;
      }
      case Elem::F64: {
        auto* p = static_cast<double*>(data) + off;
        for (std::size_t i = 0; i < len; ++i) p[i] = static_cast<double>(n0 + i);
        break;
      }
      case Elem::F32: {
        auto* p = static_cast<float*>(data) + off;
        for (std::size_t i = 0; i < len; ++i) p[i] = encode_f32(n0 + i);
        break;
      }
    }
  });
}

std::uint64_t verify(const Variable& v, const Box& box, std::uint64_t step, const void* data, std::string* first) {
  const std::uint64_t base = step * v.elements();
  std::uint64_t bad = 0;
  auto note = [&](std::uint64_t g, std::uint64_t got_bits, std::uint64_t want_bits) {
    if (first && first->empty())
      *first = v.name + " step " + std::to_string(step) + ": element " + std::to_string(g) + " has bits " +
               std::to_string(got_bits) + ", expected " + std::to_string(want_bits);
  };
  for_each_row(v.shape, box, [&](std::uint64_t g, std::size_t off, std::size_t len) {
    const std::uint64_t n0 = base + g;
    std::uint64_t row_bad = 0;
    switch (v.elem) {
      case Elem::U64: {
        const auto* p = static_cast<const std::uint64_t*>(data) + off;
        for (std::size_t i = 0; i < len; ++i) row_bad += p[i] != n0 + i;
        break;
      }
      case Elem::F64: {
        const auto* p = static_cast<const double*>(data) + off;
        for (std::size_t i = 0; i < len; ++i) row_bad += p[i] != static_cast<double>(n0 + i);
        break;
      }
      case Elem::F32: {
        const auto* p = static_cast<const std::uint32_t*>(data) + off;
        for (std::size_t i = 0; i < len; ++i) {
          const float want = encode_f32(n0 + i);
          std::uint32_t wb;
          std::memcpy(&wb, &want, 4);
          row_bad += p[i] != wb;
        }
        break;
      }
    }
    if (row_bad && first && first->empty()) {
      for (std::size_t i = 0; i < len; ++i) {
        std::uint64_t got = 0, want = 0;
        std::memcpy(&got, static_cast<const char*>(data) + (off + i) * elem_size(v.elem), elem_size(v.elem));
        if (v.elem == Elem::F32) {
          const float w = encode_f32(n0 + i);
          std::memcpy(&want, &w, 4);
        } else if (v.elem == Elem::F64) {
          const double w = static_cast<double>(n0 + i);
          std::memcpy(&want, &w, 8);
        } else {
          want = n0 + i;
        }
        if (got != want) {
          note(g + i, got, want);
          break;
        }
      }
    }
    bad += row_bad;
  });
  return bad;
}

void for_each_run(const Box& src, const Box& dst, const Box& part,
                  const std::function<void(std::size_t, std::size_t, std::size_t)>& fn) {
  const int nd = part.ndim;
  if (part.empty()) return;
  // Merge trailing dimensions that `part` spans whole in both boxes.
  int inner = nd - 1;  // dims [inner, nd) form one run
  std::size_t run = static_cast<std::size_t>(part.count(nd - 1));
  while (inner > 0 && part.count(inner) == src.count(inner) && part.count(inner) == dst.count(inner)) {
    --inner;
    run *= static_cast<std::size_t>(part.count(inner));
  }
  // Strides in elements of each dimension in src and dst.
  std::vector<std::size_t> ss(static_cast<std::size_t>(nd)), ds(static_cast<std::size_t>(nd));
  std::size_t a = 1, b = 1;
  for (int d = nd - 1; d >= 0; --d) {
    ss[static_cast<std::size_t>(d)] = a;
    ds[static_cast<std::size_t>(d)] = b;
    a *= static_cast<std::size_t>(src.count(d));
    b *= static_cast<std::size_t>(dst.count(d));
  }
  std::vector<Index> idx(part.lo.begin(), part.lo.begin() + nd);
  while (true) {
    std::size_t so = 0, dof = 0;
    for (int d = 0; d < nd; ++d) {
      so += static_cast<std::size_t>(idx[static_cast<std::size_t>(d)] - src.lo[d]) * ss[static_cast<std::size_t>(d)];
      dof += static_cast<std::size_t>(idx[static_cast<std::size_t>(d)] - dst.lo[d]) * ds[static_cast<std::size_t>(d)];
    }
    fn(so, dof, run);
    int d = inner - 1;
    for (; d >= 0; --d) {
      if (++idx[static_cast<std::size_t>(d)] < part.hi[d]) break;
      idx[static_cast<std::size_t>(d)] = part.lo[d];
    }
    if (d < 0) return;
  }
}

}  // namespace cove::bench
