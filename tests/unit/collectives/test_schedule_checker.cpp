// The checker must catch broken schedules: each test breaks a correct one in one way.
#include <gtest/gtest.h>

#include "collective_test_support.hpp"
#include "models/collectives/registry.hpp"
#include "models/collectives/schedule_check.hpp"

namespace racksim {
namespace {

Schedule ring8() {
  return build_schedule(test::make_request(CollectiveOp::all_reduce, "ring", test::first_gpus(8), 8000),
                        test::shipped("gb200-nvl72"));
}

bool mentions(const std::vector<std::string>& v, const std::string& text) {
  for (const auto& s : v)
    if (s.find(text) != std::string::npos) return true;
  return false;
}

std::string dump(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

TEST(ScheduleChecker, CorrectRingPasses) { EXPECT_TRUE(check_schedule(ring8()).empty()); }

TEST(ScheduleChecker, MissingLastTaskLeavesARankIncomplete) {
  Schedule s = ring8();
  s.tasks.pop_back();
  const auto v = check_schedule(s);
  ASSERT_EQ(v.size(), 1u) << dump(v);
  EXPECT_TRUE(mentions(v, "ends with chunks")) << dump(v);
}

TEST(ScheduleChecker, AReductionAppliedTwiceIsCountedTwice) {
  Schedule s = ring8();
  Task again = s.tasks[8];  // step 1 of the reduce-scatter
  again.id = static_cast<int>(s.tasks.size());
  s.tasks.push_back(again);
  EXPECT_TRUE(mentions(check_schedule(s), "counted twice"));
}

TEST(ScheduleChecker, MissingDataDependency) {
  Schedule s = ring8();
  ASSERT_FALSE(s.tasks[8].deps.empty());
  s.tasks[8].deps.clear();
  EXPECT_TRUE(mentions(check_schedule(s), "without depending on task"));
}

TEST(ScheduleChecker, UnneededDependency) {
  Schedule s = ring8();
  s.tasks[12].deps.push_back(1);  // task 1 is rank 1 -> 2; task 12 is rank 4 -> 5
  EXPECT_TRUE(mentions(check_schedule(s), "is not needed"));
}

TEST(ScheduleChecker, ForwardDependencyWrongBytesAndRedundantCopy) {
  Schedule s = ring8();
  s.tasks[3].deps.push_back(40);
  s.tasks[5].bytes += 1;
  Task copy = s.tasks.back();  // the last all-gather step delivered again
  copy.id = static_cast<int>(s.tasks.size());
  copy.deps = {copy.id - 1};
  s.tasks.push_back(copy);
  const auto v = check_schedule(s);
  EXPECT_TRUE(mentions(v, "does not point backwards")) << dump(v);
  EXPECT_TRUE(mentions(v, "carries 1001 bytes")) << dump(v);
  EXPECT_TRUE(mentions(v, "redundant transfer")) << dump(v);
}

TEST(ScheduleChecker, SendingDataNotHeld) {
  Schedule s = build_schedule(test::make_request(CollectiveOp::broadcast, "ring", test::first_gpus(4), 4000),
                              test::shipped("gb200-nvl72"));
  s.tasks[0].src = Endpoint::rank(2);  // rank 2 has nothing before the chain reaches it
  s.tasks[0].dsts = {Endpoint::rank(1)};
  EXPECT_TRUE(mentions(check_schedule(s), "does not hold"));
}

TEST(ScheduleChecker, ViolationsAreCapped) {
  Schedule s = ring8();
  s.tasks.resize(8);  // only the first step: 7 of 8 chunks wrong on every rank
  const auto v = check_schedule(s, 3);
  ASSERT_EQ(v.size(), 4u);
  EXPECT_NE(v.back().find("more violation"), std::string::npos);
}

}  // namespace
}  // namespace racksim
