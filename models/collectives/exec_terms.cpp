#include "models/collectives/exec_terms.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "models/analytic/cost_model.hpp"
#include "models/analytic/flow_cost.hpp"
#include "models/collectives/algorithm_support.hpp"
#include "models/collectives/nccl_choice.hpp"
#include "models/collectives/registry.hpp"
#include "models/nccl/nccl_p2p.hpp"
#include "models/nccl/nccl_tuner.hpp"
#include "sim/calib/calibration.hpp"
#include "sim/core/units.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {

namespace {

// NCCL runs an all-to-all as grouped send/recv in rounds: round k pairs every rank with one peer to send
// to and one to receive from (init.cc, the p2p schedule: node delta outer, local delta inner, so a round is
// all same-node or all across the network), and enqueue.cc posts the rounds in that order, each a
// connection handshake (a flag over NVLink, a proxy-driven message through the NIC) with its peer. The
// rounds follow one another, so the latency is the sum over the n-1 rounds: a same-node round pays a
// step inside the NVLink domain, a round across pays the network's. Measured floors follow it: 64 GB300
// ranks in one rack 32.6 us, 128 over two racks ~ 450-580 us (calibrate/data/public_collectives.json,
// the OCI GB300 all-to-all series). What exceeds the one round the all-to-all's single stage already
// pays, from rank 0's side (the ranks see the same peers' classes).
double p2p_rounds_extra_latency_s(const TopologyGraph& graph, const CollectiveRequest& request,
                                  const Calibration& calibration, const FlowTerms& terms) {
  const int n = static_cast<int>(request.gpus.size());
  if (n < 3) return 0;
  FlowCoster fc(graph, calibration, terms);
  const int first = rank_vertex(request, graph, 0);
  double local_s = 0, network_s = 0;
  int local_rounds = 0, network_rounds = 0;
  for (int r = 1; r < n; ++r) {
    const FlowCoster::Path& p = fc.gpu_to_gpu(first, rank_vertex(request, graph, r));
    if (p.crosses_nic) {
      network_s = std::max(network_s, p.alpha_s);
      ++network_rounds;
    } else {
      local_s = std::max(local_s, p.alpha_s);
      ++local_rounds;
    }
  }
  return local_rounds * local_s + network_rounds * network_s - std::max(local_s, network_s);
}

}  // namespace

// ramp_bytes_per_gpu is per GPU of an 8-GPU domain (an HGX board), where the ramp was first measured.
constexpr double kRampReferenceGpus = 8.0;

double ramp_gpus(const TopologyGraph& graph, const CollectiveRequest& request) {
  std::map<int, int> per_domain;
  int most = 0;
  for (int g : request.gpus) most = std::max(most, ++per_domain[graph.vertices()[graph.gpu_vertex(g)].domain]);
  // The domain's own stage, then one per level of the binary tree across domains.
  const int levels = 1 + tree_levels(static_cast<long>(per_domain.size()));
  const double d = std::max(1, most);
  return d * std::sqrt(d / kRampReferenceGpus) * levels;
}

double p2p_pipeline_bytes(const TopologyGraph& graph, const CollectiveRequest& request, int* pipelines) {
  if (pipelines) *pipelines = 0;
  const int n = static_cast<int>(request.gpus.size());
  if (request.op != CollectiveOp::all_to_all || request.algorithm != "direct" || n < 2) return 0;
  // The peers rank 0 reaches over NVLink (its own NVLink domain): those pipelines copy the data themselves. A
  // peer across the network is fed through a buffer the NIC reads (GPUDirect RDMA), so the copy runs ahead of
  // the wire rather than in series with it: NCCL's send/recv between nodes reaches the NIC's rate on 2
  // channels, which a pipeline rate in series would hold to 3/4 of it.
  const auto domain_of = [&](int rank) { return graph.vertices()[graph.gpu_vertex(request.gpus[static_cast<std::size_t>(rank)])].domain; };
  int local_peers = 0;
  for (int r = 1; r < n; ++r) local_peers += domain_of(r) == domain_of(0) ? 1 : 0;
  if (local_peers == 0) return 0;
  const nccl::NcclSystem s = nccl_system_of(graph, request);
  nccl::ChannelLimits limits;
  if (request.channels > 0) limits = {request.channels, request.channels};
  const double bytes = static_cast<double>(request.bytes);
  const nccl::P2pPlan plan = nccl::p2p_plan(s, nccl::compute_graphs(s, limits), bytes / n);
  const int local = std::min(local_peers * plan.op_channels, plan.concurrent_pipelines);
  if (pipelines) *pipelines = local;
  return local > 0 ? bytes * local_peers / n / local : 0;
}

std::string request_architecture(const TopologyGraph& graph, const CollectiveRequest& request) {
  int cc = 1 << 30;
  for (int g : request.gpus) cc = std::min(cc, graph.spec().gpu_type(graph.vertices()[graph.gpu_vertex(g)].type).compute_capability);
  return request.gpus.empty() ? "" : architecture_of(cc);
}

std::string nvlink_calibration_key(const TopologyGraph& graph, const CollectiveRequest& request) {
  if (request.op == CollectiveOp::all_reduce && request.algorithm == "hierarchical")
    return "all_reduce/" + hierarchical_inner(request, graph);
  return std::string(to_string(request.op)) + "/" + request.algorithm;
}

int ring_sending_steps(const std::string& key, int n) {
  if (n < 2) return 0;
  if (key == "all_reduce/ring") return 2 * (n - 1);
  if (key == "all_gather/ring" || key == "reduce_scatter/ring") return n - 1;
  return 0;
}

namespace {
// A node's NIC bytes each way in buffers of the request's size, for the algorithms whose network connections
// the queue pairs bind (key "op/algorithm", n ranks over `domains` NVLink domains); 0 for the others.
double node_buffers_each_way(const std::string& key, double n, int domains) {
  if (const int s = ring_sending_steps(key, static_cast<int>(n))) return s / n;  // each rank's share per step
  if (key == "all_reduce/tree" || key == "all_reduce/nvls_tree") return domains >= 3 ? 2 : 1;
  return 0;
}
}  // namespace

bool qp_bound_key(const std::string& key) { return node_buffers_each_way(key, 2, 2) > 0; }

double ring_links_Bps(double bytes, int sending_steps, int n, double bandwidth_at_kappa_one_s) {
  return bandwidth_at_kappa_one_s > 0 && n > 0 ? bytes * sending_steps / n / bandwidth_at_kappa_one_s : 0;
}

double ring_copy_rate(int sending_steps, double links_Bps, double copy_GBps) {
  if (sending_steps <= 0 || copy_GBps <= 0) return 1;
  return sending_steps / (sending_steps + links_Bps / units::GBps_to_Bps(copy_GBps));
}

double qp_connection_bytes(const CollectiveRequest& request, int domains) {
  const double n = static_cast<double>(request.gpus.size());
  if (domains < 2 || request.channels <= 0 || n < 2) return 0;
  const std::string key = std::string(to_string(request.op)) + "/" + request.algorithm;
  return node_buffers_each_way(key, n, domains) * static_cast<double>(request.bytes) /
         (static_cast<double>(request.channels) * std::max(1, request.ib_qps_per_connection));
}

namespace {
// Terms results should name, one after another.
void add_note(ExecTerms& e, const std::string& said) { e.note = e.note.empty() ? said : e.note + "; " + said; }

// racksim's hierarchical all-reduce runs NCCL's NVLS or ring inside each NVLink domain (hierarchical.cpp): what
// that algorithm is held to inside one node (its cap, its calibration), for the flows that stay on NVLink.
// Without it the inside ran at the links' rate: on one GB200 rack, where hierarchical is NVLS and nothing else,
// 1.55 ms at 1 GiB (1 367 GB/s busbw) against NVLS's 3.01 ms, both calibrated, where NVL72 racks measure NVLS at
// 700-920 GB/s (docs/model.md section 7).
// Its latency likewise, NCCL's terms summed and paid at launch as NCCL's own model does (its steps' latencies
// once, not once per pipelined block): the inner algorithm's inside one node (NVLS: NCCL's NVLS latency; ring: its
// base latency and 2 (d - 1) step latencies) and the outer one's steps across domains (ring: 2 (D - 1) network
// steps, tree: two per level). Without them a 72-GPU hierarchical all-reduce of 8 KiB on one rack took 0.5 us
// (NVLS 54.5 us).
struct InsideDomain {
  std::string inner;         // "nvls" or "ring"
  std::string key;           // "all_reduce/" + inner: the calibration its NVLink flows take
  double cap_algbw_Bps = 0;  // NCCL's cap of that algorithm on one domain's GPUs (0: none)
  std::string cap_source;
  double latency_us = 0;     // NCCL's latency of the inner and outer algorithms' steps, paid at launch
  int steps = 0;             // those dependent steps (a calibration's step overhead is paid on each)
  int per_domain = 0;        // the run's GPUs in each domain (the inner algorithm's in-domain launch grows with them)
};
InsideDomain hierarchical_inside(const TopologyGraph& graph, const CollectiveRequest& request) {
  InsideDomain in;
  in.inner = hierarchical_inner(request, graph);
  in.key = nvlink_calibration_key(graph, request);
  const DomainGroups groups = domain_groups(request, graph);
  if (groups.ranks.empty()) return in;
  in.per_domain = groups.per_domain;
  nccl::ChannelLimits limits;
  if (request.channels > 0) limits = {request.channels, request.channels};
  if (groups.per_domain > 1) {
    CollectiveRequest one = request;  // the first domain's GPUs: NCCL's view of one node of the run
    one.gpus.clear();
    for (int r : groups.ranks[0]) one.gpus.push_back(request.gpus[static_cast<std::size_t>(r)]);
    const nccl::NcclSystem s = nccl::timing_view(nccl_system_of(graph, one));
    const nccl::Graphs g = nccl::compute_graphs(s, limits);
    const nccl::Algo algo = nccl::algo_from_string(in.inner);
    const nccl::AlgoTerms at = nccl::algo_terms(s, g, nccl::Func::all_reduce, algo, nccl::Proto::simple);
    in.cap_algbw_Bps = units::GBps_to_Bps(at.algbw_cap_GBps);
    in.cap_source = at.cap_source;
    if (algo == nccl::Algo::ring) {
      in.steps = 2 * (groups.per_domain - 1);
      in.latency_us = at.launch_us + in.steps * at.intra_step_us;
    } else {
      in.steps = 1;
      in.latency_us = nccl::tune_model(s, g).latency[int(nccl::Func::all_reduce)][int(algo)][int(nccl::Proto::simple)];
    }
  }
  if (groups.domains > 1) {
    const nccl::NcclSystem all = nccl::timing_view(nccl_system_of(graph, request));
    const std::string outer = hierarchical_outer(request);
    const nccl::Algo algo = outer == "tree" ? nccl::Algo::tree : nccl::Algo::ring;
    const int steps = outer == "ring" ? 2 * (groups.domains - 1) : 2 * (outer == "tree" ? tree_levels(groups.domains) : 1);
    in.steps += steps;
    in.latency_us += steps * nccl::algo_terms(all, nccl::compute_graphs(all, limits), nccl::Func::all_reduce, algo,
                                              nccl::Proto::simple).net_step_us;
  }
  return in;
}
// One rank: NCCL exchanges nothing (its cost table holds 0, enqueue.cc at v2.28.9-1:1791-1794). ncclLaunchOneRank
// (src/device/onerank.cu:48-55) launches no work for a call in place and one cudaMemcpyAsync of the buffer for
// a call out of place: S read and S written in the GPU's HBM. racksim prices the out-of-place call, as
// nccl-tests' first column (which `validate` compares) reports it: the device memory calibration's latency plus
// 2 S / (its efficiency x the topology's HBM bandwidth). No link is crossed, so it is all launch.
ExecTerms one_rank_terms(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration) {
  ExecTerms e;
  e.flow.arch = request_architecture(graph, request);
  const LinkCalibration& hbm = calibration.hbm();
  const GpuType& type = graph.spec().gpu_type(graph.vertices()[graph.gpu_vertex(request.gpus.front())].type);
  const double traffic_bytes = 2.0 * static_cast<double>(request.bytes);
  e.flow.launch_s = units::us_to_s(hbm.extra_latency_us) +
                    traffic_bytes / (hbm.bandwidth_efficiency * units::GBps_to_Bps(type.hbm_bandwidth_GBps));
  e.note = fmt::format("priced as NCCL's call out of place, a copy of the buffer within the GPU: {:.4g} us, read and "
                       "written at {:.3g} of {:g} GB/s HBM (calibration '{}'); in place NCCL launches nothing",
                       units::s_to_us(e.flow.launch_s), hbm.bandwidth_efficiency, type.hbm_bandwidth_GBps, calibration.name);
  return e;
}
}  // namespace

ExecTerms exec_terms(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration) {
  if (request.gpus.size() == 1) return one_rank_terms(graph, request, calibration);
  ExecTerms e;
  const std::string arch = request_architecture(graph, request);
  const std::string key = std::string(to_string(request.op)) + "/" + request.algorithm;
  e.flow.arch = arch;
  std::string borrowed;
  const AlgorithmCalibration& cal = calibration.algorithm(key, arch, &borrowed);
  const bool hierarchical = request.op == CollectiveOp::all_reduce && request.algorithm == "hierarchical";
  const InsideDomain inside = hierarchical ? hierarchical_inside(graph, request) : InsideDomain{};
  // What the run's NVLink part is calibrated by: hierarchical's inner algorithm's entry (its kappa, and its
  // overheads inside a domain: an inner algorithm's fitted launch across domains is its own run's, not this
  // one's), every other algorithm's own.
  const std::string inner_key = hierarchical ? inside.key : key;
  const AlgorithmCalibration& inner_cal = hierarchical ? calibration.algorithm(inner_key, arch) : cal;
  std::set<int> domains;
  for (int g : request.gpus) domains.insert(graph.vertices()[graph.gpu_vertex(g)].domain);
  const bool spans_domains = domains.size() > 1;
  const double launch_units = scale_out_launch_units(key, static_cast<int>(request.gpus.size()), static_cast<int>(domains.size()));
  // Inside one domain, the part of the launch that grows with its GPUs (NVLS's multicast group) counts the run's
  // GPUs there: all of them, or a hierarchical run's per domain (launch_us leaves it out across domains).
  const double extra_launch_us = hierarchical ? inner_cal.launch_us(false, 1, inside.per_domain)
                                              : cal.launch_us(spans_domains, launch_units, static_cast<double>(request.gpus.size()));
  if (const std::string caveat = nccl::tuner_release_caveat(request.nccl_version); !caveat.empty()) e.warnings.push_back(caveat);
  if (hierarchical && calibration.has_algorithm_entries() && !calibration.calibrates(key, arch))
    e.warnings.push_back(key + ": racksim's own algorithm, no measurement of it: inside each NVLink domain it takes " +
                         inside.key + "'s calibration and NCCL's cap on it inside one node, across domains the links' "
                         "calibration alone");
  else if (calibration.has_algorithm_entries() && !calibration.calibrates(key, arch))
    e.warnings.push_back(key + ": calibration '" + calibration.name + "' has no entry for it on any architecture (no data: " +
                         "the links' calibration and NCCL's terms alone, kappa 1)");
  if (!borrowed.empty())
    e.warnings.push_back(key + ": no " + arch + " calibration, using " + borrowed +
                         (cal.borrowed_from.empty() ? "'s (" : "'s bandwidth terms with " + arch + "'s launch (") + cal.source + ")");
  for (LinkKind k : {LinkKind::nvlink, LinkKind::nic}) {
    std::string b;
    const LinkCalibration& lc = calibration.link(k, arch, &b);
    if (!b.empty()) e.warnings.push_back(std::string(to_string(k)) + " links: no " + arch + " calibration, using " + b + "'s (" + lc.source + ")");
  }
  nccl::Func func;
  const bool nccl_algo = nccl_func(request.op, func) && is_nccl_algorithm(request.algorithm) && request.gpus.size() > 1;
  double payload = 1;
  // NVLS's cap (and NVLS-tree's, "NVLS inside one node": heads x bwIntra x nvlsEfficiency, tuning.cc:285-300)
  // bounds the switch's part of the run, not the NICs': across domains it scales the flows that stay on
  // NVLink only. The rings' and trees' caps are per channel, every hop of the channel included.
  bool cap_on_nvlink = false;
  double nic_line_GBps = 0;  // a NIC's line rate across nodes (NCCL's net bandwidth), 0 on one node
  if (nccl_algo) {
    // Timed as racksim times it: a transport's own step latency where the topology names one (EFA), not the
    // latency its plugin reports to steer NCCL's choice (nccl_system.hpp).
    const nccl::NcclSystem s = nccl::timing_view(nccl_system_of(graph, request));
    if (s.n_nodes > 1) nic_line_GBps = s.net_bw;
    if (s.n_nodes > 1 && s.transport_step_us) {
      const NetTransportSpec& t = *graph.spec().scale_out->transport;
      e.warnings.push_back("scale-out transport " + describe(t) + " (" + t.source +
                           "); the calibration was fitted on InfiniBand/RoCE and never on this transport");
    }
    nccl::ChannelLimits limits;
    if (request.channels > 0) limits = {request.channels, request.channels};
    const nccl::Graphs g = nccl::compute_graphs(s, limits);
    const nccl::Proto proto = nccl::proto_from_string(request.protocol == "auto" ? "Simple" : request.protocol);
    const nccl::Algo algo = nccl::algo_from_string(request.algorithm);
    const nccl::AlgoTerms at = nccl::algo_terms(s, g, func, algo, proto);
    cap_on_nvlink = algo == nccl::Algo::nvls || algo == nccl::Algo::nvls_tree;
    e.flow.launch_s = units::us_to_s(at.launch_us + extra_launch_us);
    e.flow.intra_step_s = units::us_to_s(at.intra_step_us + cal.step_overhead_us);
    e.flow.net_step_s = units::us_to_s(at.net_step_us + cal.step_overhead_us);
    if (algo == nccl::Algo::ring) {
      e.engine_sums_step_latency = true;  // per step here; the engine takes their sum at launch (registry.cpp)
    } else {
      // Pipelined (trees, NVLS, NVLS-tree): NCCL's latency counts each hop once, as the fill of a pipeline
      // whose later items overlap their latency (NCCL_STEPS slots per connection): charge it at launch.
      const nccl::TuneTables tables = nccl::tune_model(s, g);
      e.flow.launch_s = units::us_to_s(tables.latency[int(func)][int(algo)][int(proto)] + extra_launch_us);
      e.flow.intra_step_s = e.flow.net_step_s = 0;
      e.flow.latency_at_launch = true;
    }
    payload = at.payload_fraction;
    // A measured effect the model has no term for (the same rule keeps such records out of the fit:
    // models/calibration/public_collectives.cpp).
    if (arch == "blackwell" && request.op == CollectiveOp::all_reduce && algo == nccl::Algo::ring &&
        proto == nccl::Proto::ll128 && request.gpus.size() == 2 && !spans_domains)
      e.warnings.push_back("all_reduce/ring with LL128 on two Blackwell ranks: measured at ~0.6 of this rate (NVIDIA/nccl "
                           "PR #2343: 382-386 GB/s at 1 GiB on B200, NCCL 2.31.2), an effect racksim does not model");
    if (spans_domains) {
      const ProtocolCalibration& pc = calibration.protocol(nccl::to_string(proto), arch);
      if (pc.network_efficiency > 0) e.flow.network_protocol_efficiency = pc.network_efficiency;
      if (e.flow.network_protocol_efficiency != 1)
        e.note = fmt::format("{} through the NICs at {:.3g} of its rate (calibration '{}:{}')", nccl::to_string(proto),
                             e.flow.network_protocol_efficiency, arch, nccl::to_string(proto));
    }
    e.cap_algbw_Bps = units::GBps_to_Bps(at.algbw_cap_GBps);
    e.cap_source = at.cap_source;
  } else {
    e.flow.launch_s = units::us_to_s(extra_launch_us);
    e.flow.intra_step_s = e.flow.net_step_s = units::us_to_s(cal.step_overhead_us);
    if (hierarchical) {
      e.flow.launch_s = units::us_to_s(extra_launch_us + inside.latency_us + inside.steps * inner_cal.step_overhead_us);
      e.flow.intra_step_s = e.flow.net_step_s = 0;
      e.flow.latency_at_launch = true;
      if (inside.cap_algbw_Bps > 0) {
        cap_on_nvlink = true;  // the NICs' part runs at their own rate, as NVLS-tree's does
        e.cap_algbw_Bps = inside.cap_algbw_Bps;
        e.cap_source = "inside each domain, " + inside.cap_source;
      }
      add_note(e, fmt::format("inside each domain as NCCL's {} inside one node{}{}", inside.inner,
                              inside.cap_algbw_Bps > 0 ? fmt::format(": at most {:.4g} GB/s of algorithm bandwidth ({})",
                                                                     units::Bps_to_GBps(inside.cap_algbw_Bps), inside.cap_source)
                                                       : std::string(),
                              calibration.calibrates(inside.key, arch) ? fmt::format(", calibration '{}:{}'", arch, inside.key)
                                                                       : std::string()));
    }
  }
  // The fitted launch across domains is often most of a small run's time (a 64-GPU rack's 340 us): say what it
  // is and where it comes from, so that the total can be checked.
  if (spans_domains && extra_launch_us > 0 && (cal.scale_out_hop_overhead_us >= 0 || cal.scale_out_launch_us_per_8_gpus >= 0)) {
    const bool per_hop = cal.scale_out_hop_overhead_us >= 0;
    add_note(e, fmt::format("a fitted launch across domains of {:.4g} us ({:.4g} us per {} x {:g}; calibration '{}:{}')",
                            extra_launch_us, per_hop ? cal.scale_out_hop_overhead_us : cal.scale_out_launch_us_per_8_gpus,
                            per_hop ? "hop of the tree" : "8 GPUs of each domain", launch_units, arch, key));
  }
  if (request.op == CollectiveOp::all_to_all || request.op == CollectiveOp::send_recv) {
    // One kernel like a collective's: NCCL's base latency of a Simple ring (tuning.cc:143-148), which the
    // tuner never charges a p2p group itself; measured 2-GPU H200 floors are 8.5-9 us. (A send/recv paid only
    // its wire's latency until session 41: 0.5 us for 8 KiB between two GB200 GPUs.)
    e.flow.launch_s += units::us_to_s(
        nccl::tuner_tables(nccl::tuner_release(request.nccl_version)).base_lat[int(nccl::Algo::ring)][int(nccl::Proto::simple)]);
  }
  if (request.op == CollectiveOp::all_to_all) {
    e.flow.launch_s += p2p_rounds_extra_latency_s(graph, request, calibration, e.flow);
    // A measured effect the model has no term for, as for LL128 above: on one HGX B200 (2-8 of its GPUs in one
    // process) the 2- and 3-GPU all-to-alls ran 18-23 % slower than racksim's at 256 MiB-16 GiB while 4-8 GPUs
    // came within 14 % (calibrate/data/public_collectives.md, section Pending; not fitted).
    if (arch == "blackwell" && !spans_domains && (request.gpus.size() == 2 || request.gpus.size() == 3))
      e.warnings.push_back("all_to_all on 2-3 Blackwell GPUs in one domain: measured 18-23 % slower than this at 256 MiB-16 GiB "
                           "on an HGX B200 (MGHPCC AICR node b0012, NCCL 2.29.3; calibrate/data/public_collectives_pending.json), "
                           "where 4-8 GPUs came within 14 %: an effect racksim does not model");
  }
  // Pass 1: the bandwidth part alone at the protocol's payload fraction.
  const AlgorithmInfo& algo = find_algorithm(request.op, request.algorithm);
  FlowTerms bw = e.flow;
  bw.efficiency = payload;
  bw.no_latency = true;
  const CostModel m = algo.cost(graph, request, calibration, bw);
  e.depth = planned_depth(graph, request).model_depth;
  const double t_bw = m.time(e.depth);
  e.physical_algbw_Bps = t_bw > 0 ? static_cast<double>(request.bytes) / t_bw : 0;
  // The bandwidth part under other terms, and the NVLink part alone (the flows through a NIC made all but free).
  auto bandwidth_part_s = [&](FlowTerms terms) {
    terms.no_latency = true;
    return algo.cost(graph, request, calibration, terms).time(e.depth);
  };
  auto nvlink_part_s = [&](FlowTerms terms) {
    terms.network_protocol_efficiency *= 1e9;
    return bandwidth_part_s(terms);
  };
  double factor = 1, nvlink_factor = 1;
  if (cap_on_nvlink && spans_domains && e.cap_algbw_Bps > 0) {
    // The switch's part alone (as for the p2p pipelines below): where it is faster than the cap, the NVLink flows run at the cap and the NICs at their own rate. Scaling
    // every flow by cap / (the whole run's rate) made a run whose NICs bind part of the time faster with a
    // slower NIC (two H100 nodes, NVLS-tree, 512 MiB: 2 400 us at 50 GB/s, 2 330 at 40; 16 GB300 racks
    // slower than 16 GB200 racks at 1 GiB).
    const double t_nvlink = nvlink_part_s(bw);
    const double nvlink_algbw = t_nvlink > 0 ? static_cast<double>(request.bytes) / t_nvlink : 0;
    if (nvlink_algbw > e.cap_algbw_Bps) nvlink_factor = e.cap_algbw_Bps / nvlink_algbw;
  } else if (e.cap_algbw_Bps > 0 && e.physical_algbw_Bps > e.cap_algbw_Bps) {
    factor = e.cap_algbw_Bps / e.physical_algbw_Bps;
  }
  // Flows crossing a NIC take no kappa (below), so the inner algorithm's is the hierarchical run's NVLink part's.
  const double kappa = inner_cal.efficiency_at(static_cast<double>(request.bytes), ramp_gpus(graph, request));
  e.flow.efficiency = payload * factor * (kappa > 0 ? kappa : 1);
  e.flow.kappa = kappa > 0 ? kappa : 1;
  e.flow.kappa_on_network = is_collnet_algorithm(request.algorithm);
  e.flow.nvlink_scale *= nvlink_factor;
  // Every capacity (links, the switch plane's reduction) scales with the efficiency and nothing else does
  // without latency, so the bandwidth part at the final efficiency follows from pass 1; except that flows
  // crossing a NIC do not take kappa (FlowTerms::kappa) nor an NVLS cap and take the protocol's network
  // efficiency: where some do and any of them is not 1, price again.
  e.bandwidth_s = t_bw * payload / e.flow.efficiency;
  if ((e.flow.kappa != 1 || e.flow.network_protocol_efficiency != 1 || nvlink_factor != 1) && spans_domains)
    e.bandwidth_s = bandwidth_part_s(e.flow);  // some flows may cross a NIC
  // A ring's local copy inside one domain (calibration.hpp, ring_copy_GBps): every flow slows alike, so that
  // the engine meets the same time. Across domains the NICs set the pace and the SMs have slack.
  if (!spans_domains) {
    const int n = static_cast<int>(request.gpus.size());
    e.ring_sending_steps = ring_sending_steps(inner_key, n);
    if (e.ring_sending_steps > 0 && inner_cal.ring_copy_GBps > 0 && e.bandwidth_s > 0) {
      const double links_Bps = ring_links_Bps(static_cast<double>(request.bytes), e.ring_sending_steps, n, e.bandwidth_s * e.flow.kappa);
      const double rate = ring_copy_rate(e.ring_sending_steps, links_Bps, inner_cal.ring_copy_GBps);
      e.flow.efficiency *= rate;
      e.bandwidth_s /= rate;
      const std::string said = fmt::format("a ring loop's {} sending step(s) at {:.0f} GB/s and its local copy at {:.0f} GB/s "
                                           "(calibration '{}:{}'): {:.3g} of the links' rate",
                                           e.ring_sending_steps, units::Bps_to_GBps(links_Bps), inner_cal.ring_copy_GBps, arch,
                                           inner_key, rate);
      add_note(e, said);
    }
  }
  // The rate per queue pair is the verbs transport's (NCCL's net_ib: every record it was fitted on); another
  // transport (EFA's plugin: its own buffering and completions, SRD) has a rate of its own that no record
  // measures: none applied.
  const bool verbs_transport = !(graph.spec().scale_out && graph.spec().scale_out->transport);
  // With CollNet on, NCCL's all-gather and reduce-scatter across nodes run on SHARP (the plugin's iallgather),
  // which racksim stands in with the ring: a ring's queue pairs are not what such a run uses.
  if (spans_domains && verbs_transport && !request.collnet_enabled) {
    e.qp_connection_bytes = qp_connection_bytes(request, static_cast<int>(domains.size()));
    if (nic_line_GBps > 0) e.qp_line_s = e.qp_connection_bytes / units::GBps_to_Bps(nic_line_GBps);
    if (cal.qp_line_fraction > 0 && e.qp_line_s > 0 && e.bandwidth_s > 0) {
      // Where the queue pairs bind, every flow of the run slows alike (one scale on every capacity, so that the
      // engine meets the same time).
      const double floor_s = e.qp_line_s / cal.qp_line_fraction;
      if (floor_s > e.bandwidth_s) {
        e.flow.efficiency *= e.bandwidth_s / floor_s;
        e.bandwidth_s = floor_s;
        const int qps = std::max(1, request.ib_qps_per_connection);
        const std::string said = fmt::format("its NICs' {} channel(s) x {} queue pair(s) at {:.3g} GB/s each bind "
                                             "(calibration '{}:{}': {:.3g} of a {:.3g} GB/s NIC)",
                                             request.channels, qps, cal.qp_line_fraction * nic_line_GBps, arch, key,
                                             cal.qp_line_fraction, nic_line_GBps);
        add_note(e, said);
      }
    }
  }
  if (cal.p2p_pipeline_GBps > 0 && e.bandwidth_s > 0) {
    // NCCL's p2p pipelines (nccl_p2p.hpp) over NVLink at their calibrated rate: each carries its part at most at
    // that rate, in series with the links' share, so the NVLink part of a GPU's time grows by bytes per pipeline
    // / rate. Charged as a scale on the capacity of the flows that stay on NVLink (FlowTerms::nvlink_scale), so
    // that the engine, with contention, meets the same time; across domains the NICs may still bind.
    const double extra_s = p2p_pipeline_bytes(graph, request, &e.p2p_pipelines) / units::GBps_to_Bps(cal.p2p_pipeline_GBps);
    if (extra_s > 0) {
      const double nvlink_s = spans_domains ? nvlink_part_s(e.flow) : e.bandwidth_s;
      if (nvlink_s > 0) {
        e.p2p_extra_s = extra_s;
        e.flow.nvlink_scale *= nvlink_s / (nvlink_s + extra_s);
        if (spans_domains)
          e.bandwidth_s = bandwidth_part_s(e.flow);
        else
          e.bandwidth_s += extra_s;
        const std::string said = fmt::format("{} p2p pipelines per GPU over NVLink at {:.3g} GB/s each (calibration '{}:{}')",
                                             e.p2p_pipelines, cal.p2p_pipeline_GBps, arch, key);
        add_note(e, said);
      }
    }
  }
  return e;
}

}  // namespace racksim
