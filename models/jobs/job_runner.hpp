#pragma once
// Runs a job mix on the discrete-event engine: every job alone, then all of them together sharing NICs,
// IB links, NVLink trunks and C2C (each job's collectives back to back, the groups of one collective at
// once), and, when the mix has failures, what each failure does to each job (models/failures/
// failure_effects.hpp) and how the survivors run afterwards.
#include <optional>
#include <string>
#include <vector>

#include "models/failures/recovery.hpp"
#include "models/jobs/job_mix.hpp"

namespace racksim {

struct CollectiveTiming {
  std::string what;              // "all_reduce 1 GiB over tp (8 groups of 4)"
  std::string algorithm;         // what ran (auto's pick), of the first group
  int groups = 1;
  double alone_s = 0, together_s = 0;  // from its launch to its last group's end
};

struct JobResult {
  std::string name, placement;
  int gpus = 0;
  std::vector<int> trays;                  // global compute trays
  std::vector<std::string> partitions;     // NVLink partitions its GPUs are in ("" entries: none)
  double alone_s = 0, together_s = 0;      // one pass over its collectives
  double slowdown = 0;                     // together / alone - 1
  std::vector<CollectiveTiming> collectives;
  std::optional<PlannedStep> step;         // a planner training step: its layout and the planner's times
};

// A link more than one job put bytes on while running together.
struct SharedLink {
  std::string name, kind;
  std::vector<std::pair<std::string, double>> job_bytes;  // (job, bytes)
  double max_utilization = 0;
};

// Jobs that use NVLink in one physical switch fabric: they share its switch chips, which racksim models as
// a non-blocking crossbar (no contention), but a lost switch there concerns all of them.
struct SharedFabric {
  int fabric = -1;
  std::vector<std::string> jobs;
};

struct PartitionHealth {
  std::string name;
  std::string state;   // NMX-M: HEALTHY, DEGRADED, UNHEALTHY (full-bandwidth), BANDWIDTH (adaptive)
  std::string reason;
};

struct JobFate {
  std::string name;
  std::string fate;            // "continues", "dies", "restarts" (dies and comes back at once, degraded)
  std::string reason;
  double time_after_s = -1;    // one pass after the failure (-1: not running)
  double slowdown_after = 0;   // time_after / together_s - 1
  double back_after_s = 0;     // until it runs again (0: never stopped)
  std::string back_after;      // how that time is made up, with sources
  std::string note;            // e.g. a restart would need nvidia-imex back
};

struct FailureOutcome {
  std::vector<std::string> items;
  std::string mode;
  std::vector<PartitionHealth> partitions;
  std::vector<JobFate> jobs;
};

struct MixResult {
  std::string name, system, calibration, mode;
  int racks = 0;
  std::string rack_unit = "rack";  // the topology's rack.unit: "node" on HGX (tables only)
  std::string partitions_spec;
  std::vector<std::pair<std::string, std::vector<int>>> partitions;  // (name, trays)
  std::vector<JobResult> jobs;
  std::vector<SharedLink> shared_links;
  std::vector<SharedFabric> shared_fabrics;
  std::optional<FailureOutcome> failure;
  RecoveryTimes recovery;
};

// `extra_failures` are added to the mix's own (the CLI's --fail). InputError for bad input, SimulationError
// when a job cannot run even before any failure.
MixResult run_job_mix(const JobMix& mix, const std::vector<std::string>& extra_failures = {},
                      const std::string& topology_dir = "", const RecoveryTimes& recovery = {});

// {"name","system","racks","calibration","partition_mode","partitions":[{"name","trays"}],"jobs":[...],
//  "shared_links":[...],"shared_fabrics":[...],"failure":{...}}, times in microseconds, 6 digits.
std::string mix_result_to_json_text(const MixResult& result);
std::string mix_result_to_table(const MixResult& result);

}  // namespace racksim
