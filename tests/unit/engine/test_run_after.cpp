// Schedules with start dependencies (Simulation::run_after, what `racksim jobs` runs): a schedule that
// waits for another starts when it ends; schedules that overlap share links.
#include <gtest/gtest.h>

#include "engine_test_support.hpp"
#include "hand_schedules.hpp"
#include "sim/core/errors.hpp"
#include "sim/engine/simulation.hpp"

namespace racksim {
namespace {

using test::gpu_range;

TEST(RunAfter, BackToBackSchedulesEachTakeTheirAloneTime) {
  const auto g = test::load_graph("gb200-nvl72", 1);
  const auto nv = test::nvlink_numbers(g);
  const Simulation sim(g, Calibration::none());
  const Schedule a = test::hand_ring_all_reduce(gpu_range(0, 8), 1 << 26);
  const Schedule b = test::hand_ring_all_reduce(gpu_range(0, 8), 1 << 24);
  const auto r = sim.run_after({&a, &b}, {{}, {0}});
  EXPECT_NEAR(r[0].time_s, test::ring_all_reduce_time(8, 1 << 26, nv.alpha, nv.B), 1e-9 * r[0].time_s);
  EXPECT_NEAR(r[1].time_s, test::ring_all_reduce_time(8, 1 << 24, nv.alpha, nv.B), 1e-9 * r[1].time_s);
}

TEST(RunAfter, OverlappingSchedulesShareTheLinksTheyBothUse) {
  const auto g = test::load_graph("gb200-nvl72", 1);
  const Simulation sim(g, Calibration::none());
  const Schedule a = test::hand_ring_all_reduce(gpu_range(0, 8), 1 << 28);
  const Schedule b = test::hand_ring_all_reduce(gpu_range(0, 8), 1 << 28);
  const auto nv = test::nvlink_numbers(g);
  const double alone = sim.run(a).time_s;
  // Same GPUs, same ports, at once: every ring step moves two pieces through each port (latency once).
  const auto both = sim.run_after({&a, &b}, {{}, {}});
  EXPECT_NEAR(both[0].time_s, test::ring_all_reduce_time(8, 2ull << 28, nv.alpha, nv.B), 1e-9 * alone);
  EXPECT_NEAR(both[1].time_s, both[0].time_s, 1e-12);
  // A third waits for both: it starts when the later one ends and then runs alone.
  const Schedule c = test::hand_ring_all_reduce(gpu_range(0, 8), 1 << 28);
  const auto three = sim.run_after({&a, &b, &c}, {{}, {}, {0, 1}});
  EXPECT_NEAR(three[2].time_s, alone, 1e-9 * alone);
  EXPECT_THROW(sim.run_after({&a, &b}, {{1}, {}}), InputError);  // only earlier schedules
  EXPECT_THROW(sim.run_after({&a, &b}, {{}}), InputError);       // one list per schedule
}

}  // namespace
}  // namespace racksim
