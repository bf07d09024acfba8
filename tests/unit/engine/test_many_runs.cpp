// SimGrid allows one engine per process; racksim runs each simulation in a forked engine process, so one
// process (a sweep, a Python session, this test) can run any number of them, on several platforms,
// interleaved, each from clock 0.
#include <gtest/gtest.h>

#include <cstring>

#include "engine_test_support.hpp"
#include "hand_schedules.hpp"
#include "sim/core/errors.hpp"
#include "sim/engine/simulation.hpp"

namespace racksim {
namespace {

TEST(EngineProcess, FiftyScenariosOnTwoSystemsInOneProcess) {
  const auto gb200 = test::load_graph("gb200-nvl72", 1);
  const auto h100 = test::load_graph("hgx-h100", 1);
  const Simulation a(gb200, Calibration::none());
  const Simulation b(h100, Calibration::none());
  const auto nv_a = test::nvlink_numbers(gb200);
  const auto nv_b = test::nvlink_numbers(h100);
  ASSERT_NEAR(nv_a.B, 900e9, 1);
  ASSERT_NEAR(nv_b.B, 450e9, 1);  // NVLink 4: 18 links of 25 GB/s per direction
  double first_time = 0;
  std::uint64_t first_bits = 0;
  for (int i = 0; i < 50; ++i) {
    const bool on_a = i % 2 == 0;
    const int n = 2 + (i / 2) % 7;                       // 2..8 ranks
    const std::uint64_t bytes = (1ull << 20) * (1 + i);  // 1..50 MiB
    const auto& nv = on_a ? nv_a : nv_b;
    const RunResult r = (on_a ? a : b).run(test::hand_ring_all_reduce(test::gpu_range(0, n), bytes));
    EXPECT_EQ(r.system, on_a ? "gb200-nvl72" : "hgx-h100");
    const double expected = test::ring_all_reduce_time(n, bytes, nv.alpha, nv.B);
    EXPECT_NEAR(r.time_s, expected, 1e-9 * expected) << "scenario " << i;
    if (i == 0) {
      first_time = r.time_s;
      std::memcpy(&first_bits, &first_time, sizeof first_bits);
    }
  }
  // The first scenario again, after 49 others: bit for bit the same (no clock carried over).
  const double again = a.run(test::hand_ring_all_reduce(test::gpu_range(0, 2), 1ull << 20)).time_s;
  std::uint64_t again_bits = 0;
  std::memcpy(&again_bits, &again, sizeof again_bits);
  EXPECT_EQ(again_bits, first_bits);
}

TEST(EngineProcess, ErrorsInTheEngineProcessKeepTheirTypeAndMessage) {
  const auto g = test::load_graph("gb200-nvl72", 1);
  const Simulation sim(g, Calibration::none());
  Schedule bad = test::hand_ring_all_reduce(test::gpu_range(0, 4), 1 << 20);
  bad.tasks[3].deps = {7};  // a dependency on a later task
  try {
    sim.run(bad);
    FAIL() << "a bad schedule ran";
  } catch (const InputError& e) {
    EXPECT_EQ(e.json_path(), "/tasks/3/deps");
    EXPECT_EQ(e.value(), "7");
  }
  Schedule plane = test::hand_nvls_all_reduce(test::gpu_range(0, 4), 3, 1 << 20, 1);  // no domain 3
  EXPECT_THROW(sim.run(plane), InputError);
  // The process goes on running simulations afterwards.
  EXPECT_GT(sim.run(test::hand_ring_all_reduce(test::gpu_range(0, 4), 1 << 20)).time_s, 0);
}

}  // namespace
}  // namespace racksim
