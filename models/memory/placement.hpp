#pragma once
// Allocation placement on one tray, in order, by the kernel's and the driver's rules (seed course
// module 5, sections 3-5 and self-check 1):
//   cpu      malloc/mmap pages, first touch from a CPU node, with a NUMA policy (local, preferred, bind,
//            interleave). The kernel walks its zonelist (TrayMemoryModel::fallback_order): in NUMA mode
//            that reaches the GPU nodes' HBM once the CPU nodes are full; in CDMM it cannot. Then swap,
//            then the OOM killer.
//   cuda     cudaMalloc on one GPU: only that GPU's HBM. NUMA mode: the pages come from the kernel's
//            allocator on the GPU node, so CPU pages the kernel spilled there make it fail while
//            nvidia-smi shows free memory; only swapping them out frees them.
//   managed  cudaMallocManaged, first touched from a GPU (HBM, oversubscription evicts to the GPU's
//            CPU node) or a CPU (CPU nodes).
//   pinned   cudaHostAlloc: CPU nodes only, never swapped.
//   egm      cuMemCreate on a host NUMA node (Extended GPU Memory): that CPU node only.
// Each allocation stands for one process (the OOM killer's unit).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "models/memory/tray_memory.hpp"

namespace racksim::memory {

enum class AllocKind { cpu, cuda, managed, pinned, egm };
const char* to_string(AllocKind kind);
enum class CpuPolicy { local, preferred, bind, interleave };
const char* to_string(CpuPolicy policy);

struct AllocationRequest {
  std::string name;
  AllocKind kind = AllocKind::cpu;
  std::uint64_t bytes = 0;
  CpuPolicy policy = CpuPolicy::local;  // cpu only
  int toucher = 0;                      // node index: first-touch CPU, the cudaMalloc GPU, managed's
                                        // first-touch device, pinned's CPU, EGM's host node
  std::vector<int> policy_nodes;        // preferred: 1 node; bind / interleave: the node set
  std::string text;                     // the request as written
};

// Parses NAME:KIND:SIZE[:NODE_OR_POLICY] (the `racksim place --alloc` syntax):
//   cpu      [cpuN | local=cpuN | preferred=NODE | bind=NODE,... | interleave=NODE,...|all] [@cpuN]
//            (default: first touch from the first CPU node, local policy; @cpuN: the touching CPU)
//   cuda     gpuN (required)
//   managed  gpuN | cpuN (first touch; default the first CPU node)
//   pinned   cpuN (default the first CPU node)
//   egm      cpuN (a host NUMA node; default the first CPU node)
// NODE: cpuN, gpuN or nodeN (NUMA id). SIZE: 1100GB, 64GiB, 512M (sim/core/units.hpp), > 0.
// Throws InputError naming `where`, the bad part and what is allowed.
AllocationRequest parse_allocation(const std::string& text, const TrayMemoryModel& tray, const std::string& where);
// "first touch cpu0, local", "bind cpu0,cpu1 (touched from cpu0)", "cudaMalloc on gpu2", ...
std::string describe_request(const AllocationRequest& request, const TrayMemoryModel& tray);

enum class Outcome { placed, failed, oom_killed };
const char* to_string(Outcome outcome);

struct AllocationResult {
  AllocationRequest request;
  std::map<int, std::uint64_t> placed;      // node index -> bytes (for a killed process: at the kill)
  std::uint64_t swapped_bytes = 0;          // pages in swap
  std::uint64_t spilled_to_gpu_bytes = 0;   // CPU pages the kernel put on GPU nodes (NUMA mode)
  std::uint64_t off_target_bytes = 0;       // bytes outside the node(s) the request aimed at
  std::uint64_t swap_needed_bytes = 0;      // bytes that did not fit in memory: swap needed to avoid failure
  std::uint64_t reclaimed_bytes = 0;        // other processes' pages swapped out to make room
  std::uint64_t evicted_to_host_bytes = 0;  // managed memory beyond free HBM (UVM oversubscription)
  std::uint64_t cgroup_charged_bytes = 0;   // memory.current charge (Kubernetes pod usage)
  double zeroing_s = 0;                     // init_on_alloc: kernel zeroing of cudaMalloc'd HBM (NUMA mode)
  Outcome outcome = Outcome::placed;
  std::string reason;                       // why it failed, or how it landed
  bool failed() const { return outcome != Outcome::placed; }
  bool resident() const { return outcome == Outcome::placed; }
  std::uint64_t placed_bytes() const;
};

struct NodeUsage {
  std::uint64_t used_bytes = 0;                         // resident allocations
  std::uint64_t kernel_pages_bytes = 0;                 // pages of cpu allocations (spill on GPU nodes)
  std::uint64_t driver_bytes = 0;                       // driver allocations + reserve (GPU nodes)
  std::uint64_t free_bytes = 0;                         // what the next allocation here could get
  std::map<std::string, std::uint64_t> by_allocation;   // resident bytes per allocation name
};

struct PlacementResult {
  std::vector<AllocationResult> allocations;
  std::vector<NodeUsage> nodes;             // per TrayMemoryModel node
  std::uint64_t swap_capacity_bytes = 0, swap_used_bytes = 0;
  std::uint64_t k8s_node_capacity_bytes = 0;  // MemTotal: what the kubelet reports
  bool k8s_hbm_counted = false;
  std::uint64_t k8s_pod_usage_bytes = 0;      // all allocations taken as one pod
};

// Places the requests in order. Requests must come from parse_allocation on the same tray (or satisfy
// its rules); violations throw InputError.
PlacementResult place_allocations(const TrayMemoryModel& tray, const std::vector<AllocationRequest>& requests);

}  // namespace racksim::memory
