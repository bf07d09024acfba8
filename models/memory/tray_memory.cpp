#include "models/memory/tray_memory.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"

namespace racksim::memory {

const char* to_string(NodeKind kind) { return kind == NodeKind::cpu ? "cpu" : "gpu"; }

namespace {

std::uint64_t gb_to_bytes(double gb) { return static_cast<std::uint64_t>(std::llround(gb * units::kGB)); }

// Integer square root (Linux int_sqrt), for the kernel's min_free_kbytes formula.
std::uint64_t int_sqrt(std::uint64_t x) {
  std::uint64_t r = static_cast<std::uint64_t>(std::sqrt(static_cast<long double>(x)));
  while (r * r > x) --r;
  while ((r + 1) * (r + 1) <= x) ++r;
  return r;
}

void check_assumptions(const TrayAssumptions& a) {
  auto positive = [](double v, const char* name) {
    if (!(v > 0) || !std::isfinite(v)) throw InputError("memory assumptions", "", std::string(name) + "=" + number_text(v), "a positive number");
  };
  if (!(a.os_reserved_GB_per_cpu_node >= 0)) throw InputError("memory assumptions", "", "os_reserved_GB_per_cpu_node", ">= 0");
  if (!(a.gpu_driver_reserved_GB >= 0)) throw InputError("memory assumptions", "", "gpu_driver_reserved_GB", ">= 0");
  positive(a.gpu_tlb_entries, "gpu_tlb_entries");
  positive(a.gpu_page_size_bytes, "gpu_page_size_bytes");
  positive(a.ats_miss_latency_us, "ats_miss_latency_us");
  positive(a.ats_outstanding_misses, "ats_outstanding_misses");
  positive(a.kernel_zeroing_GBps, "kernel_zeroing_GBps");
  if (!(a.c2c_efficiency > 0 && a.c2c_efficiency <= 1))
    throw InputError("memory assumptions", "", "c2c_efficiency=" + number_text(a.c2c_efficiency), "in (0, 1]");
  if (a.gpu_numa_stride < 1) throw InputError("memory assumptions", "", "gpu_numa_stride", ">= 1");
}

}  // namespace

TrayMemoryModel::TrayMemoryModel(const TopologySpec& spec, MemoryMode mode, TuningSettings tuning,
                                 TrayAssumptions assumptions)
    : system_(spec.id), tray_name_(spec.tray.name), mode_(mode), tuning_(tuning), assumptions_(assumptions) {
  check_assumptions(assumptions_);
  if (tuning_.page_size_bytes != 4096 && tuning_.page_size_bytes != 16384 && tuning_.page_size_bytes != 65536)
    throw InputError("--page-size", "", std::to_string(tuning_.page_size_bytes), "4K, 16K or 64K (arm64 granules)");
  const auto& tray = spec.tray;
  const int cpus = static_cast<int>(tray.cpus.size());
  for (int c = 0; c < cpus; ++c) {
    const auto& type = spec.cpu_type(tray.cpus[c].type);
    MemoryNode n;
    n.id = tray.cpus[c].id;
    n.kind = NodeKind::cpu;
    n.numa_id = c;
    n.host_cpu = c;
    n.memory_kind = type.memory_kind;
    n.capacity_bytes = gb_to_bytes(type.memory_capacity_GB);
    n.bandwidth_Bps = units::GBps_to_Bps(type.memory_bandwidth_GBps);
    n.kernel_visible = true;
    n.os_reserved_bytes = std::min(n.capacity_bytes, gb_to_bytes(assumptions_.os_reserved_GB_per_cpu_node));
    nodes_.push_back(n);
  }
  auto cpu_index = [&](const std::string& id) {
    for (int c = 0; c < cpus; ++c)
      if (tray.cpus[c].id == id) return c;
    throw InputError(spec.id, "/tray/gpus", "cpu '" + id + "'", "a CPU of the tray");
  };
  const int first_gpu_numa = assumptions_.gpu_numa_first_id >= 0 ? assumptions_.gpu_numa_first_id : cpus;
  coherent_ = ats_ = integrated_ = !tray.gpus.empty();
  host_links_.resize(cpus);
  for (std::size_t g = 0; g < tray.gpus.size(); ++g) {
    const auto& tg = tray.gpus[g];
    const auto& type = spec.gpu_type(tg.type);
    MemoryNode n;
    n.id = tg.id;
    n.kind = NodeKind::gpu;
    n.host_cpu = cpu_index(tg.cpu);
    n.integrated = type.integrated;
    n.memory_kind = type.integrated ? nodes_[n.host_cpu].memory_kind : "HBM";
    n.capacity_bytes = type.integrated ? 0 : type.hbm_capacity_bytes;  // as the driver reports it (issue 16)
    n.bandwidth_Bps = type.integrated ? nodes_[n.host_cpu].bandwidth_Bps : units::GBps_to_Bps(type.hbm_bandwidth_GBps);
    n.driver_reserved_bytes = std::min(n.capacity_bytes, gb_to_bytes(assumptions_.gpu_driver_reserved_GB));
    // The GPU's link to its CPU: a direct tray link, else any link from the GPU to some CPU.
    HostLink link;
    link.source = "no GPU-CPU link in the topology's tray";
    const TrayLink* found = nullptr;
    for (const auto& l : tray.links)
      if ((l.a == tg.id && l.b == tg.cpu) || (l.b == tg.id && l.a == tg.cpu)) found = &l;
    if (!found)
      for (const auto& l : tray.links) {
        const std::string other = l.a == tg.id ? l.b : (l.b == tg.id ? l.a : "");
        for (const auto& c : tray.cpus)
          if (!found && c.id == other) found = &l;
      }
    if (found) {
      const auto& lt = spec.link_type(found->type);
      link.kind = lt.kind;
      link.bandwidth_Bps = units::GBps_to_Bps(lt.bandwidth_GBps);
      link.latency_s = units::us_to_s(lt.latency_us);
      link.share_group = found->share_group;
      link.source = lt.source;
      if (!found->share_group.empty() && assumptions_.c2c_shared) {
        link.sharers = 0;
        for (const auto& l : tray.links)
          if (l.share_group == found->share_group) ++link.sharers;
      }
    }
    if (link.kind != LinkKind::c2c || type.integrated) coherent_ = false;
    if (link.kind != LinkKind::c2c && !type.integrated) ats_ = false;
    if (!type.integrated) integrated_ = false;
    host_links_.push_back(link);
    nodes_.push_back(n);
  }
  // Integrated GPUs (GB10) share the CPU's DRAM: no memory node of their own, never kernel-visible HBM.
  for (int i = cpus; i < node_count(); ++i) {
    auto& n = nodes_[i];
    const bool numa_node = coherent_ && !n.integrated;
    n.numa_id = numa_node ? first_gpu_numa + (i - cpus) * assumptions_.gpu_numa_stride : -1;
    n.kernel_visible = numa_node && mode_ == MemoryMode::numa;
  }
  for (const auto& l : tray.links) {
    const auto& lt = spec.link_type(l.type);
    if (lt.kind != LinkKind::cpu_cpu) continue;
    int a = -1, b = -1;
    for (int c = 0; c < cpus; ++c) {
      if (tray.cpus[c].id == l.a) a = c;
      if (tray.cpus[c].id == l.b) b = c;
    }
    if (a < 0 || b < 0) continue;
    HostLink link;
    link.kind = lt.kind;
    link.bandwidth_Bps = units::GBps_to_Bps(lt.bandwidth_GBps);
    link.latency_s = units::us_to_s(lt.latency_us);
    link.source = lt.source;
    cpu_links_.push_back({{std::min(a, b), std::max(a, b)}, link});
  }
  if (spec.nvlink_domain) {
    const auto& d = *spec.nvlink_domain;
    const auto& lt = spec.link_type(d.link_type);
    int links = 0;
    for (int l : d.gpu_links_per_chip) links += l;
    nvlink_Bps_ = units::GBps_to_Bps(lt.bandwidth_GBps) * links;
    nvlink_latency_s_ = 2 * units::us_to_s(lt.latency_us) + units::us_to_s(d.switch_latency_us);
  }
  compute_min_free();
}

void TrayMemoryModel::compute_min_free() {
  const std::uint64_t lowmem = kernel_memory_bytes();
  const std::uint64_t page = tuning_.page_size_bytes;
  int zones = 0;
  for (const auto& n : nodes_)
    if (n.kernel_visible && n.capacity_bytes > 0) ++zones;
  if (assumptions_.dma_zone_on_node0 && !nodes_.empty()) ++zones;
  zones_counted_ = zones;
  if (tuning_.min_free_kbytes) {
    min_free_bytes_ = *tuning_.min_free_kbytes * 1024;
    min_free_source_ = "vm.min_free_kbytes as given";
  } else {
    // Linux mm/page_alloc.c calculate_min_free_kbytes: int_sqrt(lowmem_kbytes * 16), clamped to
    // [128, 262144] kB.
    std::uint64_t kb = std::clamp<std::uint64_t>(int_sqrt(lowmem / 1024 * 16), 128, 262144);
    min_free_source_ = "kernel default: int_sqrt(16 x lowmem kB) clamped to [128 kB, 256 MiB] (mm/page_alloc.c)";
    if (tuning_.thp_pmd != ThpSetting::never) {
      // Linux mm/khugepaged.c set_recommended_min_free_kbytes: pageblock x zones x (2 + 3 x 3),
      // capped at 5% of lowmem. A pageblock is the PMD size: page x page/8 (2 MiB on 4K, 512 MiB on 64K).
      // Counting HBM zones (NUMA mode) reproduces the 17 GB the tuning guide observed on GH200 with THP
      // on a 64K kernel (seed s5): 3 zones x 11 x 512 MiB = 17.7 GB.
      const std::uint64_t pageblock = page * (page / 8);
      std::uint64_t recommended = pageblock * static_cast<std::uint64_t>(zones) * 11;
      recommended = std::min(recommended, lowmem / 20);
      if (recommended / 1024 > kb) {
        kb = recommended / 1024;
        min_free_source_ = "raised by khugepaged (THP " + std::string(to_string(tuning_.thp_pmd)) + "): " +
                           std::to_string(zones) + " zones x 11 x " + units::format_bytes(pageblock) +
                           " pageblocks, cap 5% of kernel memory (mm/khugepaged.c; seed s5: 17 GB observed)";
      }
    }
    min_free_bytes_ = kb * 1024;
  }
  // The reserve is split over zones in proportion to their size (mm/page_alloc.c __setup_per_zone_wmarks);
  // seed s5: "that reserve applies to GPU nodes too".
  std::uint64_t assigned = 0;
  int last = -1;
  for (int i = 0; i < node_count(); ++i) {
    auto& n = nodes_[i];
    n.watermark_bytes = 0;
    if (!n.kernel_visible || n.capacity_bytes == 0 || lowmem == 0) continue;
    n.watermark_bytes = static_cast<std::uint64_t>(static_cast<unsigned __int128>(min_free_bytes_) * n.capacity_bytes / lowmem);
    assigned += n.watermark_bytes;
    last = i;
  }
  if (last >= 0) nodes_[last].watermark_bytes += min_free_bytes_ - std::min(min_free_bytes_, assigned);
}

int TrayMemoryModel::find_node(const std::string& text) const {
  for (int i = 0; i < node_count(); ++i)
    if (nodes_[i].id == text) return i;
  if (text.size() > 4 && text.rfind("node", 0) == 0 &&
      text.find_first_not_of("0123456789", 4) == std::string::npos && text.size() < 12) {
    const int id = std::stoi(text.substr(4));
    for (int i = 0; i < node_count(); ++i)
      if (nodes_[i].numa_id == id && nodes_[i].numa_id >= 0) return i;
  }
  return -1;
}

std::string TrayMemoryModel::node_names() const {
  std::string out;
  for (const auto& n : nodes_) out += (out.empty() ? "" : ", ") + n.id;
  std::string numa;
  for (const auto& n : nodes_)
    if (n.numa_id >= 0) numa += (numa.empty() ? "" : ", ") + ("node" + std::to_string(n.numa_id));
  return out + (numa.empty() ? "" : " or a NUMA id (" + numa + ")");
}

std::vector<int> TrayMemoryModel::cpu_nodes() const {
  std::vector<int> out;
  for (int i = 0; i < node_count(); ++i)
    if (nodes_[i].kind == NodeKind::cpu) out.push_back(i);
  return out;
}

std::vector<int> TrayMemoryModel::gpu_nodes() const {
  std::vector<int> out;
  for (int i = 0; i < node_count(); ++i)
    if (nodes_[i].kind == NodeKind::gpu) out.push_back(i);
  return out;
}

int TrayMemoryModel::distance(int a, int b) const {
  const auto& A = assumptions_;
  if (a == b) return A.distance_local;
  const auto& na = nodes_.at(a);
  const auto& nb = nodes_.at(b);
  if (na.kind == NodeKind::cpu && nb.kind == NodeKind::cpu) return A.distance_cpu_cpu;
  if (na.kind == NodeKind::gpu && nb.kind == NodeKind::gpu) return A.distance_gpu_gpu;
  const auto& gpu = na.kind == NodeKind::gpu ? na : nb;
  const int cpu = na.kind == NodeKind::cpu ? a : b;
  return gpu.host_cpu == cpu ? A.distance_cpu_own_gpu : A.distance_cpu_other_gpu;
}

std::vector<int> TrayMemoryModel::fallback_order(int from) const {
  std::vector<std::pair<long, int>> ranked;
  for (int n = 0; n < node_count(); ++n) {
    const auto& node = nodes_[n];
    if (!node.kernel_visible || node.capacity_bytes == 0) continue;
    if (n == from) {
      ranked.push_back({std::numeric_limits<long>::min(), n});
      continue;
    }
    long val = distance(from, n);
    if (n < from) val += 1;                        // "prefer the next node"
    if (node.kind == NodeKind::cpu) val += 1;      // PENALTY_FOR_NODE_WITH_CPUS
    ranked.push_back({val, n});
  }
  std::stable_sort(ranked.begin(), ranked.end());
  std::vector<int> out;
  for (const auto& r : ranked) out.push_back(r.second);
  return out;
}

const HostLink& TrayMemoryModel::host_link(int gpu_node) const {
  if (gpu_node < 0 || gpu_node >= node_count() || nodes_[gpu_node].kind != NodeKind::gpu)
    throw InputError("host_link", "", std::to_string(gpu_node), "a GPU node");
  return host_links_.at(gpu_node);
}

HostLink TrayMemoryModel::cpu_cpu_link(int a, int b) const {
  for (const auto& [ends, link] : cpu_links_)
    if (ends == std::make_pair(std::min(a, b), std::max(a, b))) return link;
  HostLink none;
  none.kind = LinkKind::cpu_cpu;
  none.source = "no CPU-CPU link in the topology's tray";
  return none;
}

std::uint64_t TrayMemoryModel::kernel_memory_bytes() const {
  std::uint64_t total = 0;
  for (const auto& n : nodes_)
    if (n.kernel_visible) total += n.capacity_bytes;
  return total;
}

std::uint64_t TrayMemoryModel::gpu_memory_bytes() const {
  std::uint64_t total = 0;
  for (const auto& n : nodes_)
    if (n.kind == NodeKind::gpu) total += n.capacity_bytes;
  return total;
}

}  // namespace racksim::memory
