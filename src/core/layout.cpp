#include <cove/layout.hpp>

#include "core/fail.hpp"

#include <algorithm>
#include <charconv>
#include <vector>

namespace cove {

using detail::fail;

Layout Layout::permuted(std::span<const int> axes) {
  if (axes.empty() || axes.size() > static_cast<std::size_t>(kMaxDims))
    fail(Code::InvalidArgument, "layout permutation has ", axes.size(), " axes; expected 1 to ", kMaxDims);
  Layout l(Kind::Permuted);
  l.rank_ = static_cast<int>(axes.size());
  std::array<bool, kMaxDims> seen{};
  for (int i = 0; i < l.rank_; ++i) {
    const int a = axes[i];
    if (a < 0 || a >= l.rank_ || seen[a]) {
      std::string list;
      for (int x : axes) list.append(list.empty() ? "" : ",").append(std::to_string(x));
      fail(Code::InvalidArgument, "layout permutation {", list, "} is not a permutation of 0..", l.rank_ - 1);
    }
    seen[a] = true;
    l.axes_[i] = a;
  }
  return l;
}

Layout Layout::parse(std::string_view name) {
  if (name == "C" || name == "c" || name == "row-major" || name == "right") return c();
  if (name == "F" || name == "f" || name == "column-major" || name == "left") return f();
  if (name.size() > 1 && (name.front() == 'P' || name.front() == 'p')) {
    std::vector<int> axes;
    const char* p = name.data() + 1;
    const char* end = name.data() + name.size();
    while (p < end) {
      int v = 0;
      auto [next, ec] = std::from_chars(p, end, v);
      if (ec != std::errc{}) break;
      axes.push_back(v);
      p = next;
      if (p == end) {
        for (std::size_t i = 0; i < axes.size(); ++i)
          if (std::count(axes.begin(), axes.end(), static_cast<int>(i)) != 1)
            fail(Code::InvalidArgument, "layout '", name, "' is not a permutation of 0..", axes.size() - 1);
        return permuted(axes);
      }
      if (*p != ',') break;
      ++p;
    }
  }
  fail(Code::InvalidArgument, "unknown layout '", name, "'; expected 'C', 'F' or a permutation such as 'P2,0,1'");
}

std::array<int, kMaxDims> Layout::axis_order(int ndim) const {
  if (ndim < 1 || ndim > kMaxDims)
    fail(Code::InvalidArgument, "rank ", ndim, " is outside 1..", kMaxDims);
  std::array<int, kMaxDims> order{};
  switch (kind_) {
    case Kind::C:
      for (int i = 0; i < ndim; ++i) order[i] = i;
      break;
    case Kind::F:
      for (int i = 0; i < ndim; ++i) order[i] = ndim - 1 - i;
      break;
    case Kind::Permuted:
      if (rank_ != ndim)
        fail(Code::InvalidArgument, "layout ", to_string(), " has rank ", rank_, " but the box has ", ndim,
             " dimensions");
      order = axes_;
      break;
  }
  return order;
}

std::array<Index, kMaxDims> Layout::strides(const Box& box) const {
  const auto order = axis_order(box.ndim);
  std::array<Index, kMaxDims> s{};
  Index stride = 1;
  for (int i = box.ndim - 1; i >= 0; --i) {
    s[order[i]] = stride;
    stride = detail::checked_mul(stride, box.count(order[i]), "layout stride");
  }
  return s;
}

bool Layout::same_order(const Layout& other, int ndim) const {
  return axis_order(ndim) == other.axis_order(ndim);
}

std::string Layout::to_string() const {
  switch (kind_) {
    case Kind::C: return "C";
    case Kind::F: return "F";
    case Kind::Permuted: break;
  }
  std::string s = "P";
  for (int i = 0; i < rank_; ++i) s.append(i ? "," : "").append(std::to_string(axes_[i]));
  return s;
}

bool operator==(const Layout& a, const Layout& b) noexcept {
  if (a.kind_ != b.kind_) return false;
  if (a.kind_ != Layout::Kind::Permuted) return true;
  if (a.rank_ != b.rank_) return false;
  for (int i = 0; i < a.rank_; ++i)
    if (a.axes_[i] != b.axes_[i]) return false;
  return true;
}

}  // namespace cove
