#pragma once
// TopologySpec: one system as plain data, exactly as its topologies/<id>.json file says (schema v1,
// documented in topologies/SCHEMA.md). Loading validates every value; to_json writes it back so that
// load(to_json(spec)) == spec. The graph (topology_graph.hpp) instantiates it for R racks.
#include <map>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace racksim {

inline constexpr int kTopologySchemaVersion = 1;
// A link's or NIC's bandwidth in a topology file (and --nic-GBps): [kMinLinkBandwidth_GBps, kMaxBandwidth_GBps].
inline constexpr double kMinLinkBandwidth_GBps = 1e-6;  // 1 kB/s: slower is a typo (or a unit mix-up)
inline constexpr double kMaxBandwidth_GBps = 1e6;       // 1 PB/s: far above any link; larger is a typo
// A latency or a fixed time in a topology or calibration file: [0, kMaxLatency_us]. A second is far above any
// link's, launch's or step's; larger is a typo (or microseconds taken for nanoseconds).
inline constexpr double kMaxLatency_us = 1e6;

enum class LinkKind { nvlink, c2c, pcie, cpu_cpu, nic, ib };
const char* to_string(LinkKind kind);
// Parses "nvlink", "c2c", "pcie", "cpu-cpu", "nic", "ib"; nullopt otherwise.
std::optional<LinkKind> link_kind_from_string(const std::string& text);

struct GpuType {
  std::string id, name;
  // HBM as the driver reports it (nvidia-smi's FB Memory Total, MiB x 2^20): what memory fit and
  // placement use. NVIDIA's "186 GB" is close to the GiB count (189471 MiB = 185.0 GiB = 198.7e9 B), so
  // reading it as 10^9 bytes understated capacity by 5-7 % (issue 16).
  std::uint64_t hbm_capacity_bytes = 0;
  double hbm_marketed_GB = 0;     // NVIDIA's figure ("186 GB"), for display next to the bytes only
  double hbm_bandwidth_GBps = 0;
  int sm_count = 0;
  int nvlink_ports = 0;           // NVLink links per GPU (0: no NVLink)
  int compute_capability = 0;     // CUDA SM version x10 (H100 90, B200 100, B300 103): NCCL picks its tables by it
  bool integrated = false;        // shares the CPU's memory (DGX Spark's GB10)
  std::string source;
  bool operator==(const GpuType&) const = default;
};

struct CpuType {
  std::string id, name;
  int cores = 0;
  std::string isa;                // "x86_64" or "aarch64" (NCCL's cpuArch: its LL limits and net overhead)
  std::string vendor;             // "intel", "amd", "nvidia" or "other" (NCCL's cpuVendor)
  std::string memory_kind;        // "LPDDR5X", "DDR5", ...
  double memory_capacity_GB = 0;  // per CPU (one NUMA node)
  double memory_bandwidth_GBps = 0;
  std::string source;
  bool operator==(const CpuType&) const = default;
};

struct NicType {
  std::string id, name;
  double bandwidth_GBps = 0;      // per direction
  double latency_us = 0;          // NIC processing, one way
  std::string source;
  bool operator==(const NicType&) const = default;
};

struct LinkType {
  std::string id;
  LinkKind kind = LinkKind::pcie;
  double bandwidth_GBps = 0;      // per direction, one link
  double latency_us = 0;          // one way
  int lanes = 0;                  // physical lanes of one link (PCIe x16 -> 16, NVLink 5 -> 2)
  std::string source;
  bool operator==(const LinkType&) const = default;
};

struct TrayCpu {
  std::string id, type;
  bool operator==(const TrayCpu&) const = default;
};
struct TrayGpu {
  std::string id, type, cpu;  // cpu: the host NUMA node the GPU is attached to
  bool operator==(const TrayGpu&) const = default;
};
struct TrayNic {
  std::string id, type, gpu;  // gpu: the GPU whose rail this NIC serves
  bool operator==(const TrayNic&) const = default;
};
struct TrayLink {
  std::string a, b, type;
  std::string share_group;  // links of one tray with the same non-empty group share one capacity (C2C)
  bool operator==(const TrayLink&) const = default;
};

struct TraySpec {
  std::string name;
  std::vector<TrayCpu> cpus;
  std::vector<TrayGpu> gpus;
  std::vector<TrayNic> nics;
  std::vector<TrayLink> links;
  std::string source;
  bool operator==(const TraySpec&) const = default;
};

// rack.max_racks when a file gives none: no fixed cap, the memory estimate of the graph and of the run
// decides (estimate_graph in sim/topo/topology_graph.hpp, issue 14). A number, not a flag, so that code
// comparing rack counts with it needs no special case; 2^20 racks keeps products with GPUs per rack in int.
inline constexpr int kUncappedRacks = 1 << 20;

struct RackSpec {
  int trays = 1;          // compute trays (or nodes) per rack
  int default_racks = 1;  // racks when the user does not say (gb200-nvl36x2: 2)
  int max_racks = kUncappedRacks;  // a fixed, physical cap (single hosts: 1), or kUncappedRacks
  // What one of `--racks` is called in what racksim prints: "rack" (NVL72: 18 trays) or "node" (HGX and
  // single hosts, where a "rack" is one 8-GPU node): "hgx-h100 x8 node(s)", not "x8 rack(s)".
  std::string unit = "rack";
  std::string source;
  bool capped() const { return max_racks < kUncappedRacks; }
  // "4 rack(s)" / "4 node(s)".
  std::string count_label(long count) const { return std::to_string(count) + " " + unit + "(s)"; }
  bool operator==(const RackSpec&) const = default;
};

// Which switch chips a GPU's NVLinks reach: every chip of the domain (NVL72, HGX), or only the chips in
// the GPU's own rack, the racks' chips being joined by a switch-to-switch trunk (NVL36x2's OSFP cables).
enum class GpuLinksScope { domain, rack };
const char* to_string(GpuLinksScope scope);

struct NvlinkDomainSpec {
  int racks = 1;                         // racks whose trays form one NVLink domain
  int switch_trays = 0;                  // per domain (rack scope: split evenly over its racks)
  int chips_per_switch_tray = 1;
  std::string chip_name;
  std::vector<int> gpu_links_per_chip;   // links from each GPU to each chip it reaches (domain scope: every
                                         // chip of the domain; rack scope: every chip of one rack)
  std::string link_type;                 // a link_types id of kind nvlink
  double switch_latency_us = 0;
  bool multicast_reduction = false;      // NVLS (NVLink SHARP) capable
  GpuLinksScope gpu_links_scope = GpuLinksScope::domain;
  double inter_rack_latency_us = 0;      // rack scope: one-way latency of the trunk between racks' chips
  std::string source;
  bool operator==(const NvlinkDomainSpec&) const = default;
};

// How NCCL's network steps reach the wire when that is not InfiniBand/RoCE verbs. NCCL's latency table
// (tuning.cc hwLat[NET]: 2.7-14 us a step by algorithm and protocol) describes its IB plugin (net_ib.cc, which
// reports a latency of 0). Another transport's plugin has its own per-step cost and reports its own latency to
// NCCL's tuner, e.g. AWS EFA through aws-ofi-nccl (topologies/aws-p5.json). Absent: NCCL's IB figures.
struct NetTransportSpec {
  std::string name;                      // "AWS EFA (SRD) through aws-ofi-nccl"
  double net_step_latency_us = 0;        // one network step's latency, every algorithm and protocol (replaces
                                         // hwLat[NET] in racksim's time)
  double simple_step_overhead_us = 0;    // added per network step with the Simple protocol (completions)
  double plugin_latency_us = 0;          // the latency the plugin reports to NCCL (ncclNetProperties.latency):
                                         // NCCL's tuner adds it per network step (twice for Simple) when it
                                         // chooses; racksim's time does not (it is a selection bias)
  std::string source;
  bool operator==(const NetTransportSpec&) const = default;
};
// One line: "<name>: 20 us a network step (3 more with Simple), 75 us reported to NCCL".
std::string describe(const NetTransportSpec& transport);

struct ScaleOutSpec {
  std::string fabric;                    // "InfiniBand NDR, rail-optimised"
  double switch_latency_us = 0;          // per switch hop
  double oversubscription = 1;           // >= 1; 1 = non-blocking
  std::optional<NetTransportSpec> transport;  // absent: InfiniBand/RoCE verbs (NCCL's own figures)
  std::string source;
  bool operator==(const ScaleOutSpec&) const = default;
  // The switches can reduce in the network (InfiniBand SHARP: NCCL's CollNet); RoCE and EFA cannot.
  bool infiniband() const { return fabric.find("InfiniBand") != std::string::npos; }
};

// Every struct of a spec compares field by field (defaulted ==: a field added is compared too);
// topology_json_text_of relies on it.
struct TopologySpec {
  int schema_version = kTopologySchemaVersion;
  std::string id, description;
  std::map<std::string, std::string> references;  // key -> citation (address or seed section)
  std::vector<GpuType> gpu_types;
  std::vector<CpuType> cpu_types;
  std::vector<NicType> nic_types;
  std::vector<LinkType> link_types;
  TraySpec tray;
  RackSpec rack;
  std::optional<NvlinkDomainSpec> nvlink_domain;
  std::optional<ScaleOutSpec> scale_out;

  const GpuType& gpu_type(const std::string& id) const;
  const CpuType& cpu_type(const std::string& id) const;
  const NicType& nic_type(const std::string& id) const;
  const LinkType& link_type(const std::string& id) const;
  bool operator==(const TopologySpec&) const = default;
};

// The fewest racks, in whole NVLink domains, that hold `gpus` GPUs (one rack for 0 or fewer): 144 GPUs on
// gb200-nvl72 are 2 racks, on hgx-b200 18 nodes. Not checked against rack.max_racks.
int racks_to_hold(const TopologySpec& spec, int gpus);
// GPUs in one NVLink domain of the unpartitioned system: the domain's racks x trays x GPUs per tray, or one
// node without NVSwitch (TopologyGraph::gpus_per_domain, before any partitioning).
int gpus_per_nvlink_domain(const TopologySpec& spec);

// Parses and validates; `where` names the origin in errors (usually the file path).
TopologySpec topology_from_json_text(const std::string& text, const std::string& where);
TopologySpec load_topology_file(const std::string& path);
// The JSON text of `spec` for an engine request (engine_server.hpp): the text of the file it was read from
// by load_topology_file in this process when `spec` is still what that text gives (compared field by
// field), else topology_to_json_text(spec). Either text reads back to `spec`; the file's saves serialising
// it again for every call (~0.2 ms of the CLI's 8-GPU call).
std::string topology_json_text_of(const TopologySpec& spec);
// Canonical JSON text (sorted keys, 2-space indent) that topology_from_json_text reads back.
std::string topology_to_json_text(const TopologySpec& spec);

}  // namespace racksim
