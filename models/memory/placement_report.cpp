#include "models/memory/placement_report.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "models/memory/access_cost.hpp"
#include "sim/core/units.hpp"
#include "sim/core/json_reader.hpp"

namespace racksim::memory {

namespace {

using nlohmann::json;

double round6(double value) {
  if (value == 0 || !std::isfinite(value)) return value;
  const double magnitude = std::ceil(std::log10(std::fabs(value)));
  const double scale = std::pow(10.0, 6 - magnitude);
  return std::round(value * scale) / scale;
}

double GB(double bytes) { return bytes / units::kGB; }

std::vector<std::string> notes(const TrayMemoryModel& tray) {
  std::vector<std::string> out;
  if (tray.integrated())
    out.push_back(tray.system() + ": the integrated GPU shares the CPU's " + tray.node(0).memory_kind +
                  " (ATS, one DRAM): there is no GPU memory for NUMA mode or CDMM to manage; cudaMalloc takes system memory");
  else if (!tray.coherent() && tray.mode() == MemoryMode::numa)
    out.push_back("numa mode has no effect on " + tray.system() +
                  ": its GPUs are on PCIe, not NVLink-C2C, so their memory is never a NUMA node (driver-managed HBM)");
  if (tray.coherent()) {
    if (tray.mode() == MemoryMode::cdmm)
      out.push_back("CDMM: cudaMemPrefetchAsync and access-counter migration do not move malloc/mmap pages to HBM; "
                    "the GPU reads them over C2C. Managed memory keeps its own migration (seed s3)");
    else if (tray.assumptions().access_counter_migration)
      out.push_back("access-counter migration is on: hot system-allocated pages may move to HBM (a driver implementation "
                    "detail, seed s3: possible, not guaranteed); placement shows first-touch pages only");
    else
      out.push_back("access-counter migration of malloc'd pages to HBM is not assumed (seed s3: possible, not guaranteed)");
    bool pairs = false;
    for (int g : tray.gpu_nodes()) pairs = pairs || !tray.host_link(g).share_group.empty();
    out.push_back(std::string(pairs ? std::string("assumed: a superchip's two GPUs ") +
                                          (tray.assumptions().c2c_shared ? "share" : "do not share") + " one NVLink-C2C; "
                                    : "") +
                  "NUMA ids and node distances are not public for " + tray.system() + " (seed s2: needs a real tray)");
  }
  return out;
}

json access_json(const TrayMemoryModel& tray, const AllocationResult& r, int reader) {
  json paths = json::array();
  double total = 0;
  const bool system_allocated = r.request.kind == AllocKind::cpu;
  for (const auto& [n, bytes] : r.placed) {
    const PathCost p = access_path(tray, reader, n, system_allocated);
    const StreamCost s = stream_cost(tray, p, bytes);
    total += s.seconds;
    json j{{"node", tray.node(n).id},
           {"bytes", bytes},
           {"path", p.path},
           {"hops", p.hops},
           {"bandwidth_GBps", round6(units::Bps_to_GBps(p.bandwidth_Bps))},
           {"shared_bandwidth_GBps", round6(units::Bps_to_GBps(p.shared_bandwidth_Bps))},
           {"latency_us", round6(units::s_to_us(p.latency_s))},
           {"via_ats", p.via_ats},
           {"read_once_s", round6(s.seconds)}};
    if (s.tlb_reach_bytes > 0) {
      j["page_bytes"] = static_cast<std::uint64_t>(p.page_bytes);
      j["tlb_reach_bytes"] = static_cast<std::uint64_t>(s.tlb_reach_bytes);
      j["translation_s"] = round6(s.translation_s);
    }
    paths.push_back(j);
  }
  return json{{"reader", tray.node(reader).id}, {"paths", paths}, {"read_once_s", round6(total)}};
}

json tuning_json(const TuningSettings& t) {
  json j{{"page_size_bytes", t.page_size_bytes},
         {"thp_pmd", to_string(t.thp_pmd)},
         {"mthp_2m", t.mthp_2m},
         {"init_on_alloc", t.init_on_alloc},
         {"numa_balancing", t.numa_balancing},
         {"compaction_proactiveness", t.compaction_proactiveness},
         {"swap_bytes", t.swap_bytes},
         {"iommu_passthrough", t.iommu_passthrough},
         {"cpufreq_performance", t.cpufreq_performance}};
  j["min_free_kbytes"] = t.min_free_kbytes ? json(*t.min_free_kbytes) : json(nullptr);
  return j;
}

json assumptions_json(const TrayAssumptions& a) {
  return json{{"os_reserved_GB_per_cpu_node", a.os_reserved_GB_per_cpu_node},
              {"gpu_driver_reserved_GB", a.gpu_driver_reserved_GB},
              {"c2c_shared", a.c2c_shared},
              {"gpu_numa_first_id", a.gpu_numa_first_id},
              {"gpu_numa_stride", a.gpu_numa_stride},
              {"distances", {{"local", a.distance_local}, {"cpu_cpu", a.distance_cpu_cpu},
                             {"cpu_own_gpu", a.distance_cpu_own_gpu}, {"cpu_other_gpu", a.distance_cpu_other_gpu},
                             {"gpu_gpu", a.distance_gpu_gpu}}},
              {"access_counter_migration", a.access_counter_migration},
              {"gpu_tlb_entries", a.gpu_tlb_entries},
              {"ats_miss_latency_us", a.ats_miss_latency_us},
              {"ats_outstanding_misses", a.ats_outstanding_misses},
              {"kernel_zeroing_GBps", a.kernel_zeroing_GBps},
              {"c2c_efficiency", a.c2c_efficiency}};
}

}  // namespace

int default_reader(const TrayMemoryModel& tray, const AllocationRequest& request) {
  if (request.kind == AllocKind::pinned || request.kind == AllocKind::egm) {
    for (int g : tray.gpu_nodes())
      if (tray.node(g).host_cpu == request.toucher) return g;
  }
  return request.toucher;
}

std::string placement_to_json_text(const TrayMemoryModel& tray, const PlacementResult& result, const ReportOptions& options) {
  json nodes = json::array();
  for (int n = 0; n < tray.node_count(); ++n) {
    const auto& node = tray.node(n);
    const auto& u = result.nodes.at(n);
    json j{{"id", node.id},
           {"numa_id", node.numa_id >= 0 ? json(node.numa_id) : json(nullptr)},
           {"kind", to_string(node.kind)},
           {"memory", node.memory_kind},
           {"kernel_visible", node.kernel_visible},
           {"capacity_bytes", node.capacity_bytes},
           {"os_reserved_bytes", node.os_reserved_bytes},
           {"driver_reserved_bytes", node.driver_reserved_bytes},
           {"watermark_bytes", node.watermark_bytes},
           {"used_bytes", u.used_bytes},
           {"free_bytes", u.free_bytes},
           {"kernel_pages_bytes", u.kernel_pages_bytes},
           {"by_allocation", u.by_allocation}};
    if (node.kind == NodeKind::gpu) {
      j["nvidia_smi_used_bytes"] = u.driver_bytes;
      j["nvidia_smi_free_bytes"] = node.capacity_bytes - std::min(node.capacity_bytes, u.driver_bytes);
    }
    nodes.push_back(j);
  }
  json allocations = json::array();
  for (const auto& r : result.allocations) {
    json placed = json::object();
    for (const auto& [n, bytes] : r.placed) placed[tray.node(n).id] = bytes;
    const int reader = options.reader >= 0 ? options.reader : default_reader(tray, r.request);
    allocations.push_back(json{{"name", r.request.name},
                               {"kind", to_string(r.request.kind)},
                               {"request", r.request.text},
                               {"description", describe_request(r.request, tray)},
                               {"requested_bytes", r.request.bytes},
                               {"placed", placed},
                               {"failed", r.failed()},
                               {"outcome", to_string(r.outcome)},
                               {"reason", r.reason},
                               {"swapped_bytes", r.swapped_bytes},
                               {"spilled_to_gpu_bytes", r.spilled_to_gpu_bytes},
                               {"off_target_bytes", r.off_target_bytes},
                               {"swap_needed_bytes", r.swap_needed_bytes},
                               {"reclaimed_bytes", r.reclaimed_bytes},
                               {"evicted_to_host_bytes", r.evicted_to_host_bytes},
                               {"cgroup_charged_bytes", r.cgroup_charged_bytes},
                               {"init_on_alloc_zeroing_s", round6(r.zeroing_s)},
                               {"access", access_json(tray, r, reader)}});
  }
  json fallback = json::object();
  for (int n = 0; n < tray.node_count(); ++n) {
    if (!tray.node(n).kernel_visible) continue;
    json order = json::array();
    for (int m : tray.fallback_order(n)) order.push_back(tray.node(m).id);
    fallback[tray.node(n).id] = order;
  }
  json out{{"system", tray.system()},
           {"tray", tray.tray_name()},
           {"mode", to_string(tray.mode())},
           {"coherent", tray.coherent()},
           {"notes", notes(tray)},
           {"min_free_bytes", tray.min_free_bytes()},
           {"min_free_source", tray.min_free_source()},
           {"fallback_order", fallback},
           {"nodes", nodes},
           {"allocations", allocations},
           {"swap", {{"capacity_bytes", result.swap_capacity_bytes}, {"used_bytes", result.swap_used_bytes}}},
           {"kubernetes", {{"node_capacity_bytes", result.k8s_node_capacity_bytes},
                           {"hbm_counted", result.k8s_hbm_counted},
                           {"pod_usage_bytes", result.k8s_pod_usage_bytes}}},
           {"tuning", tuning_json(tray.tuning())},
           {"assumptions", assumptions_json(tray.assumptions())}};
  if (options.checklist) {
    json items = json::array();
    for (const auto& i : tuning_checklist(tray))
      items.push_back(json{{"setting", i.setting}, {"check", i.check}, {"value", i.value}, {"recommended", i.recommended},
                           {"ok", i.ok}, {"effect", i.effect}, {"number", round6(i.number)}, {"unit", i.unit}});
    out["checklist"] = items;
  }
  return dump_json(out, 2) + "\n";
}

std::string placement_to_text(const TrayMemoryModel& tray, const PlacementResult& result, const ReportOptions& options) {
  std::string s = fmt::format("{} tray ({}), {} mode: kernel manages {:.1f} GB, vm.min_free {:.2f} GB\n", tray.system(),
                              tray.tray_name(), to_string(tray.mode()), GB(static_cast<double>(tray.kernel_memory_bytes())),
                              GB(static_cast<double>(tray.min_free_bytes())));
  for (const auto& n : notes(tray)) s += "  note: " + n + "\n";
  s += fmt::format("  {:<6}{:>5} {:<8}{:>11}{:>11}{:>11}{:>11}  {}\n", "node", "numa", "memory", "capacity", "reserved", "used", "free",
                   "holds");
  for (int n = 0; n < tray.node_count(); ++n) {
    const auto& node = tray.node(n);
    const auto& u = result.nodes.at(n);
    std::string holds;
    for (const auto& [name, bytes] : u.by_allocation) holds += fmt::format("{}{} {:.1f}", holds.empty() ? "" : ", ", name, GB(static_cast<double>(bytes)));
    if (node.kind == NodeKind::gpu)
      holds += fmt::format("{}nvidia-smi used {:.1f}", holds.empty() ? "" : "; ", GB(static_cast<double>(u.driver_bytes)));
    if (node.kind == NodeKind::gpu && !node.kernel_visible && node.numa_id >= 0) holds += " (node empty: driver-managed)";
    const double reserved = static_cast<double>(node.os_reserved_bytes + node.driver_reserved_bytes + (node.kernel_visible ? node.watermark_bytes : 0));
    s += fmt::format("  {:<6}{:>5} {:<8}{:>8.1f} GB{:>8.1f} GB{:>8.1f} GB{:>8.1f} GB  {}\n", node.id,
                     node.numa_id >= 0 ? std::to_string(node.numa_id) : "-", node.memory_kind,
                     GB(static_cast<double>(node.capacity_bytes)), GB(reserved), GB(static_cast<double>(u.used_bytes)),
                     GB(static_cast<double>(u.free_bytes)), holds);
  }
  s += "allocations:\n";
  for (const auto& r : result.allocations) {
    std::string where;
    for (const auto& [n, bytes] : r.placed) where += fmt::format("{}{} {:.2f} GB", where.empty() ? "" : ", ", tray.node(n).id, GB(static_cast<double>(bytes)));
    if (r.swapped_bytes) where += fmt::format("{}swap {:.2f} GB", where.empty() ? "" : ", ", GB(static_cast<double>(r.swapped_bytes)));
    s += fmt::format("  {:<12} {:<8} {:>9.1f} GB  {:<10} {}\n", r.request.name, to_string(r.request.kind),
                     GB(static_cast<double>(r.request.bytes)),
                     r.outcome == Outcome::oom_killed ? "OOM-KILLED" : (r.failed() ? "FAILED" : "placed"), where.empty() ? "-" : where);
    s += "      " + describe_request(r.request, tray) + "\n";
    if (!r.reason.empty()) s += "      " + r.reason + "\n";
    if (r.zeroing_s > 0) s += fmt::format("      init_on_alloc zeroing: {:.2f} s\n", r.zeroing_s);
    if (r.resident() && !r.placed.empty()) {
      const int reader = options.reader >= 0 ? options.reader : default_reader(tray, r.request);
      for (const auto& [n, bytes] : r.placed) {
        const PathCost p = access_path(tray, reader, n, r.request.kind == AllocKind::cpu);
        const StreamCost c = stream_cost(tray, p, bytes);
        s += fmt::format("      {} reads {} on {}: {} at {:.0f} GB/s{}, {:.2f} us, once in {:.3f} s\n", tray.node(reader).id,
                         fmt::format("{:.1f} GB", GB(static_cast<double>(bytes))),
                         tray.node(n).id, p.path, units::Bps_to_GBps(p.bandwidth_Bps),
                         p.shared_bandwidth_Bps < p.bandwidth_Bps ? fmt::format(" ({:.0f} shared)", units::Bps_to_GBps(p.shared_bandwidth_Bps)) : "",
                         units::s_to_us(p.latency_s), c.seconds);
      }
    }
  }
  s += fmt::format("kubernetes: node memory capacity {:.1f} GB ({}), pod usage {:.1f} GB\n",
                   GB(static_cast<double>(result.k8s_node_capacity_bytes)), result.k8s_hbm_counted ? "HBM counted" : "HBM not counted",
                   GB(static_cast<double>(result.k8s_pod_usage_bytes)));
  s += fmt::format("swap: {:.1f} of {:.1f} GB used\n", GB(static_cast<double>(result.swap_used_bytes)), GB(static_cast<double>(result.swap_capacity_bytes)));
  if (options.checklist) {
    s += "tuning checklist (seed s5):\n";
    for (const auto& i : tuning_checklist(tray))
      s += fmt::format("  [{}] {}: {} (recommended {}): {}\n", i.ok ? " ok " : "WARN", i.setting, i.value, i.recommended, i.effect);
  }
  return s;
}

}  // namespace racksim::memory
