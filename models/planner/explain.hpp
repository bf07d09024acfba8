#pragma once
// Plain-words explanation of a layout and of why one layout beats another, from their step breakdowns.
#include <string>

#include "models/planner/search.hpp"

namespace racksim {

class RankPlacement;

// Where the layout's groups run: which dimensions stay inside an NVLink domain, which cross the NICs.
std::string describe_placement(const Candidate& best, const RankPlacement& placement, int domain_size);
// Why `best` is faster than `runner_up`: the step-time components that differ most, with numbers.
std::string explain_difference(const Candidate& best, const Candidate& runner_up);

}  // namespace racksim
