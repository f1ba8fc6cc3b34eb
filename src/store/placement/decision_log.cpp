#include "store/placement/decision_log.hpp"

#include <fmt/format.h>

namespace cove::store::placement {

void DecisionLog::add(const Decision& decision) {
  ++total_;
  ++by_policy_[static_cast<std::size_t>(decision.applied)];
  if (decision.applied != decision.policy) ++fallbacks_;
  if (capacity_ == 0) return;
  if (recent_.size() == capacity_) recent_.pop_front();
  recent_.push_back(decision);
}

std::string format_decision(const Decision& d) {
  std::string policy = policy_name(d.policy);
  if (d.applied != d.policy) policy += std::string("->") + policy_name(d.applied);
  return fmt::format(
      "#{} object {} policy {} resource {} node {} eet {:.6g} dat {:.6g} eat {:.6g} ect {:.6g} min_ect {:.6g} "
      "group {} affinity {} candidates {} bytes {}",
      d.sequence, d.object, policy, d.resource, d.node, d.eet, d.dat, d.eat_before, d.ect, d.min_ect, d.group,
      d.affinity, d.candidates, d.bytes);
}

}  // namespace cove::store::placement
