#pragma once
// How far the planner's step model is from published runs it was not fitted to, per class of run, and the
// figures a plan quotes (the training twin of sim/calib/heldout_errors.hpp).
//
// `racksim plan --heldout-table OUT` (run by calibrate/training/fit.sh) prices every used run of the
// published file leave-one-model-out and leave-one-system-out and writes, per GPU generation whose
// parameters were fitted and per kind of model (dense or MoE), the median, 90th percentile and worst
// |predicted / published - 1| of tokens/s/GPU: calibrate/training/heldout_errors.json. A plan priced with
// the shipped fit quotes its generation's and kind's leave-one-model-out class (a model the fit had not
// seen), and, when its system has no published run in the file (GB200, GB300, H200, B300), the
// leave-one-system-out class too (a system predicted from another's runs: B200 from H100's).
#include <optional>
#include <string>
#include <vector>

#include "models/planner/training_fit.hpp"
#include "sim/core/statistics.hpp"

namespace racksim {

struct TrainingHeldoutClass : ErrorSummary {  // of tokens/s/GPU's predicted / published - 1 (> 0: optimistic)
  std::string generation;          // the generation whose fitted parameters priced the runs ("hopper", "blackwell")
  std::string kind;                // "dense" or "moe"
  std::string held_out;            // "model" or "system"
  int rows = 0;
  std::vector<std::string> models;   // model presets of the rows
  std::vector<std::string> systems;  // racksim systems of the rows
  bool operator==(const TrainingHeldoutClass&) const = default;
};

struct TrainingHeldoutTable {
  std::string basis;
  std::vector<std::string> systems_fitted;  // the racksim systems with published runs in the fit
  int min_rows = 5;                         // a class answers only with at least this many rows
  std::vector<TrainingHeldoutClass> classes;
  bool operator==(const TrainingHeldoutTable&) const = default;
};

// The table from the two validations (rows_file's, leave one model out and leave one system out).
TrainingHeldoutTable training_heldout_table(const TrainingValidation& by_model, const TrainingValidation& by_system);
std::string training_heldout_to_json_text(const TrainingHeldoutTable& table);
TrainingHeldoutTable training_heldout_from_json_text(const std::string& text, const std::string& where);
// calibrate/training/heldout_errors.json, read once; nullptr when absent.
const TrainingHeldoutTable* shipped_training_heldout();

// What a plan quotes: the class of (generation, kind) held out by model, and by system when `system` has
// no run of its own in the fit; nullopt where a class has fewer than min_rows rows.
struct PlanHeldoutError {
  std::optional<TrainingHeldoutClass> new_model;   // a model the fit had not seen
  std::optional<TrainingHeldoutClass> new_system;  // only for a system without published runs in the fit
  std::string basis;
};
std::optional<PlanHeldoutError> plan_heldout_error(const TrainingHeldoutTable& table, const std::string& generation,
                                                   bool moe, const std::string& system);

}  // namespace racksim
