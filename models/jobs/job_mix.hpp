#pragma once
// A job mix: several jobs side by side on one system (an operator's scenario), each on its own GPUs in
// its own rank order, running a list of collectives, optionally with failures that happen while they
// run. Read from a strict JSON file (unknown keys are errors; schema in docs/failures.md):
//
//   {"schema_version": 1, "system": "gb200-nvl72", "racks": 2,
//    "partitions": "a=trays:0-7;b=trays:8-15;big=trays:18-35", "partition_mode": "full-bandwidth",
//    "calibration": "none", "oversubscription": 2, "failures": ["tray:7"],
//    "jobs": [{"name": "big", "trays": "18-35", "mesh_shape": [2, 36], "mesh_dim_names": ["dp", "tp"],
//              "collectives": [{"op": "all_reduce", "bytes": "1G", "dim": "tp"},
//                              {"op": "all_reduce", "bytes": "256M", "dim": "dp", "repeat": 2}]}, ...]}
//
// Placement: exactly one of "trays" (a list such as "0-7", GPUs in tray order), "gpus" (a list string, or
// an array giving the rank order itself) or "partition" (every GPU of that partition). The mesh follows
// torch's init_device_mesh: rank r has coordinates r in row-major order of mesh_shape (the last dimension
// varies fastest), so the innermost dimension holds neighbouring GPUs (seed course section 7: DeviceMesh).
// Instead of "collectives", a job may give "step": {"model": "llama-3.1-8b", "global_batch": 256,
// "seq_len": 4096}: a training step from the planner (JobStepSpec; its mesh then comes from the layout).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/collectives/collective.hpp"
#include "sim/engine/failure_scenario.hpp"

namespace racksim {

class TopologyGraph;

struct JobCollective {
  CollectiveOp op = CollectiveOp::all_reduce;
  std::string algorithm = "auto";
  std::uint64_t bytes = 0;          // nccl-tests' size, as in `racksim collective --bytes`
  std::string dim;                  // "" = every rank of the job; else a mesh dimension: every group along it
  int repeat = 1;
  std::string inner_algorithm = "auto";  // hierarchical only: ring or nvls inside each NVLink domain (--inner)
};

// A training step from the layout planner instead of a list of collectives: the planner's best layout for
// the model on the job's GPU count gives the step time and the data-parallel gradient traffic; the engine
// runs the step as (planner step - DP traffic) of compute, then the DP collectives over the job's "dp"
// groups, sharing links with the other jobs. Conservative: the planner overlaps DP traffic with the last
// backward, the engine does not, so contention shows in full.
struct JobStepSpec {
  std::string model;
  int global_batch = 0, seq_len = 0;
};

struct PlannedStep {
  std::string layout;                 // "tp=4 ep=1 cp=1 pp=1 dp=8, ZeRO-1"
  double planner_step_s = 0;          // the planner's step, DP traffic overlapped as it models it
  double dp_total_s = 0, dp_exposed_s = 0;
  double compute_s = 0;               // what the engine runs as a pure delay
};

struct JobSpec {
  std::string name;
  std::string placement;            // as given, for the report ("trays 0-7", "partition a", ...)
  std::vector<int> gpus;            // rank r -> global GPU index (DeviceMesh order)
  std::vector<int> mesh_shape;      // product = gpus.size(); default {gpus.size()}
  std::vector<std::string> mesh_dim_names;
  std::vector<JobCollective> collectives;
  std::optional<JobStepSpec> step;  // instead of collectives (they are then filled from the planner)
  std::optional<PlannedStep> planned;
};

struct JobMix {
  std::string name;
  std::string system;
  std::optional<int> racks;
  std::string partitions;           // "" = the system as shipped
  PartitionMode mode = PartitionMode::full_bandwidth;
  std::string calibration = "default";
  std::optional<double> oversubscription;  // overrides the system's scale_out.oversubscription (>= 1)
  std::vector<std::string> failures;  // failure items that happen while the jobs run
  struct RawJob {
    std::string name, trays, gpus_text, partition;
    std::vector<int> gpus_order;    // "gpus" given as an array
    std::vector<int> mesh_shape;
    std::vector<std::string> mesh_dim_names;
    std::vector<JobCollective> collectives;
    std::optional<JobStepSpec> step;
    std::string where;              // JSON pointer for errors
  };
  std::vector<RawJob> jobs;         // as read; resolve_jobs() turns them into JobSpecs on a graph
};

// Parses a job-mix JSON text (`where` names it in errors) / file. InputError with the JSON pointer of
// the bad value and what is allowed.
JobMix job_mix_from_json_text(const std::string& text, const std::string& where);
// A shipped scenario by id (scenarios/<id>.json: "operator-tray7") or a path to a job-mix file.
JobMix load_job_mix(const std::string& name_or_path);
std::vector<std::string> shipped_job_mixes();

// Resolves placements and meshes on `graph` (partitions applied): GPUs in range, no GPU in two jobs,
// mesh shape matching the GPU count, collective dims naming mesh dimensions.
std::vector<JobSpec> resolve_jobs(const JobMix& mix, const TopologyGraph& graph);

// The groups of `job` along mesh dimension `dim` ("" = one group of every rank), each a list of global
// GPU indices in rank order. InputError naming the job when dim is not one of its mesh dimensions.
std::vector<std::vector<int>> mesh_groups(const JobSpec& job, const std::string& dim);

}  // namespace racksim
