#include "models/memory/access_cost.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"

namespace racksim::memory {

namespace {

std::string gbps(double Bps) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.0f GB/s", units::Bps_to_GBps(Bps));
  return buf;
}

std::string fixed(double v, const char* fmt) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

double link_Bps(const TrayMemoryModel& tray, const HostLink& link) {
  return link.bandwidth_Bps * (link.kind == LinkKind::c2c ? tray.assumptions().c2c_efficiency : 1.0);
}

double translation_s(const TrayMemoryModel& tray, double bytes, double page) {
  const auto& a = tray.assumptions();
  const double misses = std::ceil(bytes / page);
  return misses * units::us_to_s(a.ats_miss_latency_us) / a.ats_outstanding_misses;
}

}  // namespace

PathCost access_path(const TrayMemoryModel& tray, int accessor, int memory_node, bool system_allocated) {
  const auto& A = tray.node(accessor);
  const auto& M = tray.node(memory_node);
  const auto& as = tray.assumptions();
  PathCost p;
  p.accessor = A.id;
  p.node = M.id;
  const double lpddr_lat = units::us_to_s(as.lpddr_latency_us), hbm_lat = units::us_to_s(as.hbm_latency_us);
  const double mem_lat = M.kind == NodeKind::cpu ? lpddr_lat : hbm_lat;
  auto hop = [&](const std::string& name, double Bps) { p.hops.push_back(name + " " + gbps(Bps)); };
  // CPU-side leg from CPU node `from` to the memory behind CPU node `to` (empty when equal).
  auto cpu_leg = [&](int from, int to, double& bw, double& lat) {
    if (from == to) return;
    const HostLink cc = tray.cpu_cpu_link(from, to);
    bw = std::min(bw, cc.bandwidth_Bps);
    lat += cc.latency_s;
    hop("cpu-cpu " + tray.node(from).id + "-" + tray.node(to).id, cc.bandwidth_Bps);
  };
  double bw = M.bandwidth_Bps, lat = mem_lat;
  if (A.kind == NodeKind::gpu) {
    p.via_ats = system_allocated && tray.ats();
    p.page_bytes = p.via_ats ? static_cast<double>(tray.tuning().page_size_bytes) : as.gpu_page_size_bytes;
    const HostLink& link = tray.host_link(accessor);
    const int sharers = std::max(1, link.sharers);
    if (A.integrated && (memory_node == accessor || memory_node == A.host_cpu)) {
      p.path = "shared system memory (integrated GPU)";
      bw = tray.node(A.host_cpu).bandwidth_Bps;
      hop(tray.node(A.host_cpu).memory_kind + " " + tray.node(A.host_cpu).id, bw);
      p.shared_bandwidth_Bps = bw;
    } else if (memory_node == accessor) {
      p.path = "local HBM";
      hop("HBM " + A.id, bw);
      p.shared_bandwidth_Bps = bw;
    } else if (M.kind == NodeKind::gpu) {
      if (tray.nvlink_Bps() > 0) {
        p.path = "NVLink to " + M.id;
        bw = std::min(bw, tray.nvlink_Bps());
        lat += tray.nvlink_latency_s();
        hop("nvlink", tray.nvlink_Bps());
      } else {
        p.path = "PCIe through the host to " + M.id;
        const HostLink& other = tray.host_link(memory_node);
        bw = std::min({bw, link_Bps(tray, link), link_Bps(tray, other)});
        lat += link.latency_s + other.latency_s;
        hop("pcie " + A.id, link_Bps(tray, link));
        hop("pcie " + M.id, link_Bps(tray, other));
      }
      hop("HBM " + M.id, M.bandwidth_Bps);
      p.shared_bandwidth_Bps = bw;
    } else {
      const double l = link_Bps(tray, link);
      const bool c2c = link.kind == LinkKind::c2c;
      p.path = std::string(c2c ? "C2C to " : "PCIe to ") + (memory_node == A.host_cpu ? "local " : "remote ") + M.id;
      bw = std::min(bw, l);
      lat += link.latency_s;
      hop(std::string(to_string(link.kind)) + (sharers > 1 ? " (shared by " + std::to_string(sharers) + " GPUs)" : ""), l);
      double shared = std::min(M.bandwidth_Bps, l / sharers);
      if (memory_node != A.host_cpu) {
        const double before = bw;
        cpu_leg(A.host_cpu, memory_node, bw, lat);
        shared = std::min(shared, bw < before ? bw : shared);
      }
      hop(M.memory_kind + " " + M.id, M.bandwidth_Bps);
      p.shared_bandwidth_Bps = shared;
      if (!c2c && system_allocated) p.path += " (pageable: no ATS, copies stage through pinned buffers)";
    }
  } else {
    p.page_bytes = static_cast<double>(tray.tuning().page_size_bytes);
    if (memory_node == accessor) {
      p.path = "local " + M.memory_kind;
      hop(M.memory_kind + " " + M.id, bw);
    } else if (M.kind == NodeKind::cpu) {
      p.path = "CPU-CPU to " + M.id;
      cpu_leg(accessor, memory_node, bw, lat);
      hop(M.memory_kind + " " + M.id, M.bandwidth_Bps);
    } else {
      const HostLink& link = tray.host_link(memory_node);
      p.path = std::string(link.kind == LinkKind::c2c ? "C2C" : "PCIe") + " to " + M.id + "'s HBM (CPU pages on a GPU node)";
      cpu_leg(accessor, M.host_cpu, bw, lat);
      bw = std::min(bw, link_Bps(tray, link));
      lat += link.latency_s;
      hop(to_string(link.kind), link_Bps(tray, link));
      hop("HBM " + M.id, M.bandwidth_Bps);
    }
    p.shared_bandwidth_Bps = bw;
  }
  p.bandwidth_Bps = bw;
  p.latency_s = lat;
  return p;
}

StreamCost stream_cost(const TrayMemoryModel& tray, const PathCost& path, std::uint64_t bytes) {
  StreamCost s;
  const double b = static_cast<double>(bytes);
  s.transfer_s = path.bandwidth_Bps > 0 ? b / path.bandwidth_Bps : INFINITY;
  const bool gpu = tray.node(tray.find_node(path.accessor)).kind == NodeKind::gpu;
  if (gpu && path.page_bytes > 0) {
    s.misses = std::ceil(b / path.page_bytes);
    s.translation_s = translation_s(tray, b, path.page_bytes);
    s.tlb_reach_bytes = tray.assumptions().gpu_tlb_entries * path.page_bytes;
  }
  s.seconds = s.transfer_s + s.translation_s;
  s.effective_Bps = s.seconds > 0 ? b / s.seconds : 0;
  return s;
}

double cuda_malloc_zeroing_s(const TrayMemoryModel& tray, std::uint64_t bytes) {
  if (!tray.tuning().init_on_alloc || tray.mode() != MemoryMode::numa || !tray.coherent()) return 0;
  return static_cast<double>(bytes) / units::GBps_to_Bps(tray.assumptions().kernel_zeroing_GBps);
}

std::vector<ChecklistItem> tuning_checklist(const TrayMemoryModel& tray) {
  const auto& t = tray.tuning();
  const auto& as = tray.assumptions();
  const bool numa = tray.mode() == MemoryMode::numa && tray.coherent();
  const double gpu_mem = static_cast<double>(tray.gpu_memory_bytes());
  std::vector<ChecklistItem> out;
  auto kib = [](double b) { return fixed(b / 1024, "%.0f KiB"); };
  auto gbs = [](double b) { return fixed(b / units::kGB, "%.1f GB"); };

  {  // 1. page size: GPU TLB reach over system memory (ATS), seed s4-s5
    ChecklistItem i{"64 KiB kernel pages", "getconf PAGESIZE", kib(static_cast<double>(t.page_size_bytes)), "65536 (64 KiB)",
                    t.page_size_bytes >= 65536, "", 0, ""};
    if (tray.ats() && !tray.gpu_nodes().empty()) {
      const int g = tray.gpu_nodes()[0];
      const PathCost p = access_path(tray, g, tray.node(g).host_cpu, true);
      const double gib = units::kGiB;
      const double t_now = gib / p.bandwidth_Bps + translation_s(tray, gib, static_cast<double>(t.page_size_bytes));
      const double t_64k = gib / p.bandwidth_Bps + translation_s(tray, gib, 65536);
      i.effect = "GPU TLB reach over malloc'd memory " + fixed(as.gpu_tlb_entries * t.page_size_bytes / 1048576.0, "%.0f MiB") +
                 " (" + std::to_string(as.gpu_tlb_entries) + " entries x " + kib(static_cast<double>(t.page_size_bytes)) +
                 "); a GPU streaming 1 GiB of malloc'd memory (" + p.path + ") takes " + fixed(t_now * 1e3, "%.2f ms") +
                 " vs " + fixed(t_64k * 1e3, "%.2f ms") + " with 64 KiB pages (ATS miss " +
                 fixed(as.ats_miss_latency_us, "%.1f us") + ", " + std::to_string(as.ats_outstanding_misses) +
                 " in flight: assumptions)";
      i.number = t_now / t_64k;
      i.unit = "x slower than 64 KiB pages";
    } else {
      i.effect = "no effect on GPU access: the GPU does not use CPU page tables on this system (no ATS)";
    }
    out.push_back(i);
  }
  {  // 2. THP: 512 MiB never, 2 MiB mTHP
    const double pmd = static_cast<double>(t.page_size_bytes) * (t.page_size_bytes / 8.0);
    ChecklistItem i{"THP: 512 MiB never, 2 MiB madvise", "/sys/kernel/mm/transparent_hugepage/hugepages-524288kB/enabled",
                    std::string("PMD THP (") + fixed(pmd / 1048576, "%.0f MiB") + ") " + to_string(t.thp_pmd) +
                        (t.mthp_2m ? ", 2 MiB mTHP on" : ""),
                    "never (+ 2 MiB mTHP)", !(t.page_size_bytes >= 65536 && t.thp_pmd != ThpSetting::never), "", 0, ""};
    const double with_512m = std::min(11.0 * 512 * 1048576 * tray.zones_counted(), tray.kernel_memory_bytes() / 20.0);
    i.effect = "kernel reserve vm.min_free_kbytes = " + gbs(static_cast<double>(tray.min_free_bytes())) + " (" + tray.min_free_source() +
               "); 512 MiB THP on this tray's " + std::to_string(tray.zones_counted()) + " zones would make it " + gbs(with_512m) +
               (t.thp_pmd != ThpSetting::never ? "; first-touch placement moves in " + fixed(pmd / 1048576, "%.0f MiB") + " pages" : "");
    i.number = static_cast<double>(tray.min_free_bytes()) / units::kGB;
    i.unit = "GB reserved";
    out.push_back(i);
  }
  {  // 3. init_on_alloc
    ChecklistItem i{"init_on_alloc=0", "grep init_on_alloc /proc/cmdline", t.init_on_alloc ? "1" : "0", "0", !t.init_on_alloc, "", 0, ""};
    const double z = cuda_malloc_zeroing_s(tray, 100 * 1000000000ULL);
    i.effect = numa ? (t.init_on_alloc ? "a 100 GB cudaMalloc pays " + fixed(z, "%.1f s") + " of kernel zeroing from the CPU (" +
                                             fixed(as.kernel_zeroing_GBps, "%.0f GB/s") + " assumed); the guide: 'severely' slower"
                                       : "cudaMalloc pays no kernel zeroing")
                    : "no effect on cudaMalloc: the kernel does not hand out HBM in this mode";
    i.number = z;
    i.unit = "s per 100 GB cudaMalloc";
    out.push_back(i);
  }
  {  // 4. numa_balancing
    ChecklistItem i{"kernel.numa_balancing=0", "cat /proc/sys/kernel/numa_balancing", t.numa_balancing ? "1" : "0", "0", !t.numa_balancing, "", 0, ""};
    const double faults = t.numa_balancing ? as.numa_balancing_scan_MB * 1048576 / t.page_size_bytes / as.numa_balancing_period_s : 0;
    i.effect = t.numa_balancing ? "AutoNUMA unmaps " + fixed(faults, "%.0f") + " pages/s of a scanned process (" +
                                      fixed(as.numa_balancing_scan_MB, "%.0f MB") + " per scan); each GPU access to one takes a hinting fault, up to " +
                                      fixed(faults * as.hint_fault_us * 1e-6, "%.2f s") + " of faults per second (" +
                                      fixed(as.hint_fault_us, "%.0f us") + " per fault assumed)"
                                : "no hinting faults";
    i.number = faults;
    i.unit = "hint faults/s";
    out.push_back(i);
  }
  {  // 5. CDMM
    ChecklistItem i{"CDMM (especially under Kubernetes)", "grep Coherent /proc/driver/nvidia/params",
                    tray.coherent() ? (tray.mode() == MemoryMode::numa ? "numa" : "driver") : "n/a (not coherent)", "driver",
                    !numa, "", 0, ""};
    i.effect = numa ? "the kernel manages " + gbs(gpu_mem) + " of HBM: MemTotal " + gbs(static_cast<double>(tray.kernel_memory_bytes())) +
                          ", CPU pages can spill onto GPU nodes, pod memory limits and cgroup accounting include HBM"
                    : "the kernel never sees HBM: MemTotal " + gbs(static_cast<double>(tray.kernel_memory_bytes())) + ", no spill";
    i.number = static_cast<double>(tray.kernel_memory_bytes()) / units::kGB;
    i.unit = "GB MemTotal";
    out.push_back(i);
  }
  {  // 6. swap
    ChecklistItem i{"swap >= 1/4-1/2 of GPU memory (NUMA mode)", "swapon --show", gbs(static_cast<double>(t.swap_bytes)),
                    numa ? gbs(gpu_mem / 4) + "-" + gbs(gpu_mem / 2) : "not needed in this mode",
                    !numa || t.swap_bytes >= gpu_mem / 4, "", 0, ""};
    i.effect = numa ? "pages the kernel put on GPU nodes can only be reclaimed by swapping them out; swap covers " +
                          fixed(gpu_mem > 0 ? 100.0 * t.swap_bytes / gpu_mem : 0, "%.0f%%") + " of GPU memory"
                    : "swap only absorbs CPU overcommit before the OOM killer";
    i.number = static_cast<double>(t.swap_bytes) / units::kGB;
    i.unit = "GB swap";
    out.push_back(i);
  }
  {  // 7. min_free_kbytes, compaction
    std::uint64_t on_gpu = 0;
    for (int g : tray.gpu_nodes()) on_gpu += tray.node(g).watermark_bytes;
    ChecklistItem i{"vm.min_free_kbytes, compaction", "sysctl vm.min_free_kbytes vm.compaction_proactiveness",
                    std::to_string(tray.min_free_bytes() / 1024) + " kB, proactiveness " + std::to_string(t.compaction_proactiveness),
                    "no THP-raised reserve, proactiveness 0", t.compaction_proactiveness == 0 && tray.min_free_bytes() <= 262144ULL * 1024,
                    "", 0, ""};
    i.effect = gbs(static_cast<double>(tray.min_free_bytes())) + " held free, " + gbs(static_cast<double>(on_gpu)) +
               " of it on GPU nodes" + (t.compaction_proactiveness > 0 ? "; proactive compaction migrates pages in the background, which "
                                                                        "'can heavily impact' cudaMalloc (not quantified: no public figure)"
                                                                      : "");
    i.number = static_cast<double>(on_gpu) / units::kGB;
    i.unit = "GB reserve on GPU nodes";
    out.push_back(i);
  }
  out.push_back({"iommu.passthrough=1", "cat /proc/cmdline", t.iommu_passthrough ? "1" : "0", "1 (optional: measure first)",
                 t.iommu_passthrough, "not modelled: DMA address translation cost has no public figure for Grace", 0, ""});
  out.push_back({"cpufreq performance", "cpupower frequency-info", t.cpufreq_performance ? "performance" : "other", "performance",
                 t.cpufreq_performance, "not modelled: affects latency-bound launch threads and NCCL proxies", 0, ""});
  return out;
}

}  // namespace racksim::memory
