#include "store/access_patterns.hpp"

namespace cove::store {

bool AccessPatterns::update(const std::string& var, const Layout& layout, const Box& box, std::uint64_t gets) {
  auto& list = records_[var];
  const int ndim = box.ndim;
  auto same = [&](const AccessPattern& r) { return r.box.ndim == ndim && r.layout.same_order(layout, ndim); };
  for (auto& r : list)
    if (same(r) && r.box.contains(box)) {
      r.frequency += gets;
      return false;
    }
  AccessPattern merged{layout, box, gets};
  for (bool grew = true; grew;) {
    grew = false;
    for (auto it = list.begin(); it != list.end();)
      if (same(*it) && !it->box.intersection(merged.box).empty()) {
        const Box both[] = {merged.box, it->box};
        merged.box = bounding_box(both);
        merged.frequency += it->frequency;
        it = list.erase(it);
        grew = true;
      } else {
        ++it;
      }
  }
  list.push_back(merged);
  return true;
}

const std::vector<AccessPattern>& AccessPatterns::of(const std::string& var) const {
  static const std::vector<AccessPattern> none;
  auto it = records_.find(var);
  return it == records_.end() ? none : it->second;
}

std::size_t AccessPatterns::size() const {
  std::size_t n = 0;
  for (const auto& [var, list] : records_) n += list.size();
  return n;
}

}  // namespace cove::store
