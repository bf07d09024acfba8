#pragma once
#include <array>
// Fitting the collective model to measurements, and checking it on data the fit never saw.
//
// For every collective measurement the model runs what NCCL would (or what the source forced), so each
// point belongs to one group "architecture : op/algorithm" (hopper : all_reduce/nvls). The model's time
// splits into a part that scales with the capacities and a fixed part (NCCL's latencies, the pipeline's
// fill at the links' speed): t = L + latency + bandwidth / kappa. Per group, weighted least squares on
// relative error fits kappa (bandwidth_efficiency: measured against racksim's model of the links and
// NCCL's caps, so 1 when the physics explain the data) and L (launch_overhead_us, an extra fixed cost);
// A parameter is fitted only from points that can determine it: kappa from points whose model time is
// mostly bandwidth, L from points mostly latency (and more than one size); else kappa = 1, L = 0.
// Both are linear in (L, 1/kappa): no iteration.
//
// Held out: the same fit without one racksim system (leave-one-system-out), or without one GPU count,
// then the left-out points predicted; a group with no training data left borrows the same algorithm from
// the other architecture (as a calibration lookup does, with a warning in results), else stays at
// identity (racksim's physical model with NCCL's structure, unfitted).
#include <functional>
#include <string>
#include <vector>

#include "models/calibration/measurement.hpp"
#include "models/calibration/predictor.hpp"
#include "sim/calib/calibration.hpp"

namespace racksim::calibration {

struct CollectivePoint {
  const Measurement* m = nullptr;
  std::string arch, key;       // "hopper", "all_reduce/nvls" (the algorithm the model runs)
  std::string protocol;        // what the model runs
  double latency_s = 0;        // model time at identity algorithm calibration, minus bandwidth_s
  double bandwidth_s = 0;      // the part that scales with 1 / kappa
  // The part that does not: transfers across a NIC at the NIC's own rate (FlowTerms::kappa), where they bind.
  // At identity calibration bandwidth_s + bandwidth_exempt_s is the model's bandwidth time.
  double bandwidth_exempt_s = 0;
  // LL and LL128 across domains: the bandwidth time of its transfers across a NIC alone (the time if nothing
  // else bound), at identity calibration; where a protocol's network efficiency eta < 1 the bandwidth part is
  // at least network_bound_s / eta (ProtocolCalibration). Priced at eta 0.5; 0 where the NICs do not bind
  // even then.
  double network_bound_s = 0;
  int domains = 1;             // NVLink domains (NCCL nodes) the ranks span
  double ramp_gpus = 1;        // the scale of NVLS's ramp in GPUs (exec_terms.hpp ramp_gpus)
  // The unit of the launch across domains: NCCL's tree latency hops for hop-scaled algorithms
  // (calibration.hpp tree_latency_hops), else 1.
  double scale_out_units = 1;
  // Inside one NVLink domain: the run's GPUs there (the unit of the in-domain launch's part per 8 GPUs,
  // AlgorithmCalibration::launch_us_per_8_gpus); 0 across domains.
  int domain_gpus = 0;
  // all_to_all/direct in one NVLink domain: the bytes one of NCCL's p2p pipelines carries (exec_terms.hpp
  // p2p_pipeline_bytes), which the calibrated pipeline rate turns into time (AlgorithmCalibration::
  // p2p_pipeline_GBps); 0 else (across domains the NICs bind the all-to-all records, collective_points).
  double p2p_pipeline_bytes = 0;
  // Rings, trees and NVLS-trees across NVLink domains on verbs: the time of the bytes per queue pair of the
  // busiest node's network connections at the NIC's line rate (ExecTerms::qp_line_s), which the calibrated
  // fraction of the line rate a queue pair moves turns into a floor on the bandwidth part
  // (AlgorithmCalibration::qp_line_fraction); 0 else.
  double qp_line_s = 0;
  // Rings inside one NVLink domain: the sending steps of one loop (exec_terms.hpp ring_sending_steps) and the
  // links' rate of a step (ring_links_Bps), which the calibrated rate of the loop's local copy turns into a rate
  // of s / (s + B / copy rate) (AlgorithmCalibration::ring_copy_GBps); 0 else.
  int ring_sending_steps = 0;
  double ring_links_Bps = 0;
};

// One point per collective measurement the analytic model can express (others are reported through
// `skipped`). `base`: the link calibration (algorithm entries are ignored: identity).
std::vector<CollectivePoint> collective_points(const std::vector<Measurement>& data, const Predictor& predictor,
                                               const Calibration& base, std::vector<SkippedRecord>* skipped = nullptr);

// A record whose NICs the source leaves unstated (Measurement::nics_assumed) is fitted only at points whose
// model time is almost all latency: bandwidth below this share of it, where the NICs' count and speed change
// nothing. Elsewhere it is validation only.
inline constexpr double kAssumedNicsMaxBandwidthShare = 0.1;
// Whether the collective fit uses this measurement's point (false for records it never fits, and for a
// record with assumed NICs where bandwidth matters). `base`: the link calibration, as collective_points.
bool collective_point_fitted(const Measurement& m, const Predictor& predictor, const Calibration& base);

// How a fit met its own points, and where they came from (GroupFit, ProtocolFit).
struct FitQuality {
  int points = 0;
  double median_abs_error = 0, worst_abs_error = 0, rms_log_residual = 0;
  std::vector<std::string> series, sources;
};

struct GroupFit : FitQuality {
  std::string arch, key;
  double bandwidth_efficiency = 1, launch_overhead_us = 0;
  bool launch_fixed = false;   // one message size, or no point whose model time is mostly latency: L = 0
  bool launch_pooled = false;  // launch_fixed, and L is its architecture's pooled value (collective_fit.cpp)
  std::string borrowed_from;   // no data of its own: another architecture's fit with this one's pooled L
  bool kappa_fixed = false;    // no point whose model time is mostly bandwidth: kappa = 1
  double launch_us_per_8_gpus = 0;  // NVLS groups inside one domain: the launch's part per 8 GPUs (0: none, or not determinable)
  double scale_out_launch_us_per_8_gpus = -1;  // across NVLink domains; -1: not determinable, launch_overhead_us
  bool scale_out_launch_fitted = false;
  double scale_out_hop_overhead_us = -1;  // hop-scaled algorithms: the launch across domains per hop
  double ramp_bytes_per_gpu = 0;  // NVLS / NVLS-tree groups: the ramp's bytes per GPU (calibration.hpp)
  double p2p_pipeline_GBps = 0;   // all_to_all/direct: NCCL's p2p pipeline rate, one for all architectures
  double qp_line_fraction = 0;        // rings, trees, NVLS-trees: a verbs queue pair's rate, one for all architectures
  double ring_copy_GBps = 0;          // rings: the rate of a loop's local copy, one for all architectures
};

// A protocol's rate through the network per architecture (ProtocolCalibration): fitted on the points of that
// protocol across NVLink domains where its NICs can bind (network_bound_s > 0), by a search over the
// efficiency (0.30-1.00 in steps of 0.01) of the same weighted relative misfit as the groups', with a prior
// toward 1 (NCCL's own protocol model) of one series' weight. Simple is the NIC's reference (its link
// calibration) and is never fitted.
struct ProtocolFit : FitQuality {
  std::string arch, protocol;
  double network_efficiency = 1;
};

struct CollectiveFit {
  std::vector<GroupFit> groups;
  std::vector<ProtocolFit> protocols;
  double p2p_pipeline_GBps = 0;  // the groups' p2p pipeline rate (fit_collectives; 0: none fits better)
  double qp_line_fraction = 0;       // a verbs queue pair's rate, one for all architectures (fit_collectives; 0: none fits better)
  double ring_copy_GBps = 0;         // the rate of a ring loop's local copy (fit_collectives; 0: none fits better)
};

// The rates of a ring loop's local copy that fit_collectives tries (besides none): 300-20 000 GB/s, 5 % apart.
inline constexpr double kRingCopyGridMinGBps = 300, kRingCopyGridMaxGBps = 20000, kRingCopyGridStep = 1.05;
// The sizes whose misfit chooses it: a per-byte cost, judged where nothing else of a ring's time is left.
inline constexpr double kRingCopyVisibleBytes = 1024.0 * 1024 * 1024;

// The fractions of a NIC's line rate a verbs queue pair moves that fit_collectives tries (besides none): 0.15-1,
// about 3 % apart.
inline constexpr double kQpLineFractionGridMin = 0.15, kQpLineFractionGridMax = 1.0, kQpLineFractionGridStep = 1.03;

// The p2p pipeline rates fit_collectives tries, GB/s (besides none): 20-400, about 20 % apart.
inline constexpr std::array<double, 16> kP2pPipelineGridGBps = {20, 25, 30, 35, 40, 50, 60, 70, 80, 90, 100, 120, 150, 200, 300, 400};

// Fits every group of `train` with at least one point; points with p2p pipelines take `p2p_pipeline_GBps`
// (0: unbounded) as a known part of their time.
std::vector<GroupFit> fit_collective_groups(const std::vector<const CollectivePoint*>& train, double p2p_pipeline_GBps = 0);
// The p2p pipeline rate (all_to_all/direct), the groups, and the protocols together: the rate that lets the
// all-to-all groups meet their points best (a search over kP2pPipelineGridGBps and none, each series one
// observation, every architecture's points together), the groups at that rate and NCCL's protocol model, the
// protocols' network efficiency on the groups' residuals, then the groups again with the NIC-bound part of
// those protocols' points at that efficiency (their kappa and L then do not absorb it).
CollectiveFit fit_collectives(const std::vector<const CollectivePoint*>& train);
// Writes the groups into `c.arch_algorithms` (sources say what they were fitted to).
void apply_collective_fits(Calibration& c, const std::vector<GroupFit>& fits);
// Writes the groups and the protocols (`c.arch_protocols`).
void apply_collective_fit(Calibration& c, const CollectiveFit& fit);

// The link entries of `base` alone (no algorithm or protocol entries): what every fit starts from.
Calibration links_only(const Calibration& base);

// Prediction of a point under a calibration (its algorithm entry for the point's architecture, borrowed
// from another architecture when missing, identity else) -- what the analytic model gives.
double predict_time_s(const CollectivePoint& p, const Calibration& c);

struct FoldError {
  std::string fold;            // "system hgx-h100", "72 GPUs"
  int points = 0, points_small = 0, points_large = 0;
  double median_small = 0, worst_small = 0, median_large = 0, worst_large = 0;  // |pred/meas - 1|
};
// One held-out prediction, with what the model knew of the point (for listing the worst ones).
struct HeldOutPrediction {
  std::string fold, id, series, system, arch, key, protocol;
  int gpus = 0, domains = 1;
  double bytes = 0, measured_s = 0, predicted_s = 0, latency_s = 0, bandwidth_s = 0, timer_floor_s = 0;
  double in_place_s = 0;       // the same run's in-place time (Measurement::in_place_time_s), 0: not printed
};
// Records the model cannot tell apart, measured apart: held-out points of one fold with the same system,
// algorithm, protocol, GPU count, NVLink domains, size and prediction (nothing the model is given separates
// them). For a group measured from lo to hi seconds no one prediction p has |p / m - 1| below
// (hi - lo) / (hi + lo) for every one of them (the harmonic mean of lo and hi reaches it), whatever the
// calibration: a floor under the worst error any fit of this model can reach on these records.
struct SpreadGroup {
  std::string what;            // "hgx-b200 all_reduce/nvls_tree Simple, 64 GPUs in 8 domain(s), 16 GiB"
  int points = 0, series = 0;  // records, and the distinct series they come from
  double bytes = 0, lo_s = 0, hi_s = 0;
  double floor() const { return hi_s + lo_s > 0 ? (hi_s - lo_s) / (hi_s + lo_s) : 0; }
};
struct MeasurementSpread {
  // Groups of two or more points and the points in them, below and at or above kLargeMessageBytes.
  int groups_small = 0, groups_large = 0, points_small = 0, points_large = 0;
  int large_beyond_15 = 0;     // groups at >= 64 MiB whose floor is above 15 % (issue 11's worst goal)
  SpreadGroup worst_small, worst_large;  // the group with the highest floor in each band (points 0: none)
  // nccl-tests' own two timings of one run (out of place and in place) of the points whose source printed
  // both: each a group of two measurements of the same collective, its floor the same (slower - faster) /
  // (slower + faster). The median floor and the widest pair, per band.
  int twice_small = 0, twice_large = 0;
  double twice_median_small = 0, twice_median_large = 0;
  SpreadGroup twice_worst_small, twice_worst_large;
};
MeasurementSpread measurement_spread(const std::vector<HeldOutPrediction>& predictions);

struct CrossValidation {
  std::string by;              // "system", "GPU count"
  std::vector<FoldError> folds;
  std::vector<HeldOutPrediction> predictions;  // every held-out point under its fold's calibration
  FoldError all;               // every held-out prediction together
  MeasurementSpread spread;    // measurement_spread(predictions)
};

// Leave-one-fold-out over the training points: fold(point) names its fold (collective_cross_validation.cpp).
CrossValidation cross_validate(const std::vector<CollectivePoint>& points, const std::vector<bool>& trainable,
                               const Calibration& base, const std::string& by,
                               const std::function<std::string(const CollectivePoint&)>& fold);

// Errors of points under one calibration (in-sample).
FoldError errors_of(const std::vector<const CollectivePoint*>& points, const Calibration& c, const std::string& name);

}  // namespace racksim::calibration

namespace racksim::calibration {
// Tables for `racksim validate`: per fold and all together, split at 64 MiB.
std::string cross_validation_text(const std::vector<CrossValidation>& cvs);
std::string cross_validation_json(const std::vector<CrossValidation>& cvs);
// Leave-one-system-out and leave-one-GPU-count-out over `data` with the links of `calibration`.
std::vector<CrossValidation> cross_validate_collectives(const std::vector<Measurement>& data, const Predictor& predictor,
                                                        const Calibration& calibration);
}  // namespace racksim::calibration
