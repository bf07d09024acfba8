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
    if (l.kind == "nic") EXPECT_NEAR(l.max_utilization, 1.0, 1e-9) << l.name;
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
