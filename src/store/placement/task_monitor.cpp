#include "store/placement/task_monitor.hpp"

#include <cove/error.hpp>

#include <algorithm>
#include <cmath>
#include <string>

namespace cove::store::placement {

void TaskMonitor::record(ObjectId object, double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) {
    throw Error(Code::InvalidArgument, "task monitor: execution time " + std::to_string(seconds) + " s for object " +
                                           std::to_string(object) + " is negative or not finite");
  }
  History& h = history_[object];
  if (h.count > 0) latest_sum_ -= h.last;
  h.before_last = h.last;
  h.last = seconds;
  h.count = std::min(h.count + 1, 2);
  latest_sum_ += seconds;
}

void TaskMonitor::read_event(WorkerId worker, ObjectId object, double at) {
  auto it = last_read_.find(worker);
  if (it != last_read_.end()) {
    if (!(at >= it->second.at)) {
      throw Error(Code::InvalidArgument, "task monitor: worker " + std::to_string(worker) + " read at " +
                                             std::to_string(at) + " s, before its previous read at " +
                                             std::to_string(it->second.at) + " s");
    }
    record(it->second.object, at - it->second.at);
    it->second = LastRead{object, at};
  } else {
    last_read_.emplace(worker, LastRead{object, at});
  }
}

void TaskMonitor::worker_idle(WorkerId worker, double at) {
  auto it = last_read_.find(worker);
  if (it == last_read_.end()) return;
  const LastRead last = it->second;
  last_read_.erase(it);
  if (!(at >= last.at)) {
    throw Error(Code::InvalidArgument, "task monitor: worker " + std::to_string(worker) + " went idle at " +
                                           std::to_string(at) + " s, before its last read at " +
                                           std::to_string(last.at) + " s");
  }
  record(last.object, at - last.at);
}

std::optional<double> TaskMonitor::eet(ObjectId object) const {
  auto it = history_.find(object);
  if (it == history_.end()) return std::nullopt;
  const History& h = it->second;
  if (h.count == 1) return h.last;
  return std::max(0.0, h.last + (h.last - h.before_last));
}

double TaskMonitor::eet_or(ObjectId object, double fallback) const {
  return eet(object).value_or(fallback);
}

double TaskMonitor::mean_latest() const noexcept {
  return history_.empty() ? 0.0 : latest_sum_ / static_cast<double>(history_.size());
}

}  // namespace cove::store::placement
