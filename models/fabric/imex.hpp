#pragma once
// IMEX and multi-node NVLink (MNNVL): who authorizes a cross-tray mapping, and whether a job's NCCL can
// use NVLink between trays (seed course module 5, sections 1, 6-8; NVIDIA MNNVL/IMEX guide).
// The fabric state is an input (FabricInputs): which trays each nodes_config.cfg lists (IMEX domains),
// the nvidia-imex service per tray, the IMEX channel devices on the hosts and in the job's containers,
// each GPU's fabric state, NVL72 partitions (clique ids), trays that are down. From it: each GPU's
// fabric state / ClusterUUID / CliqueId, the seed's checks in order, and for a job (ranks on trays)
// whether MNNVL works and what happens otherwise (NCCL >= 2.27: a failed MNNVL init is a hard error;
// NCCL_MNNVL_ENABLE=0: it runs over IB).
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace racksim {
class TopologyGraph;
}

namespace racksim::fabric {

enum class ImexService { running, stopped, not_installed };
const char* to_string(ImexService s);
// nvidia-smi -q "Fabric" State; not_supported is "N/A" (no multi-node NVLink on this system).
enum class FabricState { completed, in_progress, not_started, failed, not_supported };
const char* to_string(FabricState s);
FabricState fabric_state_from_string(const std::string& text, const std::string& where);

struct FabricInputs {
  // Trays (global indices) each nodes_config.cfg lists. Empty: one IMEX domain per NVLink domain with all
  // its trays (whole-rack IMEX).
  std::vector<std::vector<int>> imex_domains;
  std::map<int, ImexService> imex_service;   // per tray; missing: running
  std::set<int> host_channels = {0};         // /dev/nvidia-caps-imex-channels/channelN on every host
  // Channels passed into the job's containers; nullopt: not containerised (every host channel visible).
  std::optional<std::set<int>> container_channels = std::set<int>{0};
  std::map<int, FabricState> gpu_fabric;     // per global GPU index; missing: completed (N/A without MNNVL)
  // Trays per NVLink partition (different clique ids). Empty: each NVLink domain is one partition.
  std::vector<std::vector<int>> partitions;
  std::set<int> trays_down;                  // rebooting / failed trays: their GPUs left the domain
};

struct GpuFabricInfo {
  int gpu = -1;                  // global GPU index
  std::string name;              // "r0.t3.gpu1"
  int tray = -1;
  std::string state;             // "Completed", "In Progress", "Not Started", "Failed", "N/A"
  std::string status;            // "Success" when completed, else "N/A" / "Failure"
  std::string cluster_uuid;      // synthetic, one per NVLink domain ("" if N/A)
  int clique_id = -1;            // partition index + 1 (assumption: real ids are assigned by Fabric Manager)
};

// IMEX domains and partitions (trays, by clique id order) as used, defaults filled in. Validates the
// inputs (InputError for a tray out of range or listed twice, a partition across NVLink domains).
struct ResolvedFabric {
  std::vector<std::vector<int>> imex_domains, partitions;
};
ResolvedFabric resolve_fabric(const TopologyGraph& graph, const FabricInputs& in);

// The fabric view of every GPU (what `nvidia-smi -q | grep -A6 Fabric` would show).
std::vector<GpuFabricInfo> gpu_fabric_info(const TopologyGraph& graph, const FabricInputs& in);

struct Check {
  std::string name;              // "fabric state", "IMEX service", "IMEX peers", "IMEX domain", "IMEX channel", ...
  std::string command;           // what to run on a tray
  bool ok = true;
  std::string detail;
};

struct NcclConfig {
  std::string version = "2.28.9";  // MNNVL from 2.25.2; failed MNNVL init is fatal from 2.27
  int mnnvl_enable = 2;            // NCCL_MNNVL_ENABLE: 0 off, 1 on, 2 auto (default)
  bool p2p_disable = false;        // NCCL_P2P_DISABLE=1 implies MNNVL off
};

struct JobRequest {
  std::vector<int> gpus;           // global GPU indices of the ranks
  NcclConfig nccl;
  int channel = 0;                 // the IMEX channel the job's processes open
  std::uint64_t bytes = 1ULL << 30;  // all_reduce size per rank for the estimates
  std::string calibration = "default";  // for the analytic model: "default", "none" or a calibration JSON path
};

struct JobVerdict {
  // single_tray | mnnvl | mnnvl_partitioned | no_mnnvl_system | init_error | ib_fallback | ib_forced |
  // nccl_too_old | cannot_start
  std::string outcome;
  bool runs = false;               // the job gets past NCCL init
  bool uses_mnnvl = false;         // NVLink between its trays
  std::string message;
  std::vector<Check> checks;       // the seed's order (s6): fabric, IMEX service, peers, channel
  std::vector<std::string> failed_checks;
  std::vector<int> trays;
  int nvlink_groups = 0;           // sets of job GPUs that share one NVLink clique
  // all_reduce of `bytes` per rank from the analytic model (models/analytic, auto algorithm): with MNNVL
  // (the NVLink domain as the topology has it) and without (one NVLink domain per tray, NICs between),
  // and what this outcome gets. Jobs split by NVL72 partitions use the bandwidth-only form.
  double nvlink_allreduce_s = 0, ib_allreduce_s = 0, expected_allreduce_s = 0;
  std::string nvlink_algorithm, ib_algorithm, calibration;
  // The same two in the seed's bandwidth-only form (s7, Fig 4: vendor peaks, no latency): ring of n
  // ranks over NVLink; NVLink inside each tray plus a ring over the NICs on S/d per GPU.
  double bw_nvlink_s = 0, bw_ib_s = 0;
  std::string estimate_note;
};

JobVerdict check_job(const TopologyGraph& graph, const FabricInputs& in, const JobRequest& job);

// Self-check 4: sharing one GPU buffer between two processes (exporter and importer GPUs). same_process is
// the course's first case of Fig 3: one process drives both GPUs, so no handle leaves it (peer access).
enum class HandleType { automatic, posix_fd, fabric, same_process };
HandleType handle_type_from_string(const std::string& text, const std::string& where);
struct ShareStep {
  std::string step;                // export, send, import, map, access
  std::string how;                 // the API / mechanism
  std::string authority;           // who checks permission or does the work
};
struct ShareResult {
  bool ok = false;
  std::string handle;              // "posix_fd", "fabric" or "none" (same process)
  int handle_bytes = 0;            // 4 (an int fd), 64 (CU_MEM_HANDLE_TYPE_FABRIC) or 0
  std::vector<ShareStep> steps;
  std::string reason;              // why it fails, if it does
};
ShareResult share_buffer(const TopologyGraph& graph, const FabricInputs& in, int exporter_gpu, int importer_gpu,
                         HandleType handle, int exporter_channel = 0, int importer_channel = 0);

// "0-3,5,9-11" -> {0,1,2,3,5,9,10,11}; each in [0, count). InputError naming `where` otherwise.
std::vector<int> parse_index_list(const std::string& text, int count, const std::string& where);
// Compares dotted versions ("2.27.3" < "2.28"); InputError on a malformed one.
int compare_versions(const std::string& a, const std::string& b, const std::string& where);

}  // namespace racksim::fabric
