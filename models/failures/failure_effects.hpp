#pragma once
// What failures do to jobs that are running (docs/failures.md has each rule and its source):
//  * a job with a rank on a GPU that is down, parked or in an UNHEALTHY partition dies: a synchronous NCCL
//    communicator cannot lose members (seed course section 8, "Failure domains");
//  * a job whose traffic used a NIC that died dies too (its connections are gone) and restarts at once
//    through a neighbour GPU's NIC (PXN), slower;
//  * a job that only loses bandwidth (adaptive-bandwidth mode, an IB uplink cable, a degraded link)
//    continues, slower;
//  * a dead IMEX daemon does not stop running jobs (IMEX is the control path; the data path is loads and
//    stores over NVLink, seed course section 6), but a job that must restart across that tray cannot.
// It also says how long until each dead job runs again, and each partition's NMX-M health state.
#include <set>
#include <string>
#include <vector>

#include "models/failures/recovery.hpp"
#include "sim/engine/failure_scenario.hpp"

namespace racksim {

class TopologyGraph;
class PlatformModel;
struct PartitionHealth;
struct JobFate;

struct JobFootprint {
  std::string name;
  std::vector<int> gpus;
  std::set<std::string> links;  // platform links its healthy run put bytes on
};

// The fate of every job (time_after_s left for the caller to simulate), in `jobs` order.
std::vector<JobFate> job_fates(const TopologyGraph& graph, const PlatformModel& failed, const FailureScenario& failures,
                               const std::vector<JobFootprint>& jobs, const RecoveryTimes& recovery);

// NMX-M health of every partition (or physical NVLink domain when none are set) under the failures;
// `healthy` is the same platform without them.
std::vector<PartitionHealth> partition_health(const TopologyGraph& graph, const PlatformModel& failed,
                                              const PlatformModel& healthy, const FailureScenario& failures);

// The failures that act on the data path of jobs that keep running (everything but IMEX daemons).
FailureScenario data_path_failures(const FailureScenario& failures);

}  // namespace racksim
