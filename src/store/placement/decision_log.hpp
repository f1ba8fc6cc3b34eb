// Internal: the record of placement decisions that `cove stat` and
// `cove top` show (docs/placement.md): the last `capacity` decisions with
// their inputs, and running totals per policy applied.
//
// Thread-safety: none; callers serialise access. No I/O.
#pragma once

#include "store/placement/placer.hpp"

#include <array>
#include <cstdint>
#include <deque>
#include <string>

namespace cove::store::placement {

class DecisionLog {
 public:
  explicit DecisionLog(std::size_t capacity = 1024) : capacity_(capacity) {}
  void add(const Decision& decision);
  const std::deque<Decision>& recent() const noexcept { return recent_; }
  std::uint64_t total() const noexcept { return total_; }
  std::uint64_t total(Policy applied) const noexcept { return by_policy_[static_cast<std::size_t>(applied)]; }
  std::uint64_t fallbacks() const noexcept { return fallbacks_; }  // data/hybrid placed as time

 private:
  std::size_t capacity_;
  std::deque<Decision> recent_;
  std::uint64_t total_ = 0;
  std::uint64_t fallbacks_ = 0;
  std::array<std::uint64_t, 5> by_policy_{};
};

// One line: "#12 object 7 policy hybrid->time resource 3 node 1 eet 0.002 dat 1.5 eat 1.4 ect 1.502 min_ect 1.5
// group 1 affinity 3 candidates 2 bytes 4096".
std::string format_decision(const Decision& decision);

}  // namespace cove::store::placement
