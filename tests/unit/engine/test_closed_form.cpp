// The engine against closed forms worked out here from the topology's own numbers: wherever nothing
// contends, a simulated collective must take exactly the alpha-beta time of its schedule.
#include <gtest/gtest.h>

#include "engine_test_support.hpp"
#include "hand_schedules.hpp"
#include "sim/engine/simulation.hpp"

namespace racksim {
namespace {

using test::gpu_range;

constexpr std::uint64_t kGiB = 1ull << 30;

TEST(EngineClosedForm, RingOn8GpusTakesTwoNMinusOneSteps) {
  const auto g = test::load_graph("gb200-nvl72", 1);
  const auto nv = test::nvlink_numbers(g);
  // The seed's GB200 numbers (course module 5, s1; tuning.cc latency), read back from the graph.
  ASSERT_NEAR(nv.B, 900e9, 1);
  ASSERT_NEAR(nv.alpha, 0.47e-6, 1e-15);
  const Simulation sim(g, Calibration::none());
  const RunResult r = sim.run(test::hand_ring_all_reduce(gpu_range(0, 8), 1ull << 30));
  const double expected = test::ring_all_reduce_time(8, kGiB, nv.alpha, nv.B);  // 14 * (0.47 us + 149.1 us)
  EXPECT_NEAR(r.time_s, expected, 1e-9 * expected);
  EXPECT_NEAR(r.time_s * 1e6, 2094.41, 0.01);
  ASSERT_EQ(r.phases.size(), 2u);
  EXPECT_NEAR(r.phases[0].time_s, expected / 2, 1e-9 * expected);
  EXPECT_NEAR(r.phases[1].time_s, expected / 2, 1e-9 * expected);
  EXPECT_NEAR(r.busbw_Bps, static_cast<double>(kGiB) / r.time_s * 2 * 7 / 8, 1);
  ASSERT_EQ(r.links.size(), 8u);  // the 8 NVLink ports, each busy in both directions at full rate
  for (const auto& l : r.links) {
    EXPECT_EQ(l.kind, "nvlink");
    EXPECT_NEAR(l.max_utilization, 1.0, 1e-9);
    EXPECT_NEAR(l.bytes, 2.0 * 14 * (1ull << 30) / 8, 1);
  }
}

TEST(EngineClosedForm, RingOn72GpusTakesTwoNMinusOneSteps) {
  const auto g = test::load_graph("gb200-nvl72", 1);
  const auto nv = test::nvlink_numbers(g, 0, 71);
  const RunResult r = Simulation(g, Calibration::none()).run(test::hand_ring_all_reduce(gpu_range(0, 72), 1ull << 30));
  const double expected = test::ring_all_reduce_time(72, kGiB, nv.alpha, nv.B);
  EXPECT_NEAR(r.time_s, expected, 1e-9 * expected);
  EXPECT_NEAR(r.time_s * 1e6, 2419.69, 0.01);
}

TEST(EngineClosedForm, NvlsOn8And72GpusIsOneSwitchRoundTripPipelined) {
  const auto g = test::load_graph("gb200-nvl72", 1);
  const auto nv = test::nvlink_numbers(g);
  const double plane_Bps = 72 * nv.B;  // the plane reduces at the line rate of the domain's 72 ports
  const Simulation sim(g, Calibration::none());
  for (int n : {8, 72}) {
    for (int k : {1, 16}) {
      const RunResult r = sim.run(test::hand_nvls_all_reduce(gpu_range(0, n), 0, 1ull << 30, k));
      const double expected = test::nvls_all_reduce_time(kGiB, k, nv, plane_Bps);
      EXPECT_NEAR(r.time_s, expected, 1e-9 * expected) << n << " GPUs, " << k << " pieces";
    }
  }
  // Unpipelined, NVLS moves S up then S down: about 2 S / B; with 16 pieces about (1 + 1/16) S / B.
  const RunResult one = sim.run(test::hand_nvls_all_reduce(gpu_range(0, 72), 0, 1ull << 30, 1));
  const RunResult sixteen = sim.run(test::hand_nvls_all_reduce(gpu_range(0, 72), 0, 1ull << 30, 16));
  EXPECT_NEAR(one.time_s / (static_cast<double>(kGiB) / nv.B), 2.0, 0.02);
  EXPECT_NEAR(sixteen.time_s / (static_cast<double>(kGiB) / nv.B), 1.0 + 1.0 / 16, 0.02);
}

TEST(EngineClosedForm, HierarchicalOverTwoRacks) {
  const auto g = test::load_graph("gb200-nvl72", 2);
  const auto nv = test::nvlink_numbers(g);
  const auto nic = test::route_numbers(g, 0, 72);  // GPU 0 of rack 0 to GPU 0 of rack 1: rail 0
  ASSERT_NEAR(nic.B, 50e9, 1);                     // ConnectX-7 400 Gb/s (seed s7)
  const int d = 72, m = 2;
  std::vector<int> gpus = gpu_range(0, 144);
  const RunResult r = Simulation(g, Calibration::none()).run(test::hand_hierarchical_all_reduce(gpus, d, 1ull << 30));
  const double inner = (d - 1) * (nv.alpha + static_cast<double>(kGiB / d) / nv.B);
  const double outer = 2.0 * (m - 1) * (nic.alpha + static_cast<double>(kGiB / d / m) / nic.B);
  EXPECT_NEAR(r.time_s, 2 * inner + outer, 1e-9 * r.time_s);
  ASSERT_EQ(r.phases.size(), 3u);
  EXPECT_NEAR(r.phases[0].time_s, inner, 1e-9 * inner);
  EXPECT_NEAR(r.phases[1].time_s, outer, 1e-9 * outer);
  EXPECT_NEAR(r.phases[2].time_s, inner, 1e-9 * inner);
  // The NIC phase moves only each GPU's 1/72 slice: the 18x slower NIC costs a fraction of the total.
  EXPECT_LT(outer, 0.3 * r.time_s);
}

}  // namespace
}  // namespace racksim
