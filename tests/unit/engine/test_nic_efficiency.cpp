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

CollectiveRequest ring(int gpus) {
  CollectiveRequest r = test::make_request(CollectiveOp::all_reduce, "ring", test::first_gpus(gpus), std::uint64_t{4} << 30);
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

// A protocol's network efficiency (ProtocolCalibration: LL128 through a NIC, fitted per architecture) scales
// the flows that cross a NIC, and nothing inside one NVLink domain or under another protocol. On two HGX
// B200 nodes at 0.5 the LL128 ring is bound by its NICs: bus bandwidth 8 NICs x 50 GB/s x 0.5 x LL128's
// payload 120/128 = 187.5 GB/s (closed form and engine; at 1 something else binds first, NCCL's LL128
// terms); the same ring on one node and the Simple ring across nodes are unchanged to the bit.
Calibration ll128_network(double eta) {
  Calibration c;
  c.name = "test";
  ProtocolCalibration p;
  p.network_efficiency = eta;
  p.source = "test";
  c.arch_protocols["blackwell"]["LL128"] = p;
  return c;
}

TEST(NicEfficiency, ProtocolNetworkEfficiencyScalesOnlyTheNicsOfItsProtocol) {
  auto with = [](CollectiveRequest r, const std::string& protocol) {
    r.protocol = protocol;
    return r;
  };
  const auto two = test::shipped("hgx-b200", 2);
  const CollectiveRequest r = with(ring(16), "LL128");
  const double bus_bytes = 2.0 * 15 / 16 * static_cast<double>(r.bytes);  // nccl-tests' all-reduce bus factor
  const double nic_bound_Bps = 8 * 50e9 * 0.5 * 120.0 / 128.0;
  const double half = analytic_collective(two, r, ll128_network(0.5)).time_s;
  EXPECT_NEAR(bus_bytes / half / nic_bound_Bps, 1.0, 0.03);
  EXPECT_NEAR(bus_bytes / simulate_collective(two, r, ll128_network(0.5)).time_s / nic_bound_Bps, 1.0, 0.03);
  EXPECT_GT(half / analytic_collective(two, r, ll128_network(1.0)).time_s, 1.3);
  EXPECT_DOUBLE_EQ(exec_terms(two, r, ll128_network(0.5)).flow.network_protocol_efficiency, 0.5);
  // Results say so (the closed form's note and the schedule's).
  const std::string said = "LL128 through the NICs at 0.5 of its rate (calibration 'blackwell:LL128')";
  EXPECT_NE(analytic_collective(two, r, ll128_network(0.5)).note.find(said), std::string::npos);
  EXPECT_NE(build_schedule(r, two, ll128_network(0.5)).note.find(said), std::string::npos);
  EXPECT_EQ(analytic_collective(two, r, ll128_network(1.0)).note.find("through the NICs"), std::string::npos);

  EXPECT_EQ(analytic_collective(two, ring(16), ll128_network(0.5)).time_s, analytic_collective(two, ring(16), ll128_network(1.0)).time_s);
  const auto one = test::shipped("hgx-b200", 1);
  EXPECT_EQ(analytic_collective(one, with(ring(8), "LL128"), ll128_network(0.5)).time_s,
            analytic_collective(one, with(ring(8), "LL128"), ll128_network(1.0)).time_s);
  EXPECT_DOUBLE_EQ(exec_terms(one, with(ring(8), "LL128"), ll128_network(0.5)).flow.network_protocol_efficiency, 1.0);
  EXPECT_EQ(analytic_collective(one, with(ring(8), "LL128"), ll128_network(0.5)).note.find("through the NICs"), std::string::npos);
}

}  // namespace
}  // namespace racksim
