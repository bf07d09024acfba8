// The calibration fit recovers known parameters from synthetic data generated with them, fixes what
// the data cannot determine (saying why), and reports held-out errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "models/analytic/analytic_model.hpp"
#include "models/calibration/collective_fit.hpp"
#include "models/calibration/fitter.hpp"
#include "models/collectives/exec_terms.hpp"
#include "sim/calib/calibration.hpp"
#include "sim/topo/topology_graph.hpp"

using namespace racksim;
using namespace racksim::calibration;

namespace {

// The predictor's collective model is only used for transfer records here: collective records are fitted
// through racksim's analytic model itself (collective_fit.hpp).
double unused_collective_model(const TopologyGraph&, const CollectiveRequest&, const Calibration&) { return 0; }

// Collective data made by racksim's own model (what NCCL runs, with its protocol terms) under a known
// calibration: kappa 0.9 (or 1) and 12 us of extra launch for Hopper's ring all-reduce. The model's time is
// L + latency + bandwidth / kappa, linear in (L, 1/kappa): the fit must give both back exactly.
Calibration truth(double kappa = 0.9) {
  Calibration c;
  c.name = "truth";
  AlgorithmCalibration a;
  a.bandwidth_efficiency = kappa;
  a.launch_overhead_us = 12;
  a.source = "test";
  c.arch_algorithms["hopper"]["all_reduce/ring"] = a;
  // The fit's own NVLink figure for Hopper collectives (NCCL's 20.6 GB/s per 25 GB/s link).
  c.arch_links["hopper"][LinkKind::nvlink] = LinkCalibration{0.824, 0.0, "test", {}};
  return c;
}

// A sweep of all-reduces by `algorithm` on the first n GPUs of `system` for each n, min_bytes .. max_bytes by
// 4x, timed by racksim's own model under `made`: one series per GPU count.
std::vector<Measurement> synthetic_sweep(const Predictor& p, const std::string& system, int racks,
                                         const std::vector<int>& gpu_counts, const std::string& machine,
                                         const std::string& algorithm, double min_bytes, double max_bytes,
                                         const std::string& confidence, const Calibration& made,
                                         const std::string& protocol = "auto", CollectiveOp op = CollectiveOp::all_reduce) {
  std::vector<Measurement> out;
  for (int n : gpu_counts)
    for (double s = min_bytes; s <= max_bytes; s *= 4) {
      Measurement m;
      m.id = machine + std::to_string(out.size());
      m.series = machine + " " + algorithm + " " + std::to_string(n);
      m.kind = MeasurementKind::collective;
      m.system = system;
      m.racks = racks;
      m.measured_on = machine;
      m.op = op;
      m.algorithm = algorithm;  // NCCL_ALGO as given; the protocol NCCL's choice per size unless forced
      m.protocol = protocol;
      for (int g = 0; g < n; ++g) m.gpus.push_back(g);
      m.bytes = s;
      m.confidence = confidence;
      m.source = "synthetic " + machine;
      CollectiveRequest r;
      r.op = m.op;
      r.algorithm = m.algorithm;
      r.protocol = m.protocol;
      r.gpus = m.gpus;
      r.bytes = static_cast<std::uint64_t>(s);
      m.time_s = analytic_collective(p.graph(system, racks), r, made).time_s;
      out.push_back(m);
    }
  return out;
}

std::vector<Measurement> ring_sweep(const Predictor& p, const std::string& system, int racks, const std::vector<int>& gpu_counts,
                                    const std::string& machine, double max_bytes = 4.0 * (1 << 30),
                                    const std::string& confidence = "high", double kappa = 0.9) {
  return synthetic_sweep(p, system, racks, gpu_counts, machine, "ring", 65536, max_bytes, confidence, truth(kappa));
}

}  // namespace

TEST(Fitter, RecoversKappaAndLaunchFromDataMadeWithThem) {
  const Predictor p(RACKSIM_TOPOLOGY_DIR, unused_collective_model, "analytic");
  // Data the physics explains (kappa 1) with 12 us of extra launch: both come back exactly (the prior on kappa
  // sits at the truth).
  const std::vector<Measurement> data = ring_sweep(p, "hgx-h100", 1, {4, 8}, "machine A", 4.0 * (1 << 30), "high", 1.0);
  FitOptions o;
  o.held_out = false;
  const FitResult r = fit_calibration(data, p, o);
  const AlgorithmCalibration& a = r.calibration.arch_algorithms.at("hopper").at("all_reduce/ring");
  EXPECT_NEAR(a.bandwidth_efficiency, 1.0, 1e-4);
  EXPECT_NEAR(a.launch_overhead_us, 12, 1e-2);
  EXPECT_EQ(a.fit.points, 2 * 9);  // 64 KiB .. 4 GiB by 4x, two GPU counts
  EXPECT_LT(a.fit.worst_abs_error, 1e-3);
  bool reported = false;
  for (const auto& f : r.fits)
    if (f.key == "hopper:all_reduce/ring") {
      reported = true;
      EXPECT_EQ(f.free_parameters, (std::vector<std::string>{"bandwidth_efficiency", "launch_overhead_us"}));
      EXPECT_TRUE(f.fixed_parameters.empty());
    }
  EXPECT_TRUE(reported);
  // Nothing else was fitted: other algorithms and Blackwell have no entry (lookups borrow or stay at 1).
  EXPECT_EQ(r.calibration.arch_algorithms.size(), 1u);
  EXPECT_EQ(r.calibration.arch_algorithms.at("hopper").size(), 1u);
}

TEST(Fitter, KappaIsPulledTowardThePhysicsWithTheWeightOfOneSeries) {
  const Predictor p(RACKSIM_TOPOLOGY_DIR, unused_collective_model, "analytic");
  FitOptions o;
  o.held_out = false;
  auto kappa_from = [&](const std::vector<int>& gpu_counts) {
    const FitResult r = fit_calibration(ring_sweep(p, "hgx-h100", 1, gpu_counts, "machine A"), p, o);
    return r.calibration.arch_algorithms.at("hopper").at("all_reduce/ring").bandwidth_efficiency;
  };
  // Data made at kappa 0.9: one series is matched halfway to the physics, more series move kappa toward 0.9.
  const double one = kappa_from({8}), three = kappa_from({2, 4, 8});
  EXPECT_GT(one, 0.9);
  EXPECT_LT(one, 1.0);
  EXPECT_GT(three, 0.9);
  EXPECT_LT(three, one);
}

// LL128 through the NICs at a known rate (ProtocolCalibration): ring all-reduces on 2, 3 and 4 HGX B200 nodes,
// 64 MiB - 4 GiB, forced to Simple (which sets the ring's kappa) and to LL128, made with Blackwell's LL128
// network efficiency 0.6. The fit finds it between the truth and NCCL's model (its prior of one series),
// nearer the truth with more series, and writes no protocol entry for data without LL128 across nodes.
TEST(Fitter, Ll128NetworkEfficiencyIsRecoveredTowardTheTruthWithTheWeightOfOneSeries) {
  const Predictor p(RACKSIM_TOPOLOGY_DIR, unused_collective_model, "analytic");
  Calibration made;
  made.name = "truth";
  made.arch_links["blackwell"][LinkKind::nvlink] = LinkCalibration{0.802, 0.0, "test", {}};
  made.arch_protocols["blackwell"]["LL128"] = ProtocolCalibration{0.6, "test", {}};
  auto sweep = [&](const std::vector<int>& nodes) {
    std::vector<Measurement> out;
    for (const std::string protocol : {"Simple", "LL128"})
      for (int n : nodes) {
        const std::vector<Measurement> one = synthetic_sweep(p, "hgx-b200", n, {8 * n}, protocol + " on " + std::to_string(n) + " nodes",
                                                             "ring", 64.0 * (1 << 20), 4.0 * (1 << 30), "high", made, protocol);
        out.insert(out.end(), one.begin(), one.end());
      }
    return out;
  };
  FitOptions o;
  o.held_out = false;
  auto eta_from = [&](const std::vector<int>& nodes) {
    const FitResult r = fit_calibration(sweep(nodes), p, o);
    return r.calibration.protocol("LL128", "blackwell").network_efficiency;
  };
  const double three = eta_from({2, 3, 4}), five = eta_from({2, 3, 4, 5, 6});
  EXPECT_GT(three, 0.6);
  EXPECT_LT(three, 1.0);
  EXPECT_GE(five, 0.6);
  EXPECT_LT(five, three);
  const FitResult simple_only = fit_calibration(ring_sweep(p, "hgx-h100", 1, {8}, "machine A"), p, o);
  EXPECT_TRUE(simple_only.calibration.arch_protocols.empty());
}

// The p2p pipeline rate (AlgorithmCalibration::p2p_pipeline_GBps) is one for every architecture: all-to-all
// sweeps made at 80 GB/s on 4 and 8 H100s and on 8 B200s give it back (a grid value) with kappa 1 in both
// architectures' groups; made without it, the fit finds none.
TEST(Fitter, P2pPipelineRateIsRecoveredAcrossArchitectures) {
  const Predictor p(RACKSIM_TOPOLOGY_DIR, unused_collective_model, "analytic");
  auto sweeps = [&](double rate_GBps) {
    Calibration made;
    made.name = "truth";
    made.algorithms["all_to_all/direct"].p2p_pipeline_GBps = rate_GBps;
    // The NVLink figures the fit prices collectives at (NCCL's per-link bandwidth, fitter.cpp).
    made.arch_links["hopper"][LinkKind::nvlink] = LinkCalibration{0.824, 0.0, "test", {}};
    made.arch_links["blackwell"][LinkKind::nvlink] = LinkCalibration{0.802, 0.0, "test", {}};
    std::vector<Measurement> out;
    for (const auto& [system, n] : std::vector<std::pair<std::string, int>>{{"hgx-h100", 4}, {"hgx-h100", 8}, {"hgx-b200", 8}}) {
      const std::vector<Measurement> one = synthetic_sweep(p, system, 1, {n}, system, "direct", 1 << 20, 16.0 * (1 << 30), "high",
                                                           made, "auto", CollectiveOp::all_to_all);
      out.insert(out.end(), one.begin(), one.end());
    }
    return out;
  };
  FitOptions o;
  o.held_out = false;
  const FitResult r = fit_calibration(sweeps(80), p, o);
  for (const std::string arch : {"hopper", "blackwell"}) {
    const AlgorithmCalibration& a = r.calibration.arch_algorithms.at(arch).at("all_to_all/direct");
    EXPECT_DOUBLE_EQ(a.p2p_pipeline_GBps, 80) << arch;
    EXPECT_NEAR(a.bandwidth_efficiency, 1.0, 0.01) << arch;
    EXPECT_LT(a.fit.worst_abs_error, 0.01) << arch;
  }
  const FitResult none = fit_calibration(sweeps(0), p, o);
  EXPECT_DOUBLE_EQ(none.calibration.arch_algorithms.at("hopper").at("all_to_all/direct").p2p_pipeline_GBps, 0);
}

TEST(Fitter, ScaleOutLatencyIsPulledTowardNcclsOwnWithTheWeightOfOneSeries) {
  const Predictor p(RACKSIM_TOPOLOGY_DIR, unused_collective_model, "analytic");
  FitOptions o;
  o.held_out = false;
  // Rings over 2-4 HGX H100 boxes made with 100 us of extra latency across nodes (12 us inside one box).
  Calibration made = truth(1.0);
  made.arch_algorithms["hopper"]["all_reduce/ring"].scale_out_launch_us_per_8_gpus = 100;
  auto sweep = [&](int racks) {
    return synthetic_sweep(p, "hgx-h100", racks, {8 * racks}, "cluster " + std::to_string(racks), "ring", 65536, 1 << 30,
                           "high", made);
  };
  auto L_out = [&](const std::vector<int>& racks) {
    std::vector<Measurement> data = ring_sweep(p, "hgx-h100", 1, {8}, "one box", 1 << 30, "high", 1.0);
    for (int r : racks) {
      const auto v = sweep(r);
      data.insert(data.end(), v.begin(), v.end());
    }
    const FitResult fit = fit_calibration(data, p, o);
    return fit.calibration.arch_algorithms.at("hopper").at("all_reduce/ring").scale_out_launch_us_per_8_gpus;
  };
  // One multi-node series is matched about halfway to NCCL's own latency (extra 0); three agreeing series
  // move it most of the way to the 100 us they show, never past it.
  const double one = L_out({2}), three = L_out({2, 3, 4});
  EXPECT_GT(one, 30);
  EXPECT_LT(one, 70);
  EXPECT_GT(three, one);
  EXPECT_GT(three, 65);
  EXPECT_LE(three, 100.5);
}

TEST(Fitter, AssumedNicsAreFittedOnlyWhereLatencyIsAlmostAllTheTime) {
  const Predictor p(RACKSIM_TOPOLOGY_DIR, unused_collective_model, "analytic");
  // Two HGX H100 boxes whose NICs the source does not state, made with 100 us of extra latency across nodes
  // and a quarter of the bandwidth: only the sizes whose model time is almost all latency may be fitted
  // (kAssumedNicsMaxBandwidthShare), which the NICs' count cannot change.
  Calibration made = truth(0.25);
  made.arch_algorithms["hopper"]["all_reduce/ring"].scale_out_launch_us_per_8_gpus = 100;
  std::vector<Measurement> data = synthetic_sweep(p, "hgx-h100", 2, {16}, "cluster", "ring", 64, 4.0 * (1 << 30), "high", made);
  int latency_bound = 0;
  for (auto& m : data) {
    m.nics_assumed = true;
    CollectiveRequest r;
    r.op = m.op;
    r.algorithm = m.algorithm;
    r.gpus = m.gpus;
    r.bytes = static_cast<std::uint64_t>(m.bytes);
    const AnalyticEstimate e = analytic_collective(p.graph("hgx-h100", 2), r, Calibration{});
    const bool fitted = e.bandwidth_s < kAssumedNicsMaxBandwidthShare * e.time_s;
    latency_bound += fitted ? 1 : 0;
    EXPECT_EQ(collective_point_fitted(m, p, Calibration{}), fitted) << m.bytes;
  }
  EXPECT_GT(latency_bound, 2);
  EXPECT_LT(latency_bound, static_cast<int>(data.size()) - 4);
  EXPECT_EQ(collective_points(data, p, Calibration{}).size(), static_cast<std::size_t>(latency_bound));
  // The one-box sweep (NICs known) fixes kappa at the physics; the assumed-NIC sizes add the latency across
  // nodes and leave kappa alone, though their large sizes ran at a quarter of the bandwidth.
  std::vector<Measurement> all = ring_sweep(p, "hgx-h100", 1, {8}, "one box", 1 << 30, "high", 1.0);
  all.insert(all.end(), data.begin(), data.end());
  FitOptions o;
  o.held_out = false;
  const FitResult fit = fit_calibration(all, p, o);
  const AlgorithmCalibration& a = fit.calibration.arch_algorithms.at("hopper").at("all_reduce/ring");
  EXPECT_NEAR(a.bandwidth_efficiency, 1.0, 5e-3);  // not 0.25
  EXPECT_GT(a.scale_out_launch_us_per_8_gpus, 30);
  EXPECT_EQ(a.fit.points, 8 + latency_bound);  // 64 KiB .. 1 GiB by 4x in the box
}

TEST(Fitter, TreeLatencyAcrossNodesScalesWithItsHops) {
  // NCCL's tree latency counts 2 x ((ranks per node - 1) + log2(nodes)) hops (tuning.cc:382-385).
  EXPECT_EQ(tree_latency_hops(128, 2), 128);   // two NVL72 racks of 64: the chain through 64 GPUs, each way
  EXPECT_EQ(tree_latency_hops(16, 2), 16);     // two 8-GPU nodes
  EXPECT_EQ(tree_latency_hops(1440, 20), 150); // 20 racks of 72: 71 + floor(log2 20) = 75, each way
  EXPECT_TRUE(hop_scaled_launch("all_reduce/tree"));
  EXPECT_FALSE(hop_scaled_launch("all_reduce/ring"));
  // Every other algorithm's launch across domains counts the GPUs per domain in 8s, at least one: two 64-GPU
  // racks 8 units, two 8-GPU nodes 1, two 4-GPU trays 1 (not less: an HGX node's worth is the least).
  EXPECT_DOUBLE_EQ(scale_out_launch_units("all_reduce/nvls_tree", 128, 2), 8.0);
  EXPECT_DOUBLE_EQ(scale_out_launch_units("all_to_all/direct", 1440, 20), 9.0);
  EXPECT_DOUBLE_EQ(scale_out_launch_units("all_reduce/nvls_tree", 16, 2), 1.0);
  EXPECT_DOUBLE_EQ(scale_out_launch_units("all_gather/ring", 8, 2), 1.0);
  EXPECT_DOUBLE_EQ(scale_out_launch_units("all_reduce/tree", 128, 2), 128.0);
  AlgorithmCalibration per8;
  per8.launch_overhead_us = 6;
  per8.scale_out_launch_us_per_8_gpus = 42.5;
  EXPECT_DOUBLE_EQ(per8.launch_us(true, scale_out_launch_units("all_reduce/nvls_tree", 128, 2)), 340.0);
  EXPECT_DOUBLE_EQ(per8.launch_us(true, scale_out_launch_units("all_reduce/nvls_tree", 16, 2)), 42.5);
  EXPECT_DOUBLE_EQ(per8.launch_us(false, 8), 6.0);
  const Predictor p(RACKSIM_TOPOLOGY_DIR, unused_collective_model, "analytic");
  // Trees over two HGX H100 boxes with 2, 4 and 8 GPUs each (hops 4, 8, 16), made with 3 us per hop across
  // nodes: one per-hop figure explains all three, which one constant launch could not.
  Calibration made = truth(1.0);
  AlgorithmCalibration tree;
  tree.scale_out_hop_overhead_us = 3;
  made.arch_algorithms["hopper"]["all_reduce/tree"] = tree;
  std::vector<Measurement> data;
  for (int per_node : {2, 4, 8})
    for (double bytes = 64; bytes <= 64.0 * (1 << 20); bytes *= 8) {
      Measurement m;
      m.id = "tree" + std::to_string(data.size());
      m.series = "two boxes, " + std::to_string(per_node) + " GPUs each";
      m.measured_on = m.series;
      m.system = "hgx-h100";
      m.racks = 2;
      m.op = CollectiveOp::all_reduce;
      m.algorithm = "tree";
      for (int node = 0; node < 2; ++node)
        for (int g = 0; g < per_node; ++g) m.gpus.push_back(node * 8 + g);
      m.bytes = bytes;
      m.confidence = "high";
      m.source = "synthetic";
      CollectiveRequest r;
      r.op = m.op;
      r.algorithm = m.algorithm;
      r.gpus = m.gpus;
      r.bytes = static_cast<std::uint64_t>(bytes);
      m.time_s = analytic_collective(p.graph("hgx-h100", 2), r, made).time_s;
      data.push_back(m);
    }
  FitOptions o;
  o.held_out = false;
  const FitResult fit = fit_calibration(data, p, o);
  const AlgorithmCalibration& a = fit.calibration.arch_algorithms.at("hopper").at("all_reduce/tree");
  EXPECT_LT(a.scale_out_launch_us_per_8_gpus, 0);  // a tree's launch across nodes is per hop
  EXPECT_GT(a.scale_out_hop_overhead_us, 2.0);   // pulled toward 0 by the prior, as any launch across domains
  EXPECT_LE(a.scale_out_hop_overhead_us, 3.01);
  // The engine's and the closed form's time take it per hop: the 16-hop run pays 4x the 4-hop run's extra.
  Calibration only_hops;
  only_hops.arch_algorithms["hopper"]["all_reduce/tree"] = tree;
  auto extra_us = [&](int per_node) {
    CollectiveRequest r;
    r.op = CollectiveOp::all_reduce;
    r.algorithm = "tree";
    for (int node = 0; node < 2; ++node)
      for (int g = 0; g < per_node; ++g) r.gpus.push_back(node * 8 + g);
    r.bytes = 64;
    return 1e6 * (analytic_collective(p.graph("hgx-h100", 2), r, only_hops).time_s -
                  analytic_collective(p.graph("hgx-h100", 2), r, Calibration{}).time_s);
  };
  EXPECT_NEAR(extra_us(2), 3 * 4, 1e-6);
  EXPECT_NEAR(extra_us(8), 3 * 16, 1e-6);
}

TEST(Fitter, NvlsRampIsRecoveredFromASweepThroughIt) {
  const Predictor p(RACKSIM_TOPOLOGY_DIR, unused_collective_model, "analytic");
  // NVLS on 8 H100s made with a ramp of 2 MB per GPU (S_k = 16 MB: the first 16 MB at half the bandwidth),
  // kappa 1 and 5 us of launch; sizes 1 MiB .. 4 GiB by 4x.
  Calibration made;
  AlgorithmCalibration a;
  a.launch_overhead_us = 5;
  a.ramp_bytes_per_gpu = 2e6;
  a.source = "test";
  made.arch_algorithms["hopper"]["all_reduce/nvls"] = a;
  made.arch_links["hopper"][LinkKind::nvlink] = LinkCalibration{0.824, 0.0, "test", {}};
  const std::vector<Measurement> data =
      synthetic_sweep(p, "hgx-h100", 1, {8}, "machine A", "nvls", 1 << 20, 4.0 * (1 << 30), "high", made);
  FitOptions o;
  o.held_out = false;
  const FitResult r = fit_calibration(data, p, o);
  const AlgorithmCalibration& fit = r.calibration.arch_algorithms.at("hopper").at("all_reduce/nvls");
  EXPECT_DOUBLE_EQ(fit.ramp_bytes_per_gpu, 2e6);
  EXPECT_NEAR(fit.bandwidth_efficiency, 1.0, 1e-3);
  EXPECT_NEAR(fit.launch_overhead_us, 5, 0.05);
  // The ramp as the engine and the closed form apply it: half the bandwidth for the first 16 MB.
  EXPECT_NEAR(fit.efficiency_at(16e6, 8), fit.bandwidth_efficiency * 32e6 / 48e6, 1e-12);
  // Rings have no ramp to fit: their data never gets one.
  EXPECT_EQ(fit_calibration(ring_sweep(p, "hgx-h100", 1, {8}, "machine A"), p, o)
                .calibration.arch_algorithms.at("hopper").at("all_reduce/ring").ramp_bytes_per_gpu, 0.0);
}

// The scale of NVLS's ramp: d x sqrt(d / 8) for d GPUs of one domain (one law for 8 Hopper GPUs and a
// 72-GPU Blackwell rack); for NVLS-tree times the pipeline's stages, 1 + floor(log2 domains) (the two-rack
// GB200 series ramp twice as long as one rack's).
TEST(Fitter, NvlsTreeRampGrowsWithTheLevelsOfItsTreeAcrossDomains) {
  const Predictor p(RACKSIM_TOPOLOGY_DIR, unused_collective_model, "analytic");
  auto ramp_of = [&](int racks, int per_rack) {
    CollectiveRequest r;
    r.op = CollectiveOp::all_reduce;
    for (int k = 0; k < racks; ++k)
      for (int g = 0; g < per_rack; ++g) r.gpus.push_back(k * 72 + g);
    return ramp_gpus(p.graph("gb200-nvl72", racks), r);
  };
  EXPECT_DOUBLE_EQ(ramp_of(1, 8), 8);                    // an HGX board's 8: the reference
  EXPECT_DOUBLE_EQ(ramp_of(1, 72), 72 * 3);              // 72 x sqrt(72 / 8)
  EXPECT_DOUBLE_EQ(ramp_of(2, 64), 64 * std::sqrt(8.0) * 2);
  EXPECT_DOUBLE_EQ(ramp_of(4, 72), 72 * 3 * 3);
  EXPECT_DOUBLE_EQ(ramp_of(8, 72), 72 * 3 * 4);
  EXPECT_DOUBLE_EQ(ramp_of(20, 72), 72 * 3 * 5);
}

TEST(Fitter, OneMessageSizeCannotSeparateLaunchFromKappaAndSaysSo) {
  const Predictor p(RACKSIM_TOPOLOGY_DIR, unused_collective_model, "analytic");
  std::vector<Measurement> data = ring_sweep(p, "hgx-h100", 1, {8}, "machine A");
  data.erase(std::remove_if(data.begin(), data.end(), [](const Measurement& m) { return m.bytes != 16.0 * (1 << 20); }),
             data.end());
  ASSERT_EQ(data.size(), 1u);
  FitOptions o;
  o.held_out = false;
  const FitResult r = fit_calibration(data, p, o);
  const ParameterFit* f = nullptr;
  for (const auto& x : r.fits)
    if (x.key == "hopper:all_reduce/ring") f = &x;
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->fixed_parameters,
            (std::vector<std::string>{"launch_overhead_us = 0: one message size, or no point is mostly latency"}));
  // kappa alone absorbs the 12 us (pulled toward 1 by its prior): below 1, and L stays 0.
  const AlgorithmCalibration& a = r.calibration.arch_algorithms.at("hopper").at("all_reduce/ring");
  EXPECT_DOUBLE_EQ(a.launch_overhead_us, 0);
  EXPECT_LT(a.bandwidth_efficiency, 1.0);
  EXPECT_NE(a.source.find("fixed at 0 (one message size"), std::string::npos) << a.source;
}

// The in-domain launch is the GPU's and NCCL's, shared by an architecture's algorithms: a group whose own
// data cannot determine it (one message size) takes the median of the architecture's fitted groups, and an
// algorithm another architecture has no data for borrows the bandwidth terms but keeps its own launch.
TEST(Fitter, UndeterminedLaunchIsTheArchitecturesPooledValueAndBorrowingKeepsIt) {
  const Predictor p(RACKSIM_TOPOLOGY_DIR, unused_collective_model, "analytic");
  std::vector<Measurement> data = ring_sweep(p, "hgx-h100", 1, {4, 8}, "machine A", 4.0 * (1 << 30), "high", 1.0);
  std::vector<Measurement> tree = synthetic_sweep(p, "hgx-h100", 1, {8}, "machine A", "tree", 1 << 30, 1 << 30, "high", truth(1.0));
  ASSERT_EQ(tree.size(), 1u);
  Calibration blackwell_truth = truth(1.0);
  blackwell_truth.arch_algorithms["blackwell"]["all_reduce/ring"] = blackwell_truth.arch_algorithms.at("hopper").at("all_reduce/ring");
  blackwell_truth.arch_algorithms["blackwell"]["all_reduce/ring"].launch_overhead_us = 30;
  const std::vector<Measurement> b200 = synthetic_sweep(p, "hgx-b200", 1, {4, 8}, "machine B", "ring", 65536, 4.0 * (1 << 30),
                                                        "high", blackwell_truth);
  data.insert(data.end(), tree.begin(), tree.end());
  data.insert(data.end(), b200.begin(), b200.end());
  FitOptions o;
  o.held_out = false;
  const FitResult r = fit_calibration(data, p, o);
  const auto& hopper = r.calibration.arch_algorithms.at("hopper");
  const auto& blackwell = r.calibration.arch_algorithms.at("blackwell");
  EXPECT_NEAR(hopper.at("all_reduce/ring").launch_overhead_us, 12, 1e-2);
  EXPECT_NEAR(blackwell.at("all_reduce/ring").launch_overhead_us, 30, 1e-1);
  // Hopper's tree: one size, L not determinable: Hopper's pooled 12 us, not 0 and not Blackwell's 30.
  EXPECT_NEAR(hopper.at("all_reduce/tree").launch_overhead_us, 12, 1e-2);
  EXPECT_NE(hopper.at("all_reduce/tree").source.find("median of this architecture's fitted groups"), std::string::npos);
  // Blackwell has no tree data: Hopper's kappa with Blackwell's own launch, and the lookup says borrowed.
  const AlgorithmCalibration& borrowed_tree = blackwell.at("all_reduce/tree");
  EXPECT_EQ(borrowed_tree.borrowed_from, "hopper");
  EXPECT_NEAR(borrowed_tree.launch_overhead_us, 30, 1e-1);
  EXPECT_DOUBLE_EQ(borrowed_tree.bandwidth_efficiency, hopper.at("all_reduce/tree").bandwidth_efficiency);
  EXPECT_EQ(borrowed_tree.fit.points, 0);
  // No launch across domains is borrowed: another architecture's cluster set it; NCCL's NET terms stand.
  EXPECT_LT(borrowed_tree.scale_out_launch_us_per_8_gpus, 0);
  EXPECT_LT(borrowed_tree.scale_out_hop_overhead_us, 0);
  EXPECT_DOUBLE_EQ(borrowed_tree.launch_us(true, 6), borrowed_tree.launch_overhead_us);  // across domains as inside
  std::string from;
  r.calibration.algorithm("all_reduce/tree", "blackwell", &from);
  EXPECT_EQ(from, "hopper");
  from.clear();
  r.calibration.algorithm("all_reduce/ring", "blackwell", &from);
  EXPECT_TRUE(from.empty());
  // It survives the file: written, read back, the same bytes.
  const std::string text = calibration_to_json_text(r.calibration);
  EXPECT_EQ(calibration_to_json_text(calibration_from_json_text(text, "again")), text);
}

TEST(Fitter, SmallMessagesAloneFitTheLaunchNotTheBandwidthEfficiency) {
  // 64 and 256 KiB on 8 H100s: NCCL's latencies are most of the time, so the data cannot tell kappa; it
  // stays 1 (the physical model) and the 12 us of launch are found within what kappa's 0.9 hides.
  const Predictor p(RACKSIM_TOPOLOGY_DIR, unused_collective_model, "analytic");
  const std::vector<Measurement> data = ring_sweep(p, "hgx-h100", 1, {8}, "machine A", 262144.0);
  ASSERT_EQ(data.size(), 2u);
  FitOptions o;
  o.held_out = false;
  const FitResult r = fit_calibration(data, p, o);
  const AlgorithmCalibration& a = r.calibration.arch_algorithms.at("hopper").at("all_reduce/ring");
  EXPECT_DOUBLE_EQ(a.bandwidth_efficiency, 1.0);
  EXPECT_NEAR(a.launch_overhead_us, 12, 1.5);
  EXPECT_NE(a.source.find("bandwidth_efficiency fixed at 1"), std::string::npos) << a.source;
}

TEST(Fitter, LinkFitRecoversEfficiencyAndExtraLatencyFromACopySweep) {
  const Predictor p(RACKSIM_TOPOLOGY_DIR, unused_collective_model, "analytic");
  std::vector<Measurement> data;
  const double timer = 2e-6;
  for (double s = 4096; s <= 1073741824.0; s *= 2) {
    Measurement m;
    m.id = "copy" + std::to_string(data.size());
    m.series = "h2d pinned";
    m.kind = MeasurementKind::transfer;
    m.system = "h200-pcie";
    m.measured_on = "probe machine";
    m.src = "cpu0";
    m.dst = "gpu0";
    m.engine = "copy";
    m.bytes = s;
    m.confidence = "measured";
    m.timer_floor_s = timer;
    // Nominal route: one PCIe Gen5 x16 hop, 0.5 us, 63 GB/s (topologies/h200-pcie.json).
    m.time_s = timer + 0.5e-6 + 1.5e-6 + s / (63e9 * 0.85);
    data.push_back(m);
  }
  const FitResult r = fit_calibration(data, p, FitOptions{});
  const LinkCalibration& l = r.calibration.links.at(LinkKind::pcie);
  EXPECT_DOUBLE_EQ(l.bandwidth_efficiency, 0.85);  // exact data, 4 significant digits kept
  EXPECT_DOUBLE_EQ(l.extra_latency_us, 1.5);
  EXPECT_EQ(l.fit.points, 19);
  EXPECT_LT(l.fit.worst_abs_error, 1e-3);
  // Kinds without data stay identity, and say so.
  EXPECT_DOUBLE_EQ(r.calibration.links.at(LinkKind::c2c).bandwidth_efficiency, 1.0);
  EXPECT_NE(r.calibration.links.at(LinkKind::c2c).source.find("not fitted"), std::string::npos);
}

TEST(Fitter, NvlinkCopiesValidateButCollectivesUseNcclsOwnNvlinkBandwidth) {
  // Copy-engine P2P (cudaMemcpyPeer) over GPU -> NVSwitch -> GPU reaches more than the SM loops NCCL
  // runs: the collectives' NVLink is NCCL's per-link figure per architecture (topo.h:19-21), and the
  // copies are listed as validation only.
  const Predictor p(RACKSIM_TOPOLOGY_DIR, unused_collective_model, "analytic");
  std::vector<Measurement> data;
  for (double s = 4096; s <= 268435456.0; s *= 4) {
    Measurement m;
    m.id = "p2p" + std::to_string(data.size());
    m.series = "p2p unidirectional gpu0->gpu1";
    m.kind = MeasurementKind::transfer;
    m.system = "hgx-h200";
    m.measured_on = "probe machine";
    m.src = "gpu0";
    m.dst = "gpu1";
    m.engine = "copy";
    m.bytes = s;
    m.confidence = "measured";
    m.time_s = 2.9e-6 + 0.47e-6 + s / (450e9 * 0.87);
    data.push_back(m);
  }
  const FitResult r = fit_calibration(data, p, FitOptions{});
  EXPECT_DOUBLE_EQ(r.calibration.arch_links.at("hopper").at(LinkKind::nvlink).bandwidth_efficiency, 0.824);  // 20.6 / 25
  EXPECT_DOUBLE_EQ(r.calibration.arch_links.at("blackwell").at(LinkKind::nvlink).bandwidth_efficiency, 0.802);  // 40.1 / 50
  bool listed = false;
  for (const auto& i : r.ignored) listed = listed || (i.find("p2p unidirectional") != std::string::npos &&
                                                      i.find("validate the route") != std::string::npos);
  EXPECT_TRUE(listed);
}

TEST(Fitter, HeldOutSystemIsPredictedFromTheOthers) {
  const Predictor p(RACKSIM_TOPOLOGY_DIR, unused_collective_model, "analytic");
  // Two Hopper systems made with the same truth: each is predicted from the other.
  std::vector<Measurement> data = ring_sweep(p, "hgx-h100", 1, {8}, "machine A", 4.0 * (1 << 30), "high", 1.0);
  for (auto& m : ring_sweep(p, "hgx-h200", 1, {8}, "machine B", 4.0 * (1 << 30), "high", 1.0)) data.push_back(m);
  // Low-confidence records are never fitted to (nor held out).
  auto extra = ring_sweep(p, "hgx-h100", 2, {16}, "machine C", 4.0 * (1 << 30), "low");
  for (auto& m : extra) m.time_s *= 2;  // would wreck the fit if used
  data.insert(data.end(), extra.begin(), extra.end());
  const FitResult r = fit_calibration(data, p, FitOptions{});
  EXPECT_NEAR(r.calibration.arch_algorithms.at("hopper").at("all_reduce/ring").launch_overhead_us, 12, 1e-2);
  ASSERT_EQ(r.cross_validation.size(), 2u);
  const CrossValidation& by_system = r.cross_validation[0];
  EXPECT_EQ(by_system.by, "system");
  ASSERT_EQ(by_system.folds.size(), 2u);  // hgx-h100 and hgx-h200; machine C is not training data
  for (const auto& f : by_system.folds) {
    EXPECT_EQ(f.points, 9) << f.fold;
    EXPECT_LT(std::max(f.worst_small, f.worst_large), 1e-3) << f.fold;
  }
  bool c_ignored = false;
  for (const auto& s : r.ignored) c_ignored = c_ignored || s.find("machine C") != std::string::npos;
  EXPECT_TRUE(c_ignored);
}

TEST(Fitter, CalibrationWithFitSummaryRoundTripsThroughTheLoader) {
  const Predictor p(RACKSIM_TOPOLOGY_DIR, unused_collective_model, "analytic");
  FitOptions o;
  o.name = "round-trip";
  const FitResult r = fit_calibration(ring_sweep(p, "hgx-h100", 1, {2, 8}, "machine A"), p, o);
  const std::string text = calibration_to_json_text(r.calibration);
  const Calibration back = calibration_from_json_text(text, "round-trip.json");
  EXPECT_EQ(calibration_to_json_text(back), text);
  const AlgorithmCalibration& a = back.arch_algorithms.at("hopper").at("all_reduce/ring");
  EXPECT_EQ(a.fit.points, 18);
  EXPECT_EQ(a.fit.data, (std::vector<std::string>{"synthetic machine A"}));
  // An algorithm never measured has no entry: a Blackwell lookup borrows Hopper's ring, and says so.
  std::string borrowed;
  const AlgorithmCalibration& b = back.algorithm("all_reduce/ring", "blackwell", &borrowed);
  EXPECT_EQ(borrowed, "hopper");
  EXPECT_DOUBLE_EQ(b.bandwidth_efficiency, a.bandwidth_efficiency);
}

// A verbs queue pair's share of its NIC's line rate (AlgorithmCalibration::qp_line_fraction): a node's NICs carry
// at most channels x queue pairs x that share each way. NVLS-tree over 8 H100 nodes carries 2 S a node each way on
// 16 channels: 8 GiB at 0.4 of a 400G NIC (20 GB/s) a queue pair takes 2 x 8 GiB / 16 / 20 GB/s, above the NICs' own time; on 24 channels (NCCL_MIN_CTAS=24) or
// two queue pairs the NICs bind instead; two nodes (S each way) and a B200 node's 32 NVLS channels stay below
// it; a ring all-gather over 10 nodes carries (n - 1) / n of its buffer a node each way on its 16 channels; an EFA
// system (its plugin's rate is not measured) has none.
TEST(Fitter, VerbsQueuePairsFloorNetworkRuns) {
  const Predictor p(RACKSIM_TOPOLOGY_DIR, unused_collective_model, "analytic");
  Calibration with;
  with.name = "qp";
  for (const char* arch : {"hopper", "blackwell"})
    for (const char* key : {"all_reduce/nvls_tree", "all_gather/ring"}) with.arch_algorithms[arch][key].qp_line_fraction = 0.4;  // 20 GB/s of a 400G NIC's 50
  auto run = [&](const std::string& system, CollectiveOp op, const std::string& algo, int gpus, int nodes, int channels, int qps,
                 const Calibration& c) {
    CollectiveRequest r;
    r.op = op;
    r.algorithm = algo;
    r.channels = channels;
    r.ib_qps_per_connection = qps;
    for (int g = 0; g < gpus; ++g) r.gpus.push_back(g);
    r.bytes = 8ull << 30;
    return analytic_collective(p.graph(system, nodes), r, c);
  };
  const double S = 8.0 * (1ull << 30);
  auto tree = [&](const std::string& system, int gpus, int channels, int qps, const Calibration& c) {
    return run(system, CollectiveOp::all_reduce, "nvls_tree", gpus, gpus / 8, channels, qps, c);
  };
  const AnalyticEstimate h64 = tree("hgx-h100", 64, 0, 0, with);
  EXPECT_DOUBLE_EQ(h64.qp_connection_bytes, 2 * S / 16);
  EXPECT_NEAR(h64.bandwidth_s, 2 * S / 16 / 20e9, 1e-9);
  EXPECT_DOUBLE_EQ(h64.qp_line_s, 2 * S / 16 / 50e9);
  EXPECT_GT(h64.bandwidth_s, tree("hgx-h100", 64, 0, 0, Calibration::none()).bandwidth_s * 1.1);
  EXPECT_DOUBLE_EQ(tree("hgx-h100", 64, 24, 0, with).qp_connection_bytes, 2 * S / 24);
  EXPECT_DOUBLE_EQ(tree("hgx-h100", 64, 24, 0, with).bandwidth_s, tree("hgx-h100", 64, 24, 0, Calibration::none()).bandwidth_s);
  EXPECT_DOUBLE_EQ(tree("hgx-h100", 64, 0, 2, with).qp_connection_bytes, 2 * S / 32);
  EXPECT_DOUBLE_EQ(tree("hgx-h100", 64, 0, 2, with).bandwidth_s, tree("hgx-h100", 64, 0, 2, Calibration::none()).bandwidth_s);
  EXPECT_DOUBLE_EQ(tree("hgx-h100", 16, 0, 0, with).qp_connection_bytes, S / 16);
  EXPECT_DOUBLE_EQ(tree("hgx-h100", 16, 0, 0, with).bandwidth_s, tree("hgx-h100", 16, 0, 0, Calibration::none()).bandwidth_s);
  EXPECT_DOUBLE_EQ(tree("hgx-b200", 64, 0, 0, with).qp_connection_bytes, 2 * S / 32);
  EXPECT_DOUBLE_EQ(tree("hgx-b200", 64, 0, 0, with).bandwidth_s, tree("hgx-b200", 64, 0, 0, Calibration::none()).bandwidth_s);
  const AnalyticEstimate ring = run("hgx-h100", CollectiveOp::all_gather, "ring", 80, 10, 0, 0, with);
  EXPECT_DOUBLE_EQ(ring.qp_connection_bytes, 79.0 / 80 * S / 16);
  EXPECT_NEAR(ring.bandwidth_s, 79.0 / 80 * S / 16 / 20e9, 1e-9);
  const AnalyticEstimate efa = tree("aws-p5en", 64, 0, 0, with);
  EXPECT_DOUBLE_EQ(efa.qp_connection_bytes, 0);
  EXPECT_DOUBLE_EQ(efa.bandwidth_s, tree("aws-p5en", 64, 0, 0, Calibration::none()).bandwidth_s);
}

// The fit gives the share back (a grid value) from NVLS-tree sweeps over 2, 4 and 8 H100 nodes made with it, and
// finds none in sweeps made without it.
TEST(Fitter, VerbsQueuePairRateIsRecoveredFromSweepsMadeWithIt) {
  const Predictor p(RACKSIM_TOPOLOGY_DIR, unused_collective_model, "analytic");
  auto sweeps = [&](double fraction) {
    Calibration made;
    made.name = "truth";
    made.arch_algorithms["hopper"]["all_reduce/nvls_tree"].qp_line_fraction = fraction;
    // The NVLink and NIC figures the fit prices collectives at (fitter.cpp: NCCL's per-link NVLink bandwidth,
    // NVIDIA's 48.5 GB/s of a CX-7's 50).
    made.arch_links["hopper"][LinkKind::nvlink] = LinkCalibration{0.824, 0.0, "test", {}};
    made.links[LinkKind::nic] = LinkCalibration{0.97, 0.0, "test", {}};
    return synthetic_sweep(p, "hgx-h100", 8, {16, 32, 64}, "H100 nodes", "nvls_tree", 64.0 * (1 << 20), 16.0 * (1 << 30),
                           "high", made);
  };
  FitOptions o;
  o.held_out = false;
  const FitResult r = fit_calibration(sweeps(0.3979), p, o);
  const AlgorithmCalibration& a = r.calibration.arch_algorithms.at("hopper").at("all_reduce/nvls_tree");
  EXPECT_DOUBLE_EQ(a.qp_line_fraction, 0.3979);
  EXPECT_NEAR(a.bandwidth_efficiency, 1.0, 0.01);
  EXPECT_LT(a.fit.worst_abs_error, 0.01);
  const FitResult none = fit_calibration(sweeps(0), p, o);
  EXPECT_DOUBLE_EQ(none.calibration.arch_algorithms.at("hopper").at("all_reduce/nvls_tree").qp_line_fraction, 0);
}

// A ring loop's local copy (calibration.hpp ring_copy_GBps): inside one NVLink domain a ring of n ranks whose
// steps move B on its links runs at s / (s + B / copy rate) of them, s = n - 1 sending steps for all-gather and
// reduce-scatter, 2 (n - 1) for all-reduce; a faster NVLink (B200's) loses more to the same copy; across domains
// (the NICs set the pace) and for other algorithms nothing changes.
TEST(Fitter, RingCopySlowsRingsInOneDomainByTheirSendingStepsAndLinkRate) {
  const Predictor p(RACKSIM_TOPOLOGY_DIR, unused_collective_model, "analytic");
  constexpr double kCopyGBps = 1500;
  Calibration with;
  with.name = "copy";
  for (const char* arch : {"hopper", "blackwell"})
    for (const char* key : {"all_gather/ring", "all_reduce/ring", "reduce_scatter/ring", "all_reduce/tree"})
      with.arch_algorithms[arch][key].ring_copy_GBps = kCopyGBps;
  const double S = 1ull << 30;
  auto run = [&](const std::string& system, CollectiveOp op, const std::string& algo, int gpus, int nodes, const Calibration& c) {
    CollectiveRequest r;
    r.op = op;
    r.algorithm = algo;
    for (int g = 0; g < gpus; ++g) r.gpus.push_back(g);
    r.bytes = static_cast<std::uint64_t>(S);
    return analytic_collective(p.graph(system, nodes), r, c).bandwidth_s;
  };
  const Calibration none = Calibration::none();
  auto expected = [&](const std::string& system, CollectiveOp op, int n) {
    const std::string key = std::string(to_string(op)) + "/ring";
    const int s = ring_sending_steps(key, n);
    const double links_Bps = ring_links_Bps(S, s, n, run(system, op, "ring", n, 1, none));
    return (s + links_Bps / (kCopyGBps * 1e9)) / s;
  };
  for (const char* system : {"hgx-h100", "hgx-b200"})
    for (CollectiveOp op : {CollectiveOp::all_gather, CollectiveOp::reduce_scatter, CollectiveOp::all_reduce})
      for (int n : {2, 4, 8})
        EXPECT_NEAR(run(system, op, "ring", n, 1, with) / run(system, op, "ring", n, 1, none), expected(system, op, n), 1e-9)
            << system << " " << to_string(op) << " " << n;
  EXPECT_GT(expected("hgx-b200", CollectiveOp::all_gather, 2), expected("hgx-h100", CollectiveOp::all_gather, 2) + 0.1);
  EXPECT_GT(expected("hgx-h100", CollectiveOp::all_gather, 2), expected("hgx-h100", CollectiveOp::all_gather, 8));
  EXPECT_DOUBLE_EQ(run("hgx-h100", CollectiveOp::all_reduce, "tree", 8, 1, with), run("hgx-h100", CollectiveOp::all_reduce, "tree", 8, 1, none));
  EXPECT_DOUBLE_EQ(run("hgx-h100", CollectiveOp::all_gather, "ring", 16, 2, with), run("hgx-h100", CollectiveOp::all_gather, "ring", 16, 2, none));
  EXPECT_EQ(ring_sending_steps("all_reduce/ring", 8), 14);
  EXPECT_EQ(ring_sending_steps("all_gather/ring", 8), 7);
  EXPECT_EQ(ring_sending_steps("all_reduce/ring", 1), 0);
  EXPECT_EQ(ring_sending_steps("broadcast/ring", 8), 0);
}

// Rings of 2, 4 and 8 GPUs made with a loop's copy at 1 501 GB/s (a value of the fit's grid): the fit takes it
// back and leaves kappa at the physics; made without, it finds none.
TEST(Fitter, RingCopyRateIsRecoveredFromRingsOfSeveralSizes) {
  const Predictor p(RACKSIM_TOPOLOGY_DIR, unused_collective_model, "analytic");
  auto sweeps = [&](double copy_GBps) {
    Calibration made = truth(1.0);
    made.name = "truth";
    made.arch_algorithms["hopper"]["all_gather/ring"].ring_copy_GBps = copy_GBps;
    return synthetic_sweep(p, "hgx-h100", 1, {2, 4, 8}, "H100 node", "ring", 64.0 * (1 << 20), 16.0 * (1 << 30), "high",
                           made, "auto", CollectiveOp::all_gather);
  };
  FitOptions o;
  o.held_out = false;
  const FitResult r = fit_calibration(sweeps(1501), p, o);
  const AlgorithmCalibration& a = r.calibration.arch_algorithms.at("hopper").at("all_gather/ring");
  EXPECT_DOUBLE_EQ(a.ring_copy_GBps, 1501);
  EXPECT_NEAR(a.bandwidth_efficiency, 1.0, 0.01);
  EXPECT_LT(a.fit.worst_abs_error, 0.01);
  const FitResult none = fit_calibration(sweeps(0), p, o);
  EXPECT_DOUBLE_EQ(none.calibration.arch_algorithms.at("hopper").at("all_gather/ring").ring_copy_GBps, 0);
}

// NVLS inside one NVLink domain: the launch's part that grows with the domain's GPUs (session 44). Data made with
// 10 us + 3 us per 8 GPUs on 8 and 64 GPUs of a GB300 rack give both back; the same data on one GPU count
// cannot tell them apart, and the one in-domain figure takes it all (no part per 8 GPUs).
TEST(Fitter, NvlsLaunchPerEightGpusOfTheDomainIsRecoveredFromTwoGpuCounts) {
  const Predictor p(RACKSIM_TOPOLOGY_DIR, unused_collective_model, "analytic");
  Calibration made;
  made.name = "truth";
  made.arch_links["blackwell"][LinkKind::nvlink] = LinkCalibration{0.802, 0.0, "test", {}};
  AlgorithmCalibration nvls;
  nvls.launch_overhead_us = 10;
  nvls.launch_us_per_8_gpus = 3;
  nvls.source = "test";
  made.arch_algorithms["blackwell"]["all_reduce/nvls"] = nvls;
  FitOptions o;
  o.held_out = false;
  auto fitted = [&](const std::vector<int>& gpu_counts) {
    const std::vector<Measurement> data =
        synthetic_sweep(p, "gb300-nvl72", 1, gpu_counts, "machine N", "nvls", 65536, 1.0 * (1 << 30), "high", made);
    return fit_calibration(data, p, o).calibration.arch_algorithms.at("blackwell").at("all_reduce/nvls");
  };
  const AlgorithmCalibration two = fitted({8, 64});
  EXPECT_NEAR(two.launch_overhead_us, 10, 0.05);
  EXPECT_NEAR(two.launch_us_per_8_gpus, 3, 0.01);
  EXPECT_NEAR(two.launch_us(false, 1, 64), 10 + 3 * 8, 0.1);
  EXPECT_NE(two.source.find("launch_us_per_8_gpus"), std::string::npos);
  const AlgorithmCalibration one = fitted({64});
  EXPECT_DOUBLE_EQ(one.launch_us_per_8_gpus, 0);
  EXPECT_NEAR(one.launch_overhead_us, 10 + 3 * 8, 0.2);
  // The part per 8 GPUs is an in-domain term: across domains the launch is the figure across domains alone.
  AlgorithmCalibration across = two;
  across.scale_out_launch_us_per_8_gpus = 5;
  EXPECT_DOUBLE_EQ(across.launch_us(true, 2, 64), 10);
  EXPECT_DOUBLE_EQ(two.launch_us(false), two.launch_overhead_us);  // no GPU count given: the intercept alone
  // It survives the file: written, read back, the same bytes and the same entry.
  Calibration c;
  c.name = "again";
  c.arch_algorithms["blackwell"]["all_reduce/nvls"] = two;
  const std::string text = calibration_to_json_text(c);
  EXPECT_NE(text.find("\"launch_us_per_8_gpus\""), std::string::npos);
  const Calibration back = calibration_from_json_text(text, "again");
  EXPECT_DOUBLE_EQ(back.arch_algorithms.at("blackwell").at("all_reduce/nvls").launch_us_per_8_gpus, two.launch_us_per_8_gpus);
  EXPECT_EQ(calibration_to_json_text(back), text);
}
