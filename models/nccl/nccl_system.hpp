#pragma once
// What NCCL sees of a communicator: the facts its topology search and tuner read (src/graph/topo.cc,
// paths.cc, search.cc, tuning.cc), derived from racksim's topology graph and the ranks' GPUs. Plain data:
// the decision model (nccl_graphs, nccl_tuner) is a function of this and of the request only, so a test
// can write one by hand.
#include <optional>
#include <string>
#include <vector>

#include "models/nccl/nccl_constants.hpp"

namespace racksim {
class TopologyGraph;
}

namespace racksim::nccl {

struct NcclSystem {
  int n_ranks = 1;
  // NCCL's node: the GPUs sharing one fused topology (init.cc:1095-1110): an HGX box, or a whole multi-node
  // NVLink (MNNVL) domain such as an NVL72 rack (the topologies of its trays are fused, init.cc:914).
  int n_nodes = 1;
  int min_local_ranks = 1, max_local_ranks = 1;
  int min_compcap = 90, max_compcap = 90;
  bool mnnvl = false;          // a node spans several hosts (trays) joined by NVLink
  // Inside a node.
  bool nvswitch = false;       // GPUs reach each other through NVSwitch (NCCL's NVS node)
  bool nvls_support = false;   // the switches reduce and multicast (NVLink SHARP), compute capability >= 90
  double nvlink_bw = 0;        // per GPU towards the switch, NCCL units: links x SMxx_NVLINK_BW (topo.h)
  int intra_path = kPathNvl;   // NCCL path type between two GPUs of a node (NVL, or PIX..SYS over PCIe)
  double intra_pci_bw = 0;     // GPU PCIe bandwidth in NCCL units when GPUs talk over PCIe
  // Towards the network (only with n_nodes > 1).
  int nics_per_node = 0;       // NICs in the node's hosts (the fewest over nodes)
  double net_bw = 0;           // per NIC, NCCL units (speed Mb/s / 8000, topo.cc:373)
  double gpu_nic_bw = 0;       // bandwidth of a GPU's path to its NIC (the slowest link on it), NCCL units
  int gpu_nic_path = kPathPix; // NCCL path type GPU -> its NIC: PIX (NIC on the GPU's PCIe), P2C (C2C + CPU PCIe)
  double net_latency_us = 0;   // the latency the net plugin reports, which NCCL's tuner adds per network step
                               // (IB plugin: 0; aws-ofi-nccl on p5: 75 us; topology scale_out.transport)
  // A transport that is not IB/RoCE verbs (scale_out.transport): its own latency per network step and its
  // extra cost per step with Simple. NCCL's choice never sees them (it knows only hwLat[NET] and the plugin's
  // latency above); racksim's time takes them instead of both, in the timing view.
  std::optional<double> transport_step_us;
  double transport_simple_overhead_us = 0;
  // false: NCCL's view (what its tuner estimates and chooses by); true: racksim's time (timing_view).
  bool timing = false;
  // The network can reduce (CollNet, SHARP): an InfiniBand scale-out fabric (sim/topo) and a NIC of its own
  // for every rank, so that each CollNet head sends through its own rail.
  bool collnet_fabric = false;
  // The NCCL release whose tuner tables and search speeds apply (nccl_constants.hpp; CollectiveRequest::nccl_version).
  TunerRelease release = TunerRelease::v2_28;
  // CPU of the hosts (NCCL's cpuArch / cpuVendor: LL limits index tuning.cc:252, net overhead tuning.cc:214).
  std::string cpu_isa = "x86_64";
  std::string cpu_vendor = "intel";

  double ppn() const { return static_cast<double>(n_ranks) / n_nodes; }
  // One line: "8 ranks, 1 node (8/node), sm90, NVSwitch 370.8 GB/s/GPU, NVLS", for notes and errors.
  std::string describe() const;
};

// `s` as racksim times it: network steps at the transport's own latency where the topology names one
// (scale_out.transport), not at NCCL's IB figures plus the latency the plugin reports; the same as `s` on
// InfiniBand/RoCE.
NcclSystem timing_view(NcclSystem s);

// Derives NCCL's view of the ranks `gpus` (global GPU indices) on `graph`. Nodes are the NVLink domains
// the ranks span (a GPU without NVLink is a node with the rest of its tray). InputError when a node's
// GPUs differ in compute capability is not needed: NCCL takes the min and max (min_compcap/max_compcap).
NcclSystem nccl_system(const TopologyGraph& graph, const std::vector<int>& gpus,
                       TunerRelease release = TunerRelease::v2_28);

// The tuner tables of an NCCL version as nccl-tests and logs print it ("2.28", "2.27.3", "2.26.6+cuda12.8",
// or the nccl-library code "22602"): 2.18-2.27 take 2.27's (2.18-2.24 are older than these tables, the
// oldest racksim has: tuner_release_caveat says how near), 2.28 2.28's, 2.29 2.29's, 2.30 and later 2.30's. InputError
// otherwise (`where` names the option or file field the version came from); 2.17 and older (no NVLS-tree) too.
TunerRelease tuner_release(const std::string& nccl_version, const std::string& where = "--nccl-version");
// The same, or nullopt where the text names no version racksim has tables for (published records).
std::optional<TunerRelease> tuner_release_if_known(const std::string& nccl_version);
// "" for a version with tables of its own; for 2.18-2.24, one sentence on pricing it with 2.27's tables and
// how its tuning.cc differs from them on Hopper (results carry it as a warning).
std::string tuner_release_caveat(const std::string& nccl_version);

}  // namespace racksim::nccl
