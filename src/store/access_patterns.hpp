// Internal: access-pattern records for self-adaptive reorganization (SAHR).
//
// A record says that some reader gets `box` of `var` in `layout`, and how
// often. Updating follows Algorithm 1 of the Kokkos Staging Space paper: a
// new get's box is merged with every record of the same variable and layout
// that it intersects into their bounding box (the superset), so that one
// prepared replica serves every reader of that region. Merging repeats until
// no two records of a variable and layout intersect (a grown box may meet a
// record the original did not).
//
// Readers keep records of their own gets and send a pattern to the servers
// only when update() reports a change; servers keep the records of all
// readers and prepare every new version of a variable for them.
//
// Thread-safety: none; callers serialise access.
#pragma once

#include <cove/box.hpp>
#include <cove/layout.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cove::store {

struct AccessPattern {
  Layout layout;
  Box box;
  std::uint64_t frequency = 0;  // gets recorded in this box
};

class AccessPatterns {
 public:
  // Records a get of `box` of `var` in `layout` (frequency counts one more
  // get). Returns true when the records changed shape: a new record, or a
  // record whose box grew; false when an existing record already contained
  // the box.
  bool update(const std::string& var, const Layout& layout, const Box& box, std::uint64_t gets = 1);
  // Forgets the records of `var` (undefined).
  void forget(const std::string& var) { records_.erase(var); }
  // The records of `var`, in no particular order.
  const std::vector<AccessPattern>& of(const std::string& var) const;
  std::size_t size() const;

 private:
  std::map<std::string, std::vector<AccessPattern>> records_;
};

}  // namespace cove::store
