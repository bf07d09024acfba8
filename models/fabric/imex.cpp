#include "models/fabric/imex.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/fabric/mnnvl_estimate.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim::fabric {

const char* to_string(ImexService s) {
  switch (s) {
    case ImexService::running: return "running";
    case ImexService::stopped: return "stopped";
    case ImexService::not_installed: return "not_installed";
  }
  return "?";
}

const char* to_string(FabricState s) {
  switch (s) {
    case FabricState::completed: return "completed";
    case FabricState::in_progress: return "in_progress";
    case FabricState::not_started: return "not_started";
    case FabricState::failed: return "failed";
    case FabricState::not_supported: return "not_supported";
  }
  return "?";
}

FabricState fabric_state_from_string(const std::string& text, const std::string& where) {
  for (FabricState s : {FabricState::completed, FabricState::in_progress, FabricState::not_started, FabricState::failed})
    if (text == to_string(s)) return s;
  throw InputError(where, "", "'" + text + "'", "completed, in_progress, not_started or failed");
}

HandleType handle_type_from_string(const std::string& text, const std::string& where) {
  if (text == "auto") return HandleType::automatic;
  if (text == "fd") return HandleType::posix_fd;
  if (text == "fabric") return HandleType::fabric;
  if (text == "process") return HandleType::same_process;
  throw InputError(where, "", "'" + text + "'",
                   "auto, process (one process, both GPUs), fd (CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) or fabric "
                   "(CU_MEM_HANDLE_TYPE_FABRIC)");
}

std::vector<int> parse_index_list(const std::string& text, int count, const std::string& where) {
  const std::string allowed = "indices 0.." + std::to_string(count - 1) + " as a list like 0-3,5";
  std::vector<int> out;
  std::vector<bool> seen(static_cast<std::size_t>(std::max(count, 0)));
  std::size_t start = 0;
  auto number = [&](const std::string& s) {
    if (s.empty() || s.size() > 7 || s.find_first_not_of("0123456789") != std::string::npos)
      throw InputError(where, "", "'" + text + "'", allowed);
    const int v = std::stoi(s);
    if (v >= count) throw InputError(where, "", "'" + text + "' (" + s + ")", allowed);
    return v;
  };
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    const std::size_t dash = item.find('-');
    const int lo = number(dash == std::string::npos ? item : item.substr(0, dash));
    const int hi = dash == std::string::npos ? lo : number(item.substr(dash + 1));
    if (hi < lo) throw InputError(where, "", "'" + text + "' (" + item + ")", allowed + " with ranges low-high");
    for (int i = lo; i <= hi; ++i)  // first appearance kept; a bitmap, not a search of `out` (0-1048575 was quadratic)
      if (!seen[static_cast<std::size_t>(i)]) {
        seen[static_cast<std::size_t>(i)] = true;
        out.push_back(i);
      }
    start = end + 1;
  }
  return out;
}

int compare_versions(const std::string& a, const std::string& b, const std::string& where) {
  auto parts = [&](const std::string& v) {
    std::vector<int> p;
    std::size_t start = 0;
    while (start <= v.size()) {
      std::size_t end = v.find('.', start);
      if (end == std::string::npos) end = v.size();
      const std::string s = v.substr(start, end - start);
      if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos)
        throw InputError(where, "", "'" + v + "'", "a dotted version such as 2.28.9");
      p.push_back(std::stoi(s));
      start = end + 1;
    }
    return p;
  };
  std::vector<int> x = parts(a), y = parts(b);
  const std::size_t n = std::max(x.size(), y.size());
  x.resize(n, 0);
  y.resize(n, 0);
  return x < y ? -1 : (x > y ? 1 : 0);
}

namespace {

struct Layout {
  int trays = 0, gpus_per_tray = 0;
  bool mnnvl = false;                   // NVLink spans trays (multi-node NVLink domain)
  std::vector<int> tray_domain;         // NVLink domain per tray (-1: none)
  std::vector<int> tray_partition;      // partition (clique - 1) per tray
  std::vector<int> tray_imex;           // IMEX domain per tray (-1: not in any nodes_config)
  std::vector<std::vector<int>> imex;   // trays per IMEX domain
  double nvlink_Bps = 0;                // one GPU, per direction
  double nic_Bps = 0;                   // one GPU's NIC, per direction
};

Layout layout(const TopologyGraph& g, const FabricInputs& in) {
  Layout L;
  const auto& spec = g.spec();
  L.gpus_per_tray = g.gpus_per_tray();
  L.trays = L.gpus_per_tray > 0 ? g.gpu_count() / L.gpus_per_tray : 0;
  L.mnnvl = spec.nvlink_domain.has_value() && g.gpus_per_domain() > L.gpus_per_tray;
  if (spec.nvlink_domain) {
    int links = 0;
    for (int l : spec.nvlink_domain->gpu_links_per_chip) links += l;
    L.nvlink_Bps = units::GBps_to_Bps(spec.link_type(spec.nvlink_domain->link_type).bandwidth_GBps) * links;
  }
  if (g.gpu_count() > 0) {
    const int nic = g.nic_of_gpu(g.gpu_vertex(0));
    if (nic >= 0) L.nic_Bps = units::GBps_to_Bps(spec.nic_type(g.vertices()[nic].type).bandwidth_GBps);
  }
  for (int t = 0; t < L.trays; ++t) L.tray_domain.push_back(g.vertices()[g.gpu_vertex(t * L.gpus_per_tray)].domain);
  for (int t : in.trays_down)
    if (t < 0 || t >= L.trays) throw InputError("--trays-down", "", std::to_string(t), "trays 0.." + std::to_string(L.trays - 1));
  // Partitions: explicit ones, then what is left of each NVLink domain.
  L.tray_partition.assign(L.trays, -1);
  int next = 0;
  for (const auto& part : in.partitions) {
    for (int t : part) {
      if (t < 0 || t >= L.trays) throw InputError("--partition", "", std::to_string(t), "trays 0.." + std::to_string(L.trays - 1));
      if (L.tray_partition[t] >= 0) throw InputError("--partition", "", "tray " + std::to_string(t) + " twice", "each tray in at most one partition");
      if (L.tray_domain[t] != L.tray_domain[part.front()])
        throw InputError("--partition", "", "trays " + std::to_string(part.front()) + " and " + std::to_string(t),
                         "a partition inside one NVLink domain");
      L.tray_partition[t] = next;
    }
    ++next;
  }
  std::map<int, int> leftover;
  for (int t = 0; t < L.trays; ++t)
    if (L.tray_partition[t] < 0) {
      auto it = leftover.find(L.tray_domain[t]);
      if (it == leftover.end()) it = leftover.emplace(L.tray_domain[t], next++).first;
      L.tray_partition[t] = it->second;
    }
  // IMEX domains (nodes_config.cfg): given, or one per NVLink domain.
  L.imex = in.imex_domains;
  if (L.imex.empty()) {
    std::map<int, std::vector<int>> by_domain;
    for (int t = 0; t < L.trays; ++t) by_domain[L.tray_domain[t]].push_back(t);
    for (auto& [d, trays] : by_domain) L.imex.push_back(trays);
  }
  L.tray_imex.assign(L.trays, -1);
  for (std::size_t i = 0; i < L.imex.size(); ++i)
    for (int t : L.imex[i]) {
      if (t < 0 || t >= L.trays) throw InputError("--imex-domain", "", std::to_string(t), "trays 0.." + std::to_string(L.trays - 1));
      if (L.tray_imex[t] >= 0) throw InputError("--imex-domain", "", "tray " + std::to_string(t) + " twice", "each tray in one nodes_config.cfg");
      L.tray_imex[t] = static_cast<int>(i);
    }
  return L;
}

ImexService service(const FabricInputs& in, int tray) {
  const auto it = in.imex_service.find(tray);
  return it == in.imex_service.end() ? ImexService::running : it->second;
}

FabricState state(const FabricInputs& in, const Layout& L, int gpu) {
  if (!L.mnnvl) return FabricState::not_supported;
  const auto it = in.gpu_fabric.find(gpu);
  return it == in.gpu_fabric.end() ? FabricState::completed : it->second;
}

std::string list(const std::vector<int>& v) {
  std::string out;
  for (int x : v) out += (out.empty() ? "" : ",") + std::to_string(x);
  return out;
}

// Hierarchical all_reduce, bandwidth only: reduce-scatter + all-gather over NVLink inside each group of
// d GPUs, ring over the NICs across k groups on S/d per GPU (seed s7, Fig 4 form).
double grouped_allreduce_s(double S, int d, int k, double nvl, double nic) {
  double t = 0;
  if (d > 1) t += 2.0 * (d - 1) / d * S / nvl;
  if (k > 1) t += nic > 0 ? 2.0 * (k - 1) / k * (S / d) / nic : INFINITY;
  return t;
}

}  // namespace

ResolvedFabric resolve_fabric(const TopologyGraph& graph, const FabricInputs& in) {
  const Layout L = layout(graph, in);
  ResolvedFabric r;
  r.imex_domains = L.imex;
  for (int t = 0; t < L.trays; ++t) {
    if (L.tray_partition[t] >= static_cast<int>(r.partitions.size())) r.partitions.resize(L.tray_partition[t] + 1);
    r.partitions[L.tray_partition[t]].push_back(t);
  }
  return r;
}

std::vector<GpuFabricInfo> gpu_fabric_info(const TopologyGraph& graph, const FabricInputs& in) {
  const Layout L = layout(graph, in);
  std::vector<GpuFabricInfo> out;
  for (int gpu = 0; gpu < graph.gpu_count(); ++gpu) {
    GpuFabricInfo i;
    i.gpu = gpu;
    i.name = graph.vertices()[graph.gpu_vertex(gpu)].name;
    i.tray = gpu / std::max(1, L.gpus_per_tray);
    const FabricState s = state(in, L, gpu);
    if (in.trays_down.count(i.tray)) {
      i.state = "N/A";
      i.status = "tray down";
    } else if (s == FabricState::not_supported) {
      i.state = i.status = "N/A";
    } else {
      i.state = s == FabricState::completed ? "Completed" : s == FabricState::in_progress ? "In Progress"
                                                        : s == FabricState::not_started ? "Not Started" : "Failed";
      i.status = s == FabricState::completed ? "Success" : s == FabricState::failed ? "Failure" : "N/A";
      if (s == FabricState::completed) {
        i.cluster_uuid = "racksim-nvlink-domain-" + std::to_string(L.tray_domain[i.tray]);
        i.clique_id = L.tray_partition[i.tray] + 1;
      }
    }
    out.push_back(i);
  }
  return out;
}

JobVerdict check_job(const TopologyGraph& graph, const FabricInputs& in, const JobRequest& job) {
  const Layout L = layout(graph, in);
  if (job.gpus.empty()) throw InputError("--gpus/--trays", "", "(none)", "at least one GPU for the job");
  std::set<int> seen;
  for (int g : job.gpus) {
    if (g < 0 || g >= graph.gpu_count()) throw InputError("--gpus", "", std::to_string(g), "GPUs 0.." + std::to_string(graph.gpu_count() - 1));
    if (!seen.insert(g).second) throw InputError("--gpus", "", std::to_string(g) + " twice", "each GPU once");
  }
  if (job.bytes == 0) throw InputError("--bytes", "", "0", "a positive size");
  if (job.channel < 0) throw InputError("--channel", "", std::to_string(job.channel), "a channel number >= 0");
  if (job.nccl.mnnvl_enable < 0 || job.nccl.mnnvl_enable > 2) throw InputError("--nccl-mnnvl-enable", "", std::to_string(job.nccl.mnnvl_enable), "0, 1 or 2");
  JobVerdict v;
  std::map<int, std::vector<int>> by_tray, by_clique;
  for (int g : job.gpus) by_tray[g / L.gpus_per_tray].push_back(g);
  for (const auto& [t, gs] : by_tray) v.trays.push_back(t);
  const auto info = gpu_fabric_info(graph, in);
  for (int g : job.gpus) by_clique[L.tray_domain[info[g].tray] * 1000 + L.tray_partition[info[g].tray]].push_back(g);
  v.nvlink_groups = static_cast<int>(by_clique.size());

  const double S = static_cast<double>(job.bytes);
  const int n = static_cast<int>(job.gpus.size());
  const int per_tray = static_cast<int>((n + by_tray.size() - 1) / by_tray.size());
  v.bw_nvlink_s = L.nvlink_Bps > 0 ? 2.0 * (n - 1) / n * S / L.nvlink_Bps : INFINITY;
  v.bw_ib_s = grouped_allreduce_s(S, per_tray, static_cast<int>(by_tray.size()), L.nvlink_Bps, L.nic_Bps);
  const Calibration cal = load_calibration(job.calibration);
  v.calibration = cal.name;
  const AllReduceEstimate with = allreduce_with_mnnvl(graph, job.gpus, job.bytes, cal);
  const AllReduceEstimate without = allreduce_without_mnnvl(graph, job.gpus, job.bytes, cal);
  v.nvlink_allreduce_s = with.seconds >= 0 ? with.seconds : v.bw_nvlink_s;
  v.ib_allreduce_s = without.seconds >= 0 ? without.seconds : v.bw_ib_s;
  v.nvlink_algorithm = with.algorithm;
  v.ib_algorithm = without.algorithm;
  v.estimate_note = "analytic model (models/analytic, alpha-beta, calibration '" + cal.name + "'): with MNNVL " +
                    with.algorithm + ", without MNNVL (one NVLink domain per tray, NICs between) " + without.algorithm +
                    fmt::format("; bandwidth-only (seed s7 Fig 4 form, NVLink {:.0f} GB/s, NIC {:.0f} GB/s per GPU): {:.4g} s vs {:.4g} s",
                                units::Bps_to_GBps(L.nvlink_Bps), units::Bps_to_GBps(L.nic_Bps), v.bw_nvlink_s, v.bw_ib_s);
  for (const auto* e : {&with, &without})
    if (!e->note.empty()) v.estimate_note += "; analytic model not applicable (" + e->note + "), bandwidth-only used";
  const double ratio = v.ib_allreduce_s > 0 ? v.nvlink_allreduce_s / v.ib_allreduce_s : 0;
  auto ib_words = [&] {
    return fmt::format("over IB at {:.0f}% of the MNNVL speed (all_reduce of {}: {:.4g} s vs {:.4g} s)", 100 * ratio,
                       units::format_bytes(job.bytes), v.ib_allreduce_s, v.nvlink_allreduce_s);
  };

  std::vector<int> down;
  for (int t : v.trays)
    if (in.trays_down.count(t)) down.push_back(t);
  if (!down.empty()) {
    v.outcome = "cannot_start";
    v.message = "tray " + list(down) + " is down: its GPUs left the NVLink domain, and every job with a rank there fails (seed s8)";
    return v;
  }
  if (v.trays.size() == 1) {
    v.outcome = "single_tray";
    v.runs = true;
    v.expected_allreduce_s = v.nvlink_allreduce_s;
    v.message = "single-tray job: NVLink inside the tray, IMEX and channels are not involved (seed s8)";
    return v;
  }
  if (!L.mnnvl) {
    v.outcome = "no_mnnvl_system";
    v.runs = true;
    v.expected_allreduce_s = v.ib_allreduce_s;
    v.message = graph.spec().id + " has no multi-node NVLink: NVLink inside each node, the network between nodes";
    return v;
  }
  const NcclConfig& nc = job.nccl;
  if (compare_versions(nc.version, "2.25.2", "--nccl-version") < 0) {
    v.outcome = "nccl_too_old";
    v.runs = true;
    v.expected_allreduce_s = v.ib_allreduce_s;
    v.message = "NCCL " + nc.version + " predates MNNVL (2.25.2+): it runs " + ib_words();
    return v;
  }
  if (nc.mnnvl_enable == 0 || nc.p2p_disable) {
    v.outcome = "ib_forced";
    v.runs = true;
    v.expected_allreduce_s = v.ib_allreduce_s;
    v.message = std::string(nc.p2p_disable ? "NCCL_P2P_DISABLE=1 implies NCCL_MNNVL_ENABLE=0" : "NCCL_MNNVL_ENABLE=0") +
                ": the job runs " + ib_words() + "; a diagnostic, not a fix (seed self-check 5)";
    return v;
  }
  // The seed's checks, in its order (s6).
  Check fabric{"fabric state", "nvidia-smi -q | grep -A6 Fabric", true, "State Completed, Status Success on every job GPU"};
  std::vector<std::string> bad;
  for (int g : job.gpus)
    if (info[g].state != "Completed") bad.push_back(info[g].name + " " + info[g].state);
  if (!bad.empty()) {
    fabric.ok = false;
    fabric.detail = "not Completed: ";
    for (std::size_t i = 0; i < bad.size(); ++i) fabric.detail += (i ? ", " : "") + bad[i];
  }
  Check svc{"IMEX service", "systemctl status nvidia-imex", true, "running on trays " + list(v.trays)};
  std::vector<int> stopped;
  for (int t : v.trays)
    if (service(in, t) != ImexService::running) stopped.push_back(t);
  if (!stopped.empty()) {
    svc.ok = false;
    svc.detail = "not running on tray " + list(stopped) + " (" + to_string(service(in, stopped[0])) + ")";
  }
  Check dom{"IMEX domain", "cat /etc/nvidia-imex/nodes_config.cfg", true, ""};
  for (const auto& [key, gs] : by_clique) {
    std::set<int> imex_ids, trays;
    for (int g : gs) trays.insert(info[g].tray), imex_ids.insert(L.tray_imex[info[g].tray]);
    if (imex_ids.count(-1)) dom.ok = false, dom.detail += "a job tray is in no nodes_config.cfg; ";
    else if (imex_ids.size() > 1) dom.ok = false, dom.detail += "the job's trays are split over several IMEX domains; ";
    for (int id : imex_ids) {
      if (id < 0) continue;
      std::set<int> doms;
      for (int t : L.imex[id]) doms.insert(L.tray_domain[t]);
      if (doms.size() > 1) dom.ok = false, dom.detail += "nodes_config.cfg lists trays of different NVLink domains; ";
    }
  }
  if (dom.ok) dom.detail = "every job tray is in one IMEX domain inside its NVLink domain";
  Check peers{"IMEX peers", "nvidia-imex-ctl -N", true, "all peers connected"};
  std::vector<int> missing;
  for (int t : v.trays)
    if (L.tray_imex[t] >= 0)
      for (int p : L.imex[L.tray_imex[t]])
        if ((service(in, p) != ImexService::running || in.trays_down.count(p)) &&
            std::find(missing.begin(), missing.end(), p) == missing.end())
          missing.push_back(p);
  if (!missing.empty()) {
    std::sort(missing.begin(), missing.end());
    bool job_peer = false;
    for (int p : missing) job_peer = job_peer || std::find(v.trays.begin(), v.trays.end(), p) != v.trays.end();
    peers.ok = !job_peer;
    peers.detail = "not connected: tray " + list(missing) + (job_peer ? "" : " (not in this job: imports between job trays still work)");
  }
  Check chan{"IMEX channel", "ls -l /dev/nvidia-caps-imex-channels/ (inside the container)", true, ""};
  const std::string cn = "channel" + std::to_string(job.channel);
  const bool on_host = in.host_channels.count(job.channel) > 0;
  const bool in_container = !in.container_channels || in.container_channels->count(job.channel) > 0;
  chan.ok = on_host && in_container;
  chan.detail = !on_host ? cn + " does not exist on the hosts (no /dev/nvidia-caps-imex-channels/" + cn + ")"
                : !in_container ? cn + " is not passed into the job's container: its fabric handles cannot be authorized"
                                : cn + " present" + std::string(in.container_channels ? " in the container" : " (not containerised)");
  v.checks = {fabric, svc, dom, peers, chan};
  for (const auto& ch : v.checks)
    if (!ch.ok) v.failed_checks.push_back(ch.name);
  if (v.failed_checks.empty()) {
    v.runs = v.uses_mnnvl = true;
    if (v.nvlink_groups == 1) {
      v.outcome = "mnnvl";
      v.expected_allreduce_s = v.nvlink_allreduce_s;
      v.message = "MNNVL: every rank in one NVLink clique, NCCL uses NVLink between trays";
    } else {
      v.outcome = "mnnvl_partitioned";
      std::set<int> domains;
      for (int g : job.gpus) domains.insert(L.tray_domain[info[g].tray]);
      if (static_cast<int>(domains.size()) == v.nvlink_groups) {  // cliques = NVLink domains: the graph has them
        v.expected_allreduce_s = v.nvlink_allreduce_s;
      } else {  // NVL72 partitions: not in the topology graph; the bandwidth-only grouped form
        const int d = static_cast<int>((n + v.nvlink_groups - 1) / v.nvlink_groups);
        v.expected_allreduce_s = grouped_allreduce_s(S, d, v.nvlink_groups, L.nvlink_Bps, L.nic_Bps);
        v.estimate_note += "; partitions: bandwidth-only grouped estimate";
      }
      v.message = fmt::format("the job spans {} NVLink cliques (partitions or racks): NVLink inside each, the network between them",
                              v.nvlink_groups);
    }
    return v;
  }
  std::string failed;
  for (const auto& f : v.failed_checks) failed += (failed.empty() ? "" : ", ") + f;
  if (nc.mnnvl_enable == 1 || compare_versions(nc.version, "2.27", "--nccl-version") >= 0) {
    v.outcome = "init_error";
    v.message = "NCCL init fails with an MNNVL error (" + failed + "): since NCCL 2.27 a failed MNNVL fabric init is a hard error" +
                (nc.mnnvl_enable == 1 ? " (and NCCL_MNNVL_ENABLE=1 forces it)" : "") +
                ". NCCL_MNNVL_ENABLE=0 would confirm it: the job then runs " + ib_words();
  } else {
    v.outcome = "ib_fallback";
    v.runs = true;
    v.expected_allreduce_s = v.ib_allreduce_s;
    v.message = "NCCL " + nc.version + " silently falls back to IB (" + failed + "): it runs " + ib_words();
  }
  return v;
}

ShareResult share_buffer(const TopologyGraph& graph, const FabricInputs& in, int exporter, int importer, HandleType handle,
                         int exporter_channel, int importer_channel) {
  const Layout L = layout(graph, in);
  for (int g : {exporter, importer})
    if (g < 0 || g >= graph.gpu_count()) throw InputError("--share", "", std::to_string(g), "GPUs 0.." + std::to_string(graph.gpu_count() - 1));
  ShareResult r;
  const int te = exporter / L.gpus_per_tray, ti = importer / L.gpus_per_tray;
  const bool same_tray = te == ti;
  if (handle == HandleType::automatic) handle = same_tray ? HandleType::posix_fd : HandleType::fabric;
  if (handle == HandleType::same_process) {
    // Seed s6: sharing inside one OS needs no more than the driver; a process lives in one tray's OS.
    r.handle = "none";
    if (!same_tray) {
      r.reason = "one process runs on one tray's OS and CUDA enumerates only that tray's GPUs: trays " + std::to_string(te) +
                 " and " + std::to_string(ti) + " need two processes and a fabric handle (IMEX)";
      return r;
    }
    r.ok = true;
    r.steps = {{"export", "none: the pointer is valid in the whole process", "nobody"},
               {"map", "cudaDeviceEnablePeerAccess (or cuMemSetAccess for the second GPU)", "the driver, inside the process"},
               {"access", "loads/stores over NVLink", "no software"}};
    return r;
  }
  if (handle == HandleType::posix_fd) {
    r.handle = "posix_fd";
    r.handle_bytes = 4;
    if (!same_tray) {
      r.reason = "an fd only means something to the kernel that issued it, and trays " + std::to_string(te) + " and " +
                 std::to_string(ti) + " run different kernels: use CU_MEM_HANDLE_TYPE_FABRIC (IMEX)";
      return r;
    }
    r.ok = true;
    r.steps = {{"export", "cuMemExportToShareableHandle(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)", "the kernel issues an fd"},
               {"send", "Unix socket, SCM_RIGHTS", "the kernel duplicates the fd into the importer (the fd is the permission)"},
               {"import", "cuMemImportFromShareableHandle", "the driver, on the same kernel"},
               {"map", "cuMemMap + cuMemSetAccess", "the driver maps it into the importing GPU's page table"},
               {"access", "loads/stores over NVLink", "no software"}};
    return r;
  }
  r.handle = "fabric";
  r.handle_bytes = 64;
  const auto info = gpu_fabric_info(graph, in);
  std::vector<std::string> why;
  if (!L.mnnvl && !same_tray)
    why.push_back(graph.spec().id + " has no multi-node NVLink: cuMemCreate(FABRIC) fails with 'operation not permitted' "
                  "(the FABRIC_SUPPORTED attribute only means the driver knows the handle type)");
  if (L.mnnvl) {
    if (in.trays_down.count(te) || in.trays_down.count(ti)) why.push_back("a tray is down");
    for (int g : {exporter, importer})
      if (info[g].state != "Completed") why.push_back(info[g].name + " fabric state " + info[g].state);
    if (info[exporter].cluster_uuid != info[importer].cluster_uuid || info[exporter].clique_id != info[importer].clique_id)
      why.push_back("different ClusterUUID/CliqueId: the GPUs cannot map each other");
    for (int t : {te, ti})
      if (service(in, t) != ImexService::running) why.push_back("nvidia-imex not running on tray " + std::to_string(t));
    if (!same_tray && (L.tray_imex[te] < 0 || L.tray_imex[te] != L.tray_imex[ti]))
      why.push_back("trays " + std::to_string(te) + " and " + std::to_string(ti) + " are not in one nodes_config.cfg");
  } else if (same_tray) {
    why.push_back(graph.spec().id + ": cuMemCreate(FABRIC) fails with 'operation not permitted' (no NVLink fabric)");
  }
  auto openable = [&](int ch) { return in.host_channels.count(ch) && (!in.container_channels || in.container_channels->count(ch)); };
  if (!openable(exporter_channel)) why.push_back("the exporter cannot open IMEX channel" + std::to_string(exporter_channel));
  if (!openable(importer_channel)) why.push_back("the importer cannot open IMEX channel" + std::to_string(importer_channel));
  if (exporter_channel != importer_channel)
    why.push_back("the importer must open the same IMEX channel as the exporter (channel" + std::to_string(exporter_channel) + ")");
  for (std::size_t i = 0; i < why.size(); ++i) r.reason += (i ? "; " : "") + why[i];
  r.ok = why.empty();
  r.steps = {{"export", "cuMemCreate(..FABRIC..) + cuMemExportToShareableHandle(CU_MEM_HANDLE_TYPE_FABRIC): a 64-byte handle",
              "the exporting driver, authorized by an IMEX channel the process can open"},
             {"send", "any channel (MPI, NCCL bootstrap, TCP): the handle is plain data", "nobody: no kernel involved"},
             {"import", "cuMemImportFromShareableHandle", "IMEX validates the import against the exporter (the channel is the authorization boundary)"},
             {"map", "cuMemMap + cuMemSetAccess", "the importing driver maps fabric addresses into its GPU's page table"},
             {"access", "loads/stores over NVLink through the switch trays", "no CPU, kernel or daemon"}};
  return r;
}

}  // namespace racksim::fabric
