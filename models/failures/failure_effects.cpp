#include "models/failures/failure_effects.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "models/jobs/job_runner.hpp"
#include "sim/platform/platform_model.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {

namespace {

using K = FailureItem::Kind;

// What one failure item does to one job.
struct Hit {
  enum class Effect { none, slows, restarts, dies } effect = Effect::none;
  double wait_s = 0;       // until the failed part is back (before the restart)
  bool spare_helps = false;  // a free healthy tray of its partition can stand in for the failed one
  std::string why, wait_text;
};

std::string seconds_text(double s) {
  if (s >= 3600) return fmt::format("{:.3g} h", s / 3600);
  if (s >= 60) return fmt::format("{:.3g} min", s / 60);
  return fmt::format("{:.3g} s", s);
}

const Vertex& gpu_vertex(const TopologyGraph& g, int gpu) { return g.vertices()[g.gpu_vertex(gpu)]; }

bool partition_spans_racks(const TopologyGraph& g, int domain) {
  int rack = -1;
  for (int i = 0; i < g.gpu_count(); ++i) {
    const Vertex& v = gpu_vertex(g, i);
    if (v.domain != domain) continue;
    if (rack >= 0 && v.rack != rack) return true;
    rack = v.rack;
  }
  return false;
}

Hit hit_of(const TopologyGraph& g, const FailureItem& item, PartitionMode mode, const JobFootprint& job,
           const RecoveryTimes& rt) {
  const bool full = mode == PartitionMode::full_bandwidth;
  Hit h;
  auto any_gpu = [&](auto pred) {
    for (int gpu : job.gpus)
      if (pred(gpu_vertex(g, gpu), gpu)) return true;
    return false;
  };
  switch (item.kind) {
    case K::tray:
      if (any_gpu([&](const Vertex& v, int) { return v.tray == item.index; })) {
        h = {Hit::Effect::dies, rt.tray_reboot.seconds, true,
             "compute tray " + std::to_string(item.index) + " rebooted: its GPUs left the NVLink domain and a "
             "synchronous communicator cannot lose members (seed course section 8)",
             "tray reboot " + seconds_text(rt.tray_reboot.seconds)};
      }
      break;
    case K::gpu:
      if (std::count(job.gpus.begin(), job.gpus.end(), item.index)) {
        h = {Hit::Effect::dies, rt.gpu_recovery.seconds, true, "GPU " + std::to_string(item.index) + " failed",
             "GPU recovery (reset, then OS restart) " + seconds_text(rt.gpu_recovery.seconds)};
      }
      break;
    case K::switch_tray:
    case K::switch_chip:
      if (any_gpu([&](const Vertex& v, int) { return v.domain >= 0 && (item.domain < 0 || v.fabric == item.domain); })) {
        if (full) {
          const double wait = std::min(rt.switch_repair.seconds, rt.repartition.seconds);
          h = {Hit::Effect::dies, wait, false,
               "its NVLink partition became UNHEALTHY: loss of a switch in full-bandwidth mode (NMX-M Partition Health)",
               "re-create the partition in adaptive-bandwidth mode " + seconds_text(rt.repartition.seconds) +
                   " (or replace the switch tray, " + seconds_text(rt.switch_repair.seconds) + ")"};
        } else {
          h.effect = Hit::Effect::slows;
          h.why = "every GPU of the domain lost the switch's NVLinks (adaptive-bandwidth mode)";
        }
      }
      break;
    case K::nvlink:
      if (std::count(job.gpus.begin(), job.gpus.end(), item.index)) {
        if (full) {
          h = {Hit::Effect::dies, rt.link_retrain.seconds, true,
               "GPU " + std::to_string(item.index) + " lost an NVLink and was parked (NO_NVLINK; full-bandwidth mode)",
               "link retrain by a tray reboot " + seconds_text(rt.link_retrain.seconds)};
        } else {
          h.effect = Hit::Effect::slows;
          h.why = "GPU " + std::to_string(item.index) + " runs on its remaining NVLinks (adaptive-bandwidth mode)";
        }
      }
      break;
    case K::trunk:
      if (any_gpu([&](const Vertex& v, int) {
            return v.domain >= 0 && v.fabric == item.domain && partition_spans_racks(g, v.domain);
          })) {
        if (full) {
          const double wait = std::min(rt.switch_repair.seconds, rt.repartition.seconds);
          h = {Hit::Effect::dies, wait, false,
               "its partition spans both racks and lost a trunk link in full-bandwidth mode (assumption: UNHEALTHY)",
               "re-create the partition in adaptive-bandwidth mode " + seconds_text(rt.repartition.seconds) +
                   " (or repair the trunk, " + seconds_text(rt.switch_repair.seconds) + ")"};
        } else {
          h.effect = Hit::Effect::slows;
          h.why = "trunk bandwidth between the racks is lower (NMX-M adaptive mode: BANDWIDTH)";
        }
      }
      break;
    case K::nic: {
      const std::string port = g.vertices()[g.find_vertex("nic" + std::to_string(item.index))].name + "-port";
      if (job.links.count(port)) {
        h = {Hit::Effect::restarts, 0, false,
             "its traffic went through NIC " + std::to_string(item.index) +
                 ", which died: the running communicator fails; at restart NCCL reaches the network through a "
                 "neighbour GPU's NIC (PXN, src/graph/paths.cc)",
             ""};
      }
      break;
    }
    case K::ib_link: {
      const std::string uplink = "r" + std::to_string(item.domain) + ".leaf.rail" + std::to_string(item.index) + "-uplink";
      if (job.links.count(uplink)) {
        h.effect = Hit::Effect::slows;
        h.why = "a leaf uplink it uses lost a cable; the subnet manager routes around it (assumption)";
      }
      break;
    }
    case K::link:
      if (job.links.count(item.link_name)) {
        h.effect = Hit::Effect::slows;
        h.why = "link " + item.link_name + (item.bandwidth_fraction > 0 ? " is degraded" : " is down");
      }
      break;
    case K::imex: break;  // handled as a note: running jobs keep their mappings
  }
  return h;
}

// Free trays (healthy, used by no job) in the job's own NVLink partitions, and elsewhere in the same
// physical NVLink domains (they can be moved into its partition: NMX-M updates a partition's members).
std::pair<int, int> spare_trays(const TopologyGraph& g, const PlatformModel& failed, const std::vector<JobFootprint>& jobs,
                                const JobFootprint& job) {
  std::set<int> used, domains, fabrics;
  for (const auto& j : jobs)
    for (int gpu : j.gpus) used.insert(gpu_vertex(g, gpu).tray);
  for (int gpu : job.gpus) {
    const Vertex& v = gpu_vertex(g, gpu);
    if (v.domain >= 0) domains.insert(v.domain);
    if (v.fabric >= 0) fabrics.insert(v.fabric);
  }
  std::map<int, std::pair<bool, bool>> trays;  // tray -> (every GPU usable, in one of the job's partitions)
  for (int i = 0; i < g.gpu_count(); ++i) {
    const Vertex& v = gpu_vertex(g, i);
    if (!fabrics.count(v.fabric) || used.count(v.tray)) continue;
    auto [it, added] = trays.emplace(v.tray, std::make_pair(true, domains.count(v.domain) > 0));
    it->second.first = it->second.first && failed.gpu_failure(i).empty();
  }
  int own = 0, elsewhere = 0;
  for (const auto& [t, st] : trays)
    if (st.first) ++(st.second ? own : elsewhere);
  return {own, elsewhere};
}

}  // namespace

FailureScenario data_path_failures(const FailureScenario& failures) {
  FailureScenario out;
  out.mode = failures.mode;
  for (const auto& item : failures.items)
    if (item.kind != K::imex) out.items.push_back(item);
  return out;
}

std::vector<JobFate> job_fates(const TopologyGraph& g, const PlatformModel& failed, const FailureScenario& failures,
                               const std::vector<JobFootprint>& jobs, const RecoveryTimes& rt) {
  std::vector<JobFate> out;
  for (const auto& job : jobs) {
    JobFate f;
    f.name = job.name;
    f.fate = "continues";
    std::vector<std::string> reasons, waits;
    double wait = 0;
    bool spare_helps = true, dies = false, restarts = false;
    std::set<int> trays_hit;
    for (const auto& item : failures.items) {
      const Hit h = hit_of(g, item, failures.mode, job, rt);
      if (h.effect == Hit::Effect::none) continue;
      reasons.push_back(item.text + ": " + h.why);
      if (h.effect == Hit::Effect::dies) {
        dies = true;
        spare_helps = spare_helps && h.spare_helps;
        if (h.wait_s >= wait) wait = h.wait_s;
        waits.push_back(h.wait_text);
        if (item.kind == K::tray) trays_hit.insert(item.index);
        if (item.kind == K::gpu || item.kind == K::nvlink) trays_hit.insert(gpu_vertex(g, item.index).tray);
      }
      if (h.effect == Hit::Effect::restarts) restarts = true;
    }
    // Anything else that took one of its GPUs (e.g. a partition stopped by another partition's switch).
    for (int gpu : job.gpus)
      if (!failed.gpu_failure(gpu).empty() && !dies) {
        dies = true;
        reasons.push_back(failed.gpu_failure(gpu));
      }
    for (const auto& item : failures.items) {
      if (item.kind != K::imex) continue;
      std::map<int, std::set<int>> trays_of_domain;
      for (int gpu : job.gpus) {
        const Vertex& v = gpu_vertex(g, gpu);
        if (v.domain >= 0) trays_of_domain[v.domain].insert(v.tray);
      }
      for (const auto& [d, trays] : trays_of_domain)
        if (trays.size() > 1 && trays.count(item.index))
          f.note = item.text + ": keeps running (IMEX brokers imports at setup; the data path is NVLink loads and "
                   "stores, seed course section 6), but cannot restart across trays until nvidia-imex is back (" +
                   seconds_text(rt.imex_restart.seconds) + ")";
    }
    if (dies) {
      f.fate = "dies";
      const auto [own, elsewhere] = spare_trays(g, failed, jobs, job);
      const int need = static_cast<int>(trays_hit.size());
      const double via_repartition = rt.repartition.seconds + rt.restart.seconds;
      if (spare_helps && need > 0 && own >= need) {
        f.back_after_s = rt.restart.seconds;
        f.back_after = "restart on " + std::to_string(need) + " free tray(s) of its partition " +
                       seconds_text(rt.restart.seconds);
      } else if (spare_helps && need > 0 && own + elsewhere >= need && via_repartition < wait + rt.restart.seconds) {
        f.back_after_s = via_repartition;
        f.back_after = "move " + std::to_string(need - own) + " free tray(s) of the NVLink domain into its partition " +
                       seconds_text(rt.repartition.seconds) + " (NMX-M partition update), then restart " +
                       seconds_text(rt.restart.seconds);
      } else {
        f.back_after_s = wait + rt.restart.seconds;
        std::string w;
        for (const auto& x : waits) w += (w.empty() ? "" : "; ") + x;
        f.back_after = (w.empty() ? "" : w + ", then ") + "restart " + seconds_text(rt.restart.seconds) +
                       (spare_helps && !trays_hit.empty() ? " (no free tray in its NVLink domain)" : "");
      }
    } else if (restarts) {
      f.fate = "restarts";
      f.back_after_s = rt.restart.seconds;
      f.back_after = "restart " + seconds_text(rt.restart.seconds);
    }
    for (const auto& r : reasons) f.reason += (f.reason.empty() ? "" : "; ") + r;
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<PartitionHealth> partition_health(const TopologyGraph& g, const PlatformModel& failed,
                                              const PlatformModel& healthy, const FailureScenario& failures) {
  auto lower = [&](int l) { return failed.links()[l].bandwidth_Bps < healthy.links()[l].bandwidth_Bps * (1 - 1e-12); };
  std::vector<PartitionHealth> out;
  const bool adaptive = failures.mode == PartitionMode::adaptive_bandwidth;
  for (int d = 0; d < g.nvlink_domain_count(); ++d) {
    PartitionHealth p;
    p.name = g.partitioned() ? g.partitioning().partitions[d].name : "d" + std::to_string(d);
    p.state = "HEALTHY";
    int gone = 0;
    bool slower = false;
    for (int i = 0; i < g.gpu_count(); ++i) {
      if (gpu_vertex(g, i).domain != d) continue;
      const std::string& why = failed.gpu_failure(i);
      if (why.find("UNHEALTHY") != std::string::npos) {
        p.state = "UNHEALTHY";
        p.reason = why;
      } else if (!why.empty()) {
        ++gone;
      }
      const int port = failed.port_link(i);
      if (port >= 0 && why.empty() && lower(port)) slower = true;
    }
    if (p.state != "UNHEALTHY") {
      for (std::size_t l = 0; l < failed.links().size(); ++l)
        if (failed.links()[l].name.find(".trunk") != std::string::npos && lower(static_cast<int>(l)) &&
            partition_spans_racks(g, d))
          slower = true;
      if (gone > 0) {
        p.state = "DEGRADED";
        p.reason = std::to_string(gone) + " GPU(s) left the partition; the others keep full bandwidth";
      } else if (slower && adaptive) {
        p.state = "BANDWIDTH";
        p.reason = "NVLinks lost: every GPU communicates at reduced bandwidth (adaptive-bandwidth mode)";
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace racksim
