// The busy-poll window of the local transport: its setting, that a window
// ends, and how a thread's window adapts.
#include "net/busy_poll.hpp"

#include "expect_error.hpp"

#include <gtest/gtest.h>

#include <thread>

using cove::net::BusyPoll;
using std::chrono::microseconds;

TEST(BusyPoll, WindowSetting) {
  EXPECT_EQ(BusyPoll::parse_window(nullptr), microseconds(50));
  EXPECT_EQ(BusyPoll::parse_window(""), microseconds(50));
  EXPECT_EQ(BusyPoll::parse_window("0"), microseconds(0));
  EXPECT_EQ(BusyPoll::parse_window("200"), microseconds(200));
  for (const char* bad : {"-1", "50us", "x", "1000001", "99999999999999999999"})
    cove_test::expect_error(cove::Code::InvalidArgument, std::string("COVE_SPIN_US = '") + bad + "'",
                            [&] { BusyPoll::parse_window(bad); });
}

TEST(BusyPoll, AWindowEnds) {
  BusyPoll spin;
  std::this_thread::sleep_for(BusyPoll::window() + std::chrono::milliseconds(1));
  EXPECT_FALSE(spin.poll());
}

// A thread woken soon after its window ended (its peer's wake-up outlasted
// the window) polls longer next time, up to 4 windows; a long sleep brings
// it back. Each thread has its own.
TEST(BusyPoll, AThreadsWindowWidensAfterNearMissesAndNarrowsAfterALongSleep) {
  const auto base = BusyPoll::window();
  if (base.count() == 0) GTEST_SKIP() << "polling is off here (one core, or COVE_SPIN_US=0)";
  std::thread([base] {  // a thread of its own: its window starts at the configured one
    EXPECT_EQ(BusyPoll::thread_window(), base);
    BusyPoll::slept(base);
    EXPECT_EQ(BusyPoll::thread_window(), 2 * base);
    std::thread([base] { EXPECT_EQ(BusyPoll::thread_window(), base); }).join();
    BusyPoll::slept(3 * base);
    EXPECT_EQ(BusyPoll::thread_window(), 4 * base);
    BusyPoll::slept(base);
    EXPECT_EQ(BusyPoll::thread_window(), 4 * base);  // no wider
    BusyPoll::slept(std::chrono::milliseconds(5));    // a bulk transfer, an idle peer
    EXPECT_EQ(BusyPoll::thread_window(), base);
  }).join();
}

// A caller awaiting a peer it last heard from longer ago than the widest
// window does not poll: that peer sleeps, and its wake-up outlasts any
// window. (A peer heard from just now gets an ordinary window, which is
// open only while the host has a core free, so no assertion here.)
TEST(BusyPoll, NoWindowForAPeerSilentLongerThanTheWidestWindow) {
  const auto base = BusyPoll::window();
  if (base.count() == 0) GTEST_SKIP() << "polling is off here (one core, or COVE_SPIN_US=0)";
  const auto long_ago = BusyPoll::Clock::now() - 4 * base - std::chrono::milliseconds(1);
  EXPECT_FALSE(BusyPoll::awaiting(long_ago).poll());
  EXPECT_FALSE(BusyPoll::awaiting(BusyPoll::Clock::time_point{}).poll());  // never heard from
}
