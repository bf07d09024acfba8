#pragma once
// run_plan: the planner's whole answer for one model on one system. Searches the layouts (search.hpp)
// over the GPU counts the racks allow, explains why the best beats the runner-up, says what a tray
// failure costs each top layout (GPUs taken down, the step time on a rack degraded to NVL68/NVL64), and
// compares the best layout's step time on other systems for the same model and GPU count.
#include <optional>
#include <string>
#include <vector>

#include "models/planner/engine_check.hpp"
#include "models/planner/search.hpp"
#include "models/planner/step_model.hpp"
#include "models/planner/training_heldout.hpp"

namespace racksim {

struct PlanRequest {
  std::string system = "gb200-nvl72";     // id or topology file
  std::optional<int> racks;               // default: the system's
  std::string model;                      // preset id or model file
  TrainingJob job;                        // job.precision is filled from `precision`
  std::string precision = "bf16";         // recipe id (gpu_compute.json): bf16, fp8-ds, fp8-cs, fp8-block, mxfp8, nvfp4
  SearchConstraints constraints;
  std::optional<int> gpus;                // GPUs to use; default: every per-domain count from the full
                                          // domain down to half of it, in whole trays
  int top = 10;                           // layouts reported
  int engine_top = 3;                     // of those, re-priced with the discrete-event engine (0: none)
  std::vector<std::string> compare{"gb200-nvl72", "gb300-nvl72", "hgx-b200"};
  bool failures = true;
  std::string calibration = "default";    // collective calibration: default (calibrate/default.json), none, or a file
  std::string topology_dir;               // "" = the shipped topologies/
  std::string model_dir;                  // "" = the shipped presets
  std::string compute_table;              // "" = models/workload/gpu_compute.json
  std::string compute_fit;                // "" = calibrate/training/compute-fit.json
  // The MoE options the caller was given (the CLI's --moe-imbalance, --force-balanced, --moe-dispatcher,
  // --ep-overlap): refused for a model without routed experts, where they would change nothing.
  std::vector<std::string> moe_options_given;
};

// Where one rank group of the best layout runs: a tray and the ranks on it.
struct TrayRanks {
  int rack = 0, tray_in_rack = 0, tray = 0;
  std::vector<int> ranks;                 // empty: a spare tray
};

struct FailureImpact {
  int tray_gpus = 0;            // GPUs one compute tray takes with it
  int job_gpus = 0;             // a synchronous job stops entirely (every rank in one communicator)
  int replica_gpus = 0;         // GPUs of one model replica (TP x EP x CP x PP, one DP index)
  int replicas_hit = 0;         // replicas with a rank on the worst tray
  int blast_radius_gpus = 0;    // GPUs idle until restart when replicas fail alone (elastic DP)
  int spare_trays_per_domain = 0;
  bool runs_on_spares = false;  // a spare tray in the same NVLink domain can take the failed tray's place
};

struct DegradedPlan {
  std::string name;             // "NVL68": each fast domain limited to this many GPUs
  int gpus_per_domain = 0;
  bool best_still_fits = false; // the healthy best layout runs unchanged
  std::optional<Candidate> best;
  double slowdown = 0;          // step time / the healthy best's - 1
  std::string note;
};

struct SystemComparison {
  std::string system;
  int racks = 0;
  int gpus = 0;
  std::optional<Candidate> best;
  std::string note;             // why there is no answer, if none
};

struct PlanResult {
  std::string system, system_description;
  int racks = 0, system_gpus = 0, gpus_per_domain = 0, gpus_per_tray = 0;
  std::string rack_unit = "rack";  // the topology's rack.unit: "node" on HGX (tables only)
  std::string model_id, model_name, model_source;
  double model_params = 0, model_active_params = 0;
  bool model_moe = false, model_hybrid = false;  // routed experts; a hybrid (Mamba) stack: what Megatron's arguments need
  TrainingJob job;
  std::vector<MeshShape> shapes;          // GPU counts searched
  std::string compute_source;             // the GPU's compute figures and their sources
  std::string generation, params_origin;  // whose fitted parameters apply ("fit", "blackwell (no rows of its own)")
  double peak_TFLOPs = 0, gemm_efficiency = 0;
  std::string calibration;
  SearchResult search;                    // ranked trimmed to `top`; the first engine_checks.size() re-ranked by the engine
  std::vector<EngineCheck> engine_checks; // one per engine-checked layout, aligned with search.ranked
  std::vector<FailureImpact> failures;    // one per ranked layout
  std::vector<DegradedPlan> degraded;
  std::vector<SystemComparison> comparison;
  std::vector<TrayRanks> best_map;        // rank -> tray -> rack of the best layout
  std::string explanation;                // plain words: why the best wins over the runner-up (and, MoE, where EP runs)
  int runner_up = -1;                     // index in search.ranked of the layout the explanation compares with
  // The step model's held-out error for this generation and kind of model (with the shipped fit and calibration).
  std::optional<PlanHeldoutError> heldout;
};

PlanResult run_plan(const PlanRequest& request);

// The compute table a request names (shipped files unless overridden), and the recipe it asks for,
// checked against the GPU generation (InputError naming --precision and the recipes that run there).
ComputeTable compute_table_for(const PlanRequest& request);
PrecisionRecipe precision_for(const ComputeTable& table, const std::string& id, const GpuCompute& gpu);

}  // namespace racksim
