// Goodput under failures: the Monte Carlo against Daly's closed form where one exists, monotone in spares,
// deterministic for a seed, and its time accounting adds up.
#include <gtest/gtest.h>

#include <cmath>

#include "models/failures/goodput.hpp"
#include "models/failures/goodput_setup.hpp"
#include "sim/core/errors.hpp"

namespace racksim {
namespace {

GoodputRequest rack_job() {  // 64 GB200 NVL72 racks, 16 trays used in each
  GoodputRequest r;
  r.label = "test";
  r.units = 64;
  r.trays_per_unit = 16;
  r.gpus_per_tray = 4;
  r.nics_per_tray = 4;
  r.switch_trays_per_rack = 9;
  r.step_s = 10;
  r.checkpoint_bytes = 5.7e12;
  r.storage_Bps = 4096e9 * 0.1;  // 0.1 GB/s per GPU: a 139 s checkpoint write
  r.work_hours = 24 * 30;
  r.trials = 400;
  return r;
}

TEST(Goodput, DalyIntervalIsYoungsToFirstOrder) {
  const double write = 60, mtbf = 10 * 3600;
  const double young = std::sqrt(2 * write * mtbf);
  EXPECT_NEAR(daly_interval_s(write, mtbf), young * (1 + std::sqrt(write / (2 * mtbf)) / 3 + write / (2 * mtbf) / 9) - write, 1e-9);
  EXPECT_NEAR(daly_interval_s(write, mtbf) / young, 1, 0.03);
  EXPECT_EQ(daly_interval_s(3 * mtbf, mtbf), mtbf);  // write longer than 2 MTBF: checkpoint every MTBF
  // No failures: only the checkpoint writes cost anything.
  EXPECT_DOUBLE_EQ(restart_only_goodput(0, 100, 10, 600), 100.0 / 110);
}

// Failures that need only a restart (software, network, NIC; GPUs and hosts failing at rate 0): Daly's
// expectation is exact, and the Monte Carlo mean must agree within its statistical error. We test 3 standard
// errors (a 1-s.e. bound fails for 32 % of seeds by chance alone; 3 s.e. for 0.3 %).
TEST(Goodput, MonteCarloAgreesWithTheClosedFormWhereItIsExact) {
  GoodputRequest r = rack_job();
  r.rates.gpu.per_hour = r.rates.host.per_hour = r.rates.nvlink_switch.per_hour = 0;
  const GoodputResult g = run_goodput(r);
  EXPECT_EQ(g.analytic_note.rfind("exact", 0), 0u) << g.analytic_note;
  const double lambda = g.failures_per_hour / 3600;
  EXPECT_NEAR(g.analytic_goodput, restart_only_goodput(lambda, g.interval_s, g.checkpoint_write_s, 600), 1e-12);
  EXPECT_GT(g.mc_standard_error, 0);
  EXPECT_LT(g.mc_standard_error, 0.002);
  EXPECT_LE(std::fabs(g.mc_goodput - g.analytic_goodput), 3 * g.mc_standard_error)
      << "MC " << g.mc_goodput << " +- " << g.mc_standard_error << " vs " << g.analytic_goodput;
  // With instant repairs every hardware failure is a restart too: exact again, with all causes.
  GoodputRequest all = rack_job();
  all.recovery.hardware_repair.seconds = 0;
  all.recovery.switch_repair.seconds = 0;
  const GoodputResult h = run_goodput(all);
  EXPECT_EQ(h.analytic_note.rfind("exact", 0), 0u);
  EXPECT_LE(std::fabs(h.mc_goodput - h.analytic_goodput), 3 * h.mc_standard_error)
      << "MC " << h.mc_goodput << " +- " << h.mc_standard_error << " vs " << h.analytic_goodput;
}

TEST(Goodput, MoreSpareTraysOrHotSparesNeverLowerGoodput) {
  double previous = -1;
  for (int spares = 0; spares <= 2; ++spares) {
    GoodputRequest r = rack_job();
    r.trials = 100;
    r.spare_trays_per_unit = spares;
    const GoodputResult g = run_goodput(r);
    EXPECT_GE(g.mc_goodput, previous) << spares << " spare trays";
    previous = g.mc_goodput;
  }
  previous = -1;
  for (int hot = 0; hot <= 2; ++hot) {
    GoodputRequest r = rack_job();
    r.trials = 100;
    r.hot_spare_units = hot;
    const GoodputResult g = run_goodput(r);
    EXPECT_GE(g.mc_goodput, previous) << hot << " hot spares";
    previous = g.mc_goodput;
  }
}

TEST(Goodput, SameSeedSameBytesAndTheTimeAddsUp) {
  GoodputRequest r = rack_job();
  r.trials = 50;
  r.spare_trays_per_unit = 1;
  const std::string a = goodput_to_json_text({run_goodput(r)});
  EXPECT_EQ(a, goodput_to_json_text({run_goodput(r)}));
  r.seed = 2;
  EXPECT_NE(a, goodput_to_json_text({run_goodput(r)}));
  const GoodputResult g = run_goodput(r);
  double lost = 0;
  for (const auto& [what, h] : g.lost_hours) lost += h;
  const double work_h = std::ceil(r.work_hours * 3600 / g.interval_s) * g.interval_s / 3600;
  EXPECT_NEAR(g.mean_wall_h, work_h + lost, 1e-6 * g.mean_wall_h);
  EXPECT_LE(g.p5, g.p50);
  EXPECT_LE(g.p50, g.p95);
}

TEST(Goodput, AdaptiveModeTurnsSwitchLossesIntoSlowdownsInsteadOfStops) {
  GoodputRequest r = rack_job();
  r.rates.nvlink_switch.per_hour *= 20;  // make switch losses matter
  const GoodputResult full = run_goodput(r);
  r.mode = PartitionMode::adaptive_bandwidth;
  const GoodputResult adaptive = run_goodput(r);
  EXPECT_LT(adaptive.failures_per_hour, full.failures_per_hour);  // switch losses no longer interrupt
  EXPECT_GT(adaptive.mc_goodput, full.mc_goodput);
}

TEST(Goodput, SetupFromSystemsAndBadInput) {
  GoodputSetup s;
  s.gpus = 4608;
  s.step_s = 10;
  s.checkpoint_bytes = 5.7e12;
  s.spare_trays = 2;
  const GoodputRequest racks = goodput_request(s, {});
  EXPECT_EQ(racks.units, 72);  // 64 GPUs per rack with 2 spare trays
  EXPECT_EQ(racks.trays_per_unit, 16);
  EXPECT_EQ(racks.switch_trays_per_rack, 9);
  s.unit = "partition:9";
  s.spare_trays = 1;
  const GoodputRequest parts = goodput_request(s, {});
  EXPECT_EQ(parts.units_per_rack, 2);
  EXPECT_EQ(parts.units, 144);
  GoodputSetup hgx = s;
  hgx.system = "hgx-b200";
  hgx.unit = "node";
  hgx.spare_trays = 0;
  const GoodputRequest nodes = goodput_request(hgx, {});
  EXPECT_EQ(nodes.units, 576);
  EXPECT_EQ(nodes.switch_trays_per_rack, 0);  // the baseboard's NVSwitch fails with the node
  EXPECT_EQ(goodput_comparison(s, {}).size(), 3u);
  for (const char* unit : {"partition:7", "partition:", "shelf"}) {
    GoodputSetup b = s;
    b.unit = unit;
    EXPECT_THROW(goodput_request(b, {}), InputError) << unit;
  }
  GoodputSetup bad = s;
  bad.spare_trays = 9;  // a 9-tray partition cannot keep 9 spares
  EXPECT_THROW(goodput_request(bad, {}), InputError);
  bad = s;
  bad.step_s.reset();
  EXPECT_THROW(goodput_request(bad, {}), InputError);
  GoodputRequest r = rack_job();
  r.trials = 1;
  EXPECT_THROW(run_goodput(r), InputError);
  r = rack_job();
  r.storage_Bps = 0;
  EXPECT_THROW(run_goodput(r), InputError);
}

}  // namespace
}  // namespace racksim
