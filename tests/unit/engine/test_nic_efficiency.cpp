// The calibration's algorithm efficiency (kappa) is fitted where NVLink binds; a transfer across a NIC runs at
// the NIC's own calibrated rate and does not take it again (FlowTerms::kappa, ExecParams::nic_efficiency,
// docs/model.md section 7). Checked in the closed form and in the engine alike: on two HGX B200 nodes a
// ring all-reduce is bound by its NICs (8 x 50 GB/s per node against 8 x 900 GB/s of NVLink), so halving the
// ring's kappa leaves its bandwidth time as it was, while on one node (NVLink-bound) it doubles it.
#include <gtest/gtest.h>

#include "../collectives/collective_test_support.hpp"
#include "models/analytic/analytic_model.hpp"
#include "models/collectives/exec_terms.hpp"
#include "models/collectives/registry.hpp"
#include "sim/engine/simulation.hpp"

namespace racksim {
namespace {

Calibration ring_kappa(double kappa) {
  Calibration c;
  c.name = "test";
  AlgorithmCalibration a;
  a.bandwidth_efficiency = kappa;
  c.algorithms["all_reduce/ring"] = a;
  return c;
}

std::vector<int> first(int n) {
  std::vector<int> v(n);
  for (int i = 0; i < n; ++i) v[i] = i;
  return v;
}

CollectiveRequest ring(int gpus) {
  CollectiveRequest r = test::make_request(CollectiveOp::all_reduce, "ring", first(gpus), std::uint64_t{4} << 30);
  r.protocol = "Simple";
  return r;
}

TEST(NicEfficiency, ExecTermsCarryKappaApart) {
  const auto g = test::shipped("hgx-b200", 2);
  const ExecTerms e = exec_terms(g, ring(16), ring_kappa(0.5));
  EXPECT_DOUBLE_EQ(e.flow.kappa, 0.5);
  const ExecTerms one = exec_terms(g, ring(16), ring_kappa(1.0));
  EXPECT_DOUBLE_EQ(e.flow.efficiency, 0.5 * one.flow.efficiency);
  const Schedule s = build_schedule(ring(16), g, ring_kappa(0.5));
  EXPECT_DOUBLE_EQ(s.exec.efficiency, e.flow.efficiency);
  EXPECT_DOUBLE_EQ(s.exec.nic_efficiency, one.flow.efficiency);
}

TEST(NicEfficiency, NicBoundRingKeepsItsTimeAcrossNodes) {
  const auto g = test::shipped("hgx-b200", 2);
  const double full = analytic_collective(g, ring(16), ring_kappa(1.0)).bandwidth_s;
  const double half = analytic_collective(g, ring(16), ring_kappa(0.5)).bandwidth_s;
  ASSERT_GT(full, 0);
  EXPECT_NEAR(half / full, 1.0, 1e-9);
  const double engine_full = simulate_collective(g, ring(16), ring_kappa(1.0)).time_s;
  const double engine_half = simulate_collective(g, ring(16), ring_kappa(0.5)).time_s;
  EXPECT_NEAR(engine_half / engine_full, 1.0, 0.02);
}

TEST(NicEfficiency, NvlinkBoundRingTakesKappaInsideANode) {
  const auto g = test::shipped("hgx-b200", 1);
  const double full = analytic_collective(g, ring(8), ring_kappa(1.0)).bandwidth_s;
  const double half = analytic_collective(g, ring(8), ring_kappa(0.5)).bandwidth_s;
  EXPECT_NEAR(half / full, 2.0, 1e-9);
  const double engine_full = simulate_collective(g, ring(8), ring_kappa(1.0)).time_s;
  const double engine_half = simulate_collective(g, ring(8), ring_kappa(0.5)).time_s;
  EXPECT_NEAR(engine_half / engine_full, 2.0, 0.04);
}

}  // namespace
}  // namespace racksim
