// Internal (plugin): the reassembly kernel's launch (reassemble.cu).
#pragma once

#include "gpu/plan.hpp"

#include <cuda_runtime.h>

namespace cove::gpu {

// Assembles `count` pieces (every plan with the same word size) in one
// launch on `stream`; `plans` is host memory, copied before this returns.
cudaError_t launch_reassembly(const DevicePlan* plans, int count, cudaStream_t stream);

}  // namespace cove::gpu
