#pragma once

namespace cove::h5vol {

// COVE_H5VOL_TIMING=1: the connector's time per phase (H5Fcreate, define,
// H5Dwrite, H5Fclose, ...), summed per process and printed to stderr when
// the connector closes. Costs nothing measurable when off.
class PhaseTimer {
 public:
  explicit PhaseTimer(const char* phase);
  ~PhaseTimer();
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  const char* phase_;
  long long start_ns_ = 0;
};

void print_timing();

}  // namespace cove::h5vol
