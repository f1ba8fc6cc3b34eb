// Internal: the vocabulary of in-staging placement (docs/placement.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cove::store::placement {

// A staged object as placement sees it: one block of one variable, the same
// id at every version (the predictor compares consecutive steps of it).
using ObjectId = std::uint64_t;
// A consumer worker process (a "staging core" of the paper).
using WorkerId = std::uint64_t;

enum class Policy {
  rr_blocking,     // static round robin; consumers read after the whole step is written
  rr_nonblocking,  // static round robin; consumers read each object as soon as it is there
  time,            // least estimated completion time (ECT)
  data,            // most of the object's affinity group on the resource's node
  hybrid,          // ECT within hybrid_factor x the least ECT, then the most affinity
};

// "rr-blocking", "rr-nonblocking", "time", "data", "hybrid".
const char* policy_name(Policy policy) noexcept;
// The inverse of policy_name ("rr" is rr-nonblocking); throws
// Error(InvalidArgument) naming the text and the accepted names.
Policy parse_policy(std::string_view text);

inline bool is_round_robin(Policy policy) noexcept {
  return policy == Policy::rr_blocking || policy == Policy::rr_nonblocking;
}

}  // namespace cove::store::placement
