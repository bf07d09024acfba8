#include "models/memory/placement.hpp"

#include <algorithm>

#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"

namespace racksim::memory {

std::uint64_t AllocationResult::placed_bytes() const {
  std::uint64_t total = 0;
  for (const auto& [node, bytes] : placed) total += bytes;
  return total;
}

namespace {

std::string gb(std::uint64_t bytes) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.1f GB", static_cast<double>(bytes) / units::kGB);
  return buf;
}

class Placer {
 public:
  explicit Placer(const TrayMemoryModel& tray) : tray_(tray), resident_(tray.node_count()) {}

  void place(const AllocationRequest& request) {
    check(request);
    results_.push_back(AllocationResult{});
    results_.back().request = request;
    const int a = static_cast<int>(results_.size()) - 1;
    switch (request.kind) {
      case AllocKind::cpu: place_cpu(a); break;
      case AllocKind::cuda: place_cuda(a); break;
      case AllocKind::managed: place_managed(a); break;
      case AllocKind::pinned: place_host_only(a, "cudaHostAlloc"); break;
      case AllocKind::egm: place_egm(a); break;
    }
    auto& r = results_[a];
    for (const auto& [n, bytes] : r.placed)
      if (tray_.node(n).kind == NodeKind::gpu && request.kind == AllocKind::cpu) r.spilled_to_gpu_bytes += bytes;
  }

  PlacementResult finish() {
    PlacementResult out;
    out.nodes.resize(tray_.node_count());
    for (int n = 0; n < tray_.node_count(); ++n) {
      auto& u = out.nodes[n];
      u.driver_bytes = tray_.node(n).driver_reserved_bytes;
      for (const auto& [a, bytes] : resident_[n]) {
        if (bytes == 0) continue;
        u.used_bytes += bytes;
        u.by_allocation[results_[a].request.name] += bytes;
        const AllocKind k = results_[a].request.kind;
        if (k == AllocKind::cpu) u.kernel_pages_bytes += bytes;
        if (tray_.node(n).kind == NodeKind::gpu && (k == AllocKind::cuda || k == AllocKind::managed)) u.driver_bytes += bytes;
      }
      u.free_bytes = free(n);
    }
    for (auto& r : results_) {
      r.cgroup_charged_bytes = 0;
      if (!r.resident() || r.request.kind == AllocKind::egm) continue;
      for (const auto& [n, bytes] : r.placed)
        if (tray_.node(n).kernel_visible) r.cgroup_charged_bytes += bytes;
      out.k8s_pod_usage_bytes += r.cgroup_charged_bytes;
    }
    out.swap_capacity_bytes = tray_.tuning().swap_bytes;
    out.swap_used_bytes = swap_used_;
    out.k8s_node_capacity_bytes = tray_.kernel_memory_bytes();
    for (int g : tray_.gpu_nodes()) out.k8s_hbm_counted = out.k8s_hbm_counted || tray_.node(g).kernel_visible;
    out.allocations = std::move(results_);
    return out;
  }

 private:
  void check(const AllocationRequest& r) const {
    if (r.bytes == 0) throw InputError("allocation '" + r.name + "'", "", "0 bytes", "a positive size");
    if (r.toucher < 0 || r.toucher >= tray_.node_count())
      throw InputError("allocation '" + r.name + "'", "", "node " + std::to_string(r.toucher), tray_.node_names());
    for (const auto& prior : results_)
      if (prior.request.name == r.name) throw InputError("--alloc", "", "'" + r.name + "'", "a name not used by an earlier allocation");
    const NodeKind tk = tray_.node(r.toucher).kind;
    const bool needs_gpu = r.kind == AllocKind::cuda;
    const bool needs_cpu = r.kind == AllocKind::pinned || r.kind == AllocKind::egm || r.kind == AllocKind::cpu;
    if ((needs_gpu && tk != NodeKind::gpu) || (needs_cpu && tk != NodeKind::cpu))
      throw InputError("allocation '" + r.name + "'", "", tray_.node(r.toucher).id,
                       std::string(to_string(r.kind)) + (needs_gpu ? " takes a GPU node" : " takes a CPU node"));
  }

  std::uint64_t used(int n) const {
    std::uint64_t total = 0;
    for (const auto& [a, bytes] : resident_[n]) total += bytes;
    return total;
  }
  // What the next page allocation on node n can get: the kernel keeps its reserves and watermark on
  // nodes it manages; the driver keeps its reserve on the HBM it manages.
  std::uint64_t free(int n) const {
    const auto& node = tray_.node(n);
    const std::uint64_t held = node.os_reserved_bytes + node.driver_reserved_bytes +
                               (node.kernel_visible ? node.watermark_bytes : 0) + used(n);
    return node.capacity_bytes > held ? node.capacity_bytes - held : 0;
  }
  void add(int a, int n, std::uint64_t bytes) {
    if (bytes == 0) return;
    resident_[n][a] += bytes;
    results_[a].placed[n] += bytes;
  }
  // Fills along `order`; returns what did not fit.
  std::uint64_t fill(int a, const std::vector<int>& order, std::uint64_t bytes) {
    for (int n : order) {
      const std::uint64_t take = std::min(bytes, free(n));
      add(a, n, take);
      bytes -= take;
      if (bytes == 0) break;
    }
    return bytes;
  }
  void release(int a) {
    for (auto& per_node : resident_) per_node.erase(a);
    swap_used_ -= swap_of(a);
    swap_by_alloc_.erase(a);
  }
  std::uint64_t swap_of(int a) const {
    const auto it = swap_by_alloc_.find(a);
    return it == swap_by_alloc_.end() ? 0 : it->second;
  }
  std::uint64_t swap_free() const { return tray_.tuning().swap_bytes - std::min(tray_.tuning().swap_bytes, swap_used_); }
  void to_swap(int a, std::uint64_t bytes) {
    swap_used_ += bytes;
    swap_by_alloc_[a] += bytes;
    results_[a].swapped_bytes += bytes;
  }
  std::vector<int> cpu_only(std::vector<int> order) const {
    order.erase(std::remove_if(order.begin(), order.end(), [&](int n) { return tray_.node(n).kind != NodeKind::cpu; }), order.end());
    return order;
  }
  bool has_memory(int n) const { return tray_.node(n).kernel_visible && tray_.node(n).capacity_bytes > 0; }
  std::string ids(const std::vector<int>& nodes) const {
    std::string out;
    for (int n : nodes) out += (out.empty() ? "" : ",") + tray_.node(n).id;
    return out;
  }
  // The OOM killer's score: resident host pages plus swap (mm/oom_kill.c oom_badness). Driver-owned
  // memory (cudaMalloc, EGM) is not in a process's RSS.
  std::uint64_t badness(int a) const {
    const auto& r = results_[a];
    if (!r.resident() || r.request.kind == AllocKind::cuda || r.request.kind == AllocKind::egm) return 0;
    std::uint64_t total = swap_of(a);
    for (std::size_t n = 0; n < resident_.size(); ++n) {
      const auto it = resident_[n].find(a);
      if (it == resident_[n].end()) continue;
      if (r.request.kind == AllocKind::managed && tray_.node(static_cast<int>(n)).kind == NodeKind::gpu) continue;
      total += it->second;
    }
    return total;
  }

  void place_cpu(int a) {
    auto& r = results_[a];
    const auto& req = r.request;
    std::vector<int> targets, order;
    std::string notes;
    std::vector<int> policy_nodes;
    for (int n : req.policy_nodes)
      if (has_memory(n)) policy_nodes.push_back(n);
    if (policy_nodes.size() < req.policy_nodes.size() && req.policy != CpuPolicy::local) {
      std::vector<int> empty;
      for (int n : req.policy_nodes)
        if (!has_memory(n)) empty.push_back(n);
      notes = ids(empty) + " has no memory the kernel can use in " + to_string(tray_.mode()) + " mode";
    }
    std::uint64_t rest = req.bytes;
    switch (req.policy) {
      case CpuPolicy::local:
        targets = {req.toucher};
        order = tray_.fallback_order(req.toucher);
        rest = fill(a, order, rest);
        break;
      case CpuPolicy::preferred:
        if (policy_nodes.empty()) {  // MPOL_PREFERRED on a memoryless node: local allocation
          notes += "; preferred falls back to local allocation";
          targets = {req.toucher};
          order = tray_.fallback_order(req.toucher);
        } else {
          targets = policy_nodes;
          order = tray_.fallback_order(policy_nodes[0]);
        }
        rest = fill(a, order, rest);
        break;
      case CpuPolicy::bind:
      case CpuPolicy::interleave:
        if (policy_nodes.empty()) {
          r.outcome = Outcome::failed;
          r.reason = std::string(req.policy == CpuPolicy::bind ? "mbind" : "set_mempolicy") +
                     " fails with EINVAL: " + notes + " (CDMM: the kernel cannot see HBM)";
          return;
        }
        targets = policy_nodes;
        if (req.policy == CpuPolicy::bind) {
          for (int n : tray_.fallback_order(req.toucher))
            if (std::find(policy_nodes.begin(), policy_nodes.end(), n) != policy_nodes.end()) order.push_back(n);
          rest = fill(a, order, rest);
        } else {
          // Page i goes to node i mod k; a full node falls back along its own zonelist (MPOL_INTERLEAVE
          // is not strict).
          const std::uint64_t k = policy_nodes.size();
          for (std::uint64_t i = 0; i < k; ++i) {
            const std::uint64_t share = req.bytes / k + (i < req.bytes % k ? 1 : 0);
            rest -= share - fill(a, tray_.fallback_order(policy_nodes[i]), share);
          }
          order = tray_.fallback_order(req.toucher);
        }
        break;
    }
    // Out of memory: reclaim to swap, then the OOM killer (largest process first; a bind policy's OOM is
    // constrained to the bound nodes, so the allocating task goes).
    r.swap_needed_bytes = rest;
    while (rest > 0) {
      const std::uint64_t swapped = std::min(rest, swap_free());
      to_swap(a, swapped);
      rest -= swapped;
      if (rest == 0) break;
      int victim = a;
      if (req.policy != CpuPolicy::bind)
        for (int v = 0; v < static_cast<int>(results_.size()); ++v)
          if (v != a && badness(v) > badness(victim)) victim = v;
      if (victim == a) {
        r.outcome = Outcome::oom_killed;
        r.reason = "OOM killer: " + gb(r.placed_bytes() + r.swapped_bytes) + " resident" +
                   (r.swapped_bytes ? " (" + gb(r.swapped_bytes) + " in swap)" : "") + ", " + gb(rest) +
                   " more did not fit in " +
                   (req.policy == CpuPolicy::bind ? "the bound nodes " + ids(order) : "the memory the kernel manages") +
                   (tray_.tuning().swap_bytes ? " or swap" : " and there is no swap") +
                   (tray_.mode() == MemoryMode::cdmm && tray_.coherent() ? " (CDMM: HBM is invisible to the kernel, GPUs untouched)" : "");
        release(a);
        return;
      }
      auto& v = results_[victim];
      const std::uint64_t freed = badness(victim);
      v.outcome = Outcome::oom_killed;
      v.reason = "OOM killer: killed as the largest process (" + gb(freed) + ") when '" + req.name + "' needed memory";
      release(victim);
      rest = fill(a, order, rest);
    }
    for (const auto& [n, bytes] : r.placed)
      if (std::find(targets.begin(), targets.end(), n) == targets.end()) r.off_target_bytes += bytes;
    std::string how;
    std::uint64_t on_gpu = 0;
    for (const auto& [n, bytes] : r.placed)
      if (tray_.node(n).kind == NodeKind::gpu) on_gpu += bytes;
    if (on_gpu > 0)
      how = "the kernel spilled " + gb(on_gpu) + " onto GPU nodes' HBM (NUMA fallback order " + ids(order) +
            "): those pages now sit across C2C, and the GPUs' next cudaMalloc can fail";
    else if (r.off_target_bytes > 0)
      how = gb(r.off_target_bytes) + " landed outside " + ids(targets) + " (fallback order " + ids(order) + ")";
    if (r.swapped_bytes > 0) how += std::string(how.empty() ? "" : "; ") + gb(r.swapped_bytes) + " went to swap";
    if (!notes.empty()) how += std::string(how.empty() ? "" : "; ") + notes;
    r.reason = how;
  }

  void place_cuda(int a) {
    auto& r = results_[a];
    const int g = r.request.toucher;
    const auto& node = tray_.node(g);
    const std::uint64_t bytes = r.request.bytes;
    if (node.integrated) {  // cudaMalloc on an integrated GPU takes the shared system memory
      const int h = node.host_cpu;
      if (free(h) >= bytes) {
        add(a, h, bytes);
        r.reason = node.id + " is integrated: cudaMalloc takes system memory on " + tray_.node(h).id;
      } else {
        r.outcome = Outcome::failed;
        r.reason = "cudaErrorMemoryAllocation: integrated " + node.id + " shares " + tray_.node(h).id + ", which has " + gb(free(h)) + " free";
      }
      return;
    }
    const std::uint64_t avail = free(g);
    if (!node.kernel_visible) {  // CDMM, or a PCIe GPU: the driver manages HBM on its own
      if (avail >= bytes) {
        add(a, g, bytes);
      } else {
        r.outcome = Outcome::failed;
        r.reason = "cudaErrorMemoryAllocation: " + node.id + " has " + gb(avail) + " of HBM free (driver-managed)";
      }
      return;
    }
    // NUMA mode: the driver gets HBM pages from the kernel's allocator on the GPU node.
    std::uint64_t spilled = 0;
    for (const auto& [v, b] : resident_[g])
      if (results_[v].request.kind == AllocKind::cpu) spilled += b;
    if (avail < bytes) {
      const std::uint64_t shortfall = bytes - avail;
      if (spilled >= shortfall && swap_free() >= shortfall) {
        // Reclaim swaps the spilled CPU pages out, oldest process first.
        std::uint64_t need = shortfall;
        for (auto& [v, b] : resident_[g]) {
          if (need == 0 || results_[v].request.kind != AllocKind::cpu) continue;
          const std::uint64_t out = std::min(need, b);
          b -= out;
          if ((results_[v].placed[g] -= out) == 0) results_[v].placed.erase(g);
          results_[v].spilled_to_gpu_bytes -= std::min(results_[v].spilled_to_gpu_bytes, out);
          to_swap(v, out);
          need -= out;
        }
        r.reclaimed_bytes = shortfall;
        r.swap_needed_bytes = shortfall;
        r.reason = "the kernel swapped out " + gb(shortfall) + " of CPU pages from " + node.id +
                   " to make room (direct reclaim to swap: slow)";
      } else {
        const std::uint64_t smi_used = node.driver_reserved_bytes + used(g) - spilled;
        r.outcome = Outcome::failed;
        r.swap_needed_bytes = std::min(shortfall, spilled);
        r.reason = "cudaErrorMemoryAllocation: " + node.id + " has " + gb(avail) + " free for the driver" +
                   (spilled ? ", because " + gb(spilled) + " of its HBM holds CPU pages the kernel spilled there" : "") +
                   "; nvidia-smi shows " + gb(smi_used) + " used by GPU processes and " +
                   gb(node.capacity_bytes - smi_used) + " free" +
                   (spilled ? (spilled >= shortfall ? "; only swapping those pages out (>= " + gb(shortfall) +
                                                          " of swap) gets them back"
                                                    : "; even swapping them all out would not make room")
                            : "");
        return;
      }
    }
    add(a, g, bytes);
    if (tray_.tuning().init_on_alloc) {
      r.zeroing_s = static_cast<double>(bytes) / units::GBps_to_Bps(tray_.assumptions().kernel_zeroing_GBps);
      if (r.reason.empty()) r.reason = "init_on_alloc=1: the kernel zeroes these HBM pages from the CPU first";
    }
  }

  void place_managed(int a) {
    auto& r = results_[a];
    const int t = r.request.toucher;
    const auto& node = tray_.node(t);
    std::uint64_t rest = r.request.bytes;
    int host = t;
    if (node.kind == NodeKind::gpu) {
      host = node.host_cpu;
      if (!node.integrated) {
        const std::uint64_t on_gpu = std::min(rest, free(t));
        add(a, t, on_gpu);
        rest -= on_gpu;
        r.evicted_to_host_bytes = rest;
      }
    }
    rest = fill(a, cpu_only(tray_.fallback_order(host)), rest);
    if (rest > 0) {
      r.outcome = Outcome::failed;
      r.reason = "out of memory: " + gb(rest) + " of managed memory fit neither in HBM nor in CPU memory";
      release(a);
      return;
    }
    if (r.evicted_to_host_bytes > 0)
      r.reason = "oversubscribed " + node.id + ": UVM keeps " + gb(r.evicted_to_host_bytes) + " in CPU memory and migrates on access";
  }

  void place_host_only(int a, const std::string& api) {
    auto& r = results_[a];
    const std::uint64_t rest = fill(a, cpu_only(tray_.fallback_order(r.request.toucher)), r.request.bytes);
    for (const auto& [n, bytes] : r.placed)
      if (n != r.request.toucher) r.off_target_bytes += bytes;
    if (rest > 0) {
      r.outcome = Outcome::failed;
      r.reason = api + " fails (cudaErrorMemoryAllocation): " + gb(rest) + " more than the CPU nodes have free; pinned pages cannot be swapped";
      release(a);
    }
  }

  void place_egm(int a) {
    auto& r = results_[a];
    const int n = r.request.toucher;
    if (!tray_.coherent()) {
      r.outcome = Outcome::failed;
      r.reason = "EGM needs a coherent Grace system (cuMemCreate with CU_MEM_LOCATION_TYPE_HOST_NUMA); " + tray_.system() + " is not one";
      return;
    }
    if (free(n) >= r.request.bytes) {
      add(a, n, r.request.bytes);
    } else {
      r.outcome = Outcome::failed;
      r.reason = "cuMemCreate(HOST_NUMA " + tray_.node(n).id + ") fails: " + gb(free(n)) + " free there (EGM does not fall back to other nodes)";
    }
  }

  const TrayMemoryModel& tray_;
  std::vector<std::map<int, std::uint64_t>> resident_;  // per node: allocation index -> bytes
  std::vector<AllocationResult> results_;
  std::map<int, std::uint64_t> swap_by_alloc_;
  std::uint64_t swap_used_ = 0;
};

}  // namespace

PlacementResult place_allocations(const TrayMemoryModel& tray, const std::vector<AllocationRequest>& requests) {
  Placer placer(tray);
  for (const auto& r : requests) placer.place(r);
  return placer.finish();
}

}  // namespace racksim::memory
