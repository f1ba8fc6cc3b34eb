#include <cove/box.hpp>

#include "core/box_checks.hpp"
#include "core/fail.hpp"

#include <algorithm>
#include <sstream>

namespace cove {

using detail::fail;

namespace {

void check_rank(std::size_t n, const char* what) {
  if (n < 1 || n > static_cast<std::size_t>(kMaxDims))
    fail(Code::InvalidArgument, what, " has ", n, " dimensions; Cove supports 1 to ", kMaxDims);
}

}  // namespace

namespace detail {

void validate_box(const Box& box, const char* what) {
  if (box.ndim < 1 || box.ndim > kMaxDims)
    fail(Code::InvalidArgument, what, ".ndim is ", box.ndim, "; Cove supports 1 to ", kMaxDims);
  for (int d = 0; d < box.ndim; ++d)
    if (box.lo[d] > box.hi[d])
      fail(Code::InvalidArgument, what, " has lo[", d, "] = ", box.lo[d], " > hi[", d, "] = ", box.hi[d]);
}

void require_same_rank(const Box& a, const char* what_a, const Box& b, const char* what_b) {
  if (a.ndim != b.ndim)
    fail(Code::InvalidArgument, what_a, " has ", a.ndim, " dimensions but ", what_b, " has ", b.ndim);
}

}  // namespace detail

Box Box::from_start_count(std::span<const Index> start, std::span<const Index> count) {
  check_rank(start.size(), "start");
  if (count.size() != start.size())
    fail(Code::InvalidArgument, "start has ", start.size(), " dimensions but count has ", count.size());
  Box b;
  b.ndim = static_cast<int>(start.size());
  for (int d = 0; d < b.ndim; ++d) {
    if (count[d] < 0) fail(Code::InvalidArgument, "count[", d, "] = ", count[d], " is negative");
    b.lo[d] = start[d];
    if (__builtin_add_overflow(start[d], count[d], &b.hi[d]))
      fail(Code::Overflow, "start[", d, "] + count[", d, "] = ", start[d], " + ", count[d],
           " overflows 64 bits");
  }
  return b;
}

Box Box::from_bounds(std::span<const Index> lo, std::span<const Index> hi) {
  check_rank(lo.size(), "lo");
  if (hi.size() != lo.size())
    fail(Code::InvalidArgument, "lo has ", lo.size(), " dimensions but hi has ", hi.size());
  Box b;
  b.ndim = static_cast<int>(lo.size());
  std::copy(lo.begin(), lo.end(), b.lo.begin());
  std::copy(hi.begin(), hi.end(), b.hi.begin());
  detail::validate_box(b, "box");
  return b;
}

Box Box::from_shape(std::span<const Index> shape) {
  check_rank(shape.size(), "shape");
  Box b;
  b.ndim = static_cast<int>(shape.size());
  for (int d = 0; d < b.ndim; ++d) {
    if (shape[d] < 0) fail(Code::InvalidArgument, "shape[", d, "] = ", shape[d], " is negative");
    b.hi[d] = shape[d];
  }
  return b;
}

std::vector<Index> Box::count() const {
  std::vector<Index> c(ndim);
  for (int d = 0; d < ndim; ++d) c[d] = count(d);
  return c;
}

Index Box::volume() const {
  if (ndim == 0) return 0;
  Index v = 1;
  for (int d = 0; d < ndim; ++d) {
    Index c;
    if (__builtin_sub_overflow(hi[d], lo[d], &c) || __builtin_mul_overflow(v, c, &v))
      fail(Code::Overflow, "volume of box ", to_string(), " does not fit 64 bits");
  }
  return v;
}

bool Box::empty() const noexcept {
  if (ndim == 0) return true;
  for (int d = 0; d < ndim; ++d)
    if (hi[d] <= lo[d]) return true;
  return false;
}

bool Box::contains(const Box& other) const {
  detail::require_same_rank(*this, "box", other, "other box");
  for (int d = 0; d < ndim; ++d)
    if (other.lo[d] < lo[d] || other.hi[d] > hi[d]) return false;
  return true;
}

bool Box::contains_point(std::span<const Index> point) const {
  if (point.size() != static_cast<std::size_t>(ndim))
    fail(Code::InvalidArgument, "point has ", point.size(), " coordinates but box has ", ndim, " dimensions");
  for (int d = 0; d < ndim; ++d)
    if (point[d] < lo[d] || point[d] >= hi[d]) return false;
  return true;
}

bool Box::intersects(const Box& other) const {
  detail::require_same_rank(*this, "box", other, "other box");
  for (int d = 0; d < ndim; ++d)
    if (std::max(lo[d], other.lo[d]) >= std::min(hi[d], other.hi[d])) return false;
  return ndim > 0;
}

Box Box::intersection(const Box& other) const {
  detail::require_same_rank(*this, "box", other, "other box");
  Box r;
  r.ndim = ndim;
  for (int d = 0; d < ndim; ++d) {
    r.lo[d] = std::max(lo[d], other.lo[d]);
    r.hi[d] = std::max(r.lo[d], std::min(hi[d], other.hi[d]));
  }
  return r;
}

std::string Box::to_string() const {
  std::ostringstream out;
  out << '[';
  for (int d = 0; d < ndim; ++d) out << (d ? ", " : "") << lo[d] << ':' << hi[d];
  out << ')';
  return out.str();
}

bool operator==(const Box& a, const Box& b) noexcept {
  if (a.ndim != b.ndim) return false;
  for (int d = 0; d < a.ndim; ++d)
    if (a.lo[d] != b.lo[d] || a.hi[d] != b.hi[d]) return false;
  return true;
}

std::vector<Box> split_grid(const Box& box, std::span<const Index> factors) {
  detail::validate_box(box, "box");
  if (factors.size() != static_cast<std::size_t>(box.ndim))
    fail(Code::InvalidArgument, "factors has ", factors.size(), " entries but box has ", box.ndim,
         " dimensions");
  Index pieces = 1;
  for (int d = 0; d < box.ndim; ++d) {
    if (factors[d] < 1 || factors[d] > std::max<Index>(box.count(d), 1))
      fail(Code::InvalidArgument, "factors[", d, "] = ", factors[d], " must be in 1..", box.count(d),
           " (the box's count in that dimension)");
    pieces = detail::checked_mul(pieces, factors[d], "number of pieces");
  }
  std::vector<Box> out;
  out.reserve(static_cast<std::size_t>(pieces));
  std::array<Index, kMaxDims> idx{};
  for (Index p = 0; p < pieces; ++p) {
    Box piece;
    piece.ndim = box.ndim;
    for (int d = 0; d < box.ndim; ++d) {
      const Index n = box.count(d), f = factors[d], q = n / f, r = n % f, i = idx[d];
      piece.lo[d] = box.lo[d] + i * q + std::min(i, r);
      piece.hi[d] = piece.lo[d] + q + (i < r ? 1 : 0);
    }
    out.push_back(piece);
    for (int d = box.ndim - 1; d >= 0; --d) {
      if (++idx[d] < factors[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

std::vector<Box> subtract(const Box& a, const Box& b) {
  detail::require_same_rank(a, "box", b, "subtracted box");
  if (!a.intersects(b)) return a.empty() ? std::vector<Box>{} : std::vector<Box>{a};
  // Peel off the slabs of `rest` below and above b, one dimension at a time.
  std::vector<Box> out;
  Box rest = a;
  for (int d = 0; d < a.ndim; ++d) {
    if (rest.lo[d] < b.lo[d]) {
      Box below = rest;
      below.hi[d] = b.lo[d];
      out.push_back(below);
      rest.lo[d] = b.lo[d];
    }
    if (rest.hi[d] > b.hi[d]) {
      Box above = rest;
      above.lo[d] = b.hi[d];
      out.push_back(above);
      rest.hi[d] = b.hi[d];
    }
  }
  return out;
}

Box bounding_box(std::span<const Box> boxes) {
  if (boxes.empty()) fail(Code::InvalidArgument, "the bounding box of no box");
  Box out = boxes.front();
  for (const Box& b : boxes) {
    if (b.ndim != out.ndim) fail(Code::InvalidArgument, "the bounding box of boxes of ", out.ndim, " and ", b.ndim, " dimensions");
    for (int d = 0; d < out.ndim; ++d) {
      out.lo[d] = std::min(out.lo[d], b.lo[d]);
      out.hi[d] = std::max(out.hi[d], b.hi[d]);
    }
  }
  return out;
}

bool covers(std::span<const Box> pieces, const Box& region) {
  std::vector<Box> missing;
  if (!region.empty()) missing.push_back(region);
  for (const Box& p : pieces) {
    std::vector<Box> next;
    for (const Box& m : missing) {
      auto left = subtract(m, p);
      next.insert(next.end(), left.begin(), left.end());
    }
    missing.swap(next);
    if (missing.empty()) return true;
  }
  return missing.empty();
}

std::vector<Box> split_max_volume(const Box& box, Index max_volume) {
  detail::validate_box(box, "box");
  if (max_volume < 1) fail(Code::InvalidArgument, "max_volume = ", max_volume, " must be >= 1");
  std::vector<Box> out, todo{box};
  while (!todo.empty()) {
    Box b = todo.back();
    todo.pop_back();
    if (b.volume() <= max_volume) {
      out.push_back(b);
      continue;
    }
    int longest = 0;
    for (int d = 1; d < b.ndim; ++d)
      if (b.count(d) > b.count(longest)) longest = d;
    Box upper = b;
    const Index mid = b.lo[longest] + b.count(longest) / 2;
    b.hi[longest] = mid;
    upper.lo[longest] = mid;
    todo.push_back(upper);
    todo.push_back(b);
  }
  return out;
}

}  // namespace cove
