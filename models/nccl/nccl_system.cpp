#include "models/nccl/nccl_system.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim::nccl {

const char* to_string(Algo a) {
  static const char* names[] = {"Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"};
  return names[static_cast<int>(a)];
}
const char* to_string(Proto p) {
  static const char* names[] = {"LL", "LL128", "Simple"};
  return names[static_cast<int>(p)];
}
const char* path_type_name(int type) {
  static const char* names[] = {"LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS", "NET", "DIS"};
  return type >= 0 && type <= kPathDis ? names[type] : "?";
}

NcclSystem timing_view(NcclSystem s) {
  s.timing = true;
  return s;
}

std::string NcclSystem::describe() const {
  char buf[256];
  std::string intra = nvswitch ? "NVSwitch" : std::string("PCIe ") + path_type_name(intra_path);
  const double intra_bw = nvswitch ? nvlink_bw : intra_pci_bw;
  std::snprintf(buf, sizeof buf, "%d ranks, %d node(s) (%d-%d per node)%s, sm%d, %s %.1f GB/s per GPU%s", n_ranks, n_nodes,
                min_local_ranks, max_local_ranks, mnnvl ? " MNNVL" : "", min_compcap, intra.c_str(), intra_bw,
                nvls_support ? ", NVLS" : "");
  std::string s = buf;
  if (n_nodes > 1) {
    std::snprintf(buf, sizeof buf, "; %d NIC(s) per node at %.1f GB/s, GPU->NIC %s %.1f GB/s", nics_per_node, net_bw,
                  path_type_name(gpu_nic_path), gpu_nic_bw);
    s += buf;
  }
  return s;
}

namespace {

// NCCL's bandwidth for a PCIe link: width x per-lane speed / 80 GB/s (topo.cc:489-491), the generation
// read from racksim's raw per-lane figure (Gen3 ~1 GB/s, Gen4 ~2, Gen5 ~3.9, Gen6 ~7.6 per lane).
double nccl_pcie_bw(const Edge& e, const TopologySpec& spec) {
  const int lanes = e.type.empty() ? 16 : std::max(1, spec.link_type(e.type).lanes);
  const double per_lane_GBps = units::Bps_to_GBps(e.bandwidth_Bps) / lanes;
  const int gen = per_lane_GBps >= 6 ? 6 : per_lane_GBps >= 3 ? 5 : per_lane_GBps >= 1.5 ? 4 : per_lane_GBps >= 0.7 ? 3 : 2;
  return pcie_bw(gen, lanes);
}

int edge_between(const TopologyGraph& g, int a, int b) {
  for (int e : g.incident_edges(a))
    if (g.other_end(e, a) == b) return e;
  return -1;
}

}  // namespace

namespace {
// The minor version of an NCCL 2.x as nccl-tests and logs print it, or -1.
int nccl_minor(const std::string& nccl_version) {
  int major = 0, minor = 0;
  const std::string& v = nccl_version;
  if (v.size() == 5 && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    // nccl-tests' header code: major x 10000 + minor x 100 + patch (22602 = 2.26.2).
    const int code = std::stoi(v);
    major = code / 10000;
    minor = code / 100 % 100;
  } else {
    std::size_t i = 0;
    while (i < v.size() && v[i] >= '0' && v[i] <= '9') major = major * 10 + (v[i++] - '0');
    if (i == 0 || i >= v.size() || v[i] != '.') return -1;
    const std::size_t first = ++i;
    while (i < v.size() && v[i] >= '0' && v[i] <= '9' && i - first < 3) minor = minor * 10 + (v[i++] - '0');
    if (i == first || (i < v.size() && v[i] >= '0' && v[i] <= '9')) return -1;
    if (i < v.size() && v[i] != '.' && v[i] != '+' && v[i] != ' ' && v[i] != '-') return -1;
  }
  return major == 2 && minor <= 99 ? minor : -1;
}

// The oldest NCCL racksim prices: 2.18, the first with NVLS-tree (NVLS itself came with 2.17), which every
// Hopper NVSwitch system's choice needs.
constexpr int kOldestMinor = 18;
// The oldest whose tuner tables racksim has (2.25); older releases take these, the nearest.
constexpr int kOldestTablesMinor = 25;
}  // namespace

std::optional<TunerRelease> tuner_release_if_known(const std::string& nccl_version) {
  const int minor = nccl_minor(nccl_version);
  if (minor < kOldestMinor) return std::nullopt;
  if (minor <= 26) return TunerRelease::v2_26;
  if (minor <= 29) return minor == 27 ? TunerRelease::v2_27 : minor == 28 ? TunerRelease::v2_28 : TunerRelease::v2_29;
  return TunerRelease::v2_30;  // 2.30 and later (2.31: no source here) take 2.30.7's
}

const char* release_name(TunerRelease r) {
  switch (r) {
    case TunerRelease::v2_26: return "2.26";
    case TunerRelease::v2_27: return "2.27";
    case TunerRelease::v2_28: return "2.28";
    case TunerRelease::v2_29: return "2.29";
    case TunerRelease::v2_30: return "2.30";
  }
  return "2.28";
}

TunerRelease tuner_release(const std::string& nccl_version, const std::string& where) {
  if (const auto r = tuner_release_if_known(nccl_version)) return *r;
  throw InputError(where, "", nccl_version.empty() ? "(empty)" : nccl_version,
                   "an NCCL version from 2.18 on, as NCCL prints it (2.28, 2.27.3, 2.26.6+cuda12.8): 2.18-2.27 "
                   "take NCCL 2.27's tuner tables (2.18-2.24, older than racksim's tables, with a warning), 2.28 "
                   "2.28's, 2.29 2.29's, 2.30 and later 2.30's");
}

std::string tuner_release_caveat(const std::string& nccl_version) {
  const int minor = nccl_minor(nccl_version);
  if (minor < kOldestMinor || minor >= kOldestTablesMinor) return "";
  const std::string v = "2." + std::to_string(minor);
  const std::string head = "NCCL " + v + " is older than racksim's tuner tables (2.25 on): priced with 2.27's, the nearest";
  // src/graph/tuning.cc, v2.23.4-1 and v2.24.3-1 against v2.26.2-1: the Hopper rows, latencies and caps are the
  // same (2.25 added Blackwell's rows; PAT's factor .85 -> .75 in 2.24 touches one GPU per node only).
  if (minor >= 23)
    return head + "; " + v + "'s tuning.cc has the same Hopper latencies and caps (it has no Blackwell rows: NCCL "
                  "supports Blackwell from 2.25)";
  // v2.18.5-1 .. v2.22.3-1:57 give Tree/Simple no base latency (8.4 us from 2.23); v2.19.3-1 .. v2.22.3-1:67 charge it
  // 28 us per NVLink step (4 in 2.18 and from 2.23); v2.18.5-1 .. v2.20.5-1:89 cap Hopper's LL at 87.7 GB/s per
  // channel (141 from 2.21).
  std::vector<std::string> differs{"Tree/Simple without its 8.4 us base latency"};
  if (minor >= 19) differs.push_back("Tree/Simple at 28 us per NVLink step, not 4");
  if (minor <= 20) differs.push_back("LL capped at 87.7 GB/s per channel, not 141");
  std::string list;
  for (const auto& d : differs) list += (list.empty() ? "" : "; ") + d;
  return head + "; " + v + "'s tuning.cc differs on Hopper (" + list + "), so its choice for small messages may differ";
}

NcclSystem nccl_system(const TopologyGraph& graph, const std::vector<int>& gpus, TunerRelease release) {
  NcclSystem s;
  s.release = release;
  s.n_ranks = static_cast<int>(gpus.size());
  if (gpus.empty()) throw InputError("--gpus", "", "0", "at least one GPU");
  const auto& spec = graph.spec();
  // Group ranks into NCCL nodes: NVLink domain, else tray.
  std::map<std::pair<int, int>, std::vector<int>> nodes;  // (domain or -1, tray or -1) -> gpu vertices
  for (int gpu : gpus) {
    const int v = graph.gpu_vertex(gpu);
    const auto& vx = graph.vertices()[v];
    nodes[vx.domain >= 0 ? std::pair{vx.domain, -1} : std::pair{-1, vx.tray}].push_back(v);
  }
  s.n_nodes = static_cast<int>(nodes.size());
  s.min_local_ranks = 1 << 30;
  s.max_local_ranks = 0;
  s.min_compcap = 1 << 30;
  s.max_compcap = 0;
  s.nics_per_node = 1 << 30;
  const int nics_per_tray = static_cast<int>(spec.tray.nics.size());
  for (const auto& [key, members] : nodes) {
    const int local = static_cast<int>(members.size());
    s.min_local_ranks = std::min(s.min_local_ranks, local);
    s.max_local_ranks = std::max(s.max_local_ranks, local);
    std::set<int> trays;
    for (int v : members) {
      trays.insert(graph.vertices()[v].tray);
      const int cc = spec.gpu_type(graph.vertices()[v].type).compute_capability;
      s.min_compcap = std::min(s.min_compcap, cc);
      s.max_compcap = std::max(s.max_compcap, cc);
    }
    if (key.first >= 0 && trays.size() > 1) s.mnnvl = true;
    s.nics_per_node = std::min(s.nics_per_node, static_cast<int>(trays.size()) * nics_per_tray);
  }
  // Inside a node (every node of one system has the same shape).
  const int g0 = graph.gpu_vertex(gpus[0]);
  const auto& v0 = graph.vertices()[g0];
  const GpuType& type0 = spec.gpu_type(v0.type);
  if (v0.domain >= 0 && spec.nvlink_domain) {
    s.nvswitch = true;
    s.intra_path = kPathNvl;
    s.nvlink_bw = type0.nvlink_ports * nvlink_bw_per_link(s.min_compcap);
    s.nvls_support = spec.nvlink_domain->multicast_reduction && s.min_compcap >= 90;
  } else {
    // GPUs of a tray without NVLink talk over PCIe through the host: PHB under one CPU, SYS across the
    // CPU-CPU link (racksim models no PCIe switches between GPUs).
    s.intra_path = kPathPhb;
    for (int e : graph.incident_edges(g0))
      if (graph.edges()[e].kind == LinkKind::pcie) s.intra_pci_bw = std::max(s.intra_pci_bw, nccl_pcie_bw(graph.edges()[e], spec));
    std::set<int> cpus;
    for (const auto& [key, members] : nodes)
      for (int v : members) cpus.insert(graph.cpu_of_gpu(v));
    if (cpus.size() > 1) s.intra_path = kPathSys;
  }
  // The GPU's way to its NIC (routes.cpp gpu_to_nic): direct PCIe (PIX) or through its CPU (P2C over C2C,
  // paths.cc:181; PHB over PCIe).
  const int nic = graph.nic_of_gpu(g0);
  if (nic >= 0) {
    for (int e : graph.incident_edges(nic))
      if (graph.edges()[e].kind == LinkKind::nic) s.net_bw = units::Bps_to_GBps(graph.edges()[e].bandwidth_Bps);
    if (s.net_bw == 0) s.net_bw = spec.nic_type(graph.vertices()[nic].type).bandwidth_GBps;
    const int direct = edge_between(graph, g0, nic);
    if (direct >= 0) {
      s.gpu_nic_path = kPathPix;
      s.gpu_nic_bw = nccl_pcie_bw(graph.edges()[direct], spec);
    } else {
      const int cpu = graph.cpu_of_gpu(g0);
      const int up = cpu >= 0 ? edge_between(graph, g0, cpu) : -1;
      const int down = cpu >= 0 ? edge_between(graph, cpu, nic) : -1;
      if (up >= 0 && down >= 0) {
        const bool c2c = graph.edges()[up].kind == LinkKind::c2c;
        // C2C then PCIe through the CPU: P2C from 2.27 (paths.cc at v2.28.9-1:181), PHB before it (2.26 had no
        // P2C type: topo.h at v2.26.2-1:59-92), which keeps LL128 off across nodes there (tuning.cc at
        // v2.26.2-1:425-428 enables it up to PXN only).
        s.gpu_nic_path = c2c && release >= TunerRelease::v2_27 ? kPathP2c : kPathPhb;
        const double first = c2c ? units::Bps_to_GBps(graph.edges()[up].bandwidth_Bps) : nccl_pcie_bw(graph.edges()[up], spec);
        s.gpu_nic_bw = std::min(first, nccl_pcie_bw(graph.edges()[down], spec));
      } else {
        s.gpu_nic_path = kPathSys;
        s.gpu_nic_bw = nccl_pcie_bw(graph.edges()[graph.incident_edges(nic).front()], spec);
      }
    }
  }
  if (s.nics_per_node == (1 << 30)) s.nics_per_node = 0;
  // CollNet: SHARP reduces in InfiniBand switches (Quantum), so the fabric must be InfiniBand, and every rank
  // needs a NIC of its own (racksim's fabric plane is per rail: sim/platform).
  s.collnet_fabric = spec.scale_out && spec.scale_out->infiniband();
  if (spec.scale_out && spec.scale_out->transport) {
    const NetTransportSpec& t = *spec.scale_out->transport;
    s.net_latency_us = t.plugin_latency_us;
    s.transport_step_us = t.net_step_latency_us;
    s.transport_simple_overhead_us = t.simple_step_overhead_us;
  }
  for (int gpu : gpus)
    if (graph.nic_of_gpu(graph.gpu_vertex(gpu)) < 0) s.collnet_fabric = false;
  const int cpu0 = graph.cpu_of_gpu(g0);
  if (cpu0 >= 0) {
    const CpuType& ct = spec.cpu_type(graph.vertices()[cpu0].type);
    s.cpu_isa = ct.isa;
    s.cpu_vendor = ct.vendor;
  }
  return s;
}

}  // namespace racksim::nccl
