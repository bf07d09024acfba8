#pragma once
// Training goodput under failures: the fraction of wall-clock time a synchronous training job makes
// progress, given component failure rates, the checkpoint interval and write time, restart time, spare
// trays inside each allocation unit and hot-spare units. A seeded, deterministic Monte Carlo of the
// whole run gives the expectation and its distribution; the analytic expectation stands beside it
// (exact for failures that only need a restart; Daly 2006 for the checkpoint interval). docs/failures.md
// has every rate, its source and every GB200 assumption.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/failures/recovery.hpp"
#include "sim/engine/failure_scenario.hpp"

namespace racksim {

struct Rate {
  double per_hour = 0;
  std::string source;
};

// Per component and hour. The defaults are Meta's Llama 3 405B pre-training on 16 384 H100 (54 days,
// 419 unexpected interruptions; The Llama 3 Herd of Models, arXiv:2407.21783, Table 5) spread over its
// components; B200 and GB200 are assumed to fail at the same rates per component (no public data).
struct FailureRates {
  Rate gpu;            // per GPU: faulty GPU, HBM3, SRAM, GPU system processor, SDC, thermal (268)
  Rate host;           // per host (compute tray / HGX node): host maintenance, SSD, PSU, chassis, IO, CPU, memory (46)
  Rate nic;            // per NIC (7)
  Rate network;        // per GPU of the job: scale-out switches and cables (35)
  Rate software;       // per GPU of the job: software bugs, NCCL watchdog timeouts, dependencies (63)
  Rate nvlink_switch;  // per NVLink switch tray (GB200 only; an HGX baseboard's NVSwitch is in `gpu`)
  static FailureRates llama3();
};

struct GoodputRequest {
  std::string label;               // "gb200-nvl72 racks", ...
  int units = 1;                   // allocation units the job occupies (racks, partitions, nodes)
  int trays_per_unit = 18;         // compute trays (hosts) of a unit the job uses
  int gpus_per_tray = 4;
  int nics_per_tray = 4;
  int spare_trays_per_unit = 0;    // healthy trays of the unit's NVLink domain the job leaves free
  int hot_spare_units = 0;         // whole idle units that can replace a failed one
  int units_per_rack = 1;          // units that share one rack's NVLink switch trays (partitions)
  int switch_trays_per_rack = 0;   // NVLink switch trays whose loss concerns every unit of the rack
  PartitionMode mode = PartitionMode::full_bandwidth;
  double adaptive_slowdown = 0.05; // step-time loss with a switch tray down in adaptive mode (assumption)
  double step_s = 10;              // one training step (planner or given)
  double checkpoint_bytes = 0;
  double storage_Bps = 0;          // checkpoint write bandwidth of the whole job
  std::optional<double> interval_s;  // checkpoint interval; default Daly's optimum
  RecoveryTimes recovery;
  FailureRates rates = FailureRates::llama3();
  double work_hours = 24 * 30;     // useful training time the run needs
  int trials = 200;
  std::uint64_t seed = 1;
};

struct GoodputResult {
  GoodputRequest request;
  int gpus = 0;                    // GPUs the job trains on
  int idle_gpus = 0;               // spare trays and hot-spare units
  double failures_per_hour = 0;    // every interruption of the job
  std::vector<std::pair<std::string, double>> rates_per_hour;  // by cause, for the whole job
  double mtbf_h = 0;
  double checkpoint_write_s = 0, interval_s = 0;
  std::string interval_rule;       // "Daly (2006) optimum" or "given"
  // Analytic: exact when every failure needs only a restart (no waiting for hardware); else a first-order
  // estimate with the expected wait of a failure that finds no spare (Poisson occupancy of repairs).
  double analytic_goodput = 0;
  std::string analytic_note;
  // Monte Carlo over `trials` whole runs: work / mean wall time, its standard error (delta method), and
  // the distribution of per-run goodput.
  double mc_goodput = 0, mc_standard_error = 0;
  double p5 = 0, p50 = 0, p95 = 0;
  double mean_wall_h = 0;
  std::vector<std::pair<std::string, double>> mean_events;      // interruptions per run, by cause
  std::vector<std::pair<std::string, double>> lost_hours;       // per run: rework, restarts, waiting, checkpoints, slow
};

// Young/Daly: the checkpoint interval that maximises goodput for write time `write_s` and mean time
// between failures `mtbf_s` (Daly 2006, eq. 37; Young 1974 to first order).
double daly_interval_s(double write_s, double mtbf_s);
// Expected goodput when every failure costs a restart of `restart_s` (failures can strike during restarts
// too): tau / E[time per segment], E = e^(lambda R) (e^(lambda (tau + delta)) - 1) / lambda (Daly 2006).
double restart_only_goodput(double rate_per_s, double interval_s, double write_s, double restart_s);

// One Monte Carlo run of the whole job (trial i draws from its own seed, splitmix64 of the request's seed
// and i, so any range of trials can be computed anywhere and the whole is the same).
inline constexpr int kGoodputCauses = 5;  // tray, NIC, scale-out network, software, NVLink switch tray
struct GoodputTrial {
  double wall_s = 0;
  double events[kGoodputCauses] = {};
  double rework_s = 0, restart_s = 0, wait_s = 0, checkpoint_s = 0, slow_s = 0;
};

// InputError for counts or times out of range. Deterministic: the same request gives the same result.
// `trials`: the request's trials already computed (goodput_trials over 0..request.trials, in order, e.g.
// on Dask workers: models/work/work_units.hpp); nullptr computes them here. Either way the same result.
GoodputResult run_goodput(const GoodputRequest& request, const std::vector<GoodputTrial>* trials = nullptr);
// Trials [begin, end) of the request's Monte Carlo. InputError as run_goodput, or for a range outside
// 0..request.trials.
std::vector<GoodputTrial> goodput_trials(const GoodputRequest& request, int begin, int end);

std::string goodput_to_json_text(const std::vector<GoodputResult>& results);
std::string goodput_to_table(const std::vector<GoodputResult>& results);

}  // namespace racksim
