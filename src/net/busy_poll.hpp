// Internal: how long a thread that expects an answer soon may poll for it
// before it sleeps.
//
// A wake-up from sleep costs about 10 us per side on this kind of host, so
// a round trip between two sleeping processes costs 20-26 us, most of it
// waking. Polling for a few tens of microseconds first (recv with
// MSG_DONTWAIT, epoll_wait with no timeout) takes most of that off, but
// only when a core is free: a poller on an oversubscribed host takes the
// core the answering process needs. So a thread polls only while the host's
// runnable tasks (the kernel's count, /proc/loadavg) do not outnumber the
// cores this process may run on, and only for its window; then it sleeps
// as before. An idle thread never polls: it polls only after something
// just happened (a request it sent, a request it served).
//
// The window adapts, per thread, to how late answers come. A wake-up from
// sleep can take longer than the window (55-70 us measured on the 2-core
// test VM): then each side stops polling just before the other answers,
// both sleep on every round trip, and they stay so (a 4 KiB round trip of
// about 113 us instead of 11-17). So a thread that slept and was woken
// within the widest window (a near miss: polling longer would have caught
// it) doubles its next windows, up to 4 times the configured one; a sleep
// longer than that (a bulk transfer, an idle peer) brings them back to the
// configured window.
//
// Two things keep a poller from delaying the very answer it polls for:
//   - Each poll yields the core (sched_yield). A Unix socket's send wakes
//     its reader on the sender's core, as if the sender were about to
//     sleep; a sender that polls instead would keep the woken peer queued
//     behind it for its whole window. Yielding lets the peer run at once.
//     Measured on the 2-core test VM, a round trip after 0.3 ms idle: 106-112
//     us without the yield, 40-60 us with it (1-2 ms idle: 146-179 against
//     116-135 us); back to back, 9-20 us either way.
//   - A caller awaiting a peer it has not heard from for longer than the
//     widest window does not poll (awaiting()): the peer's own window has
//     ended and it sleeps, its wake-up outlasts any window, and polling
//     only takes a core it could be woken on. A round trip after 2 ms idle:
//     81-84 us polling, 39-50 us not.
//
// COVE_SPIN_US sets the configured window in microseconds (default 50; 0:
// never poll); any other value is InvalidArgument naming the variable, at
// the first use.
//
// Thread-safety: every function may be called from any thread.
#pragma once

#include <chrono>

namespace cove::net {

class BusyPoll {
 public:
  using Clock = std::chrono::steady_clock;

  // Starts a window of this thread's length: poll() is true until it ends,
  // or from the start false when polling now would take a core from
  // another task.
  BusyPoll();
  // A window for a caller awaiting an answer from a peer last heard from
  // at `heard`: closed from the start when that was longer ago than the
  // widest window (see above).
  static BusyPoll awaiting(Clock::time_point heard);
  // True while the caller should poll once more rather than sleep.
  // Yields the core first when it is true (see above).
  bool poll() const;
  // After the window ended, the caller slept this long until what it
  // waited for came: sets this thread's next windows (see above).
  static void slept(Clock::duration how_long);
  // This thread's window now: the configured one, or up to 4 times it.
  static std::chrono::microseconds thread_window();

  // The configured window (0 when polling is off, or on one core).
  static std::chrono::microseconds window();
  // COVE_SPIN_US's value: null or empty is the default (50 us).
  static std::chrono::microseconds parse_window(const char* text);
  // True when every runnable task on the host can have a core (sampled at
  // most every few milliseconds; false when /proc/loadavg cannot be read).
  static bool cores_free();

 private:
  struct Closed {};
  explicit BusyPoll(Closed) {}
  bool open_ = false;
  Clock::time_point until_{};
};

}  // namespace cove::net
