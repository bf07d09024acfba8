#pragma once
// From a system and an allocation unit to a GoodputRequest: what one unit holds (a GB200 NVL72 rack,
// an NVLink partition of T trays, an HGX node), how many units a job of G GPUs needs, which switch trays
// a unit depends on, and optionally the step time and checkpoint size from the layout planner.
#include <optional>
#include <string>
#include <vector>

#include "models/failures/goodput.hpp"

namespace racksim {

struct GoodputSetup {
  std::string system = "gb200-nvl72";
  std::string unit = "rack";          // "rack" (a whole NVLink domain), "partition:T" (T trays), "node"/"tray"
  int gpus = 0;                       // GPUs the job trains on (rounded up to whole units)
  int spare_trays = 0;                // per unit, inside its NVLink domain
  int hot_spares = 0;                 // whole idle units
  // Step time and checkpoint: given, or from the planner for `model` (best layout on the job's racks).
  std::optional<double> step_s;
  std::optional<double> checkpoint_bytes;
  std::string model;                  // planner preset or file ("" = none)
  int global_batch = 0, seq_len = 0;
  double storage_GBps_per_gpu = 1.0;  // checkpoint write bandwidth per GPU (assumption, docs/failures.md)
  std::string topology_dir;
};

// Bytes of a checkpoint per parameter: bf16 weights (2) + fp32 master weights (4) + Adam's two fp32
// moments (8); gradients are not saved. ZeRO (Rajbhandari et al. 2020) counts 2 + 2 + 12 for training.
inline constexpr double kCheckpointBytesPerParam = 14;

// Fills units, trays, spares, switch dependence, step and checkpoint into `base` (rates, recovery, mode,
// trials, seed, work hours kept). InputError for an unknown unit, a unit that does not tile the domain,
// spare trays on systems whose unit is one tray, or a missing step time.
GoodputRequest goodput_request(const GoodputSetup& setup, GoodputRequest base);

// The comparison for one job: GB200 NVL72 whole racks (a 72-GPU blast radius), NVL72 partitions of
// 9 trays, and HGX B200 nodes (8 GPUs), with as many idle GPUs held in spares in each as the racks hold.
std::vector<GoodputRequest> goodput_comparison(const GoodputSetup& setup, const GoodputRequest& base);

// What `racksim goodput` and racksim.goodput() take, as one call: option names as the CLI's.
struct GoodputCall {
  GoodputSetup setup;
  std::string partition_mode = "full-bandwidth";
  double adaptive_slowdown = 0.05;
  std::optional<double> interval_s, restart_s, repair_h, switch_repair_h;
  double days = 30;
  int trials = 200;
  std::uint64_t seed = 1;
  bool compare = false;
};
std::vector<GoodputResult> run_goodput_call(const GoodputCall& call);
// Its requests (one, or three with compare), before any Monte Carlo: what run_goodput_call runs.
std::vector<GoodputRequest> goodput_call_requests(const GoodputCall& call);

}  // namespace racksim
