#pragma once
// An IMEX / MNNVL check as JSON (the `racksim imex-check --format json` contract) and as text.
#include <optional>
#include <string>

#include "models/fabric/imex.hpp"

namespace racksim::fabric {

struct ImexReport {
  std::string system;
  int racks = 1;
  std::string rack_unit = "rack";         // the topology's rack.unit: "node" on HGX (text only)
  JobRequest job;
  JobVerdict verdict;
  std::vector<GpuFabricInfo> gpus;        // the job's GPUs (or all, when asked)
  std::vector<std::vector<int>> imex_domains, partitions;  // as used (defaults filled in)
  std::optional<ShareResult> share;       // a buffer share between two GPUs, if asked
  int share_exporter = -1, share_importer = -1;
};

// Keys: system, racks, job {gpus, trays, nccl_version, nccl_mnnvl_enable, nccl_p2p_disable, channel,
// bytes}, outcome, runs, uses_mnnvl, message, checks [{name, command, ok, detail}], failed_checks,
// nvlink_groups, estimate {nvlink_allreduce_s, ib_allreduce_s, expected_allreduce_s, nvlink_algorithm,
// ib_algorithm, calibration, bandwidth_only_nvlink_s, bandwidth_only_ib_s, note},
// gpus [{gpu, name, tray, state, status, cluster_uuid, clique_id}], share (if asked).
std::string imex_report_to_json_text(const ImexReport& report);
std::string imex_report_to_text(const ImexReport& report);

}  // namespace racksim::fabric
