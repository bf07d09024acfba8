// Failures as input: switch trays and chips lower every port they touch, a failed compute tray makes a
// collective that needs it fail naming the tray, NICs and links can be down or degraded, and items that
// name nothing are input errors.
#include <gtest/gtest.h>

#include "engine_test_support.hpp"
#include "hand_schedules.hpp"
#include "sim/core/errors.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/platform/platform_model.hpp"

namespace racksim {
namespace {

using test::gpu_range;

FailureScenario fail(std::initializer_list<const char*> items) {
  FailureScenario f;
  for (const char* i : items) f.items.push_back(parse_failure_item(i));
  return f;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(FailureParse, AcceptedForms) {
  const auto tray = parse_failure_item("tray:3");
  EXPECT_EQ(tray.kind, FailureItem::Kind::tray);
  EXPECT_EQ(tray.index, 3);
  const auto st = parse_failure_item("switch-tray:0");
  EXPECT_EQ(st.kind, FailureItem::Kind::switch_tray);
  EXPECT_EQ(st.domain, -1);
  const auto st1 = parse_failure_item("switch-tray:1.4");
  EXPECT_EQ(st1.domain, 1);
  EXPECT_EQ(st1.index, 4);
  const auto chip = parse_failure_item("switch-chip:0.17");
  EXPECT_EQ(chip.kind, FailureItem::Kind::switch_chip);
  EXPECT_EQ(chip.index, 17);
  EXPECT_EQ(parse_failure_item("nic:7").kind, FailureItem::Kind::nic);
  const auto link = parse_failure_item("link:r0.t0.gpu0-nic0@0.25");
  EXPECT_EQ(link.link_name, "r0.t0.gpu0-nic0");
  EXPECT_DOUBLE_EQ(link.bandwidth_fraction, 0.25);
  EXPECT_EQ(link.text, "link:r0.t0.gpu0-nic0@0.25");
  EXPECT_DOUBLE_EQ(parse_failure_item("link:r0.t0.gpu0-nic0").bandwidth_fraction, 0.0);
}

TEST(FailureParse, BadFormsAreInputErrorsListingTheForms) {
  for (const char* bad : {"tray", "tray:", "tray:x", "tray:-1", "gpu:3", "switch-chip:5", "link:", "link:a@0",
                          "link:a@1", "link:a@1.5", "link:a@x", "nic:1.2"}) {
    try {
      parse_failure_item(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.where(), "--fail");
      EXPECT_NE(std::string(e.what()).find("switch-tray:D.S"), std::string::npos) << e.what();
    }
  }
}

TEST(FailureScenario, ItemsNamingNothingAreInputErrors) {
  const auto g = test::load_graph("gb200-nvl72", 1);
  for (const char* bad : {"tray:18", "switch-tray:9", "switch-tray:1.0", "switch-chip:0.18", "nic:72",
                          "link:r0.t0.gpu0-nowhere"}) {
    EXPECT_THROW(Simulation(g, Calibration::none(), fail({bad})), InputError) << bad;
  }
  const auto hgx = test::load_graph("hgx-h100", 1);
  EXPECT_THROW(Simulation(hgx, Calibration::none(), fail({"tray:1"})), InputError);  // one node = one tray
}

TEST(FailureScenario, SwitchTrayDownLeavesEachGpu16Of18Links) {
  const auto g = test::load_graph("gb200-nvl72", 1);
  const PlatformModel healthy(g, Calibration::none(), {});
  const PlatformModel failed(g, Calibration::none(), fail({"switch-tray:0"}));
  for (int gpu = 0; gpu < 72; ++gpu) {
    EXPECT_NEAR(healthy.links()[healthy.port_link(gpu)].bandwidth_Bps, 900e9, 1);
    EXPECT_NEAR(failed.links()[failed.port_link(gpu)].bandwidth_Bps, 900e9 * 16 / 18, 1);
  }
  const PlatformModel chip(g, Calibration::none(), fail({"switch-chip:0.5"}));
  EXPECT_NEAR(chip.links()[chip.port_link(7)].bandwidth_Bps, 900e9 * 17 / 18, 1);
}

TEST(FailureScenario, SwitchTrayDownSlowsLargeRingAndNvlsBy18Over16) {
  const auto g = test::load_graph("gb200-nvl72", 1);
  const auto nv = test::nvlink_numbers(g);
  const std::uint64_t S = 1ull << 30;
  const Simulation ok(g, Calibration::none());
  const Simulation degraded(g, Calibration::none(), fail({"switch-tray:0"}));
  const Schedule ring = test::hand_ring_all_reduce(gpu_range(0, 72), S);
  const double t_ok = ok.run(ring).time_s;
  const double t_fail = degraded.run(ring).time_s;
  const double latency = 2.0 * 71 * nv.alpha;  // unchanged: only bandwidth is lost
  EXPECT_NEAR((t_fail - latency) / (t_ok - latency), 18.0 / 16.0, 1e-9);
  EXPECT_NEAR(t_fail, test::ring_all_reduce_time(72, S, nv.alpha, nv.B * 16 / 18), 1e-9 * t_fail);

  const Schedule nvls = test::hand_nvls_all_reduce(gpu_range(0, 72), 0, S, 16);
  test::NvlinkNumbers slow = nv;
  slow.B = nv.B * 16 / 18;
  const RunResult r = degraded.run(nvls);
  EXPECT_NEAR(r.time_s, test::nvls_all_reduce_time(S, 16, slow, 72 * slow.B), 1e-9 * r.time_s);
  EXPECT_EQ(r.failures, std::vector<std::string>{"switch-tray:0"});
  // Bandwidth-bound NVLS (one switch round trip per piece) slows by close to the full 18/16.
  EXPECT_NEAR(r.time_s / ok.run(nvls).time_s, 18.0 / 16.0, 0.01);
}

TEST(FailureScenario, SwitchTrayOfOneDomainLeavesTheOtherDomainAlone) {
  const auto g = test::load_graph("gb200-nvl72", 2);
  const PlatformModel m(g, Calibration::none(), fail({"switch-tray:1.4"}));
  EXPECT_NEAR(m.links()[m.port_link(0)].bandwidth_Bps, 900e9, 1);
  EXPECT_NEAR(m.links()[m.port_link(72)].bandwidth_Bps, 800e9, 1);
}

TEST(FailureScenario, ComputeTrayDownFailsACollectiveThatNeedsItNamingTheTray) {
  const auto g = test::load_graph("gb200-nvl72", 1);
  const Simulation sim(g, Calibration::none(), fail({"tray:1"}));  // GPUs 4..7
  const std::string message = error_of([&] { sim.run(test::hand_ring_all_reduce(gpu_range(0, 8), 1 << 20)); });
  EXPECT_NE(message.find("compute tray 1"), std::string::npos) << message;
  EXPECT_NE(message.find("--fail tray:1"), std::string::npos) << message;
  EXPECT_THROW(sim.run(test::hand_ring_all_reduce(gpu_range(0, 8), 1 << 20)), SimulationError);
  // Ranks that avoid the tray run as if nothing had failed.
  const auto nv = test::nvlink_numbers(g);
  EXPECT_NEAR(sim.run(test::hand_ring_all_reduce(gpu_range(8, 8), 1 << 20)).time_s,
              test::ring_all_reduce_time(8, 1 << 20, nv.alpha, nv.B), 1e-15);
}

TEST(FailureScenario, NicDownFailsTrafficLeavingThroughIt) {
  const auto g = test::load_graph("gb200-nvl72", 2);
  const Simulation sim(g, Calibration::none(), fail({"nic:0"}));
  const std::vector<int> pair = {0, 72};
  const std::string message = error_of([&] { sim.run(test::hand_ring_all_reduce(pair, 1 << 20)); });
  EXPECT_NE(message.find("nic:0"), std::string::npos) << message;
  EXPECT_NO_THROW(sim.run(test::hand_ring_all_reduce({1, 73}, 1 << 20)));
}

TEST(FailureScenario, DegradedLinkSlowsItsPortByItsShare) {
  const auto g = test::load_graph("gb200-nvl72", 1);
  const auto nv = test::nvlink_numbers(g);
  const Simulation sim(g, Calibration::none(), fail({"link:r0.t0.gpu0-d0.st0.sw0@0.5"}));
  const double B = 17 * 50e9 + 25e9;  // one of GPU 0's 18 links at half speed
  const RunResult r = sim.run(test::hand_ring_all_reduce(gpu_range(0, 8), 1ull << 30));
  EXPECT_NEAR(r.time_s, test::ring_all_reduce_time(8, 1ull << 30, nv.alpha, B), 1e-9 * r.time_s);
}

}  // namespace
}  // namespace racksim
