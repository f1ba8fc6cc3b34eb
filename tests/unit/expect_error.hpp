// The checks unit tests make of bad input: expect_error (`fn` must throw a
// cove::Error with `code` whose message mentions `needle`) and code_of.
#pragma once

#include <cove/error.hpp>

#include <gtest/gtest.h>

#include <functional>
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

// The code of the cove::Error that `fn` throws; Ok when it throws none.
inline cove::Code code_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const cove::Error& e) {
    return e.code();
  }
  return cove::Code::Ok;
}

}  // namespace cove_test
