#include <cove.h>
#include <cove/error.hpp>

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace {

TEST(Error, CarriesCodeAndMessage) {
  const cove::Error e(cove::Code::Timeout, "get of 'T' waited 50 ms");
  EXPECT_EQ(e.code(), cove::Code::Timeout);
  EXPECT_STREQ(e.what(), "Timeout: get of 'T' waited 50 ms");
}

TEST(Error, TableIsConsistentAcrossCAndCpp) {
  std::set<int> values;
  std::set<std::string> texts;
#define COVE_X(c_name, cpp_name, value, text)                                 \
  EXPECT_EQ(static_cast<int>(cove::Code::cpp_name), static_cast<int>(c_name)); \
  EXPECT_STREQ(cove::code_name(cove::Code::cpp_name), #cpp_name);             \
  EXPECT_STREQ(cove_strerror(c_name), text);                                  \
  EXPECT_STREQ(cove_status_name(c_name), #c_name + 5);                        \
  values.insert(value);                                                       \
  texts.insert(text);
  COVE_STATUS_TABLE(COVE_X)
#undef COVE_X
  EXPECT_EQ(values.size(), texts.size()) << "duplicate values or texts in the status table";
  EXPECT_EQ(*values.begin(), 0);
  EXPECT_EQ(*values.rbegin(), static_cast<int>(values.size()) - 1) << "status values must be dense from 0";
  EXPECT_STREQ(cove::code_name(static_cast<cove::Code>(999)), "Unknown");
}

}  // namespace
