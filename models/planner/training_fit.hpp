#pragma once
// The compute fit and the validation of the step model against published training runs.
//  * fit_training: per GPU generation (hopper, blackwell), the parameters of ComputeParams, fitted by
//    Levenberg-Marquardt on log(predicted / published step time) of every usable run of the file and
//    the H200 cuBLAS GEMM probe (calibrate/data/*/gemm_bf16.jsonl), with weak priors (each stated in
//    the report) that keep what no row constrains near a physical value and Blackwell near Hopper.
//    The step model is linear in the parameters for fixed overlap decisions (compute_model.hpp), so the
//    fit alternates: price every row at the current parameters, fit on those features, repeat.
//  * validate_training: every usable run priced with its published layout pinned; leave-one-model-out
//    (each model's runs predicted by a fit that never saw that model) or in-sample (the shipped fit);
//    the error of tokens/s/GPU per row and its median and worst per system, model and precision. With
//    `layouts`, also the planner's own best layout for each distinct job and how far the published one
//    is from it, and why.
#include <map>
#include <string>
#include <vector>

#include "models/planner/training_rows.hpp"
#include "models/workload/gpu_compute.hpp"
#include "models/workload/memory_fit.hpp"

namespace racksim {

struct TrainingFitOptions {
  std::string topology_dir;               // "" = shipped topologies
  std::string calibration = "default";    // collective calibration
  std::string compute_fit;                // validation: the fit file to use in-sample ("" = shipped)
  std::vector<std::string> probe_dirs;    // kernel probe directories (empty = default_probe_dirs(): the shipped H200 and H100 runs)
  bool layouts = false;                   // validation: also search each job's best layout
  // validation: hold out each system (every run of it predicted by a fit on the other systems' runs) instead
  // of each model: Blackwell predicted from Hopper, the nearest test of a system with no published run
  bool leave_one_system_out = false;
};

struct RowPrediction {
  PublishedRun run;
  std::string generation;
  double predicted_tokens_per_s_per_gpu = 0;
  double error = 0;                        // predicted / published - 1
  bool fits_in_memory = true;
  std::string recompute;                   // the recompute plan priced
  std::string breakdown;                   // the step's largest components
};

struct GroupError {
  std::string name;                        // "system H100", "model Llama 3.1 405B", "precision BF16"
  int rows = 0;
  double median_abs = 0, worst_abs = 0, mean_signed = 0;
};

struct TrainingFitResult {
  std::string rows_file;
  std::map<std::string, ComputeParams> params;    // by generation
  std::vector<PublishedRun> runs;                 // every record of the file
  std::vector<RowPrediction> fitted;              // the rows used, in-sample with the fitted parameters
  std::vector<std::pair<std::string, double>> probe_errors;  // probe GEMM -> predicted / measured - 1
  std::vector<std::string> priors;                // each prior, in words
  int outer_iterations = 0;
  int jobs = 0;                                   // distinct jobs among the runs (each counts once)
  double row_sigma = 0;                           // the runs' scatter the fit ended with (job-weighted RMS log error)
  double median_abs = 0, worst_abs = 0;
};

TrainingFitResult fit_training(const std::string& rows_file, const TrainingFitOptions& options);
std::string fit_to_json_text(const TrainingFitResult& fit);       // calibrate/training/compute-fit.json
std::string fit_report_markdown(const TrainingFitResult& fit);    // calibrate/training/fit-report.md
std::string fit_summary_text(const TrainingFitResult& fit);

struct LayoutCheck {
  std::string job;                         // "H100 Llama 3.1 405B fp8-ds 1024 GPUs gbs 1536 x 8192"
  std::string published_layout, best_layout;
  double published_tokens_per_s_per_gpu = 0, best_tokens_per_s_per_gpu = 0;
  double ratio = 0;                        // best / published (>= 1 when the search found it or better)
  std::string why;
};

struct TrainingValidation {
  std::string rows_file;
  bool leave_one_model_out = true;
  bool leave_one_system_out = false;       // held out by system instead (TrainingFitOptions::leave_one_system_out)
  std::vector<RowPrediction> rows;
  std::vector<GroupError> groups;          // overall, per system, per model, per precision
  GroupError overall;
  std::vector<std::pair<std::string, std::string>> excluded;  // (label, why) of every record left out
  std::vector<LayoutCheck> layouts;
};

TrainingValidation validate_training(const std::string& rows_file, const TrainingFitOptions& options, bool leave_one_model_out);

// Every record's layout pinned and priced with the shipped fit, measured or not (recipe-only records
// too); a record whose precision is not named is priced in BF16. `problem` says why a record's layout
// cannot be pinned at all (its degrees do not divide: Megatron refuses those as well).
struct LayoutPricing {
  int index = 0;
  std::string label, layout, precision, problem;
  double tokens_per_s_per_gpu = 0;
  bool fits_in_memory = true;
  MemoryBreakdown memory;         // the fullest stage's, as the memory model counts it
  double memory_capacity = 0;     // usable HBM per GPU (less --memory-reserve), bytes
};
std::vector<LayoutPricing> price_every_layout(const std::string& rows_file, const TrainingFitOptions& options);
std::string layout_pricing_text(const std::vector<LayoutPricing>& priced);
std::string layout_pricing_to_json_text(const std::vector<LayoutPricing>& priced);
std::string validation_to_text(const TrainingValidation& v);
std::string validation_to_json_text(const TrainingValidation& v);

}  // namespace racksim
