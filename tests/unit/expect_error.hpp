// The check every unit test makes of bad input: `fn` must throw a
// cove::Error with `code` whose message mentions `needle`.
#pragma once

#include <cove/error.hpp>

#include <gtest/gtest.h>

#include <string>

namespace cove_test {

template <typename Fn>
void expect_error(cove::Code code, const std::string& needle, Fn&& fn) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected " << cove::code_name(code) << " mentioning '" << needle << "'";
  } catch (const cove::Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

}  // namespace cove_test
