// The analytic model against closed forms worked out here from the topology files' own numbers, with
// calibration none (vendor peaks, nominal latencies), and the course's Fig 4 model against numbers
// computed by hand.
#include <gtest/gtest.h>

#include <algorithm>

#include "../collectives/collective_test_support.hpp"
#include "models/analytic/analytic_model.hpp"
#include "models/analytic/auto_select.hpp"
#include "models/analytic/cost_model.hpp"
#include "models/collectives/registry.hpp"
#include "sim/core/errors.hpp"

namespace racksim {
namespace {

using test::make_request;

// Per-direction NVLink port bandwidth of a GPU and the latencies of the route pieces, from the spec.
struct NvlinkFigures {
  double port_Bps, link_s, switch_s;
};
NvlinkFigures nvlink_figures(const TopologyGraph& g) {
  const auto& d = *g.spec().nvlink_domain;
  const auto& link = g.spec().link_type(d.link_type);
  int links = 0;
  for (int l : d.gpu_links_per_chip) links += l;
  return {links * link.bandwidth_GBps * 1e9, link.latency_us * 1e-6, d.switch_latency_us * 1e-6};
}

double analytic(const TopologyGraph& g, const CollectiveRequest& r) {
  return analytic_collective(g, r, Calibration::none()).time_s;
}

// Ring all-reduce: T = 2(n-1) (alpha + S / (n B)), alpha = GPU -> switch -> GPU latency, B the port.
TEST(AnalyticClosedForm, RingAllReduceHgxH100EightGpus) {
  const auto g = test::shipped("hgx-h100");
  const auto f = nvlink_figures(g);
  EXPECT_DOUBLE_EQ(f.port_Bps, 450e9);  // 18 NVLink 4 links x 25 GB/s
  const double S = 1 << 30, n = 8;
  const double alpha = 2 * f.link_s + f.switch_s;  // 0.47 us
  const double expected = 2 * (n - 1) * (alpha + S / (n * f.port_Bps));
  EXPECT_NEAR(analytic(g, make_request(CollectiveOp::all_reduce, "ring", test::first_gpus(8), 1 << 30)), expected,
              expected * 1e-12);
}

TEST(AnalyticClosedForm, RingAllReduceGb200SeventyTwoGpus) {
  const auto g = test::shipped("gb200-nvl72");
  const auto f = nvlink_figures(g);
  EXPECT_DOUBLE_EQ(f.port_Bps, 900e9);
  const double n = 72, S = 72.0 * (1 << 24);
  const double expected = 2 * (n - 1) * (2 * f.link_s + f.switch_s + S / (n * f.port_Bps));
  const auto e = analytic_collective(
      g, make_request(CollectiveOp::all_reduce, "ring", test::first_gpus(72), static_cast<std::uint64_t>(S)),
      Calibration::none());
  EXPECT_NEAR(e.time_s, expected, expected * 1e-12);
  ASSERT_EQ(e.phases.size(), 2u);  // reduce-scatter and all-gather, n-1 steps each
  EXPECT_EQ(e.phases[0].name, "reduce-scatter");
  EXPECT_NEAR(e.phases[0].time_s, expected / 2, expected * 1e-12);
}

// NVLS with k pipelined chunks of s = S/k: each GPU sends its chunks one after another, t_u = a_u + s/B
// (GPU -> switch: link + switch latency); the plane reduces chunk c at the summed port bandwidth P of the
// domain's GPUs (the engine's assumption) and multicasts it, a_d + s/B, as soon as all GPUs' chunk c is
// in: T = k t_u + s/P + a_d + s/B.
void expect_nvls(const std::string& system, int n, double S) {
  const auto g = test::shipped(system);
  const auto f = nvlink_figures(g);
  const auto req = make_request(CollectiveOp::all_reduce, "nvls", test::first_gpus(n), static_cast<std::uint64_t>(S));
  const int k = build_schedule(req, g).chunks;
  ASSERT_GE(k, 1);
  const double P = g.gpus_per_domain() * f.port_Bps;
  auto closed = [&](int kk) {
    const double s = S / kk;
    return kk * (f.link_s + f.switch_s + s / f.port_Bps) + s / P + f.link_s + s / f.port_Bps;
  };
  EXPECT_NEAR(analytic(g, req), closed(k), closed(k) * 1e-12) << system << " n=" << n << " k=" << k;
  // The default depth is the fastest one (with the same nominal figures).
  if (k > 1) {
    EXPECT_LE(closed(k), closed(k - 1));
  }
  EXPECT_LE(closed(k), closed(k + 1) * (1 + 1e-12));
  // Against the ring: NVLS moves S instead of 2(n-1)/n S through each port.
  const double ring = 2 * (n - 1) * (2 * f.link_s + f.switch_s + S / (n * f.port_Bps));
  if (S >= (1 << 26)) {
    EXPECT_LT(closed(k), ring);
  }
}

TEST(AnalyticClosedForm, NvlsHgxH100EightGpus) {
  expect_nvls("hgx-h100", 8, 1 << 30);
  expect_nvls("hgx-h100", 8, 1 << 20);
}
TEST(AnalyticClosedForm, NvlsGb200SeventyTwoGpus) {
  expect_nvls("gb200-nvl72", 72, 1 << 30);
  expect_nvls("gb200-nvl72", 72, 64 << 10);
}

// Hierarchical over two racks of gb200-nvl72, one block (chunk_bytes = S: the phases run one after the
// other). NVLS inside: reduce-scatter = a_u + S/B (every GPU sends S up) + S/P (the plane reduces the d
// slices at the summed port bandwidth of its 72 GPUs) + a_d + (S/d)/B (slice back);
// ring across the 2 racks on S/d over the NIC: 2(D-1) (a_net + (S/d/D)/B_nic); all-gather = a_u + (S/d)/B
// + a_d + (d-1)(S/d)/B (d-1 multicasts share each GPU's port). a_net = GPU -pcie-> NIC -port-> leaf ->
// spine -> leaf -port-> NIC -pcie-> GPU.
TEST(AnalyticClosedForm, HierarchicalTwoRacks) {
  const auto g = test::shipped("gb200-nvl72", 2);
  const auto f = nvlink_figures(g);
  const auto& spec = g.spec();
  const double nic_Bps = spec.nic_types[0].bandwidth_GBps * 1e9;  // 50 GB/s (< PCIe Gen5 x16 63 GB/s)
  const double a_net = 2 * spec.link_type("pcie5x16").latency_us * 1e-6 + 2 * spec.nic_types[0].latency_us * 1e-6 +
                       3 * spec.scale_out->switch_latency_us * 1e-6;
  EXPECT_NEAR(a_net, 3.9e-6, 1e-15);
  const double S = 144.0 * (1 << 20), d = 72, D = 2, B = f.port_Bps;
  const double a_u = f.link_s + f.switch_s, a_d = f.link_s;
  auto req = make_request(CollectiveOp::all_reduce, "hierarchical", test::first_gpus(144), static_cast<std::uint64_t>(S),
                          static_cast<std::uint64_t>(S));
  const double P = 72 * B;
  const double rs = a_u + S / B + S / P + a_d + S / d / B;
  const double outer = 2 * (D - 1) * (a_net + S / d / D / nic_Bps);
  const double ag = a_u + S / d / B + a_d + (d - 1) * (S / d) / B;
  const auto e = analytic_collective(g, req, Calibration::none());
  EXPECT_NEAR(e.time_s, rs + outer + ag, (rs + outer + ag) * 1e-12);
  ASSERT_EQ(e.phases.size(), 3u);
  EXPECT_NEAR(e.phases[1].time_s, outer, outer * 1e-12);

  // Ring inside: (d-1) steps of S/d for each of the reduce-scatter and the all-gather.
  req.inner_algorithm = "ring";
  const double ring_inner = 2 * (d - 1) * (2 * f.link_s + f.switch_s + S / d / B);
  EXPECT_NEAR(analytic(g, req), ring_inner + outer, (ring_inner + outer) * 1e-12);

  // By default NVLS blocks pipeline: a block's outer phase and all-gather overlap the next block's
  // reduce-scatter, so the domain part approaches the port bound S (1 + 1/d) / B (each GPU sends S + S/d
  // and receives S/d + (d-1) S/d) instead of ~2 S / B: at least 1.7x faster here, never below the bound.
  req.chunk_bytes = 0;
  req.inner_algorithm = "auto";
  const double pipelined = analytic(g, req);
  EXPECT_LT(pipelined, (rs + outer + ag) / 1.7);
  EXPECT_GT(pipelined, S * (1 + 1 / d) / B);
  // Ring inside pipelines only on request: the default is one block.
  req.inner_algorithm = "ring";
  EXPECT_NEAR(analytic(g, req), ring_inner + outer, (ring_inner + outer) * 1e-12);
}

// Hierarchical on HGX H100: 2 nodes x 8, NVLS inside, tree across 2 nodes (height 1: one level up, one
// down, each piece S/(2d) per tree on every NIC in both directions at once).
TEST(AnalyticClosedForm, HierarchicalHgxTwoNodesTreeOutside) {
  const auto g = test::shipped("hgx-h100", 2);
  const auto f = nvlink_figures(g);
  const double S = 16.0 * (1 << 20), d = 8, B = f.port_Bps, nic = 50e9, a_net = 3.9e-6;
  auto req = make_request(CollectiveOp::all_reduce, "hierarchical", test::first_gpus(16), static_cast<std::uint64_t>(S),
                          static_cast<std::uint64_t>(S));
  req.outer_algorithm = "tree";
  const double a_u = f.link_s + f.switch_s, a_d = f.link_s;
  const double rs = a_u + S / B + S / (8 * B) + a_d + S / d / B;  // the plane reduces at 8 ports' rate
  // Two trees of 2 members, mirrored: going up, tree 0 sends 1 -> 0 while tree 1 sends 0 -> 1 (one flow
  // per NIC direction, S/(2d) each); coming down the same. One block: nothing else overlaps.
  const double outer = 2 * (a_net + (S / d / 2) / nic);
  const double ag = a_u + S / d / B + a_d + (d - 1) * (S / d) / B;
  EXPECT_NEAR(analytic(g, req), rs + outer + ag, (rs + outer + ag) * 1e-12);
}

TEST(AnalyticModel, CalibrationScalesBandwidthAndAddsLatency) {
  const auto g = test::shipped("hgx-h100");
  Calibration c;
  c.name = "test";
  c.links[LinkKind::nvlink].bandwidth_efficiency = 0.8;
  c.links[LinkKind::nvlink].extra_latency_us = 1.0;
  AlgorithmCalibration& ring = c.algorithms["*/ring"];
  ring.launch_overhead_us = 10.0;
  ring.step_overhead_us = 2.0;
  ring.bandwidth_efficiency = 0.9;
  const double S = 1 << 30, n = 8;
  // alpha: two NVLink hops each +1 us, plus the switch, plus 2 us step overhead; B x 0.8 x 0.9.
  const double alpha = 0.47e-6 + 2e-6 + 2e-6;
  const double expected = 10e-6 + 2 * (n - 1) * (alpha + S / (n * 450e9 * 0.8 * 0.9));
  const double t = analytic_collective(g, make_request(CollectiveOp::all_reduce, "ring", test::first_gpus(8), 1 << 30), c).time_s;
  EXPECT_NEAR(t, expected, expected * 1e-12);
}

TEST(AnalyticModel, OtherOpsClosedForms) {
  const auto g = test::shipped("gb200-nvl72");
  const double B = 900e9, a = 0.47e-6, n = 8, S = 8 << 20;
  auto t = [&](CollectiveOp op, const char* algo) {
    return analytic(g, make_request(op, algo, test::first_gpus(8), static_cast<std::uint64_t>(S)));
  };
  EXPECT_NEAR(t(CollectiveOp::all_gather, "ring"), (n - 1) * (a + S / n / B), 1e-15);
  EXPECT_NEAR(t(CollectiveOp::reduce_scatter, "ring"), (n - 1) * (a + S / n / B), 1e-15);
  // all-to-all: each port carries n-1 pieces of S/n at once.
  EXPECT_NEAR(t(CollectiveOp::all_to_all, "direct"), a + (n - 1) * (S / n) / B, 1e-15);
  // send/recv: one hop, no pipelining by default.
  EXPECT_NEAR(t(CollectiveOp::send_recv, "ring"), a + S / B, 1e-15);
  // broadcast chain: (n-2+k) (a + S/(kB)) with the schedule's k.
  const auto br = make_request(CollectiveOp::broadcast, "ring", test::first_gpus(8), static_cast<std::uint64_t>(S));
  const int k = build_schedule(br, g).chunks;
  EXPECT_NEAR(analytic(g, br), (n - 2 + k) * (a + S / k / B), 1e-15);
  EXPECT_GT(k, 1);
}

TEST(AnalyticModel, AutoReportsThePickAndEveryTime) {
  const auto g = test::shipped("gb200-nvl72");
  const auto req = make_request(CollectiveOp::all_reduce, "auto", test::first_gpus(72), 1 << 30);
  const AutoChoice c = select_algorithm(g, req, Calibration::none());
  EXPECT_EQ(c.algorithm, "nvls");
  ASSERT_EQ(c.times.size(), 4u);  // ring, nvls, tree, hierarchical (one domain)
  for (const auto& [name, time] : c.times) EXPECT_GE(time, c.times[1].second) << name;
  EXPECT_EQ(analytic_collective(g, req, Calibration::none()).algorithm, "nvls");
  // On a system without NVLS the pick is among the rest, and the reason is kept.
  const auto h = test::test_system("hgx-no-nvls");
  const AutoChoice c2 = select_algorithm(h, make_request(CollectiveOp::all_reduce, "auto", test::first_gpus(8), 1 << 30),
                                         Calibration::none());
  EXPECT_NE(c2.algorithm, "nvls");
  ASSERT_FALSE(c2.skipped.empty());
  EXPECT_EQ(c2.skipped[0].first, "nvls");
}

// Seed course section 7, Fig 4: T = L * phases + in-domain + cross-domain; numbers computed by hand.
TEST(Fig4Model, HandComputedNumbers) {
  Fig4Inputs in;
  in.bytes = 1073741824;  // 1 GiB
  in.gpus_per_domain = 72;
  in.domains = 1;
  in.nvlink_Bps = 900e9;
  in.nic_Bps = 50e9;
  in.phase_latency_s = 5e-6;
  // one phase: 5 us + 2*71/72 * 1073741824 / 9e11 = 5 us + 2352.9528 us
  EXPECT_NEAR(fig4_allreduce_time_s(in), 0.0023579527624691355, 1e-15);
  in.nvls = true;  // 5 us + 1073741824 / 9e11 = 5 us + 1193.0465 us
  EXPECT_NEAR(fig4_allreduce_time_s(in), 0.0011980464711111112, 1e-15);
  in.domains = 2;  // three phases: 15 us + 1193.0465 us + 2*1/2 * (1073741824/72) / 5e10 = 298.2616 us
  EXPECT_NEAR(fig4_allreduce_time_s(in), 0.001506308088888889, 1e-15);
  in.nvls = false;
  in.domains = 8;  // 15 us + 2352.9528 us + 2*7/8 * 14913080.89 / 5e10 = 521.9578 us
  EXPECT_NEAR(fig4_allreduce_time_s(in), 0.0028899105935802465, 1e-15);
  // HGX H100: 16 nodes of 8 at 450 GB/s NVLink, no latency: 2*7/8 S/450e9 + 2*15/16 (S/8)/50e9
  Fig4Inputs h{1073741824, 8, 16, 450e9, 50e9, 0, false};
  EXPECT_NEAR(fig4_allreduce_time_s(h), 0.009208827448888889, 1e-15);
  h.bytes = 0;
  EXPECT_THROW(fig4_allreduce_time_s(h), InputError);
}

TEST(AnalyticModel, SameErrorsAsTheBuilders) {
  EXPECT_THROW(analytic_collective(test::shipped("rtx4090-pcie"), make_request(CollectiveOp::all_reduce, "nvls", {0}, 1024),
                                   Calibration::none()),
               InputError);
  EXPECT_THROW(analytic_collective(test::shipped("gb200-nvl72"),
                                   make_request(CollectiveOp::all_reduce, "butterfly", test::first_gpus(8), 1024),
                                   Calibration::none()),
               InputError);
}

}  // namespace
}  // namespace racksim
