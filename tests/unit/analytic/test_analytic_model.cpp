// The analytic model against closed forms worked out here from the topology files' own numbers, with
// calibration none (vendor peaks, nominal latencies) plus the terms of the NCCL protocol the request runs
// (exec_terms: launch latency, per-step latency, payload fraction; their values are tested against NCCL's
// tables in tests/unit/nccl), and the course's Fig 4 model against numbers computed by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "../collectives/collective_test_support.hpp"
#include "models/analytic/analytic_model.hpp"
#include "models/analytic/cost_model.hpp"
#include "models/collectives/building_blocks.hpp"
#include "models/collectives/exec_terms.hpp"
#include "models/collectives/nccl_choice.hpp"
#include "models/collectives/registry.hpp"
#include "sim/core/errors.hpp"
#include "sim/calib/calibration.hpp"
#include "sim/topo/system_catalog.hpp"

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

// What the NCCL protocol of the resolved request adds to every flow, calibration none.
FlowTerms nccl_terms(const TopologyGraph& g, const CollectiveRequest& r) {
  return exec_terms(g, resolve_request(r, g).request, Calibration::none()).flow;
}

// Ring all-reduce: T = L + 2(n-1) (max(alpha, l) + S / (n B e)), alpha = GPU -> switch -> GPU latency,
// B the port; NCCL's launch latency L, per-step latency l and payload efficiency e.
TEST(AnalyticClosedForm, RingAllReduceHgxH100EightGpus) {
  const auto g = test::shipped("hgx-h100");
  const auto f = nvlink_figures(g);
  EXPECT_DOUBLE_EQ(f.port_Bps, 450e9);  // 18 NVLink 4 links x 25 GB/s
  const double S = 1 << 30, n = 8;
  const auto req = make_request(CollectiveOp::all_reduce, "ring", test::first_gpus(8), 1 << 30);
  const FlowTerms t = nccl_terms(g, req);
  EXPECT_FALSE(t.latency_at_launch);
  EXPECT_GT(t.launch_s, 0);
  const double alpha = std::max(2 * f.link_s + f.switch_s, t.intra_step_s);  // wire 0.47 us
  const double expected = t.launch_s + 2 * (n - 1) * (alpha + S / (n * f.port_Bps * t.efficiency));
  EXPECT_NEAR(analytic(g, req), expected, expected * 1e-12);
  // What the engine runs: the steps' latencies summed at launch, the transfers waiting none of their own.
  const ExecParams run = build_schedule(req, g).exec;
  EXPECT_TRUE(run.latency_at_launch);
  EXPECT_NEAR(run.launch_s, t.launch_s + 2 * (n - 1) * alpha, 1e-12);
  EXPECT_EQ(run.intra_step_s, 0);
}

TEST(AnalyticClosedForm, RingAllReduceGb200SeventyTwoGpus) {
  const auto g = test::shipped("gb200-nvl72");
  const auto f = nvlink_figures(g);
  EXPECT_DOUBLE_EQ(f.port_Bps, 900e9);
  const double n = 72, S = 72.0 * (1 << 24);
  const auto req = make_request(CollectiveOp::all_reduce, "ring", test::first_gpus(72), static_cast<std::uint64_t>(S));
  const FlowTerms t = nccl_terms(g, req);
  const double steps = 2 * (n - 1) * (std::max(2 * f.link_s + f.switch_s, t.intra_step_s) + S / (n * f.port_Bps * t.efficiency));
  const double expected = t.launch_s + steps;
  const auto e = analytic_collective(g, req, Calibration::none());
  EXPECT_NEAR(e.time_s, expected, expected * 1e-12);
  ASSERT_EQ(e.phases.size(), 2u);  // reduce-scatter and all-gather, n-1 steps each
  EXPECT_EQ(e.phases[0].name, "reduce-scatter");
  EXPECT_NEAR(e.phases[0].time_s, steps / 2, expected * 1e-12);
}

// NVLS with k pipelined chunks of s = S/k (k from NCCL's pipeline item: chunk x channels): each GPU sends
// its chunks one after another, s/B each; the plane reduces chunk c at the summed port bandwidth P of the
// domain's GPUs (the engine's assumption) and multicasts it, s/B, as soon as all GPUs' chunk c is in.
// NCCL's NVLS latency L counts every hop once, as the pipeline's fill, so it is paid at launch and the
// per-chunk alphas are 0: T = L + k s/(B e) + s/(P e) + s/(B e).
void expect_nvls(const std::string& system, int n, double S) {
  const auto g = test::shipped(system);
  const auto f = nvlink_figures(g);
  const auto req = make_request(CollectiveOp::all_reduce, "nvls", test::first_gpus(n), static_cast<std::uint64_t>(S));
  const int k = build_schedule(req, g).chunks;
  ASSERT_GE(k, 1);
  const NcclChoice choice = resolve_request(req, g);
  ASSERT_GT(choice.request.chunk_bytes, 0u);
  EXPECT_EQ(k, static_cast<int>(std::min<double>(std::ceil(S / static_cast<double>(choice.request.chunk_bytes)),
                                                 std::floor(S))))
      << system;
  const FlowTerms t = nccl_terms(g, req);
  EXPECT_TRUE(t.latency_at_launch);
  const double B = f.port_Bps * t.efficiency;
  const double P = g.gpus_per_domain() * B;
  const double s = S / k;
  const double closed = t.launch_s + k * s / B + s / P + s / B;
  EXPECT_NEAR(analytic(g, req), closed, closed * 1e-12) << system << " n=" << n << " k=" << k;
  // Against the ring: NVLS moves S instead of 2(n-1)/n S through each port.
  const double ring = 2 * (n - 1) * (2 * f.link_s + f.switch_s + S / (n * f.port_Bps));
  if (S >= (1 << 26)) {
    EXPECT_LT(closed, ring);
  }
}

// The engine lowers a pipeline's depth to stay within kMaxTransfers; the closed form prices the chunk's own
// (NCCL's): 20 GB200 racks, 16 GiB, NCCL's Tree/Simple (what 2.26 picks with NVLS off) moves 1 024 chunks of 512 KiB per tree half,
// where 2 M transfers allow the schedule 21 (92 096 transfers per item: 4 x 1 439 x 16 rails).
TEST(AnalyticModel, ClosedFormPricesTheChunksDepthWhereTheEngineLowersIt) {
  const auto g = test::shipped("gb200-nvl72", 20);
  auto req = make_request(CollectiveOp::all_reduce, "tree", test::first_gpus(1440), std::uint64_t{16} << 30);
  req.protocol = "Simple";
  const CollectiveRequest r = resolve_request(req, g).request;
  const DepthChoice d = planned_depth(g, r);
  EXPECT_EQ(d.depth, 21);
  EXPECT_EQ(d.model_depth, 1024);
  EXPECT_EQ(d.nccl_chunks, 1024);  // what the schedule carries (Schedule::nccl_chunks) for the engine's warning
  EXPECT_NE(d.note.find("the closed form prices depth 1024"), std::string::npos) << d.note;
  req.bytes = std::uint64_t{1} << 20;  // 2 chunks a tree half: within the cap, nothing lowered
  EXPECT_EQ(planned_depth(g, resolve_request(req, g).request).nccl_chunks, 0);
  EXPECT_EQ(exec_terms(g, r, Calibration::none()).depth, 1024);
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
// other). NVLS inside: reduce-scatter = S/B (every GPU sends S up) + S/P (the plane reduces the d slices at
// the summed port bandwidth of its 72 GPUs) + (S/d)/B (slice back); ring across the 2 racks on S/d over the
// NIC: 2(D-1) (S/d/D)/B_nic; all-gather = (S/d)/B + (d-1)(S/d)/B (d-1 multicasts share each GPU's port). Its
// latency is NCCL's, paid once at launch as NCCL's model does (exec_terms.cpp, hierarchical_inside): NVLS's
// inside one node and 2(D-1) network steps of NCCL's ring, each above the wire's own a_net = GPU -c2c-> Grace
// -pcie-> NIC -port-> leaf -> spine -> leaf -port-> NIC -pcie-> Grace -c2c-> GPU (GB200's ConnectX-7s hang
// off the Grace CPUs: NCCL's P2C path).
TEST(AnalyticClosedForm, HierarchicalTwoRacks) {
  const auto g = test::shipped("gb200-nvl72", 2);
  const auto f = nvlink_figures(g);
  const auto& spec = g.spec();
  const double nic_Bps = spec.nic_types[0].bandwidth_GBps * 1e9;  // 50 GB/s (< PCIe Gen5 x16 63 GB/s)
  const double a_net = 2 * spec.link_type("c2c").latency_us * 1e-6 + 2 * spec.link_type("pcie5x16").latency_us * 1e-6 +
                       2 * spec.nic_types[0].latency_us * 1e-6 + 3 * spec.scale_out->switch_latency_us * 1e-6;
  EXPECT_NEAR(a_net, 4.9e-6, 1e-15);
  const double S = 144.0 * (1 << 20), d = 72, D = 2, B = f.port_Bps;
  auto req = make_request(CollectiveOp::all_reduce, "hierarchical", test::first_gpus(144), static_cast<std::uint64_t>(S),
                          static_cast<std::uint64_t>(S));
  const FlowTerms t = nccl_terms(g, req);
  EXPECT_TRUE(t.latency_at_launch);
  EXPECT_EQ(t.intra_step_s, 0);
  EXPECT_EQ(t.net_step_s, 0);
  // NVLS's latency on one 72-GPU node (what `--algo nvls` pays on one rack) and two network steps above the wire.
  auto one_rack = make_request(CollectiveOp::all_reduce, "nvls", test::first_gpus(72), static_cast<std::uint64_t>(S));
  const double nvls_latency_s = nccl_terms(test::shipped("gb200-nvl72", 1), one_rack).launch_s;
  EXPECT_GT(t.launch_s, nvls_latency_s + 2 * (D - 1) * a_net);
  EXPECT_LT(t.launch_s, nvls_latency_s + 2 * (D - 1) * 50e-6);
  const double P = 72 * B;
  const double rs = S / B + S / P + S / d / B;
  const double outer = 2 * (D - 1) * (S / d / D / nic_Bps);
  const double ag = S / d / B + (d - 1) * (S / d) / B;
  const auto e = analytic_collective(g, req, Calibration::none());
  EXPECT_NEAR(e.time_s, t.launch_s + rs + outer + ag, (rs + outer + ag) * 1e-12);
  ASSERT_EQ(e.phases.size(), 3u);
  EXPECT_NEAR(e.phases[1].time_s, outer, outer * 1e-12);  // a phase's own time: the latency is the launch's

  // Ring inside: (d-1) steps of S/d for each of the reduce-scatter and the all-gather, with NCCL's ring latency:
  // its base latency and 2(d-1) NVLink steps inside, 2(D-1) network steps across.
  req.inner_algorithm = "ring";
  const FlowTerms tr = nccl_terms(g, req);
  EXPECT_GT(tr.launch_s, 2 * (d - 1) * (2 * f.link_s + f.switch_s) + 2 * (D - 1) * a_net);
  const double ring_inner = 2 * (d - 1) * (S / d / B);
  EXPECT_NEAR(analytic(g, req), tr.launch_s + ring_inner + outer, (ring_inner + outer) * 1e-12);

  // By default NVLS blocks pipeline: a block's outer phase and all-gather overlap the next block's
  // reduce-scatter, so the links alone would let the domain part approach the port bound S (1 + 1/d) / B (each
  // GPU sends S + S/d and receives S/d + (d-1) S/d), ~2x faster than the phases in sequence. Inside each domain
  // the NVLS flows are held to NCCL's NVLS inside one node (heads x bwIntra x nvlsEfficiency, tuning.cc:285-300:
  // about half the ports' rate, what NVL72 racks measure), as NCCL's own NVLS on one rack is; the NIC phase
  // (S/d per GPU) hides under it entirely, so the run takes its latency and S / cap (exec_terms scales the
  // NVLink flows so that the run's NVLink part alone takes S / cap: FlowTerms::nvlink_scale).
  req.chunk_bytes = 0;
  req.inner_algorithm = "auto";
  const double pipelined = analytic(g, req);
  const double cap_Bps = exec_terms(g, resolve_request(req, g).request, Calibration::none()).cap_algbw_Bps;
  ASSERT_GT(cap_Bps, 0);
  EXPECT_LT(cap_Bps, B * d / (d + 1));  // the cap binds: below the links' pipelined rate
  EXPECT_NEAR(pipelined, t.launch_s + S / cap_Bps, pipelined * 1e-9);
  EXPECT_LT(pipelined, t.launch_s + rs + outer + ag);
  // Ring inside pipelines only on request: the default is one block.
  req.inner_algorithm = "ring";
  EXPECT_NEAR(analytic(g, req), tr.launch_s + ring_inner + outer, (ring_inner + outer) * 1e-12);
}

// Hierarchical on HGX H100: 2 nodes x 8, NVLS inside, tree across 2 nodes (height 1: one level up, one
// down, each piece S/(2d) per tree on every NIC in both directions at once). NCCL's latencies at launch: NVLS's
// inside one node and the tree's two network steps.
TEST(AnalyticClosedForm, HierarchicalHgxTwoNodesTreeOutside) {
  const auto g = test::shipped("hgx-h100", 2);
  const auto f = nvlink_figures(g);
  const double S = 16.0 * (1 << 20), d = 8, B = f.port_Bps, nic = 50e9, a_net = 3.9e-6;
  auto req = make_request(CollectiveOp::all_reduce, "hierarchical", test::first_gpus(16), static_cast<std::uint64_t>(S),
                          static_cast<std::uint64_t>(S));
  req.outer_algorithm = "tree";
  const FlowTerms t = nccl_terms(g, req);
  EXPECT_GT(t.launch_s, 2 * a_net);
  const double rs = S / B + S / (8 * B) + S / d / B;  // the plane reduces at 8 ports' rate
  // Two trees of 2 members, mirrored: going up, tree 0 sends 1 -> 0 while tree 1 sends 0 -> 1 (one flow
  // per NIC direction, S/(2d) each); coming down the same. One block: nothing else overlaps.
  const double outer = 2 * ((S / d / 2) / nic);
  const double ag = S / d / B + (d - 1) * (S / d) / B;
  EXPECT_NEAR(analytic(g, req), t.launch_s + rs + outer + ag, (rs + outer + ag) * 1e-12);
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
  const auto req = make_request(CollectiveOp::all_reduce, "ring", test::first_gpus(8), 1 << 30);
  const CollectiveRequest resolved = resolve_request(req, g).request;
  // The algorithm entry adds to NCCL's launch and step latencies and scales its payload efficiency.
  const FlowTerms nominal = nccl_terms(g, req);
  const FlowTerms t = exec_terms(g, resolved, c).flow;
  EXPECT_NEAR(t.launch_s, nominal.launch_s + 10e-6, 1e-15);
  EXPECT_NEAR(t.intra_step_s, nominal.intra_step_s + 2e-6, 1e-15);
  EXPECT_NEAR(t.efficiency, nominal.efficiency * 0.9, 1e-15);
  // alpha: the wire (two NVLink hops each +1 us, plus the switch) or NCCL's step, whichever is longer;
  // B x 0.8 (link) x efficiency.
  const double alpha = std::max(0.47e-6 + 2e-6, t.intra_step_s);
  const double expected = t.launch_s + 2 * (n - 1) * (alpha + S / (n * 450e9 * 0.8 * t.efficiency));
  EXPECT_NEAR(analytic_collective(g, req, c).time_s, expected, expected * 1e-12);
}

TEST(AnalyticModel, OtherOpsClosedForms) {
  const auto g = test::shipped("gb200-nvl72");
  const double B = 900e9, a = 0.47e-6, n = 8, S = 8 << 20;
  auto req = [&](CollectiveOp op, const char* algo) {
    return make_request(op, algo, test::first_gpus(8), static_cast<std::uint64_t>(S));
  };
  auto t = [&](CollectiveOp op, const char* algo) { return analytic(g, req(op, algo)); };
  for (CollectiveOp op : {CollectiveOp::all_gather, CollectiveOp::reduce_scatter}) {
    const FlowTerms f = nccl_terms(g, req(op, "ring"));
    EXPECT_NEAR(t(op, "ring"), f.launch_s + (n - 1) * (std::max(a, f.intra_step_s) + S / n / (B * f.efficiency)), 1e-15)
        << to_string(op);
  }
  // all-to-all (racksim's own; NCCL runs it as point-to-point, no protocol terms): each port carries n-1
  // pieces of S/n at once, after NCCL's Simple ring base latency (8.4 us, one kernel) and n-1 rounds of
  // handshakes, one NVLink hop pair's latency each (exec_terms.cpp).
  EXPECT_NEAR(t(CollectiveOp::all_to_all, "direct"), 8.4e-6 + (n - 1) * a + (n - 1) * (S / n) / B, 1e-12);
  // send/recv: one hop, no pipelining by default, after the same one kernel's base latency (8.4 us).
  EXPECT_NEAR(t(CollectiveOp::send_recv, "ring"), 8.4e-6 + a + S / B, 1e-12);  // NCCL keeps 8.4 as a float
  // broadcast chain: L + (n-2+k) (max(a, l) + S/(kBe)) with the schedule's k.
  const auto br = req(CollectiveOp::broadcast, "ring");
  const int k = build_schedule(br, g).chunks;
  const FlowTerms f = nccl_terms(g, br);
  EXPECT_NEAR(analytic(g, br), f.launch_s + (n - 2 + k) * (std::max(a, f.intra_step_s) + S / k / (B * f.efficiency)), 1e-15);
  EXPECT_GT(k, 1);
  // reduce: the same chain towards the root, which NCCL prices as the broadcast (tuning.cc:273, 363): the
  // same closed form, to the bit.
  const auto rd = req(CollectiveOp::reduce, "ring");
  EXPECT_EQ(build_schedule(rd, g).chunks, k);
  EXPECT_DOUBLE_EQ(analytic(g, rd), analytic(g, br));
}

// Across nodes NCCL runs Broadcast and Reduce on its ring channels, which leave a node through every NIC rail:
// one chain per rail, each with 1 / rails of the buffer (nccl_chain_orders). Two HGX H100 nodes, 8 NICs of
// 50 GB/s each way: a chain crosses each node boundary once per direction on its own rail, so the NICs carry
// S / 8 each and the bus bandwidth is far above one NIC's 50 GB/s, as a single chain through one NIC had it.
TEST(AnalyticModel, BroadcastAndReduceAcrossNodesUseEveryNicRail) {
  const auto g = test::shipped("hgx-h100", 2);
  for (CollectiveOp op : {CollectiveOp::broadcast, CollectiveOp::reduce}) {
    CollectiveRequest r = make_request(op, "ring", test::first_gpus(16), 1ULL << 30);
    r.root = 3;
    const auto chains = nccl_chain_orders(r, g);
    ASSERT_EQ(chains.size(), 8u) << to_string(op);
    for (const auto& c : chains) {
      EXPECT_EQ(c.front(), 3) << to_string(op);  // cut open at the root
      EXPECT_EQ(c.size(), 16u);
    }
    const double busbw_Bps = (1ULL << 30) / analytic_collective(g, r, Calibration::none()).time_s;  // factor 1
    EXPECT_GT(busbw_Bps, 4 * 50e9) << to_string(op);  // several NICs, not one
    EXPECT_LT(busbw_Bps, 8 * 50e9) << to_string(op);  // no more than all eight
  }
}

TEST(AnalyticModel, AutoIsWhatNcclWouldRun) {
  const auto g = test::shipped("gb200-nvl72");
  const auto req = make_request(CollectiveOp::all_reduce, "auto", test::first_gpus(72), 1 << 30);
  const AnalyticEstimate e = analytic_collective(g, req, Calibration::none());
  EXPECT_EQ(e.algorithm, "nvls");
  EXPECT_EQ(e.protocol, "Simple");
  EXPECT_EQ(e.channels, 24);
  EXPECT_NE(e.note.find("Ring/Simple"), std::string::npos) << e.note;  // the other candidates and NCCL's times
  // Without NVLS in the switches NCCL runs something else, and says why not NVLS.
  const auto h = test::test_system("hgx-no-nvls");
  const AnalyticEstimate e2 = analytic_collective(h, make_request(CollectiveOp::all_reduce, "auto", test::first_gpus(8), 1 << 30),
                                                  Calibration::none());
  EXPECT_NE(e2.algorithm, "nvls");
}

// Seed course section 7, Fig 4: T = L * phases + in-domain + cross-domain; numbers computed by hand.
// AWS EFA (topologies/aws-p5.json) differs from HGX H100's InfiniBand in its transport only: a network step of
// the tree costs the aws-ofi-nccl tuner's 20 us where NCCL's IB figure is hwLat[NET][tree][LL] = 5 us
// (tuning.cc:149-168), and the plugin's reported 75 us steers NCCL's choice but is not a time. Two nodes:
// 2 x log2(2) network steps over the tree's up and down passes (tuning.cc:382-385), so +30 us exactly.
TEST(AnalyticModel, EfaTransportPricesItsOwnStepLatency) {
  const auto ib = test::shipped("hgx-h100", 2), efa = test::shipped("aws-p5", 2);
  auto req = make_request(CollectiveOp::all_reduce, "tree", test::first_gpus(16), 8);
  req.protocol = "LL";
  const FlowTerms t_ib = nccl_terms(ib, req), t_efa = nccl_terms(efa, req);
  ASSERT_TRUE(t_efa.latency_at_launch);
  EXPECT_NEAR(t_efa.launch_s - t_ib.launch_s, 30e-6, 1e-12);
  EXPECT_NEAR(analytic(efa, req) - analytic(ib, req), 30e-6, 1e-9);
  // Simple: 20 + 3 us a step (the tuner's completion overhead) against IB's 14.
  req.protocol = "Simple";
  EXPECT_NEAR(nccl_terms(efa, req).launch_s - nccl_terms(ib, req).launch_s, 2 * (23 - 14) * 1e-6, 1e-12);
  // One node: no network step, the transport changes nothing.
  auto one = make_request(CollectiveOp::all_reduce, "ring", test::first_gpus(8), 1 << 20);
  EXPECT_NEAR(analytic(test::shipped("aws-p5"), one), analytic(test::shipped("hgx-h100"), one), 1e-12);
}

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

// Whether one of a result's warnings contains `text`.
bool warns(const AnalyticEstimate& e, const std::string& text) {
  return std::any_of(e.warnings.begin(), e.warnings.end(), [&](const std::string& w) { return w.find(text) != std::string::npos; });
}

// A calibration file with entries for other algorithms but none for this one (reduce/ring in the shipped file:
// no public reduce measurement) leaves it at kappa 1 and says so in every result; a file without any
// algorithm entry (--calibration none) is uncalibrated by choice and says nothing.
TEST(AnalyticModel, AnAlgorithmWithoutACalibrationEntrySaysSo) {
  const auto g = test::shipped("hgx-h100");
  const Calibration shipped = load_calibration("default");
  ASSERT_TRUE(shipped.calibrates("broadcast/ring", "hopper"));
  ASSERT_FALSE(shipped.calibrates("reduce/ring", "hopper"));
  auto says = [](const AnalyticEstimate& e) { return warns(e, "reduce/ring: calibration 'default' has no entry"); };
  const auto r = make_request(CollectiveOp::reduce, "ring", test::first_gpus(8), 1 << 30);
  EXPECT_TRUE(says(analytic_collective(g, r, shipped)));
  EXPECT_FALSE(says(analytic_collective(g, r, Calibration::none())));
  EXPECT_FALSE(says(analytic_collective(g, make_request(CollectiveOp::broadcast, "ring", test::first_gpus(8), 1 << 30), shipped)));
}

// All-to-alls on 2-3 GPUs of an HGX B200 ran 18-23 % slower than modelled (MGHPCC's node b0012, pending records):
// such a result says so; 4 GPUs, two Hopper GPUs and two B200 nodes do not.
TEST(AnalyticModel, FewBlackwellGpusAllToAllSayTheyAreSlowerThanModelled) {
  const Calibration shipped = load_calibration("default");
  auto says = [](const AnalyticEstimate& e) { return warns(e, "all_to_all on 2-3 Blackwell GPUs"); };
  auto a2a = [](const std::vector<int>& gpus) { return make_request(CollectiveOp::all_to_all, "direct", gpus, 1 << 30); };
  const auto b200 = test::shipped("hgx-b200");
  EXPECT_TRUE(says(analytic_collective(b200, a2a(test::first_gpus(2)), shipped)));
  EXPECT_TRUE(says(analytic_collective(b200, a2a(test::first_gpus(3)), shipped)));
  EXPECT_FALSE(says(analytic_collective(b200, a2a(test::first_gpus(4)), shipped)));
  EXPECT_FALSE(says(analytic_collective(test::shipped("hgx-h100"), a2a(test::first_gpus(2)), shipped)));
  EXPECT_FALSE(says(analytic_collective(test::shipped("hgx-b200", 2), a2a({0, 8}), shipped)));
}

// Two Blackwell ranks on Ring/LL128 run at ~0.6 of the model (NVIDIA/nccl PR #2343): a result forcing it says so;
// NCCL's own choice there (Simple), three ranks, and two Hopper ranks do not.
TEST(AnalyticModel, TwoBlackwellRanksOnLl128SayTheyAreSlowerThanModelled) {
  const Calibration shipped = load_calibration("default");
  auto says = [](const AnalyticEstimate& e) { return warns(e, "PR #2343"); };
  auto ring = [](int n, const std::string& protocol) {
    CollectiveRequest r = make_request(CollectiveOp::all_reduce, "ring", test::first_gpus(n), 1 << 30);
    r.protocol = protocol;
    return r;
  };
  const auto b200 = test::shipped("hgx-b200");
  EXPECT_TRUE(says(analytic_collective(b200, ring(2, "LL128"), shipped)));
  EXPECT_FALSE(says(analytic_collective(b200, ring(2, "Simple"), shipped)));
  EXPECT_FALSE(says(analytic_collective(b200, ring(3, "LL128"), shipped)));
  EXPECT_FALSE(says(analytic_collective(b200, make_request(CollectiveOp::all_reduce, "auto", test::first_gpus(2), 1 << 30), shipped)));
  EXPECT_FALSE(says(analytic_collective(test::shipped("hgx-h100"), ring(2, "LL128"), shipped)));
}

// NCCL's NVLS cap (heads x bwIntra x nvlsEfficiency, tuning.cc:285-300) bounds the switch's part of an
// NVLS-tree and scales the flows that stay on NVLink. Applied as one factor on every capacity (until session
// 25) it made a faster NIC slower where the NICs bind part of the run: two H100 nodes at 512 MiB took 2 400 us
// with 50 GB/s NICs and 2 330 with 40, and 16 GB300 racks (100 GB/s NICs) 4 439 us against GB200's 4 346 at
// 1 GiB. A faster NIC may not make a run slower; the 0.5 % left is the closed form's block timeline, whose
// pairings of transfers on a port move as the tree phase shortens (2 401-2 406 us at 40-60 GB/s).
TEST(AnalyticNcclCap, AFasterNicIsNeverSlower) {
  const Calibration shipped = load_calibration("default");
  double slower_nic_s = 0;
  for (double nic_GBps : {20.0, 25.0, 30.0, 35.0, 40.0, 45.0, 50.0, 60.0, 80.0, 100.0}) {
    TopologySpec spec = SystemCatalog(RACKSIM_TOPOLOGY_DIR).load("hgx-h100");
    for (auto& nic : spec.nic_types) nic.bandwidth_GBps = nic_GBps;
    const TopologyGraph g(spec, 2);
    const auto r = resolve_request(make_request(CollectiveOp::all_reduce, "nvls_tree", test::first_gpus(16), 512ull << 20), g);
    const double t = analytic_collective(g, r.request, shipped).time_s;
    if (slower_nic_s > 0) {
      EXPECT_LE(t, slower_nic_s * 1.005) << nic_GBps << " GB/s NICs: " << t * 1e6 << " us";
    }
    slower_nic_s = t;
  }
  // What NCCL runs on 16 racks (NVLS-tree): GB300's ConnectX-8 at 100 GB/s against GB200's ConnectX-7 at 50.
  auto at_16_racks = [&](const char* system) {
    const auto g = test::shipped(system, 16);
    const auto r = resolve_request(make_request(CollectiveOp::all_reduce, "auto", test::first_gpus(1152), 1ull << 30), g);
    return analytic_collective(g, r.request, shipped).time_s;
  };
  EXPECT_LE(at_16_racks("gb300-nvl72"), at_16_racks("gb200-nvl72") * 1.005);
}

}  // namespace
}  // namespace racksim
