// The busy-poll window of the local transport: its setting, and that a
// window ends.
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
