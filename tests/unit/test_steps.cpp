// Client::steps and Client::end_steps (docs/staging.md, "Steps"): a reader
// walks the complete versions of one or several variables in order, by
// stride or newest first, starting before the writer, and sees the end of
// the stream. Named Semantics* so that tests/CMakeLists.txt runs them over
// every data path too.
#include <cove/client.hpp>
#include <cove/error.hpp>
#include <cove/server.hpp>

#include "staging_support.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using cove::Box;
using cove::Client;
using cove::Code;
using cove::DType;
using cove::DTypeKind;
using cove::Index;
using cove::StepOptions;
using namespace cove_test;

const V kShape{8, 160};  // 10 KiB: a group splits it in two index blocks

Box rows(Index first, Index n) { return Box::from_start_count(V{first, 0}, V{n, kShape[1]}); }

// Puts the whole of `var` at `version`, every cell holding the version
// plus its index, so that a reader can tell the step it read.
void put_step(Client& c, const std::string& var, std::uint64_t version, const Box& box = Box::from_shape(kShape)) {
  std::vector<double> data = encoded(box, kShape);
  for (double& x : data) x += 1000.0 * static_cast<double>(version);
  c.put(var, version, box, data.data(), data.size() * sizeof(double));
}

// Every step the walk returns until its end (timeout per step: 20 s).
std::vector<std::uint64_t> walk(cove::Steps steps) {
  std::vector<std::uint64_t> seen;
  while (const auto v = steps.next(20000)) seen.push_back(*v);
  return seen;
}

// Every step complete now, without waiting (the stream has not ended).
std::vector<std::uint64_t> walk_until_idle(cove::Steps steps) {
  std::vector<std::uint64_t> seen;
  for (;;) try {
      const auto v = steps.next(0);
      if (!v) return seen;
      seen.push_back(*v);
    } catch (const cove::Error& e) {
      EXPECT_EQ(e.code(), Code::NotFound) << e.what();
      return seen;
    }
}

TEST(SemanticsSteps, AReaderStartedFirstSeesEveryStepThenTheEnd) {
  Group group(1);
  Client writer = Client::connect(group.addresses());
  Client reader = Client::connect(group.addresses());
  // The reader starts before the variable exists.
  auto seen = std::async(std::launch::async, [&] { return walk(reader.steps({"heat"})); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  writer.define("heat", DType(DTypeKind::Float64), 2, kShape);
  for (std::uint64_t v : {2u, 4u, 7u}) put_step(writer, "heat", v);
  const std::string vars[] = {"heat"};
  writer.end_steps(vars);
  EXPECT_EQ(seen.get(), (std::vector<std::uint64_t>{2, 4, 7}));
  // A reader that starts after the end still sees every kept step.
  EXPECT_EQ(walk(reader.steps({"heat"})), (std::vector<std::uint64_t>{2, 4, 7}));
  StepOptions late;
  late.after = 4;
  EXPECT_EQ(walk(reader.steps({"heat"}, {}, late)), (std::vector<std::uint64_t>{7}));
  // The data of a step is the step's.
  auto steps = reader.steps({"heat"});
  ASSERT_EQ(steps.next(0), 2u);
  std::vector<double> got(static_cast<std::size_t>(Box::from_shape(kShape).volume()));
  reader.get("heat", *steps.current(), Box::from_shape(kShape), got.data(), got.size() * sizeof(double), 0);
  EXPECT_EQ(got[5], 2005.0);
}

TEST(SemanticsSteps, StrideAndNewest) {
  Group group(1);
  Client c = Client::connect(group.addresses());
  c.define("t", DType(DTypeKind::Float64), 2, kShape);
  for (std::uint64_t v = 1; v <= 10; ++v) put_step(c, "t", v);
  const std::string vars[] = {"t"};
  c.end_steps(vars);
  StepOptions every3;
  every3.stride = 3;
  EXPECT_EQ(walk(c.steps({"t"}, {}, every3)), (std::vector<std::uint64_t>{1, 4, 7, 10}));
  StepOptions newest;
  newest.newest = true;
  EXPECT_EQ(walk(c.steps({"t"}, {}, newest)), (std::vector<std::uint64_t>{10}));
}

// A step is a version that covers every variable's region: versions that
// one variable lacks, or covers only in part, are not steps.
TEST(SemanticsSteps, AStepCoversEveryVariable) {
  for (int servers : {1, 2}) {
    SCOPED_TRACE(servers);
    Group group(servers);
    Client c = Client::connect(group.addresses());
    c.define("a", DType(DTypeKind::Float64), 2, kShape);
    c.define("b", DType(DTypeKind::Float64), 2, kShape);
    for (std::uint64_t v = 1; v <= 4; ++v) put_step(c, "a", v);
    put_step(c, "b", 1);
    put_step(c, "b", 2, rows(0, 4));  // half of it
    put_step(c, "b", 4);
    const Box lower = rows(4, 4);
    EXPECT_EQ(walk_until_idle(c.steps({"a", "b"})), (std::vector<std::uint64_t>{1, 4}));
    // With regions: version 2 covers b's upper half, so it is a step there.
    EXPECT_EQ(walk_until_idle(c.steps({"a", "b"}, {Box::from_shape(kShape), rows(0, 4)})),
              (std::vector<std::uint64_t>{1, 2, 4}));
    // The walk waits for the lagging variable; its put makes the step.
    auto steps = c.steps({"a", "b"});
    ASSERT_EQ(steps.next(0), 1u);
    ASSERT_EQ(steps.next(0), 4u);
    auto waiting = std::async(std::launch::async, [&] { return steps.next(20000); });
    put_step(c, "a", 5);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    put_step(c, "b", 5, lower);
    put_step(c, "b", 5, rows(0, 4));
    EXPECT_EQ(waiting.get(), 5u);
    const std::string vars[] = {"a", "b"};
    c.end_steps(vars);
    EXPECT_EQ(steps.next(20000), std::nullopt);
    EXPECT_EQ(steps.next(0), std::nullopt);  // ended for good
  }
}

TEST(SemanticsSteps, TimeoutsAndBadArguments) {
  Group group(1);
  Client c = Client::connect(group.addresses());
  expect_error(Code::NotFound, "not defined", [&] { c.steps({"nothing"}).next(0); });
  expect_error(Code::Timeout, "not", [&] { c.steps({"nothing"}).next(100); });
  c.define("t", DType(DTypeKind::Float64), 2, kShape);
  c.define("shapeless", DType(DTypeKind::Float64), 2, {});
  put_step(c, "t", 3);
  auto steps = c.steps({"t"});
  EXPECT_EQ(steps.next(0), 3u);
  expect_error(Code::NotFound, "no complete step at or after version 4", [&] { steps.next(0); });
  expect_error(Code::Timeout, "within 150 ms", [&] { steps.next(150); });
  EXPECT_EQ(steps.current(), 3u);
  StepOptions zero;
  zero.stride = 0;
  expect_error(Code::InvalidArgument, "stride 0", [&] { c.steps({"t"}, {}, zero); });
  expect_error(Code::InvalidArgument, "at least one", [&] { c.steps({}); });
  expect_error(Code::InvalidArgument, "named twice", [&] { c.steps({"t", "t"}); });
  expect_error(Code::InvalidArgument, "1 regions for 2", [&] { c.steps({"t", "shapeless"}, {Box::from_shape(kShape)}); });
  expect_error(Code::InvalidArgument, "without a shape", [&] { c.steps({"shapeless"}).next(0); });
  expect_error(Code::InvalidArgument, "", [&] { c.steps({"t"}, {Box::from_shape(V{9, 12})}).next(0); });
  const std::string none[] = {"shapeless"};
  expect_error(Code::NotFound, "has no version", [&] { c.end_steps(none); });
}

}  // namespace
