#pragma once
// The one table of collective algorithms ("all_reduce/ring", "all_reduce/nvls", ...). Each algorithm
// lives in models/collectives/<op>/<algorithm>.cpp and is listed once in registry.cpp. An unknown name
// is an InputError listing the valid ones for that op.
#include <string>
#include <vector>

#include "models/collectives/schedule.hpp"

namespace racksim {

class TopologyGraph;
struct Calibration;

struct AlgorithmInfo {
  CollectiveOp op;
  std::string name;          // "ring"; full name "all_reduce/ring"
  std::string description;   // one line: what it models
  // Builds the schedule. Throws InputError when the algorithm cannot run on this request and topology
  // (e.g. nvls on a system without multicast_reduction), saying why.
  Schedule (*build)(const CollectiveRequest& request, const TopologyGraph& graph);
};

const std::vector<AlgorithmInfo>& algorithm_table();
// Finds op/name; InputError listing the valid names for the op (plus "auto") when unknown.
const AlgorithmInfo& find_algorithm(CollectiveOp op, const std::string& name);
std::vector<std::string> algorithm_names(CollectiveOp op);  // without "auto"

// Checks the request against the graph (ranks distinct and present, bytes in (0, 1 TiB], chunk size,
// root) and builds the schedule. "auto" is resolved by models/analytic/auto_select.hpp with the analytic
// model at calibration none (vendor peaks), or with `calibration` in the second form; Schedule::note
// records the pick and every candidate's time.
Schedule build_schedule(const CollectiveRequest& request, const TopologyGraph& graph);
Schedule build_schedule(const CollectiveRequest& request, const TopologyGraph& graph, const Calibration& calibration);

}  // namespace racksim
