#pragma once
// TrayMemoryModel: one compute tray (one Linux host) as the kernel and the NVIDIA driver see its memory
// (seed course module 5, sections 2-3). CPU nodes hold the CPUs' memory (LPDDR5X on Grace, DDR on x86);
// on coherent trays (GPU attached by NVLink-C2C) each GPU is a memory-only NUMA node whose HBM the
// kernel manages in NUMA mode and the driver keeps in CDMM. PCIe GPUs are never NUMA nodes. Integrated
// GPUs (DGX Spark) have no memory of their own. Built from the topology's tray, plus MemoryParams.
#include <cstdint>
#include <string>
#include <vector>

#include "models/memory/memory_params.hpp"
#include "sim/topo/topology_spec.hpp"

namespace racksim::memory {

enum class NodeKind { cpu, gpu };
const char* to_string(NodeKind kind);

struct MemoryNode {
  std::string id;                  // tray-local device id from the topology: "cpu0", "gpu2"
  NodeKind kind = NodeKind::cpu;
  int numa_id = 0;
  int host_cpu = 0;                // node index of the CPU node this node belongs to (itself for CPUs)
  std::string memory_kind;         // "LPDDR5X", "HBM"
  std::uint64_t capacity_bytes = 0;
  double bandwidth_Bps = 0;        // the memory's own bandwidth (LPDDR per CPU, HBM per GPU)
  bool kernel_visible = false;     // the kernel's page allocator manages this memory
  bool integrated = false;         // integrated GPU: no memory of its own (capacity 0)
  std::uint64_t os_reserved_bytes = 0;      // CPU nodes: kernel, services, other processes
  std::uint64_t driver_reserved_bytes = 0;  // GPU nodes: what the driver keeps
  std::uint64_t watermark_bytes = 0;        // this node's share of vm.min_free_kbytes
};

// A GPU's link to its host CPU, per direction.
struct HostLink {
  LinkKind kind = LinkKind::pcie;
  double bandwidth_Bps = 0;        // per direction, the whole link (before sharing)
  double latency_s = 0;
  int sharers = 1;                 // GPUs sharing this capacity (C2C share group when c2c_shared)
  std::string share_group;         // "" if none
  std::string source;
};

class TrayMemoryModel {
 public:
  TrayMemoryModel(const TopologySpec& spec, MemoryMode mode, TuningSettings tuning, TrayAssumptions assumptions);

  const std::string& system() const { return system_; }
  const std::string& tray_name() const { return tray_name_; }
  MemoryMode mode() const { return mode_; }
  const TuningSettings& tuning() const { return tuning_; }
  const TrayAssumptions& assumptions() const { return assumptions_; }
  const std::vector<MemoryNode>& nodes() const { return nodes_; }
  const MemoryNode& node(int index) const { return nodes_.at(index); }
  int node_count() const { return static_cast<int>(nodes_.size()); }
  // True when every GPU has its own HBM and reaches its CPU over NVLink-C2C (Grace trays): GPU NUMA
  // nodes exist, NUMA mode and CDMM differ.
  bool coherent() const { return coherent_; }
  // True when the GPUs translate with the CPU's page tables (ATS): C2C-attached or integrated (GB10).
  bool ats() const { return ats_; }
  bool integrated() const { return integrated_; }  // every GPU shares the CPU's memory (DGX Spark)

  // "cpu0", "gpu3" or "nodeN" (NUMA id N); -1 if none.
  int find_node(const std::string& text) const;
  // Accepted node names, for error messages ("cpu0, cpu1, gpu0..gpu3 or node0..node5").
  std::string node_names() const;
  std::vector<int> cpu_nodes() const;
  std::vector<int> gpu_nodes() const;

  int distance(int a, int b) const;  // SLIT distance (TrayAssumptions)
  // The kernel's zonelist from node `from`: kernel-visible nodes with memory, nearest first; ties as
  // Linux's find_next_best_node breaks them (a node numbered below `from` and a node with CPUs each
  // cost 1; then the lower id).
  std::vector<int> fallback_order(int from) const;

  const HostLink& host_link(int gpu_node) const;  // InputError if the node is not a GPU node
  // CPU-to-CPU link between two CPU nodes (per direction); bandwidth 0 when the tray has none.
  HostLink cpu_cpu_link(int cpu_a, int cpu_b) const;

  // A GPU's NVLink bandwidth per direction (all its links) and one-way latency through the switch;
  // 0 when the system has no NVLink domain.
  double nvlink_Bps() const { return nvlink_Bps_; }
  double nvlink_latency_s() const { return nvlink_latency_s_; }

  // Kernel memory reserve (vm.min_free_kbytes) in bytes and how it was obtained.
  std::uint64_t min_free_bytes() const { return min_free_bytes_; }
  const std::string& min_free_source() const { return min_free_source_; }
  // Zones khugepaged counts in its min_free_kbytes recommendation.
  int zones_counted() const { return zones_counted_; }
  // MemTotal: what the kernel manages (Kubernetes' node memory capacity).
  std::uint64_t kernel_memory_bytes() const;
  std::uint64_t gpu_memory_bytes() const;  // sum of GPU node capacities

 private:
  void compute_min_free();

  std::string system_, tray_name_;
  MemoryMode mode_;
  TuningSettings tuning_;
  TrayAssumptions assumptions_;
  std::vector<MemoryNode> nodes_;
  std::vector<HostLink> host_links_;   // per node (only GPU entries meaningful)
  std::vector<std::pair<std::pair<int, int>, HostLink>> cpu_links_;
  bool coherent_ = false, ats_ = false, integrated_ = false;
  double nvlink_Bps_ = 0, nvlink_latency_s_ = 0;
  std::uint64_t min_free_bytes_ = 0;
  std::string min_free_source_;
  int zones_counted_ = 0;
};

}  // namespace racksim::memory
