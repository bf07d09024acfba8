#pragma once
// PlanResult as JSON (deterministic: sorted keys where maps, values rounded to 6 significant digits) or
// as a plain-text report for a terminal.
#include <string>

#include "models/planner/plan.hpp"

namespace racksim {

std::string plan_to_json_text(const PlanResult& plan);
std::string plan_to_table_text(const PlanResult& plan);
// "rack 0: trays 0-15 -> ranks 0-63; trays 16-17 spare", one line per rack.
std::vector<std::string> rank_map_lines(const PlanResult& plan);

}  // namespace racksim
