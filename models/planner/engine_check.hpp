#pragma once
// The discrete-event engine on the top layouts. The search prices every collective with the analytic
// model for one group alone; inside an NVLink domain the engine agrees with it exactly (the engine's
// tests), so what the engine adds is contention between groups: every collective of a layout that
// leaves its NVLink domain is simulated with all the groups of its kind running at once (every DP
// group's reduce-scatter, every pipeline boundary's send/recv), sharing NICs, leaf and spine links.
// The step is then re-estimated with those times.
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "models/planner/search.hpp"
#include "sim/calib/calibration.hpp"

namespace racksim {

class RankPlacement;

struct EngineCheckItem {
  std::string op;            // "reduce_scatter", ...
  std::string algorithm;
  int group_gpus = 0;
  int groups = 0;            // groups simulated together
  double bytes = 0;
  double analytic_s = 0;     // one group alone, analytic model
  double engine_s = 0;       // slowest group with all of them running, engine
};

struct EngineCheck {
  double analytic_step_s = 0;
  double engine_step_s = 0;
  std::vector<EngineCheckItem> items;  // the collectives that left their NVLink domain
};

// Engine runs already made for one system and calibration, by request (op, algorithm, bytes, dtype) and
// the groups run at once: a plan's top layouts often share collectives (the same DP groups, the same
// pipeline boundaries), which need not run twice. The engine's answers do not depend on what ran
// before, so a memo changes nothing but the time.
using EngineRunMemo = std::map<std::tuple<int, std::string, std::uint64_t, std::string, std::vector<std::vector<int>>>, double>;

// Re-estimates `candidate` with engine times for its cross-domain collectives; `check` receives what
// changed. The returned estimate replaces candidate.estimate when the caller wants the engine's view.
// `memo` (optional): runs of earlier checks on the same system and calibration, used and filled.
StepEstimate engine_check(const ModelSpec& model, const TrainingJob& job, const SystemContext& system,
                          const RankPlacement& placement, const Candidate& candidate, const Calibration& calibration,
                          EngineCheck* check, EngineRunMemo* memo = nullptr);

}  // namespace racksim
