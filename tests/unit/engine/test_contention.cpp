// Concurrency: collectives started together share links, and only where they really share one.
#include <gtest/gtest.h>

#include "engine_test_support.hpp"
#include "hand_schedules.hpp"
#include "sim/engine/simulation.hpp"

namespace racksim {
namespace {

using test::gpu_range;

TEST(EngineContention, EightTensorParallelGroupsOfEightShareNothing) {
  const auto g = test::load_graph("gb200-nvl72", 1);
  const Simulation sim(g, Calibration::none());
  const double alone = sim.run(test::hand_ring_all_reduce(gpu_range(0, 8), 1ull << 28)).time_s;
  std::vector<Schedule> groups;
  for (int k = 0; k < 8; ++k) groups.push_back(test::hand_ring_all_reduce(gpu_range(8 * k, 8), 1ull << 28));
  const auto results = sim.run_concurrent(groups);
  ASSERT_EQ(results.size(), 8u);
  // Every GPU has its own NVLink port and the switch plane is a crossbar: no group slows another.
  for (const auto& r : results) EXPECT_NEAR(r.time_s, alone, 1e-12 * alone);
}

TEST(EngineContention, TwoJobsSharingNicsHalveEachOthersBandwidth) {
  const auto g = test::load_graph("gb200-nvl72", 2);
  const auto nic = test::route_numbers(g, 0, 72);
  const std::uint64_t S = 1ull << 30;
  const Simulation sim(g, Calibration::none());
  const Schedule job = test::hand_ring_all_reduce({0, 72}, S);  // GPU 0 of each rack, through NIC 0 and NIC 72
  const double alone = sim.run(job).time_s;
  EXPECT_NEAR(alone, test::ring_all_reduce_time(2, S, nic.alpha, nic.B), 1e-9 * alone);
  // A second job on the same GPUs (a data-parallel and a pipeline job, say) shares their NICs.
  const auto both = sim.run_concurrent({job, job});
  for (const auto& r : both) EXPECT_NEAR(r.time_s, test::ring_all_reduce_time(2, S, nic.alpha, nic.B / 2), 1e-9 * r.time_s);
  // A job on other GPUs of the same rail shares the leaf uplinks only, which the non-blocking fat tree
  // sizes for every NIC of the rail at once: no slowdown.
  const auto rail = sim.run_concurrent({job, test::hand_ring_all_reduce({4, 76}, S)});
  for (const auto& r : rail) EXPECT_NEAR(r.time_s, alone, 1e-12 * alone);
  for (const auto& l : both[0].links) {
    if (l.kind == "nic") {
      EXPECT_NEAR(l.max_utilization, 1.0, 1e-9) << l.name;
    }
  }
}

TEST(EngineContention, TheTwoGpusOfASuperchipShareItsC2C) {
  const auto g = test::load_graph("gb200-nvl72", 1);
  const Simulation sim(g, Calibration::none());
  const std::uint64_t S = 1ull << 30;
  const Route c2c = find_route(g, g.gpu_vertex(0), g.find_vertex("cpu0"));
  ASSERT_EQ(c2c.hops.size(), 1u);
  ASSERT_NEAR(c2c.bottleneck_Bps, 450e9, 1);  // 900 GB/s bidirectional per superchip (seed s2)
  const double alone = sim.run_transfers({{"gpu0", "cpu0", S}}).time_s;
  EXPECT_NEAR(alone, c2c.latency_s + S / 450e9, 1e-9 * alone);
  // gpu0 and gpu1 are one superchip with cpu0: they share one C2C (seed s4: assume shared).
  const RunResult shared = sim.run_transfers({{"gpu0", "cpu0", S}, {"gpu1", "cpu0", S}});
  EXPECT_NEAR(shared.time_s, c2c.latency_s + 2 * S / 450e9, 1e-9 * shared.time_s);
  ASSERT_EQ(shared.links.size(), 1u);
  EXPECT_EQ(shared.links[0].kind, "c2c");
  EXPECT_NEAR(shared.links[0].max_utilization, 1.0, 1e-9);
  // gpu2 offloads to the other superchip's Grace: no contention. Opposite directions do not contend.
  EXPECT_NEAR(sim.run_transfers({{"gpu0", "cpu0", S}, {"gpu2", "cpu1", S}}).time_s, alone, 1e-12 * alone);
  EXPECT_NEAR(sim.run_transfers({{"gpu0", "cpu0", S}, {"cpu0", "gpu1", S}}).time_s, alone, 1e-12 * alone);
}

}  // namespace
}  // namespace racksim

namespace racksim {
namespace {

// Flows of different route latency share a link equally once their latency has passed (SimGrid's CM02
// would weight them by latency: the engine waits latencies itself and gives SimGrid latency-free routes).
TEST(EngineContention, FlowsOfDifferentLatencyShareALinkEqually) {
  const auto g = test::load_graph("gb200-nvl72", 2);
  const Simulation sim(g, Calibration::none());
  const std::uint64_t S = 1ull << 30;
  const auto same_rail = test::route_numbers(g, 0, 72);   // leaf -> spine -> leaf
  const auto cross_rail = test::route_numbers(g, 0, 73);  // through the core: longer
  ASSERT_GT(cross_rail.alpha, same_rail.alpha);
  ASSERT_NEAR(same_rail.B, 50e9, 1);
  RunOptions traced;
  traced.record_trace = true;
  const RunResult r = sim.run_transfers({{"gpu0", "gpu72", S}, {"gpu0", "gpu73", S}}, traced);
  double end_same = 0, end_cross = 0;
  for (const auto& e : r.trace) {
    if (e.name == "transfers: task 0") end_same = e.end_s;
    if (e.name == "transfers: task 1") end_cross = e.end_s;
  }
  // GPU 0's NIC carries both: the first flow runs alone for the latency difference d, then both at B/2.
  const double B = same_rail.B, d = cross_rail.alpha - same_rail.alpha, s = static_cast<double>(S);
  EXPECT_NEAR(end_same, cross_rail.alpha + 2 * (s - B * d) / B, 1e-9 * end_same);
  EXPECT_NEAR(end_cross, same_rail.alpha + 2 * s / B, 1e-9 * end_cross);
  EXPECT_NEAR(r.time_s, end_cross, 0);
}

}  // namespace
}  // namespace racksim
