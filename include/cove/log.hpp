// Where Cove's log lines go, for programs that have a log of their own
// (the Python package sends them to the `logging` logger "cove").
//
// By default Cove writes its lines to stderr at the level COVE_LOG_LEVEL
// names (error, warn, info, debug; default warn); a server's log_file
// option writes them to a file instead. A sink set here receives every
// line that passes the level, in place of stderr (a server's log_file
// still wins for the lines it writes after configuring it).
//
// Blocking and threads: the sink is called on whatever thread logs,
// sometimes with Cove's internal locks held: it must return quickly and
// must not call back into Cove (queue the line and return). Calls to it
// are serialised. set_log_sink may be called from any thread; after it
// returns, no line reaches the previous sink.
// Errors: an exception from the sink is swallowed (the line is lost).
#pragma once

#include <cove/export.hpp>

#include <functional>
#include <string_view>

namespace cove {

enum class LogLevel { error, warn, info, debug };

// The line is the message alone, escaped (no time stamp, level or pid).
using LogSink = std::function<void(LogLevel level, std::string_view line)>;

// Sends the log to `sink`; an empty sink sends it back to stderr.
COVE_EXPORT void set_log_sink(LogSink sink);

}  // namespace cove
