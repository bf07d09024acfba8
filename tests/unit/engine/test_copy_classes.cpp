// The colour refinement behind the engine's exact aggregation (sim/engine/copy_classes.hpp): seeding it with the
// tasks' chain hashes must leave its partition exactly as the plain rounds find it (they are invariants of that
// partition), class for class and in the same numbering, and must take fewer rounds where a ring's positions
// otherwise split one hop a round.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "engine_test_support.hpp"
#include "models/collectives/registry.hpp"
#include "sim/calib/calibration.hpp"
#include "sim/engine/compiled_run.hpp"
#include "sim/engine/copy_classes.hpp"
#include "sim/platform/platform_model.hpp"

namespace racksim {
namespace {

struct Refined {
  copy_classes::Partition part;
  int rounds = 0;
  std::string why_not;
};

struct Case {
  std::string system;
  int racks = 1;
  CollectiveOp op = CollectiveOp::all_reduce;
  int gpus = 8;
  std::string algorithm;
};

void refine_both(const Case& c, Refined& plain, Refined& seeded, int& tasks) {
  const TopologyGraph g = test::load_graph(c.system, c.racks);
  const Calibration calibration = Calibration::none();
  CollectiveRequest r;
  r.op = c.op;
  r.gpus = test::gpu_range(0, c.gpus);
  r.bytes = 1ull << 28;
  r.algorithm = c.algorithm;
  const Schedule schedule = build_schedule(r, g, calibration);
  const PlatformModel model(g, calibration, {});
  const CompiledRun run = compile_run(model, calibration, {&schedule});
  const copy_classes::Structure s = copy_classes::structure_of(model, run);
  tasks = s.tasks;
  plain.part = copy_classes::refine(s, run, model, plain.why_not, false, &plain.rounds);
  seeded.part = copy_classes::refine(s, run, model, seeded.why_not, true, &seeded.rounds);
  ASSERT_TRUE(plain.why_not.empty()) << plain.why_not;
  ASSERT_TRUE(seeded.why_not.empty()) << seeded.why_not;
  EXPECT_TRUE(copy_classes::verify(s, run, model, seeded.part));
}

void expect_same_partition(const Refined& a, const Refined& b, const std::string& name) {
  EXPECT_EQ(a.part.tasks, b.part.tasks) << name;
  EXPECT_EQ(a.part.parts, b.part.parts) << name;
  EXPECT_EQ(a.part.links, b.part.links) << name;
  EXPECT_EQ(a.part.hosts, b.part.hosts) << name;
  EXPECT_TRUE(a.part.task == b.part.task) << name << ": a task changed class";
  EXPECT_TRUE(a.part.part == b.part.part) << name << ": a transfer changed class";
  EXPECT_TRUE(a.part.link == b.part.link) << name << ": a link changed class";
  EXPECT_TRUE(a.part.host == b.part.host) << name << ": a host changed class";
}

TEST(CopyClasses, ChainSeedsLeaveThePartitionAsThePlainRoundsFindIt) {
  const std::vector<Case> cases = {
      {"hgx-h100", 1, CollectiveOp::all_reduce, 8, "ring"},
      {"gb200-nvl72", 1, CollectiveOp::all_reduce, 72, "nvls"},
      {"gb200-nvl72", 1, CollectiveOp::all_to_all, 72, "direct"},
      {"hgx-h100", 4, CollectiveOp::all_reduce, 32, "ring"},
      {"hgx-b200", 4, CollectiveOp::all_reduce, 32, "nvls_tree"},
      {"hgx-b200", 4, CollectiveOp::all_reduce, 32, "tree"},
      {"gb200-nvl72", 2, CollectiveOp::all_reduce, 144, "hierarchical"},
      {"gb200-nvl72", 3, CollectiveOp::all_gather, 216, "ring"},
  };
  for (const Case& c : cases) {
    const std::string name = c.system + " x" + std::to_string(c.racks) + " " + std::string(to_string(c.op)) + " " +
                             std::to_string(c.gpus) + " " + c.algorithm;
    Refined plain, seeded;
    int tasks = 0;
    refine_both(c, plain, seeded, tasks);
    expect_same_partition(plain, seeded, name);
    std::printf("%s: %d tasks, %d classes; rounds %d plain, %d seeded\n", name.c_str(), tasks, plain.part.tasks, plain.rounds,
                seeded.rounds);
    EXPECT_LE(seeded.rounds, plain.rounds) << name;
    EXPECT_LT(plain.part.tasks, tasks) << name << ": no copies found";
  }
}

TEST(CopyClasses, ChainSeedsSettleAFlatRingAcrossRacksInAFewRounds) {
  // NCCL's rings across two GB200 racks (16 rings, one per NIC rail, 144 ranks): without seeds the positions of a
  // rack split one hop a round (tens of rounds); with them the classes are there from the first round or two.
  Refined plain, seeded;
  int tasks = 0;
  refine_both({"gb200-nvl72", 2, CollectiveOp::all_reduce, 144, "ring"}, plain, seeded, tasks);
  expect_same_partition(plain, seeded, "flat ring x2");
  std::printf("flat ring x2: %d tasks, %d classes; rounds %d plain, %d seeded\n", tasks, plain.part.tasks, plain.rounds, seeded.rounds);
  EXPECT_GE(plain.rounds, 30);
  EXPECT_LE(seeded.rounds, 6);
}

}  // namespace
}  // namespace racksim
