// Cove's log lines into Python's `logging` (logger "cove"). The C++ sink
// (cove/log.hpp) only queues a line: it runs on any thread, perhaps with
// Cove's locks held, so it never takes the GIL. A Python thread started by
// the package (python/cove/_log.py) takes the lines from the queue, with the
// GIL released while it waits, and hands them to logging.
#include "python/bindings.hpp"

#include <cove/log.hpp>

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace nb = nanobind;
using namespace nb::literals;

namespace cove::python {

namespace {

// At most this many lines wait; older ones are dropped (and counted) when
// nobody takes them, so that a log storm cannot exhaust memory.
constexpr std::size_t kMaxQueued = 10000;

struct LogQueue {
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<std::tuple<int, std::string>> lines;
  std::size_t dropped = 0;
};

// Never destroyed: C++ threads may still log while the interpreter exits.
LogQueue& queue() {
  static auto* q = new LogQueue;
  return *q;
}

// Python's logging levels.
int python_level(LogLevel level) {
  switch (level) {
    case LogLevel::error:
      return 40;
    case LogLevel::warn:
      return 30;
    case LogLevel::info:
      return 20;
    case LogLevel::debug:
      return 10;
  }
  return 40;
}

}  // namespace

void bind_log(nb::module_& m) {
  m.def("_log_to_queue", [] {
    set_log_sink([](LogLevel level, std::string_view line) {
      LogQueue& q = queue();
      {
        std::lock_guard lock(q.mutex);
        if (q.lines.size() >= kMaxQueued) {
          q.lines.pop_front();
          ++q.dropped;
        }
        q.lines.emplace_back(python_level(level), std::string(line));
      }
      q.ready.notify_one();
    });
  });
  m.def("_log_to_stderr", [] { set_log_sink({}); });
  m.def(
      "_log_lines",
      [](double timeout) {
        LogQueue& q = queue();
        std::vector<std::tuple<int, std::string>> out;
        std::size_t dropped = 0;
        {
          nb::gil_scoped_release nogil;
          std::unique_lock lock(q.mutex);
          q.ready.wait_for(lock, std::chrono::duration<double>(timeout), [&] { return !q.lines.empty(); });
          out.assign(std::make_move_iterator(q.lines.begin()), std::make_move_iterator(q.lines.end()));
          q.lines.clear();
          dropped = q.dropped;
          q.dropped = 0;
        }
        return nb::make_tuple(out, dropped);
      },
      "timeout"_a,
      "(lines, dropped): the queued (level, line) pairs, waiting up to `timeout` seconds for one, and how many "
      "were dropped because the queue was full.");
}

}  // namespace cove::python
