#pragma once
// All-reduce time for a job with and without multi-node NVLink, from the analytic collective model
// (models/analytic, alpha-beta on the real topology and a calibration). "Without" is the same trays
// with MNNVL off: every tray its own NVLink domain (NVLink P2P inside the tray still works) and the
// scale-out NICs between trays (what NCCL does with NCCL_MNNVL_ENABLE=0).
#include <cstdint>
#include <string>
#include <vector>

#include "sim/calib/calibration.hpp"

namespace racksim {
class TopologyGraph;
}

namespace racksim::fabric {

struct AllReduceEstimate {
  double seconds = 0;
  std::string algorithm;  // auto's pick, or "bandwidth-only" when the analytic model could not be used
  std::string note;       // why it fell back, if it did
};

// On `graph` as it is (MNNVL where the NVLink domain spans trays).
AllReduceEstimate allreduce_with_mnnvl(const TopologyGraph& graph, const std::vector<int>& gpus, std::uint64_t bytes,
                                       const Calibration& calibration);
// On the same system with MNNVL off: one NVLink domain per tray.
AllReduceEstimate allreduce_without_mnnvl(const TopologyGraph& graph, const std::vector<int>& gpus, std::uint64_t bytes,
                                          const Calibration& calibration);

}  // namespace racksim::fabric
