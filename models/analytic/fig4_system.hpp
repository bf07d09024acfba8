#pragma once
// The course's Fig 4 model (fig4_allreduce_time_s, seed course section 7) on a real system: ranks placed
// as every collective places them, d and D from the NVLink domains they land in, B_nvl (all of one GPU's
// NVLinks) and B_nic (its NIC) from the topology unless overridden, both scaled by an efficiency.
// Shared by `racksim fig4` and racksim.fig4() so that the two give the same numbers.
#include <cstdint>
#include <optional>
#include <string>

#include "models/analytic/analytic_model.hpp"

namespace racksim {

class TopologyGraph;

// The course's "fixed per-phase latency" has no value in the seed. Assumption: 5 us, the top of NCCL's
// base network latency (NCCL src/graph/tuning.cc: NET 2.7-5 us).
inline constexpr double kFig4PhaseLatencyUs = 5.0;

struct Fig4Options {
  bool nvls = false;
  double phase_latency_us = kFig4PhaseLatencyUs;
  std::optional<double> nvlink_GBps, nic_GBps;  // per direction, 1e9 bytes/s; unset: the topology's
  double efficiency = 1.0;                      // (0, 1]: the course says real NCCL reaches ~70-90 %
};

struct Fig4Result {
  Fig4Inputs inputs;  // what the formula was evaluated on (bandwidths after efficiency)
  int gpus = 0;
  double time_s = 0;
};

// `where` prefixes the names in error messages ("--" for the CLI, "" for Python keyword arguments).
// InputError for bad counts, sizes, efficiency, an override <= 0, NVLS on a system without it, or ranks
// across NVLink domains on a system without a NIC.
Fig4Result fig4_on_system(const TopologyGraph& graph, int gpus, std::uint64_t bytes, const Fig4Options& options,
                          const std::string& where = "--");

}  // namespace racksim
