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

namespace racksim {

class CommCost;
struct TrainingJob;
struct ModelSpec;
struct SystemContext;

// For a MoE layout: where the EP groups run and what that saves. Prices the layout's dispatch and
// combine on its real EP group and on a group of the same size spread over as many fast domains as the
// job has (or, when EP already crosses domains and fits in one, packed into one domain), so the answer
// says by how much keeping EP inside the NVLink domain matters; and what the same layout would need in
// memory without EP (every GPU holding every routed expert of its layers). "" for dense models or EP = 1.
std::string explain_expert_placement(const Candidate& best, const RankPlacement& placement, CommCost& comm,
                                     const ModelSpec& model, const TrainingJob& job, const SystemContext& sys);

}  // namespace racksim
