// Internal: the task monitor and the execution-time predictor of the
// in-staging placement paper (seeds/001, sections II-B and III-A).
//
// A measurement is the execution time of the consumer task that read one
// staged object (the "data d": a variable's block, whatever its version).
// It comes either from explicit start and end events a worker reports, or,
// as in the paper, from the interval between two consecutive reads of the
// same worker: that interval is charged to the object read first.
//
// The prediction is the paper's EET(d)^T = Time^{T-1} + (Time^{T-1} - Time^{T-2}),
// clamped at zero (a task never takes negative time); with one measurement
// it is that measurement, with none there is no prediction.
//
// Thread-safety: none; callers serialise access. No I/O: the server and the
// simulator (bench/placement_sim.cpp) link this same code.
#pragma once

#include "store/placement/types.hpp"

#include <optional>
#include <unordered_map>

namespace cove::store::placement {

class TaskMonitor {
 public:
  // An explicit measurement: the task that read `object` ran `seconds`
  // (from the worker's start and end events). Throws Error(InvalidArgument)
  // for a negative or non-finite duration, naming the object.
  void record(ObjectId object, double seconds);

  // Worker `worker` read `object` at time `at` (seconds, any clock common to
  // the worker's reads). The time since that worker's previous read is
  // recorded for the object it read then. Reads going back in time throw
  // Error(InvalidArgument) naming the worker.
  void read_event(WorkerId worker, ObjectId object, double at);

  // The worker finished its last task at `at`: charges the interval since
  // its last read to that read's object, and forgets the worker.
  void worker_idle(WorkerId worker, double at);

  // EET(d) for the next step, or nullopt before the first measurement of d.
  std::optional<double> eet(ObjectId object) const;
  // EET(d), or `fallback` (e.g. the mean of all predictions) before d's first measurement.
  double eet_or(ObjectId object, double fallback) const;
  // The mean of the latest measurement of every object seen (0 with none).
  double mean_latest() const noexcept;

  std::size_t objects() const noexcept { return history_.size(); }

 private:
  struct History {
    double last = 0;
    double before_last = 0;
    int count = 0;
  };
  struct LastRead {
    ObjectId object;
    double at;
  };
  std::unordered_map<ObjectId, History> history_;
  std::unordered_map<WorkerId, LastRead> last_read_;
  double latest_sum_ = 0;
};

}  // namespace cove::store::placement
