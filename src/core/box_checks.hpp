// Internal: argument checks on boxes that Cove's layers share.
//
// Errors: InvalidArgument, with `what` naming the argument in the message
// ("region", "source box", ...).
#pragma once

#include <cove/box.hpp>

namespace cove::detail {

// Unless 1 <= box.ndim <= kMaxDims and lo <= hi.
void validate_box(const Box& box, const char* what);
// When a and b have different ranks.
void require_same_rank(const Box& a, const char* what_a, const Box& b, const char* what_b);

}  // namespace cove::detail
