#include "models/memory/offload.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "models/memory/placement.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"
#include "sim/core/json_reader.hpp"

namespace racksim::memory {

const char* to_string(OffloadLink link) {
  switch (link) {
    case OffloadLink::topology: return "topology";
    case OffloadLink::c2c: return "c2c";
    case OffloadLink::pcie4: return "pcie4";
    case OffloadLink::pcie5: return "pcie5";
  }
  return "?";
}

OffloadLink offload_link_from_string(const std::string& text, const std::string& where) {
  if (text == "topology") return OffloadLink::topology;
  if (text == "c2c") return OffloadLink::c2c;
  if (text == "pcie4") return OffloadLink::pcie4;
  if (text == "pcie5") return OffloadLink::pcie5;
  throw InputError(where, "", "'" + text + "'", "topology (the system's GPU-CPU link), c2c, pcie4 or pcie5");
}

namespace {

// PCI-SIG: Gen4 16 GT/s, Gen5 32 GT/s per lane, 128b/130b encoding; x16, per direction.
constexpr double kPcie4x16_Bps = 16e9 * 16 * 128.0 / 130.0 / 8;  // 31.5 GB/s
constexpr double kPcie5x16_Bps = 32e9 * 16 * 128.0 / 130.0 / 8;  // 63.0 GB/s
constexpr double kC2C_Bps = 450e9;  // seed s2: NVLink-C2C 900 GB/s bidirectional = 450 GB/s each way

double round6(double value) {
  if (value == 0 || !std::isfinite(value)) return value;
  const double magnitude = std::ceil(std::log10(std::fabs(value)));
  const double scale = std::pow(10.0, 6 - magnitude);
  return std::round(value * scale) / scale;
}

}  // namespace

double parse_param_count(const std::string& text, const std::string& where) {
  const std::string allowed = "a parameter count such as 70B, 405B, 1.5T, 175M or 7e10";
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    throw InputError(where, "", "'" + text + "'", allowed);
  }
  const std::string suffix = text.substr(used);
  double scale = 1;
  if (suffix == "K" || suffix == "k") scale = 1e3;
  else if (suffix == "M") scale = 1e6;
  else if (suffix == "B" || suffix == "G") scale = 1e9;
  else if (suffix == "T") scale = 1e12;
  else if (!suffix.empty()) throw InputError(where, "", "'" + text + "'", allowed);
  if (!(v > 0) || !std::isfinite(v * scale)) throw InputError(where, "", "'" + text + "'", allowed + " (> 0)");
  if (v * scale > kMaxParams)
    throw InputError(where, "", "'" + text + "'", allowed + ", at most " + number_text(kMaxParams) +
                                                    " (a thousand times today's largest models: larger is a typo)");
  return v * scale;
}

OffloadResult offload_step(const TopologySpec& spec, const OffloadRequest& q, const TrayAssumptions& assumptions) {
  if (!(q.params >= 0) || !(q.params <= kMaxParams))
    throw InputError("--params", "", number_text(q.params), "a parameter count in [0, " + number_text(kMaxParams) + "] such as 70B");
  if (!(q.activation_bytes >= 0) || !(q.kv_bytes >= 0)) throw InputError("--activations/--kv", "", "negative", "sizes >= 0");
  if (!(q.link_efficiency > 0 && q.link_efficiency <= 1))
    throw InputError("--efficiency", "", number_text(q.link_efficiency), "a fraction in (0, 1]");
  if (q.weight_reads_per_step < 0) throw InputError("--weight-reads", "", std::to_string(q.weight_reads_per_step), ">= 0");
  for (double b : {q.weight_bytes_per_param, q.grad_bytes_per_param, q.optimizer_bytes_per_param})
    if (!(b >= 0) || !std::isfinite(b)) throw InputError("--*-bytes-per-param", "", number_text(b), "a number of bytes >= 0");
  if (!(q.compute_time_s >= 0)) throw InputError("--compute-time", "", number_text(q.compute_time_s), "seconds >= 0");
  if (!(q.offload_weights || q.offload_grads || q.offload_optimizer || q.offload_activations || q.offload_kv))
    throw InputError("--offload", "", "(nothing)", "one or more of weights, grads, optimizer, activations, kv");

  // CDMM tray: the offload buffers are pinned host memory, which never lands on GPU nodes in either mode.
  const TrayMemoryModel tray(spec, MemoryMode::cdmm, TuningSettings::untuned(), assumptions);
  OffloadResult r;
  r.system = spec.id;
  std::vector<int> gpus;
  for (const auto& id : q.gpus) {
    const int n = tray.find_node(id);
    if (n < 0 || tray.node(n).kind != NodeKind::gpu) {
      std::string all;
      for (int g : tray.gpu_nodes()) all += (all.empty() ? "" : ", ") + tray.node(g).id;
      throw InputError("--gpus", "", "'" + id + "'", "GPUs of the tray: " + all);
    }
    if (std::find(gpus.begin(), gpus.end(), n) != gpus.end()) throw InputError("--gpus", "", "'" + id + "' twice", "each GPU once");
    gpus.push_back(n);
  }
  if (gpus.empty()) {
    if (tray.gpu_nodes().empty()) throw InputError("--system", "", spec.id, "a system with GPUs");
    gpus.push_back(tray.gpu_nodes()[0]);
  }
  for (int g : gpus) r.gpus.push_back(tray.node(g).id);
  const double n = static_cast<double>(gpus.size());

  r.weights_bytes = q.params * q.weight_bytes_per_param;
  r.grads_bytes = q.params * q.grad_bytes_per_param;
  r.optimizer_bytes = q.params * q.optimizer_bytes_per_param;
  r.activation_bytes = q.activation_bytes;
  r.kv_bytes = q.kv_bytes;
  auto split = [&](bool off, double bytes, double& host, double& hbm) { (off ? host : hbm) += bytes; };
  double host = 0, hbm = 0;
  split(q.offload_weights, r.weights_bytes, host, hbm);
  split(q.offload_grads, r.grads_bytes, host, hbm);
  split(q.offload_optimizer, r.optimizer_bytes, host, hbm);
  split(q.offload_activations, r.activation_bytes, host, hbm);
  split(q.offload_kv, r.kv_bytes, host, hbm);
  if (host <= 0) throw InputError("--offload", "", "0 bytes", "something to offload: give --params, --activations or --kv for what --offload names");
  r.offloaded_bytes = host;
  r.hbm_resident_per_gpu_bytes = hbm / n;
  r.hbm_capacity_per_gpu_bytes = static_cast<double>(tray.node(gpus[0]).capacity_bytes);
  r.fits_hbm = r.hbm_resident_per_gpu_bytes <= r.hbm_capacity_per_gpu_bytes;
  if (tray.node(gpus[0]).integrated) r.notes.push_back("integrated GPU: 'offloaded' memory is the same DRAM; streaming moves no data");

  // Per step, all GPUs together (each GPU its 1/n shard).
  if (q.offload_optimizer) r.h2d_bytes += r.optimizer_bytes, r.d2h_bytes += r.optimizer_bytes;  // read, update, write back
  if (q.offload_weights) r.h2d_bytes += r.weights_bytes * q.weight_reads_per_step;
  if (q.offload_grads) r.d2h_bytes += r.grads_bytes, r.h2d_bytes += r.grads_bytes;           // written, read by the update
  if (q.offload_activations) r.d2h_bytes += r.activation_bytes, r.h2d_bytes += r.activation_bytes;
  if (q.offload_kv) r.h2d_bytes += r.kv_bytes;                                                // the cache is read every step

  // Where the shards live: pinned memory first-touched from each GPU's own CPU (placement engine).
  std::vector<AllocationRequest> reqs;
  const std::uint64_t shard = static_cast<std::uint64_t>(std::llround(host / n));
  for (int g : gpus) {
    AllocationRequest a;
    a.name = "shard_" + tray.node(g).id;
    a.kind = AllocKind::pinned;
    a.bytes = std::max<std::uint64_t>(shard, 1);
    a.toucher = tray.node(g).host_cpu;
    reqs.push_back(a);
  }
  const PlacementResult placed = place_allocations(tray, reqs);
  for (int c : tray.cpu_nodes()) {
    const auto& nd = tray.node(c);
    const std::uint64_t held = nd.os_reserved_bytes + nd.watermark_bytes;
    r.host_free_bytes += static_cast<double>(nd.capacity_bytes > held ? nd.capacity_bytes - held : 0);
  }
  r.fits_host = true;
  for (const auto& a : placed.allocations) r.fits_host = r.fits_host && !a.failed();
  std::map<int, double> on_node;
  for (const auto& a : placed.allocations)
    for (const auto& [node, bytes] : a.placed) on_node[node] += static_cast<double>(bytes);
  for (const auto& [node, bytes] : on_node) r.host_placement.push_back({tray.node(node).id, bytes});
  if (!r.fits_host)
    r.notes.push_back(fmt::format("does not fit: {:.1f} GB to offload, {:.1f} GB of CPU memory free for pinned buffers; "
                                  "times below assume each shard on its GPU's own CPU", host / units::kGB, r.host_free_bytes / units::kGB));

  // Resources: GPU-CPU link per direction (per share group), CPU-CPU link per direction, CPU memory.
  std::map<std::string, ResourceLoad> res;
  auto load = [&](const std::string& name, double bytes, double cap) {
    auto& x = res[name];
    x.name = name;
    x.bytes += bytes;
    x.capacity_Bps = cap;
  };
  const double h2d_share = r.h2d_bytes / n, d2h_share = r.d2h_bytes / n;
  const HostLink& first = tray.host_link(gpus[0]);
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const int g = gpus[i];
    const int hc = tray.node(g).host_cpu;
    const HostLink& hl = tray.host_link(g);
    std::string lname;
    double cap = 0;
    switch (q.link) {
      case OffloadLink::topology:
        cap = hl.bandwidth_Bps;
        lname = std::string(to_string(hl.kind)) + " " + (hl.sharers > 1 && !hl.share_group.empty() ? hl.share_group : tray.node(g).id);
        r.link = std::string(to_string(hl.kind)) + " (topology)";
        r.link_sharers = hl.sharers;
        break;
      case OffloadLink::c2c:
        cap = kC2C_Bps;
        lname = "c2c " + (assumptions.c2c_shared ? "superchip of " + tray.node(hc).id : tray.node(g).id);
        r.link = "c2c (450 GB/s per direction, seed s2)";
        r.link_sharers = assumptions.c2c_shared ? 2 : 1;
        break;
      case OffloadLink::pcie4:
      case OffloadLink::pcie5:
        cap = q.link == OffloadLink::pcie4 ? kPcie4x16_Bps : kPcie5x16_Bps;
        lname = std::string(to_string(q.link)) + " " + tray.node(g).id;
        r.link = std::string(q.link == OffloadLink::pcie4 ? "PCIe Gen4" : "PCIe Gen5") + " x16 per GPU (PCI-SIG, 128b/130b)";
        r.link_sharers = 1;
        break;
    }
    cap *= q.link_efficiency;
    r.link_Bps = cap;
    // This GPU's shard by node (or on its own CPU if the placement failed).
    std::vector<std::pair<int, double>> parts;
    const auto& a = placed.allocations[i];
    if (a.failed() || a.placed.empty()) parts.push_back({hc, 1.0});
    else
      for (const auto& [node, bytes] : a.placed) parts.push_back({node, static_cast<double>(bytes) / static_cast<double>(a.request.bytes)});
    load(lname + " host->gpu", h2d_share, cap);
    load(lname + " gpu->host", d2h_share, cap);
    for (const auto& [node, f] : parts) {
      const auto& mem = tray.node(node);
      load(mem.memory_kind + " " + mem.id + " read+write", f * (h2d_share + d2h_share), mem.bandwidth_Bps);
      if (node != hc) {
        const HostLink cc = tray.cpu_cpu_link(hc, node);
        const std::string cname = "cpu-cpu " + tray.node(std::min(hc, node)).id + "-" + tray.node(std::max(hc, node)).id;
        load(cname + " " + mem.id + "->" + tray.node(hc).id, f * h2d_share, cc.bandwidth_Bps);
        load(cname + " " + tray.node(hc).id + "->" + mem.id, f * d2h_share, cc.bandwidth_Bps);
      }
    }
  }
  for (auto& [name, x] : res) {
    x.seconds = x.bytes > 0 ? (x.capacity_Bps > 0 ? x.bytes / x.capacity_Bps : INFINITY) : 0;
    r.resources.push_back(x);
    if (x.seconds > r.step_s) {
      r.step_s = x.seconds;
      r.bottleneck = name;
    }
  }
  r.compute_time_s = q.compute_time_s;
  if (q.compute_time_s > 0) {
    r.hidden = r.step_s <= q.compute_time_s;
    r.exposed_s = std::max(0.0, r.step_s - q.compute_time_s);
  }
  if (q.link == OffloadLink::topology && first.kind == LinkKind::c2c && assumptions.c2c_shared && gpus.size() > 1)
    r.notes.push_back("assumed: a superchip's two GPUs share its C2C (seed s4); --c2c-shared 0 gives each GPU its own");
  return r;
}

std::string offload_to_json_text(const OffloadResult& r) {
  using nlohmann::json;
  json resources = json::array();
  for (const auto& x : r.resources)
    resources.push_back(json{{"name", x.name}, {"bytes", round6(x.bytes)}, {"capacity_GBps", round6(units::Bps_to_GBps(x.capacity_Bps))},
                             {"seconds", round6(x.seconds)}});
  json placement = json::object();
  for (const auto& [node, bytes] : r.host_placement) placement[node] = round6(bytes);
  json j{{"system", r.system},
         {"gpus", r.gpus},
         {"bytes", {{"weights", round6(r.weights_bytes)}, {"grads", round6(r.grads_bytes)}, {"optimizer", round6(r.optimizer_bytes)},
                    {"activations", round6(r.activation_bytes)}, {"kv", round6(r.kv_bytes)}}},
         {"offloaded_bytes", round6(r.offloaded_bytes)},
         {"hbm_resident_per_gpu_bytes", round6(r.hbm_resident_per_gpu_bytes)},
         {"hbm_capacity_per_gpu_bytes", round6(r.hbm_capacity_per_gpu_bytes)},
         {"fits_hbm", r.fits_hbm},
         {"host_free_bytes", round6(r.host_free_bytes)},
         {"fits_host", r.fits_host},
         {"host_placement", placement},
         {"h2d_bytes_per_step", round6(r.h2d_bytes)},
         {"d2h_bytes_per_step", round6(r.d2h_bytes)},
         {"link", r.link},
         {"link_GBps", round6(units::Bps_to_GBps(r.link_Bps))},
         {"link_sharers", r.link_sharers},
         {"resources", resources},
         {"bottleneck", r.bottleneck},
         {"step_s", round6(r.step_s)},
         {"compute_time_s", round6(r.compute_time_s)},
         {"hidden", r.hidden},
         {"exposed_s", round6(r.exposed_s)},
         {"notes", r.notes}};
  return dump_json(j, 2) + "\n";
}

std::string offload_to_text(const OffloadResult& r) {
  auto gb = [](double b) { return fmt::format("{:.1f} GB", b / units::kGB); };
  std::string gpus;
  for (const auto& g : r.gpus) gpus += (gpus.empty() ? "" : ",") + g;
  std::string s = fmt::format("{}: offload to CPU memory, streamed by {} over {}\n", r.system, gpus, r.link);
  s += fmt::format("  model states: weights {}, grads {}, optimizer {}; activations {}, KV {}\n", gb(r.weights_bytes), gb(r.grads_bytes),
                   gb(r.optimizer_bytes), gb(r.activation_bytes), gb(r.kv_bytes));
  std::string where;
  for (const auto& [node, bytes] : r.host_placement) where += fmt::format("{}{} {}", where.empty() ? "" : ", ", node, gb(bytes));
  s += fmt::format("  in CPU memory: {} ({} free: {}){}\n", gb(r.offloaded_bytes), gb(r.host_free_bytes), r.fits_host ? "fits" : "DOES NOT FIT",
                   where.empty() ? "" : "; " + where);
  s += fmt::format("  left in HBM: {} per GPU of {} ({})\n", gb(r.hbm_resident_per_gpu_bytes), gb(r.hbm_capacity_per_gpu_bytes),
                   r.fits_hbm ? "fits" : "DOES NOT FIT");
  s += fmt::format("  per step: {} host->GPU, {} GPU->host\n", gb(r.h2d_bytes), gb(r.d2h_bytes));
  for (const auto& x : r.resources)
    s += fmt::format("    {:<40} {:>10} at {:>6.1f} GB/s = {:.3f} s\n", x.name, gb(x.bytes), units::Bps_to_GBps(x.capacity_Bps), x.seconds);
  s += fmt::format("  time per step: {:.3f} s (bottleneck: {})\n", r.step_s, r.bottleneck);
  if (r.compute_time_s > 0)
    s += r.hidden ? fmt::format("  hidden behind {:.3f} s of compute\n", r.compute_time_s)
                  : fmt::format("  NOT hidden behind {:.3f} s of compute: {:.3f} s exposed per step\n", r.compute_time_s, r.exposed_s);
  for (const auto& n : r.notes) s += "  note: " + n + "\n";
  return s;
}

}  // namespace racksim::memory
