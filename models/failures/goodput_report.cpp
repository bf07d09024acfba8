// JSON and table writers for goodput results (racksim goodput). Values rounded to 6 significant digits
// so that the same inputs give byte-identical text.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "models/failures/goodput.hpp"
#include "sim/results/results_io.hpp"
#include "sim/core/json_reader.hpp"

namespace racksim {

namespace {

using json = nlohmann::ordered_json;
double r6(double x) { return round_to_significant(x); }

json pairs(const std::vector<std::pair<std::string, double>>& v) {
  json j = json::object();
  for (const auto& [k, x] : v) j[k] = r6(x);
  return j;
}

}  // namespace

std::string goodput_to_json_text(const std::vector<GoodputResult>& results) {
  json all = json::array();
  for (const auto& g : results) {
    const GoodputRequest& r = g.request;
    json inputs{{"units", r.units},
                {"trays_per_unit", r.trays_per_unit},
                {"gpus_per_tray", r.gpus_per_tray},
                {"spare_trays_per_unit", r.spare_trays_per_unit},
                {"hot_spare_units", r.hot_spare_units},
                {"units_per_rack", r.units_per_rack},
                {"switch_trays_per_rack", r.switch_trays_per_rack},
                {"partition_mode", to_string(r.mode)},
                {"adaptive_slowdown", r6(r.adaptive_slowdown)},
                {"step_s", r6(r.step_s)},
                {"checkpoint_bytes", r6(r.checkpoint_bytes)},
                {"storage_GBps", r6(r.storage_Bps / 1e9)},
                {"work_hours", r6(r.work_hours)},
                {"restart_s", r6(r.recovery.restart.seconds)},
                {"hardware_repair_s", r6(r.recovery.hardware_repair.seconds)},
                {"switch_repair_s", r6(r.recovery.switch_repair.seconds)},
                {"trials", r.trials},
                {"seed", r.seed}};
    json rates = json::object();
    for (const auto& [name, rate] : {std::pair<const char*, const Rate*>{"gpu", &r.rates.gpu}, {"host", &r.rates.host},
                                    {"nic", &r.rates.nic}, {"network", &r.rates.network}, {"software", &r.rates.software},
                                    {"nvlink_switch", &r.rates.nvlink_switch}})
      rates[name] = {{"per_hour", r6(rate->per_hour)}, {"source", rate->source}};
    json sources{{"restart", r.recovery.restart.source},
                 {"hardware_repair", r.recovery.hardware_repair.source},
                 {"switch_repair", r.recovery.switch_repair.source},
                 {"adaptive_slowdown", "assumption: step-time loss with one switch tray down in adaptive mode"}};
    all.push_back({{"label", r.label},
                   {"gpus", g.gpus},
                   {"idle_gpus", g.idle_gpus},
                   {"inputs", inputs},
                   {"rates", rates},
                   {"sources", sources},
                   {"failures_per_hour", r6(g.failures_per_hour)},
                   {"rates_per_hour", pairs(g.rates_per_hour)},
                   {"mtbf_h", r6(g.mtbf_h)},
                   {"checkpoint_write_s", r6(g.checkpoint_write_s)},
                   {"interval_s", r6(g.interval_s)},
                   {"interval_rule", g.interval_rule},
                   {"analytic_goodput", r6(g.analytic_goodput)},
                   {"analytic_note", g.analytic_note},
                   {"mc_goodput", r6(g.mc_goodput)},
                   {"mc_standard_error", r6(g.mc_standard_error)},
                   {"p5", r6(g.p5)},
                   {"p50", r6(g.p50)},
                   {"p95", r6(g.p95)},
                   {"mean_wall_h", r6(g.mean_wall_h)},
                   {"mean_events", pairs(g.mean_events)},
                   {"lost_hours", pairs(g.lost_hours)}});
  }
  return dump_json(all, 2) + "\n";
}

std::string goodput_to_table(const std::vector<GoodputResult>& results) {
  std::string out = fmt::format("{:<52} {:>6} {:>5} {:>8} {:>9} {:>9} {:>9} {:>8} {:>15} {:>15}\n", "allocation", "GPUs",
                                "idle", "MTBF h", "ckpt s", "every s", "analytic", "MC", "MC +- s.e.", "p5 / p95");
  for (const auto& g : results)
    out += fmt::format("{:<52} {:>6} {:>5} {:>8.2f} {:>9.1f} {:>9.0f} {:>8.2f}% {:>7.2f}% {:>14} {:>15}\n",
                       g.request.label, g.gpus, g.idle_gpus, g.mtbf_h, g.checkpoint_write_s, g.interval_s,
                       100 * g.analytic_goodput, 100 * g.mc_goodput, fmt::format("+-{:.3f}%", 100 * g.mc_standard_error),
                       fmt::format("{:.2f}/{:.2f}%", 100 * g.p5, 100 * g.p95));
  for (const auto& g : results) {
    std::string lost;
    for (const auto& [what, h] : g.lost_hours) lost += fmt::format("{}{} {:.1f} h", lost.empty() ? "" : ", ", what, h);
    out += fmt::format("  {}: {:.0f} h of work took {:.0f} h on average; lost: {}\n", g.request.label,
                       g.request.work_hours, g.mean_wall_h, lost);
  }
  return out;
}

}  // namespace racksim
