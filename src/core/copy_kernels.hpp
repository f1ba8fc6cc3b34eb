// Internal: the loops that move bytes for a CopyPlan (see copy_plan.hpp).
#pragma once

#include "core/copy_plan.hpp"

namespace cove::detail {

// `stream` asks for non-temporal stores on long destination runs: for copies
// much larger than the cache, it saves the read-for-ownership of every line.
void copy_runs(const unsigned char* s, unsigned char* d, const CopyPlan& p, bool stream);
void copy_general(const unsigned char* s, unsigned char* d, const CopyPlan& p);
// Requires auto_method(p) == Tiled and move_source_unit_dim_inward(p) applied.
void copy_tiled(const unsigned char* s, unsigned char* d, const CopyPlan& p, bool stream);
void move_source_unit_dim_inward(CopyPlan& p);

}  // namespace cove::detail
