#pragma once
// Published training runs (calibrate/training/published_training_throughput.json, a copy of NVIDIA's
// Megatron-Bridge / NeMo performance summaries and dgxc-benchmarking tables, each record with its
// source): read, mapped onto racksim's presets, systems and precision recipes, and turned into pinned
// layouts. Every record becomes a PublishedRun; a run racksim cannot use for the fit says why in
// `excluded` (no measurement, a scaled-down proxy model, a printed layout that contradicts the recipe of
// its release, a precision the table does not name, ...), so reports can list every row.
#include <string>
#include <vector>

#include "models/planner/comm_cost.hpp"
#include "models/planner/layout.hpp"

namespace racksim {

struct PublishedRun {
  int index = 0;                 // position in the file
  std::string label;             // "H100 Llama 3.1 405B BF16 1024 GPUs (NeMo 25.04.01)"
  std::string model_label, system_label, precision_label, container, record_type, source, source_repo;
  bool vp_printed = false;
  // mapped
  std::string model;             // preset id ("" when unmapped)
  std::string system;            // topology id
  std::string precision;         // recipe id
  int gpus = 0, global_batch = 0, seq_len = 0;
  ParallelLayout layout;         // degrees, micro-batch, schedule, memory savers as the recipe sets them
  MoeDispatcher dispatcher = MoeDispatcher::alltoall;
  bool ep_overlap = false;
  bool mtp = false;
  bool recompute_from_recipe = false;  // the recipe names its recompute; else the planner picks the least that fits
  // measured
  bool measured = false;
  double tokens_per_s_per_gpu = 0;
  std::string derivation;        // how tokens/s/GPU was obtained ("printed", "printed total / GPUs", ...)
  std::string assumptions;       // values the record leaves out that racksim supplied
  std::string excluded;          // why the run is left out of fit and validation ("" = used)
  std::string layout_problem;    // why its layout cannot be pinned at all ("" = it can: Megatron would run it)
  // A scaled-down proxy of the model (dgxc-benchmarking's columns for small GPU counts print "PROXY MODEL: this
  // column uses N layers instead of the full M"): N and M; 0 = the model as published.
  int proxy_layers = 0, proxy_of_layers = 0;
  double step_s() const { return static_cast<double>(global_batch) * seq_len / (tokens_per_s_per_gpu * gpus); }
};

// Why a run's proxy (r.proxy_layers) cannot be priced as `full` cut short ("" = it can, or the run is no proxy):
// another layer count than the preset's, no fewer layers, or a hybrid stack (which blocks it keeps is not stated).
// The loader leaves such runs out with this reason.
std::string proxy_problem(const ModelSpec& full, const PublishedRun& r);
// The model a run trained: its proxy of r.proxy_layers layers (the same layers, fewer of them), or `full` itself
// for a run that is no proxy or has a proxy_problem (--every-layout still prices such a run, whole).
ModelSpec model_of_run(const ModelSpec& full, const PublishedRun& r);

// Reads the file; InputError for a malformed file (not for records racksim cannot use: those are
// marked excluded).
std::vector<PublishedRun> load_published_runs(const std::string& path);

}  // namespace racksim
