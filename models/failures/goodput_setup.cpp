#include "models/failures/goodput_setup.hpp"

#include <cmath>

#include "models/planner/plan.hpp"
#include "sim/core/errors.hpp"
#include "sim/topo/system_catalog.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {

namespace {

struct UnitShape {
  int trays_per_unit = 1, units_per_rack = 1, switch_trays_per_rack = 0, trays_per_rack = 1, gpus_per_tray = 1,
      nics_per_tray = 0;
};

UnitShape unit_shape(const TopologyGraph& g, const std::string& unit) {
  const auto& spec = g.spec();
  UnitShape u;
  u.gpus_per_tray = g.gpus_per_tray();
  u.nics_per_tray = static_cast<int>(spec.tray.nics.size());
  const int domain_racks = spec.nvlink_domain ? spec.nvlink_domain->racks : 1;
  const int domain_trays = spec.rack.trays * domain_racks;
  const bool multi_tray = spec.nvlink_domain && domain_trays > 1;
  u.trays_per_rack = domain_trays;  // an NVLink domain is the "rack" a switch failure concerns
  u.switch_trays_per_rack = multi_tray ? spec.nvlink_domain->switch_trays : 0;
  if (unit == "rack") {
    u.trays_per_unit = domain_trays;
  } else if (unit == "node" || unit == "tray") {
    u.trays_per_unit = 1;
    u.units_per_rack = domain_trays;
  } else if (unit.rfind("partition:", 0) == 0) {
    const std::string t = unit.substr(10);
    if (t.empty() || t.size() > 4 || t.find_first_not_of("0123456789") != std::string::npos || std::stoi(t) < 1 ||
        domain_trays % std::stoi(t) != 0 || !multi_tray)
      throw InputError("--unit", "", "'" + unit + "'",
                       "partition:T with T dividing the " + std::to_string(domain_trays) + " trays of an NVLink domain of " +
                           spec.id + (multi_tray ? "" : " (it has no multi-tray NVLink domain)"));
    u.trays_per_unit = std::stoi(t);
    u.units_per_rack = domain_trays / u.trays_per_unit;
  } else {
    throw InputError("--unit", "", "'" + unit + "'", "rack, partition:T or node");
  }
  if (!multi_tray) u.switch_trays_per_rack = 0;  // an HGX baseboard's NVSwitch fails with the node (rate gpu)
  return u;
}

}  // namespace

GoodputRequest goodput_request(const GoodputSetup& s, GoodputRequest r) {
  const SystemCatalog catalog = s.topology_dir.empty() ? SystemCatalog::shipped() : SystemCatalog(s.topology_dir);
  const TopologySpec spec = catalog.load(s.system);
  const TopologyGraph g(spec, spec.rack.default_racks);
  const UnitShape u = unit_shape(g, s.unit);
  if (s.gpus < 1 || s.gpus > 10'000'000) throw InputError("--gpus", "", std::to_string(s.gpus), "1 to 10 000 000 GPUs");
  if (s.spare_trays < 0 || s.spare_trays >= u.trays_per_unit)
    throw InputError("--spare-trays", "", std::to_string(s.spare_trays),
                     "0 to " + std::to_string(u.trays_per_unit - 1) + " trays of a " + s.unit + " unit on " + spec.id);
  if (s.hot_spares < 0 || s.hot_spares > 100000) throw InputError("--hot-spares", "", std::to_string(s.hot_spares), "0 to 100000 units");
  if (!(s.storage_GBps_per_gpu > 0 && s.storage_GBps_per_gpu <= 1e4))
    throw InputError("--storage-GBps", "", number_text(s.storage_GBps_per_gpu), "(0, 1e4] GB/s per GPU");
  r.label = spec.id + " " + (s.unit == "rack" ? "racks" : s.unit) +
            (s.spare_trays ? " +" + std::to_string(s.spare_trays) + " spare tray(s)" : "") +
            (s.hot_spares ? " +" + std::to_string(s.hot_spares) + " hot spare(s)" : "");
  r.trays_per_unit = u.trays_per_unit - s.spare_trays;
  r.spare_trays_per_unit = s.spare_trays;
  r.gpus_per_tray = u.gpus_per_tray;
  r.nics_per_tray = u.nics_per_tray;
  r.units = (s.gpus + r.trays_per_unit * r.gpus_per_tray - 1) / (r.trays_per_unit * r.gpus_per_tray);
  r.hot_spare_units = s.hot_spares;
  r.units_per_rack = u.units_per_rack;
  r.switch_trays_per_rack = u.switch_trays_per_rack;
  const int gpus = r.units * r.trays_per_unit * r.gpus_per_tray;
  r.storage_Bps = s.storage_GBps_per_gpu * 1e9 * gpus;
  if (!s.model.empty()) {
    PlanRequest p;
    p.system = s.system;
    p.racks = std::max(1, (r.units * (r.trays_per_unit + r.spare_trays_per_unit) + u.trays_per_rack - 1) / u.trays_per_rack);
    p.model = s.model;
    p.job.global_batch = s.global_batch;
    p.job.seq_len = s.seq_len;
    p.gpus = gpus;
    p.top = 1;
    p.engine_top = 0;
    p.failures = false;
    p.compare.clear();
    p.topology_dir = s.topology_dir;
    const PlanResult plan = run_plan(p);
    if (plan.search.ranked.empty())
      throw SimulationError("the planner found no layout of " + s.model + " on " + std::to_string(gpus) + " GPUs of " + spec.id);
    r.step_s = plan.search.ranked.front().estimate.step_s;
    r.checkpoint_bytes = plan.model_params * kCheckpointBytesPerParam;
  }
  if (s.step_s) r.step_s = *s.step_s;
  if (s.checkpoint_bytes) r.checkpoint_bytes = *s.checkpoint_bytes;
  if (s.model.empty() && !s.step_s) throw InputError("--step-s", "", "(missing)", "a step time in seconds, or --model for the planner's");
  if (s.model.empty() && !s.checkpoint_bytes)
    throw InputError("--checkpoint-bytes", "", "(missing)", "a checkpoint size, or --model for the planner's params x 14 B");
  return r;
}

std::vector<GoodputRequest> goodput_comparison(const GoodputSetup& s, const GoodputRequest& base) {
  std::vector<GoodputRequest> out;
  GoodputSetup racks = s;
  racks.system = "gb200-nvl72";
  racks.unit = "rack";
  out.push_back(goodput_request(racks, base));
  const int idle = (out.back().units * out.back().spare_trays_per_unit +
                    out.back().hot_spare_units * (out.back().trays_per_unit + out.back().spare_trays_per_unit)) *
                   out.back().gpus_per_tray;
  GoodputSetup parts = s;
  parts.system = "gb200-nvl72";
  parts.unit = "partition:9";
  parts.spare_trays = s.spare_trays / 2;
  parts.hot_spares = 2 * s.hot_spares;
  out.push_back(goodput_request(parts, base));
  GoodputSetup nodes = s;
  nodes.system = "hgx-b200";
  nodes.unit = "node";
  nodes.spare_trays = 0;
  nodes.hot_spares = idle / 8;  // the same idle GPUs, as whole 8-GPU nodes
  out.push_back(goodput_request(nodes, base));
  return out;
}

std::vector<GoodputRequest> goodput_call_requests(const GoodputCall& c) {
  GoodputRequest base;
  base.mode = partition_mode_from_string(c.partition_mode, "--partition-mode");
  base.adaptive_slowdown = c.adaptive_slowdown;
  base.interval_s = c.interval_s;
  if (!(c.days > 0 && c.days <= 3650)) throw InputError("--days", "", number_text(c.days), "(0, 3650] days");
  base.work_hours = c.days * 24;
  base.trials = c.trials;
  base.seed = c.seed;
  auto given = [](Duration& d, const std::optional<double>& v, double scale, const std::string& option) {
    if (!v) return;
    // In the option's own unit: "--repair-h 1e9" was told "up to 1e7 s".
    const double most = scale == 1 ? 1e7 : 2777;  // hours: the whole hours within the 1e7 s every recovery is held to
    if (!(*v >= 0 && *v <= most))
      throw InputError(option, "", number_text(*v),
                       scale == 1 ? "a time in [0, 1e7] seconds" : "a time in [0, 2777] hours (the 1e7 s any recovery is held to)");
    d = {*v * scale, "given (" + option + ")"};
  };
  given(base.recovery.restart, c.restart_s, 1, "--restart-s");
  given(base.recovery.hardware_repair, c.repair_h, 3600, "--repair-h");
  given(base.recovery.switch_repair, c.switch_repair_h, 3600, "--switch-repair-h");
  return c.compare ? goodput_comparison(c.setup, base) : std::vector<GoodputRequest>{goodput_request(c.setup, base)};
}

std::vector<GoodputResult> run_goodput_call(const GoodputCall& c) {
  std::vector<GoodputResult> out;
  for (const auto& r : goodput_call_requests(c)) out.push_back(run_goodput(r));
  return out;
}

}  // namespace racksim
