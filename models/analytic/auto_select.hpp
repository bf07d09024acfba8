#pragma once
// "auto": evaluates every algorithm of the op that can run on the request and topology with the
// analytic model and picks the fastest (ties: the earlier in the registry table), like NCCL's tuner
// picks an algorithm per size from its own cost model.
#include <string>
#include <utility>
#include <vector>

#include "models/collectives/collective.hpp"
#include "sim/calib/calibration.hpp"

namespace racksim {

class TopologyGraph;

struct AutoChoice {
  std::string algorithm;                               // the pick ("nvls")
  std::vector<std::pair<std::string, double>> times;  // every applicable algorithm and its time in s
  std::vector<std::pair<std::string, std::string>> skipped;  // not applicable, and why
  std::string note;                                    // "auto: nvls 12.3 us; ring 40.1 us, ..."
};

// InputError if no algorithm applies (the reasons of each are listed).
AutoChoice select_algorithm(const TopologyGraph& graph, const CollectiveRequest& request,
                            const Calibration& calibration);

}  // namespace racksim
