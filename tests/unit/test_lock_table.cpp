// The lock manager's table (src/store/lock_table.hpp): shared readers, one
// writer, FIFO order, deadlines, a holder going away, and bad requests.
#include "store/lock_table.hpp"

#include <cove/error.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace {

using cove::store::LockMode;
using cove::store::LockOutcome;
using cove::store::LockRegion;
using cove::store::LockRequest;
using cove::store::LockTable;
using Ids = std::vector<std::uint64_t>;

LockRequest req(std::uint64_t id, std::uint64_t holder, LockMode mode, LockRegion region = {}, double deadline = 100,
                const std::string& name = "rho") {
  return LockRequest{id, holder, name, std::move(region), mode, deadline};
}

TEST(LockTable, ReadersShareAWriterIsAlone) {
  LockTable t;
  EXPECT_EQ(t.lock(req(1, 10, LockMode::read)).granted, Ids{1});
  EXPECT_EQ(t.lock(req(2, 11, LockMode::read)).granted, Ids{2});
  EXPECT_TRUE(t.lock(req(3, 12, LockMode::write)).granted.empty());
  EXPECT_EQ(t.held("rho"), 2u);
  EXPECT_TRUE(t.unlock(10, "rho", {}).granted.empty());  // one reader still in
  EXPECT_EQ(t.unlock(11, "rho", {}).granted, Ids{3});     // the writer, alone
  EXPECT_TRUE(t.lock(req(4, 10, LockMode::read)).granted.empty());
  EXPECT_EQ(t.unlock(12, "rho", {}).granted, Ids{4});
}

TEST(LockTable, WaitersAreServedInArrivalOrder) {
  LockTable t;
  EXPECT_EQ(t.lock(req(1, 1, LockMode::write)).granted, Ids{1});
  EXPECT_TRUE(t.lock(req(2, 2, LockMode::read)).granted.empty());
  EXPECT_TRUE(t.lock(req(3, 3, LockMode::write)).granted.empty());
  // A reader arriving behind a waiting writer waits too: no starvation.
  EXPECT_TRUE(t.lock(req(4, 4, LockMode::read)).granted.empty());
  EXPECT_EQ(t.unlock(1, "rho", {}).granted, Ids{2});
  EXPECT_EQ(t.unlock(2, "rho", {}).granted, Ids{3});
  EXPECT_EQ(t.unlock(3, "rho", {}).granted, Ids{4});
  EXPECT_EQ(t.waiting("rho"), 0u);
}

TEST(LockTable, DisjointRegionsDoNotConflict) {
  LockTable t;
  t.set_domain("rho", {8, 8});
  const LockRegion left{{0, 0}, {8, 4}}, right{{0, 4}, {8, 4}}, middle{{2, 2}, {2, 4}};
  EXPECT_EQ(t.lock(req(1, 1, LockMode::write, left)).granted, Ids{1});
  EXPECT_EQ(t.lock(req(2, 2, LockMode::write, right)).granted, Ids{2});
  EXPECT_TRUE(t.lock(req(3, 3, LockMode::read, middle)).granted.empty());  // overlaps both
  EXPECT_TRUE(t.lock(req(4, 4, LockMode::read)).granted.empty());          // the whole object
  EXPECT_TRUE(t.unlock(1, "rho", left).granted.empty());
  EXPECT_EQ(t.unlock(2, "rho", right).granted, (Ids{3, 4}));
  EXPECT_EQ(t.lock(req(5, 5, LockMode::write, {}, 100, "other")).granted, Ids{5});  // another object
}

TEST(LockTable, HugeRegionsStillConflict) {
  LockTable t;  // no domain: any region; start + count beyond 64 bits must not wrap
  const std::uint64_t top = ~std::uint64_t{0};
  EXPECT_EQ(t.lock(req(1, 1, LockMode::write, {{top - 4}, {top}})).granted, Ids{1});
  EXPECT_TRUE(t.lock(req(2, 2, LockMode::write, {{top - 1}, {1}})).granted.empty());
  EXPECT_EQ(t.lock(req(3, 3, LockMode::write, {{0}, {top - 4}})).granted, Ids{3});  // ends where 1 starts
}

TEST(LockTable, WaitsEndAtTheirDeadline) {
  LockTable t;
  t.lock(req(1, 1, LockMode::write));
  t.lock(req(2, 2, LockMode::write, {}, 5.0));
  t.lock(req(3, 3, LockMode::read, {}, 9.0));
  LockOutcome o = t.expire(4.0);
  EXPECT_TRUE(o.timed_out.empty());
  o = t.expire(5.0);
  EXPECT_EQ(o.timed_out, Ids{2});
  EXPECT_TRUE(o.granted.empty());  // the writer 1 still holds
  EXPECT_EQ(t.unlock(1, "rho", {}).granted, Ids{3});
}

TEST(LockTable, AHolderThatGoesAwayReleasesItsLocksAndWaits) {
  LockTable t;
  t.lock(req(1, 7, LockMode::write));
  t.lock(req(2, 7, LockMode::write, {}, 100, "other"));
  t.lock(req(3, 8, LockMode::read));
  t.lock(req(4, 8, LockMode::write, {}, 100, "other"));
  t.lock(req(5, 7, LockMode::read, {{0}, {1}}, 100, "third"));
  const LockOutcome o = t.release_holder(7);
  EXPECT_EQ(o.granted.size(), 2u);
  EXPECT_NE(std::find(o.granted.begin(), o.granted.end(), 3u), o.granted.end());
  EXPECT_NE(std::find(o.granted.begin(), o.granted.end(), 4u), o.granted.end());
  EXPECT_EQ(t.held("third"), 0u);
}

TEST(LockTable, BadRequestsNameTheObject) {
  LockTable t;
  t.set_domain("rho", {8, 8});
  auto what = [&](auto f) {
    try {
      f();
    } catch (const cove::Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  const std::string outside = what([&] { t.lock(req(1, 1, LockMode::read, {{6, 0}, {4, 8}})); });
  EXPECT_NE(outside.find("'rho'[start=(6,0) count=(4,8)]"), std::string::npos) << outside;
  EXPECT_NE(outside.find("outside the domain (8,8)"), std::string::npos) << outside;
  EXPECT_NE(what([&] { t.unlock(1, "rho", {}); }).find("unlock of 'rho' by client 1: it is not locked"),
            std::string::npos);
  t.lock(req(2, 2, LockMode::write));
  const std::string other = what([&] { t.unlock(3, "rho", {}); });
  EXPECT_NE(other.find("held by client 2"), std::string::npos) << other;
  EXPECT_NE(what([&] { t.lock(req(4, 2, LockMode::write)); }).find("already holds"), std::string::npos);
  EXPECT_NE(what([&] { t.lock(req(5, 1, LockMode::read, {{0}, {0}})); }).find("count is 0"), std::string::npos);
  EXPECT_EQ(t.held("rho"), 1u);  // nothing bad changed the table
}

TEST(LockTable, OneClientHasAtMostTheLimitHeldOrWaiting) {
  LockTable t(3);
  const LockRegion a{{0}, {1}}, b{{1}, {1}}, c{{2}, {1}}, d{{3}, {1}};
  EXPECT_EQ(t.lock(req(1, 7, LockMode::write, a)).granted, Ids{1});
  EXPECT_EQ(t.lock(req(2, 7, LockMode::write, b)).granted, Ids{2});
  EXPECT_EQ(t.lock(req(3, 8, LockMode::write, c)).granted, Ids{3});
  EXPECT_TRUE(t.lock(req(4, 7, LockMode::write, c, 5.0)).granted.empty());  // waits behind client 8
  EXPECT_EQ(t.of_holder(7), 3u);
  try {
    t.lock(req(5, 7, LockMode::write, d));
    ADD_FAILURE() << "a fourth lock of client 7 was taken";
  } catch (const cove::Error& e) {
    EXPECT_EQ(e.code(), cove::Code::NoMemory);
    EXPECT_NE(std::string(e.what()).find("'rho'[start=(3) count=(1)]: client 7 already has 3 locks"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(t.held("rho"), 3u);
  EXPECT_EQ(t.waiting("rho"), 1u);
  EXPECT_EQ(t.lock(req(6, 9, LockMode::write, d)).granted, Ids{6});  // other clients are not limited by it
  // Every way a lock or a wait ends gives its place back.
  EXPECT_EQ(t.expire(5.0).timed_out, Ids{4});
  EXPECT_EQ(t.of_holder(7), 2u);
  t.unlock(7, "rho", a);
  EXPECT_EQ(t.of_holder(7), 1u);
  EXPECT_TRUE(t.lock(req(7, 7, LockMode::write, c)).granted.empty());
  LockOutcome out;
  EXPECT_TRUE(t.cancel(7, out));
  EXPECT_EQ(t.of_holder(7), 1u);
  EXPECT_EQ(t.lock(req(8, 7, LockMode::write, a)).granted, Ids{8});
  t.release_holder(7);
  EXPECT_EQ(t.of_holder(7), 0u);
  EXPECT_EQ(t.of_holder(9), 1u);
}

TEST(LockTable, HomeIsTheSameForEveryRegionOfAnObject) {
  EXPECT_EQ(cove::store::lock_home("rho", 1), 0);
  const int h = cove::store::lock_home("rho", 4);
  EXPECT_GE(h, 0);
  EXPECT_LT(h, 4);
  EXPECT_EQ(cove::store::lock_home("rho", 4), h);
}

}  // namespace
